"""The audit log: paged by cursor, filtered on the server, exported as streamed CSV.

The store-level tests walk the query and the export on SQLite (and PostgreSQL
when CGU_TEST_POSTGRES_URL is set); the API tests run on the controller app in the
test's process (conftest's `in_process`).
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from sqlalchemy.engine import make_url

from cgu_lab.controller import audit
from cgu_lab.store.db import Database
from cgu_lab.store.models import AuditEvent

from .conftest import postgres_url, requires_postgres


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=[requires_postgres, pytest.mark.postgres])]
)
def db(request, tmp_path, jp_asyncio_loop):
    if request.param == "sqlite":
        database = Database(f"sqlite:///{tmp_path / 'audit.sqlite'}")
        database.upgrade_sync()
        yield database
        jp_asyncio_loop.run_until_complete(database.close())
        return
    server = make_url(postgres_url())
    name = f"cgu_test_{uuid.uuid4().hex[:12]}"
    admin_dsn = server.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin_dsn, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    database = Database(server.set(database=name).render_as_string(hide_password=False))
    database.upgrade_sync()
    yield database
    jp_asyncio_loop.run_until_complete(database.close())
    with psycopg.connect(admin_dsn, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


START = datetime(2027, 1, 10, 9, 0, tzinfo=timezone.utc)


async def _seed(db: Database) -> None:
    """25 events a minute apart: alice and bob acting on each other and on notebooks."""
    async with db.session() as session:
        for i in range(25):
            actor = "alice" if i % 2 == 0 else "bob"
            target = (
                f"notebook:{actor}/nb{i}" if i % 3 else f"user:{'bob' if i % 2 == 0 else 'alice'}"
            )
            session.add(
                AuditEvent(
                    at=START + timedelta(minutes=i),
                    actor=actor,
                    action="notebook.started" if i % 3 else "user.updated",
                    target=target,
                    details={"i": i},
                )
            )


async def test_pages_by_cursor_cover_every_event_once(db):
    await _seed(db)
    seen: list[int] = []
    before = None
    while True:
        async with db.session() as session:
            page = await audit.query(session, before_id=before, limit=10)
        if not page:
            break
        seen += [e.id for e in page]
        before = page[-1].id
    assert len(seen) == 25 and seen == sorted(seen, reverse=True)


async def test_filters_combine(db):
    await _seed(db)
    async with db.session() as session:
        by_alice = await audit.query(session, actor="alice", limit=100)
        assert {e.actor for e in by_alice} == {"alice"} and len(by_alice) == 13
        updates = await audit.query(session, action="user.", limit=100)
        assert {e.action for e in updates} == {"user.updated"} and len(updates) == 9
        # "By or about bob": bob's own events and those on bob's account and notebooks.
        bobs = await audit.query(session, user="bob", limit=100)
        assert all(
            e.actor == "bob" or e.target == "user:bob" or e.target.startswith("notebook:bob/")
            for e in bobs
        )
        assert any(e.actor == "alice" and e.target == "user:bob" for e in bobs)
        window = await audit.query(
            session,
            since=START + timedelta(minutes=5),
            until=START + timedelta(minutes=10),
            limit=100,
        )
        assert sorted(e.details["i"] for e in window) == [5, 6, 7, 8, 9]
        # LIKE wildcards are letters here: "%" and "_" find nothing.
        assert await audit.query(session, action="%", limit=10) == []
        assert await audit.query(session, target="_", limit=10) == []
        # nb1, nb10, nb11, nb13, nb14, nb16, nb17, nb19 (every third event is about a user)
        assert len(await audit.query(session, target="nb1", limit=100)) == 8


async def test_csv_export_streams_in_batches(db, monkeypatch):
    await _seed(db)
    monkeypatch.setattr(audit, "EXPORT_BATCH", 7)
    chunks = [chunk async for chunk in audit.export_csv(db, audit.Filters(actor="bob"))]
    assert len(chunks) == 1 + 2  # the header, then 12 rows in batches of 7 and 5
    rows = list(csv.reader(io.StringIO("".join(chunks))))
    assert rows[0] == list(audit.CSV_COLUMNS)
    body = rows[1:]
    assert len(body) == 12 and {row[2] for row in body} == {"bob"}
    assert [int(row[0]) for row in body] == sorted((int(row[0]) for row in body), reverse=True)
    assert json.loads(body[0][5]) == {"i": 23}


def test_csv_cells_cannot_become_formulas():
    event = AuditEvent(
        id=1, at=START, actor='=HYPERLINK("http://x")', action="auth.login_failed", target="-2+3"
    )
    row = next(csv.reader(io.StringIO(audit.csv_row(event))))
    assert row[2] == '\'=HYPERLINK("http://x")' and row[3] == "auth.login_failed"
    assert row[4] == "'-2+3" and row[5] == ""


# -- through the API --------------------------------------------------------------------------


def test_api_pages_filters_and_refuses(admin, alice):
    for i in range(12):
        alice.ok("POST", "/api/me/tokens", 201, json={"name": f"audit-{i}"})
    first = admin.ok("GET", "/api/audit?actor=alice&action=token.&limit=5")
    second = admin.ok(
        "GET", f"/api/audit?actor=alice&action=token.&limit=5&before={first[-1]['id']}"
    )
    third = admin.ok(
        "GET", f"/api/audit?actor=alice&action=token.&limit=5&before={second[-1]['id']}"
    )
    ids = [e["id"] for e in first + second + third]
    assert len(ids) == len(set(ids)) == 12 and ids == sorted(ids, reverse=True)
    assert [e["details"]["name"] for e in first] == [f"audit-{i}" for i in range(11, 6, -1)]
    about = admin.ok("GET", "/api/audit?user=alice&limit=100")
    assert about and all(
        e["actor"] == "alice"
        or e["target"] in ("user:alice",)
        or e["target"].startswith("notebook:alice/")
        for e in about
    )
    future = (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()
    assert admin.ok("GET", "/api/audit", params={"since": future}) == []
    past = (datetime.now(timezone.utc) - timedelta(days=1)).isoformat()
    assert admin.ok("GET", "/api/audit", params={"until": past}) == []
    backwards = admin.get("/api/audit", params={"since": future, "until": past})
    assert backwards.status_code == 400 and "after 'since'" in backwards.json()["message"]
    not_a_date = admin.get("/api/audit", params={"since": "yesterday"})
    assert not_a_date.status_code == 400 and not_a_date.json()["code"]
    # A number is not a date-time (the API document's type), though pydantic would read
    # it as seconds since 1970: schemathesis found `until=0.5` answered 200.
    for number in ("0.5", "1700000000", "nan"):
        refused = admin.get("/api/audit", params={"until": number})
        assert refused.status_code == 400 and "ISO 8601" in refused.json()["message"], number
    assert alice.get("/api/audit").status_code == 403
    assert alice.get("/api/audit/export").status_code == 403


def test_api_csv_export_is_filtered_streamed_and_audited(site, admin, alice):
    # A failed login records whatever was typed as the actor: it must stay text in a sheet.
    with site.anonymous() as client:
        client.post(
            "/login",
            data={"name": "=cmd|calc", "password": "x", "next": "/"},
            headers={"Origin": site.url},
        )
    with admin.stream("GET", "/api/audit/export", params={"action": "auth."}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/csv")
        disposition = response.headers["content-disposition"]
        assert disposition.startswith("attachment;") and ".csv" in disposition
        text = "".join(response.iter_text())
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["id", "at", "actor", "action", "target", "details"]
    assert {row[3].split(".")[0] for row in rows[1:]} == {"auth"}
    assert ["'=cmd|calc", "auth.login_failed"] in [row[2:4] for row in rows[1:]]
    assert any(json.loads(row[5]).get("address") for row in rows[1:] if row[5])
    exported = admin.ok("GET", "/api/audit?action=audit.exported&limit=1")[0]
    assert exported["actor"] == "root-admin"
    assert exported["details"] == {"filters": {"action": "auth."}}

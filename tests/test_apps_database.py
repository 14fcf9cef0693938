"""A database per notebook, in a real environment built from the *database* recipe.

An admin builds the recipe (JupySQL and psycopg from PyPI into the shared wheel cache,
PostgreSQL from Debian: scripts/deps.sh --test); alice's notebook in it then has a
PostgreSQL of her own with no setting anywhere: `%sql` in a kernel (JupySQL, loaded by
the environment's IPython settings, connected by `$DATABASE_URL`) and `psql` from a
kernel's shell both work, the first connection starting it; the data lives in her home
and is there after a restart; the database's web client (DbGate, scripts/dbgate.sh)
answers on the notebook's origin; a read-only visitor gets neither the web client nor
the database's details. Bob's kernel, another account on the same machine, cannot
connect to her database. One notebook of each user, one restart: the module's cost is
the build (seconds with a warm wheel cache) and three starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest

from cgu_lab.notebook.apps import database, registry

from .harness import run_code, running_controller

PIP_CACHE = Path(__file__).resolve().parent.parent / ".build" / "pip-cache"
SMALL = {"cpu": "0.5", "memory": "512Mi"}
DBGATE = Path(sys.prefix) / "lib" / "cgu-lab" / "dbgate"  # scripts/dbgate.sh

pytestmark = [
    pytest.mark.integration,
    pytest.mark.end_to_end,
    pytest.mark.timeout(600),
    pytest.mark.skipif(
        not database.PostgreSQL.installed(),
        reason="PostgreSQL is not installed (scripts/deps.sh --test)",
    ),
]


@pytest.fixture(scope="module")
def controller():
    PIP_CACHE.mkdir(parents=True, exist_ok=True)
    users = [("root-admin", "admin"), ("alice", "student"), ("bob", "student")]
    with running_controller(users, env={"CGU_LAB_PIP_CACHE": str(PIP_CACHE)}) as ctl:
        yield ctl


@pytest.fixture(scope="module")
def admin(controller):
    with controller.client("root-admin") as session:
        yield session


@pytest.fixture(scope="module")
def alice(controller):
    with controller.client("alice") as session:
        yield session


@pytest.fixture(scope="module")
def bob(controller):
    with controller.client("bob") as session:
        yield session


def build(session, body: dict) -> list[dict]:
    session.ok("POST", "/api/environments", 202, json=body)
    found = []
    with session.stream("GET", f"/api/environments/{body['name']}/events", timeout=600) as s:
        for line in s.iter_lines():
            if line.startswith("data: "):
                found.append(json.loads(line[6:]))
                if found[-1]["done"]:
                    break
    assert found[-1]["ok"], found[-8:]
    return found


@pytest.fixture(scope="module")
def lab(admin, alice):
    """The 'databases' environment, and alice's running notebook in it."""
    started = time.monotonic()
    build(admin, {"recipe": "database", "name": "databases"})
    print(f"database environment built in {time.monotonic() - started:.1f} s")
    env = admin.ok("GET", "/api/environments/databases")
    assert [a["name"] for a in env["apps"]] == ["desktop", "vscode", "postgres", "browser"]
    alice.ok(
        "POST", "/api/notebooks", 201, json={"name": "db", "environment": "databases", **SMALL}
    )
    assert alice.ok("POST", "/api/notebooks/alice/db/start?wait=true", 202)["state"] == "running"
    return "db"


def code(session, owner: str, name: str, text: str) -> str:
    return asyncio.run(run_code(session, owner, name, text))


SQL = """
began = __import__("time").monotonic()
answer = %sql SELECT 41 + 1 AS answer
print("sql", answer.dict()["answer"][0], round(__import__("time").monotonic() - began, 2))
"""
PSQL = """
import os, subprocess
done = subprocess.run(["psql", "-Atc", {command!r}], capture_output=True, text=True)
last = (done.stdout.strip().splitlines() or ["-"])[-1]
print("psql", done.returncode, last, done.stderr.strip(), os.environ["PGHOST"])
"""


def test_sql_and_psql_work_from_a_kernel_with_no_setting(alice, lab):
    first = code(alice, "alice", lab, SQL).split()
    assert first[:2] == ["sql", "42"], first
    print(f"first %sql (PostgreSQL started on demand): {first[2]} s")
    made = code(
        alice,
        "alice",
        lab,
        PSQL.format(
            command="CREATE TABLE grades (student text, mark int); "
            "INSERT INTO grades VALUES ('alice', 7); SELECT sum(mark) FROM grades"
        ),
    )
    assert made.split()[:3] == ["psql", "0", "7"], made
    status = alice.ok("GET", "/notebook/alice/db/cgu-lab/apps/postgres")
    assert status["running"] and status["engine"] == "postgresql", status
    print(f"PostgreSQL start: {status['started_in']:.2f} s")


def test_the_web_client_is_on_the_notebooks_origin(alice, lab):
    if registry.dbgate() is None and not (DBGATE / "node_modules").is_dir():
        pytest.skip("DbGate is not installed (scripts/dbgate.sh)")
    listed = alice.ok("GET", "/notebook/alice/db/cgu-lab/apps")
    assert "postgres" in [a["name"] for a in listed["apps"]], listed
    began = time.monotonic()
    page = alice.get("/notebook/alice/db/postgres/", timeout=90)
    assert page.status_code == 200 and "dbgate" in page.text.lower(), page.text[:300]
    print(f"DbGate first page: {time.monotonic() - began:.1f} s")
    # DbGate's own API, as its page calls it through the proxy (no header of its own, which
    # the proxy would take for the platform's token): the table the kernel made.
    database = alice.ok("GET", "/notebook/alice/db/cgu-lab/apps/postgres")["database"]
    query = {"conid": "pg", "database": database, "sql": "SELECT sum(mark) AS total FROM grades"}
    client = "/notebook/alice/db/postgres"
    found = alice.ok("POST", f"{client}/database-connections/query-data", json=query)
    row = found["rows"][0]
    assert str(row["total"] if isinstance(row, dict) else row[0]) == "7", found


def test_the_web_client_never_calls_dbgates_cloud(alice, lab):
    """No cloud widgets, no premium offer with its Upgrade button, and the page's refresh of
    the cloud's files at start answers at once without calling out (a notebook without DNS
    showed an error there)."""
    if registry.dbgate() is None and not (DBGATE / "node_modules").is_dir():
        pytest.skip("DbGate is not installed (scripts/dbgate.sh)")
    client = "/notebook/alice/db/postgres"
    config = alice.ok("POST", f"{client}/config/get", json={}, timeout=90)
    denied = set(config["permissions"].split(","))
    assert {"~widgets/cloud-public", "~widgets/cloud-private", "~widgets/premium"} <= denied
    refreshed = alice.ok("POST", f"{client}/cloud/refresh-public-files", json={"isRefresh": True})
    assert refreshed == {"status": "ok"}


def test_the_data_survives_a_restart(alice, lab):
    code(alice, "alice", lab, PSQL.format(command="INSERT INTO grades VALUES ('bob', 5)"))
    # A dump in the home, which a submission carries (the cluster's files it never does).
    dumped = alice.ok("POST", "/notebook/alice/db/cgu-lab/apps/postgres/dump")
    assert dumped["path"] == "database.sql" and dumped["size"] > 0, dumped
    sql = code(alice, "alice", lab, "print(open('database.sql').read())")
    assert "CREATE TABLE public.grades" in sql and "bob\t5" in sql, sql[-400:]
    alice.ok("POST", "/api/notebooks/alice/db/stop?wait=true", 202)
    assert alice.ok("POST", "/api/notebooks/alice/db/start?wait=true", 202)["state"] == "running"
    again = code(alice, "alice", lab, PSQL.format(command="SELECT sum(mark) FROM grades"))
    assert again.split()[:3] == ["psql", "0", "12"], again


@pytest.mark.skipif(os.geteuid() != 0, reason="per-user accounts need the controller as root")
def test_another_users_kernel_cannot_connect(alice, bob, lab):
    theirs = code(alice, "alice", lab, "import os; print(os.environ['PGHOST'])").strip()
    bob.ok("POST", "/api/notebooks", 201, json={"name": "db", "environment": "databases", **SMALL})
    assert bob.ok("POST", "/api/notebooks/bob/db/start?wait=true", 202)["state"] == "running"
    probe = PSQL.replace('["psql", "-Atc"', f'["psql", "-h", {theirs!r}, "-Atc"')
    refused = code(bob, "bob", "db", probe.format(command="SELECT sum(mark) FROM grades"))
    assert refused.startswith("psql 2 "), refused
    assert "Permission denied" in refused or "No such file" in refused, refused
    # His own database is his: an empty one, not hers.
    own = code(
        bob,
        "bob",
        "db",
        PSQL.format(command="SELECT count(*) FROM pg_tables WHERE tablename = 'grades'"),
    )
    assert own.split()[:3] == ["psql", "0", "0"], own

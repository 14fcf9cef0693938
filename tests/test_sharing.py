"""Sharing through real notebook servers: owner, readonly and editable shares, single
files, groups, expiry and revocation of open websockets, the server extension's
forwarding with the notebook's own token, and the forbidden paths. The servers are real
JupyterLab processes; the controller runs in the test's process (conftest's
`notebook_servers` layer).

What the controller decides alone (a share's expiry on its clock, refused shares,
the directory) runs in process in tests/test_sharing_decisions.py."""

import asyncio
import json
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from urllib.parse import quote

import httpx
import pytest
import websockets
from cachetools import TTLCache
from websockets.exceptions import ConnectionClosed, InvalidStatus

from cgu_lab.controller.clock import FakeClock
from cgu_lab.core.selection import DEFAULT_EXCLUDED, excluded

from . import ycollab
from .harness import extension_server_config, wait_until
from .test_notebooks import execute, server_process

pytestmark = [pytest.mark.integration, pytest.mark.notebook_servers]


@pytest.fixture(scope="module")
def lab(site, alice, admin):
    admin.ok("POST", "/api/groups", 201, json={"name": "tutors"})
    admin.ok("PUT", "/api/groups/tutors/members/alice", json={"manager": False})
    admin.ok("PUT", "/api/groups/tutors/members/bob", json={"manager": False})
    alice.ok("POST", "/api/notebooks", 201, json={"name": "lab", "cpu": 1, "memory": "1Gi"})
    alice.ok("POST", "/api/notebooks/alice/lab/start?wait=true", 202)
    body = {"type": "file", "format": "text", "content": "print('hello')"}
    token = alice.ok("POST", "/api/me/tokens", 201, json={"name": "files"})["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    for path in ("hw.ipynb", "secret.txt"):
        content = dict(body)
        if path.endswith(".ipynb"):
            content = {
                "type": "notebook",
                "format": "json",
                "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
            }
        response = httpx.put(
            f"{site.url}/notebook/alice/lab/api/contents/{path}", json=content, headers=bearer
        )
        assert response.status_code in (200, 201), response.text
    return bearer


def share(session, **body):
    return session.ok("POST", "/api/notebooks/alice/lab/shares", 201, json=body)


def kernel_for(site, session):
    """A kernel started by `session` on the notebook's origin, as JupyterLab does."""
    return session.post("/notebook/alice/lab/api/kernels", json={"name": "python3"})


def test_readonly_share_reads_but_never_writes(site, lab, alice, bob):
    assert bob.get("/notebook/alice/lab/api/contents").status_code == 404
    created = share(alice, grantee="bob", access="read", note="please review")
    assert created["url"] == "/notebook/alice/lab/lab" and created["grantee"]["kind"] == "user"
    mine = bob.ok("GET", "/api/shared-with-me")
    assert [(s["owner"], s["notebook"], s["access"]) for s in mine] == [("alice", "lab", "read")]
    info = bob.ok("GET", "/notebook/alice/lab/cgu-lab/info")
    assert info["access"] == "read" and info["user"]["name"] == "bob"
    listing = bob.ok("GET", "/notebook/alice/lab/api/contents")
    assert {item["name"] for item in listing["content"]} >= {"hw.ipynb", "secret.txt"}
    assert all(item["writable"] is False for item in listing["content"])
    assert alice.ok("GET", "/notebook/alice/lab/api/contents/hw.ipynb")["writable"] is True
    xsrf = {"X-XSRFToken": "x", "Cookie": "_xsrf=x"}
    writes = [
        ("PUT", "/api/contents/new.txt", {"type": "file", "format": "text", "content": "x"}),
        ("DELETE", "/api/contents/secret.txt", None),
        ("PATCH", "/api/contents/secret.txt", {"path": "moved.txt"}),
        ("POST", "/api/kernels", {"name": "python3"}),
        (
            "POST",
            "/api/sessions",
            {"path": "hw.ipynb", "type": "notebook", "kernel": {"name": "python3"}},
        ),
        ("POST", "/api/terminals", None),
    ]
    for method, path, body in writes:
        response = bob.request(method, f"/notebook/alice/lab{path}", json=body, headers=xsrf)
        assert response.status_code == 403, (method, path, response.status_code, response.text)
    assert (
        alice.ok("GET", "/notebook/alice/lab/api/contents/secret.txt")["content"]
        == "print('hello')"
    )
    # ... and cannot run code over the kernel websocket either.
    kernel = kernel_for(site, alice)
    url, headers, connect = bob.notebook_socket(
        f"/notebook/alice/lab/api/kernels/{kernel.json()['id']}/channels"
    )
    with pytest.raises(InvalidStatus):
        asyncio.run(execute(url, headers, "1+1", **connect))
    # A grantee may not manage the owner's shares.
    assert bob.get("/api/notebooks/alice/lab/shares").status_code == 404
    assert (
        bob.post(
            "/api/notebooks/alice/lab/shares", json={"grantee": "bob", "access": "edit"}
        ).status_code
        == 404
    )
    assert bob.get("/notebook/alice/lab/cgu-lab/shares").status_code == 403
    alice.ok("DELETE", f"/api/notebooks/alice/lab/shares/{created['id']}")
    assert bob.get("/notebook/alice/lab/api/contents").status_code == 404
    assert bob.ok("GET", "/api/shared-with-me") == []


def test_editable_share_runs_code_until_revoked(site, lab, alice, bob):
    created = share(alice, grantee="bob", access="edit", expires_in_minutes=30)
    assert created["expires_at"] is not None
    kernel = kernel_for(site, bob)
    assert kernel.status_code == 201, kernel.text
    url, headers, connect = bob.notebook_socket(
        f"/notebook/alice/lab/api/kernels/{kernel.json()['id']}/channels"
    )

    async def run_then_lose_access():
        async with websockets.connect(url, additional_headers=headers, **connect) as ws:
            msg = {
                "header": {
                    "msg_id": "m1",
                    "username": "bob",
                    "session": "s",
                    "msg_type": "kernel_info_request",
                    "version": "5.3",
                    "date": "",
                },
                "parent_header": {},
                "metadata": {},
                "content": {},
                "channel": "shell",
                "buffers": [],
            }
            await ws.send(json.dumps(msg))
            await asyncio.wait_for(ws.recv(), 30)
            started = time.monotonic()
            await asyncio.to_thread(
                alice.ok, "DELETE", f"/api/notebooks/alice/lab/shares/{created['id']}"
            )
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(ws.recv(), 10)
            return closed.value, time.monotonic() - started

    closed, seconds = asyncio.run(run_then_lose_access())
    assert closed.rcvd is not None and closed.rcvd.code == 1008
    assert seconds < 3
    assert bob.get("/notebook/alice/lab/api/status").status_code == 404


def test_single_file_share(site, lab, alice, bob):
    created = share(alice, grantee="bob", access="read", path="hw.ipynb")
    assert created["url"] == "/notebook/alice/lab/lab/tree/hw.ipynb"
    assert bob.get("/notebook/alice/lab/api/contents/hw.ipynb").status_code == 200
    assert bob.get("/notebook/alice/lab/api/contents/secret.txt").status_code == 403
    assert bob.get("/notebook/alice/lab/api/contents").status_code == 403
    assert bob.get("/notebook/alice/lab/api/terminals").status_code == 403
    assert bob.ok("GET", "/notebook/alice/lab/cgu-lab/info")["scope"] == ["hw.ipynb"]
    alice.ok("DELETE", f"/api/notebooks/alice/lab/shares/{created['id']}")


def test_group_share_and_giving_a_share_up(site, lab, alice, bob):
    created = share(alice, grantee="tutors", kind="group", access="read")
    assert bob.get("/notebook/alice/lab/api/contents").status_code == 200
    # A grantee may give up a share made to them alone, not one made to their group.
    assert bob.delete(f"/api/notebooks/alice/lab/shares/{created['id']}").status_code == 404
    alice.ok("DELETE", f"/api/notebooks/alice/lab/shares/{created['id']}")
    personal = share(alice, grantee="bob", access="read")
    bob.ok("DELETE", f"/api/notebooks/alice/lab/shares/{personal['id']}")
    assert bob.get("/notebook/alice/lab/api/contents").status_code == 404


LIVE = {
    "type": "notebook",
    "format": "json",
    "content": {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "metadata": {},
                "source": "x = 1",
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    },
}


def put_live(site, lab) -> None:
    """(Re)write live.ipynb, the notebook with one cell the collaboration tests open."""
    response = httpx.put(
        f"{site.url}/notebook/alice/lab/api/contents/live.ipynb", json=LIVE, headers=lab
    )
    assert response.status_code in (200, 201), response.text


def room_of(session, path: str = "live.ipynb") -> tuple[str, dict, dict]:
    """(uri, headers, connect options) of `path`'s collaboration room for `session`'s
    browser on the notebook's origin, looked up as JupyterLab does."""
    found = session.put(
        ycollab.session_path("/notebook/alice/lab", path), json=ycollab.NOTEBOOK_TYPE
    )
    assert found.status_code in (200, 201), found.text
    found = found.json()
    return session.notebook_socket(ycollab.room_path("/notebook/alice/lab", found))


def test_share_changes_reach_open_collaboration_rooms(site, lab, alice, bob):
    """Narrowing an editable share to read-only, letting one expire and revoking one each
    end the grantee's open collaboration connection through the proxy within seconds; a
    connection opened again carries the new (read-only) access, whose edits are dropped."""
    put_live(site, lab)
    edit = share(alice, grantee="bob", access="edit", expires_in_minutes=30)
    disk = "/notebook/alice/lab/api/contents/live.ipynb?content=1&format=text&type=file"

    def saved() -> str | None:
        """The first cell on disk (None while a save is half written)."""
        try:
            return ycollab.on_disk_source(alice.ok("GET", disk)["content"])
        except ValueError:
            return None

    async def scenario() -> dict:
        url, headers, connect = await asyncio.to_thread(room_of, alice)
        owner = await ycollab.YClient.connect(url, headers, **connect)
        url, headers, connect = await asyncio.to_thread(room_of, bob)
        editor = await ycollab.YClient.connect(url, headers, **connect)
        await editor.edit(" + 1")
        await owner.until(lambda: owner.source() == "x = 1 + 1")
        # Narrowed to read-only: the editing connection is closed (1008) within seconds...
        started = time.monotonic()
        await asyncio.to_thread(share, alice, grantee="bob", access="read")
        narrowed = await editor.closed(5), time.monotonic() - started
        await owner.pump(0.2)
        assert owner.closed_code is None  # ...the owner's is not
        # ...and opened again it follows live but its edits reach neither owner nor disk.
        url, headers, connect = await asyncio.to_thread(room_of, bob)
        viewer = await ycollab.YClient.connect(url, headers, **connect)
        await owner.edit("0")
        await viewer.until(lambda: viewer.source() == "x = 1 + 10")
        await viewer.edit("; import os")
        await owner.pump(1.0)
        assert owner.source() == "x = 1 + 10"
        await asyncio.to_thread(
            wait_until, lambda: saved() == "x = 1 + 10", 15, 0.5, "the owner's edit saved"
        )
        # Expired (no event: the proxy's periodic re-check, its access cache included).
        shares = await asyncio.to_thread(alice.ok, "GET", "/api/notebooks/alice/lab/shares")
        read = next(s for s in shares if s["grantee"]["name"] == "bob")
        with sqlite3.connect(site.data_dir / "cgu-lab.sqlite") as db:
            past = (datetime.now(timezone.utc) - timedelta(seconds=1)).isoformat(" ")
            db.execute("UPDATE shares SET expires_at = ? WHERE id = ?", (past, read["id"]))
        started = time.monotonic()
        expired = await viewer.closed(20), time.monotonic() - started
        # Revoked: closed at once.
        again = await asyncio.to_thread(share, alice, grantee="bob", access="read")
        url, headers, connect = await asyncio.to_thread(room_of, bob)
        viewer = await ycollab.YClient.connect(url, headers, **connect)
        started = time.monotonic()
        await asyncio.to_thread(
            alice.ok, "DELETE", f"/api/notebooks/alice/lab/shares/{again['id']}"
        )
        revoked = await viewer.closed(5), time.monotonic() - started
        await owner.close()
        return {"narrowed": narrowed, "expired": expired, "revoked": revoked}

    assert edit["access"] == "edit"
    ended = asyncio.run(scenario())
    print({what: f"code {code} after {seconds:.2f} s" for what, (code, seconds) in ended.items()})
    assert {what: code for what, (code, _) in ended.items()} == {
        "narrowed": 1008,
        "expired": 1008,
        "revoked": 1008,
    }
    assert ended["narrowed"][1] < 3 and ended["revoked"][1] < 3
    assert ended["expired"][1] < 5 + 5 + 3  # REVALIDATE_SECONDS + the access cache + slack
    assert saved() == "x = 1 + 10"


def test_live_view_counts_who_follows_it(site, lab, alice, bob, admin):
    """The course's Live tab counts the people following a live view's notebook live
    (their collaboration rooms open through the proxy): the owner is not counted, a
    viewer with two tabs is one, and one who leaves is no longer counted."""
    put_live(site, lab)
    created = alice.ok(
        "POST", "/api/notebooks/alice/lab/broadcast", 201, json={"group": "tutors", "minutes": 30}
    )

    def viewers() -> int | None:
        (view,) = admin.ok("GET", "/api/groups/tutors/live")["views"]
        return view["viewers"]

    async def scenario() -> list:
        counts = [await asyncio.to_thread(viewers)]
        url, headers, connect = await asyncio.to_thread(room_of, alice)
        owner = await ycollab.YClient.connect(url, headers, **connect)
        counts.append(await asyncio.to_thread(viewers))
        url, headers, connect = await asyncio.to_thread(room_of, bob)
        tabs = [await ycollab.YClient.connect(url, headers, **connect) for _ in range(2)]
        counts.append(await asyncio.to_thread(viewers))
        for tab in tabs:
            await tab.close()
        await asyncio.to_thread(
            wait_until, lambda: viewers() == 0, 10, 0.2, "the viewer count to drop"
        )
        counts.append(await asyncio.to_thread(viewers))
        await owner.close()
        return counts

    assert asyncio.run(scenario()) == [0, 0, 1, 0]
    alice.ok("DELETE", f"/api/notebooks/alice/lab/shares/{created['id']}")


def test_a_student_copies_a_live_view_into_their_own_notebook(site, lab, alice, bob, admin):
    """Copy to my home: the live view's file lands in the student's stopped notebook's home
    (as the student's, nothing overwritten), audited; the owner, a path outside a
    single-file view, an ended view and a stranger to the course are refused with 4xx."""
    bob.ok("POST", "/api/notebooks", 201, json={"name": "mine", "cpu": 0.5, "memory": "512Mi"})
    whole = alice.ok(
        "POST", "/api/notebooks/alice/lab/broadcast", 201, json={"group": "tutors", "minutes": 30}
    )
    (shown,) = [
        b for c in bob.ok("GET", "/api/courses") if c["name"] == "tutors" for b in c["broadcasts"]
    ]
    assert shown["id"] == whole["id"]
    copy = f"/api/groups/tutors/broadcasts/{whole['id']}/copy"
    copied = bob.ok("POST", copy, json={"notebook": "mine", "path": "hw.ipynb"})
    assert copied == {
        "notebook": "mine",
        "folder": "alice-lab",
        "copied": 1,
        "skipped": 0,
        "conflicts": [],
    }
    landed = site.data_dir / "homes" / "bob" / "mine" / "alice-lab" / "hw.ipynb"
    assert json.loads(landed.read_text())["nbformat"] == 4
    again = bob.ok("POST", copy, json={})  # one click: the notebook used last
    assert (again["notebook"], again["skipped"]) == ("mine", 1) and again["copied"] >= 1
    # The collaboration store (the edit history of every document) stays behind.
    assert excluded(".jupyter_ystore.db", list(DEFAULT_EXCLUDED))
    assert not (landed.parent / ".jupyter_ystore.db").exists()
    # JupyterLab's Course panel copies into the notebook it runs in (cgu-lab/ on its origin).
    from_lab = bob.post(
        f"/notebook/bob/mine/cgu-lab/courses/tutors/broadcasts/{whole['id']}/copy", json={}
    )
    assert from_lab.status_code == 200, from_lab.text
    assert (from_lab.json()["notebook"], from_lab.json()["copied"]) == ("mine", 0)
    events = admin.ok("GET", "/api/audit", params={"action": "broadcast.copied"})
    assert [e["actor"] for e in events] == ["bob", "bob", "bob"]
    assert events[-1]["target"] == "notebook:bob/mine"

    single = alice.ok(
        "POST",
        "/api/notebooks/alice/lab/broadcast",
        201,
        json={"group": "tutors", "minutes": 30, "path": "hw.ipynb"},
    )
    refusals = [
        (alice, copy, {}, 400),  # the owner's own notebook
        (bob, copy, {"path": "../etc"}, 400),
        (bob, copy, {"notebook": "nope"}, 404),
        (bob, f"/api/groups/tutors/broadcasts/{single['id']}/copy", {"path": "secret.txt"}, 403),
        (admin, copy, {}, 404),  # not in the course
    ]
    for session, url, body, status in refusals:
        response = session.post(url, json=body)
        assert response.status_code == status, (body, response.text)
        assert response.json()["message"] and response.json()["code"]
    for created in (whole, single):
        alice.ok("DELETE", f"/api/notebooks/alice/lab/shares/{created['id']}")
    ended = bob.post(copy, json={})
    assert ended.status_code == 404 and "ended" in ended.json()["message"]
    bob.ok("DELETE", "/api/notebooks/bob/mine")


def test_server_extension_forwards_with_the_notebook_token(site, lab, alice, bob):
    created = alice.ok(
        "POST",
        "/notebook/alice/lab/cgu-lab/shares",
        201,
        json={"grantee": "bob", "access": "read", "path": "hw.ipynb"},
        headers=lab,
    )
    listed = alice.ok("GET", "/notebook/alice/lab/cgu-lab/shares", headers=lab)
    assert [s["id"] for s in listed] == [created["id"]]
    assert (
        alice.ok("GET", "/notebook/alice/lab/cgu-lab/directory?q=bob", headers=lab)["users"][0][
            "name"
        ]
        == "bob"
    )
    refused = alice.post(
        "/notebook/alice/lab/cgu-lab/shares", json={"grantee": "bob", "access": "root"}, headers=lab
    )
    assert refused.status_code == 400 and "access" in refused.json()["message"]
    alice.ok("DELETE", f"/notebook/alice/lab/cgu-lab/shares/{created['id']}", headers=lab)
    resources = alice.ok("GET", "/notebook/alice/lab/cgu-lab/resources", headers=lab)
    assert (
        resources["requested"]["cpu_milli"] == 1000 and resources["memory"]["limit_bytes"] == 2**30
    )
    assert resources["gpus"] == {
        "available": False,
        "message": "no GPU on this notebook",
        "devices": [],
        "allocated": {"gpu_type": None, "count": 0, "devices": [], "mig": False},
    }
    quota = alice.ok("GET", "/notebook/alice/lab/cgu-lab/quota", headers=lab)
    assert quota["limits"]["cpu_milli"] == 4000 and quota["usage"]["notebooks"] >= 1


def test_notebook_token_is_limited_to_its_notebook(site, lab, alice, admin):
    """A kernel can read the notebook's token: it may only ask who may do what in it."""
    token = server_process("alice", "lab").environ()["CGU_API_TOKEN"]
    as_notebook = {"Authorization": f"Bearer {token}"}
    get = lambda path: httpx.get(site.url + path, headers=as_notebook)  # noqa: E731
    assert get("/api/notebooks/alice/lab/access?user=bob").json() == {
        "access": None,
        "scope": [],
        "user": "bob",
    }
    assert get("/api/version").status_code == 200
    for path in (
        "/api/me",
        "/api/notebooks/alice/lab/shares",
        "/api/users/alice/quota",
        "/api/groups",
        "/api/users",
        "/api/notebooks",
        "/api/audit",
        "/api/users/bob/quota",
        "/api/notebooks/alice/other/access?user=bob",
        "/api/me/tokens",
    ):
        assert get(path).status_code == 403, path
    for path, body in (
        ("/api/groups", {"name": "from-a-notebook"}),
        ("/api/me/tokens", {"name": "escape"}),
        ("/api/notebooks", {"name": "another"}),
        ("/api/notebooks/alice/lab/shares", {"grantee": "bob", "access": "edit"}),
        ("/api/courses/seen", None),
    ):
        refused = httpx.post(site.url + path, headers=as_notebook, json=body)
        assert refused.status_code == 403, path
        assert "this credential may not" in refused.json()["message"]
    # The token dies with the server.
    alice.ok("POST", "/api/notebooks/alice/lab/stop?wait=true", 202)
    assert get("/api/version").status_code == 401
    alice.ok("POST", "/api/notebooks/alice/lab/start?wait=true", 202)


def test_resize_through_the_server_extension(site, lab, alice):
    refused = alice.post("/notebook/alice/lab/cgu-lab/resize", json={"cpu": "64"}, headers=lab)
    assert refused.status_code == 403 and "your quota allows 4 CPUs" in refused.json()["message"]
    accepted = alice.ok(
        "POST",
        "/notebook/alice/lab/cgu-lab/resize",
        202,
        json={"cpu": "2", "memory": "1Gi"},
        headers=lab,
    )
    # Absolute: the lab runs on the notebook's origin, the start page is the controller's.
    assert accepted["restart_url"] == (
        f"{site.url}/notebook/auto-start/alice/lab?next={quote('/notebook/alice/lab/lab', safe='')}"
    )
    wait_until(
        lambda: (
            (nb := alice.ok("GET", "/api/notebooks/alice/lab"))["state"] == "running"
            and nb["cpu_milli"] == 2000
        ),
        interval=0.5,
        what="alice/lab to run again with 2 CPUs",
    )
    assert server_process("alice", "lab").environ()["CGU_CPU_LIMIT"] == "2.0"


@pytest.fixture
def jp_server_config():
    """A notebook server in Kubernetes mode: the ingress names the user in a header."""
    return extension_server_config(
        {
            "proxy_secret": "",
            "trusted_header": "kubeflow-userid",
            "owner": "alice",
            "grant_seconds": 0.5,
        },
        share_aware_contents=False,
    )


async def test_ingress_mode_asks_the_controller_for_grants(
    site, lab, alice, admin, jp_fetch, jp_serverapp, monkeypatch
):
    from tornado.httpclient import HTTPClientError

    from cgu_lab.notebook import controller_client as module

    token = server_process("alice", "lab").environ()["CGU_API_TOKEN"]
    monkeypatch.setitem(
        jp_serverapp.web_app.settings,
        module.SETTING,
        module.ControllerClient(site.url, token, "alice", "lab"),
    )

    async def status(user: str) -> int:
        try:
            response = await jp_fetch(
                "api", "contents", headers={"kubeflow-userid": user, "Authorization": ""}
            )
            return response.code
        except HTTPClientError as error:
            return error.code

    # The server extension reuses an answer for grant_seconds (0.5 here): its cache runs
    # on a clock this test moves past that, instead of sleeping through it.
    clock = FakeClock()
    provider = jp_serverapp.identity_provider
    monkeypatch.setattr(
        provider, "_grants", TTLCache(64, provider.grant_seconds, timer=clock.monotonic)
    )
    assert await status("alice") == 200
    assert await status("bob") == 403
    created = await asyncio.to_thread(share, alice, grantee="bob", access="read")
    clock.advance(0.6)
    assert await status("bob") == 200
    info = json.loads(
        (
            await jp_fetch(
                "cgu-lab", "info", headers={"kubeflow-userid": "bob", "Authorization": ""}
            )
        ).body
    )
    assert info["access"] == "read"
    # Kubeflow's ingress names users by e-mail address: the same grants, to the same users.
    await asyncio.to_thread(
        admin.ok, "PATCH", "/api/users/bob", json={"email": "Bob.Lee@school.example"}
    )
    assert await status("bob.lee@school.example") == 200
    info = json.loads(
        (
            await jp_fetch(
                "cgu-lab",
                "info",
                headers={"kubeflow-userid": "bob.lee@school.example", "Authorization": ""},
            )
        ).body
    )
    assert (info["access"], info["user"]["name"]) == ("read", "bob")
    assert await status("nobody@school.example") == 403
    await asyncio.to_thread(alice.ok, "DELETE", f"/api/notebooks/alice/lab/shares/{created['id']}")
    clock.advance(0.6)
    assert await status("bob") == 403
    assert await status("bob.lee@school.example") == 403
    assert await status("") == 403

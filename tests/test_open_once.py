"""One of each, and nothing on a refusal (issue 23, items 2, 3 and 5), in process.

A TA's "Open as notebook" makes one copy of a submission and a second click opens
that copy (starting it again once stopped); a refusal (the TA's quota) leaves no
notebook row, no home and no started server. Sharing again with the same person
(or group, for the same scope) changes their one grant, audited as a change, and
the database refuses a second row even when the service is bypassed. An admin's
"Open as me" needs a reason and answers where to go: the notebook, or its start
page that starts it and shows progress.
"""

from __future__ import annotations

import concurrent.futures
import json
import time

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from cgu_lab.store.models import Notebook, Share, User

COURSE = "once-course"
TASK = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture(scope="module")
def course(site, teacher, admin, login):
    """A course with alice and bob enrolled, and `onceta` as its TA."""
    login("onceta", "ta")
    teacher.ok("POST", "/api/groups", 201, json={"name": COURSE, "kind": "course"})
    for user, manager in (("alice", False), ("bob", False), ("onceta", True)):
        admin.ok("PUT", f"/api/groups/{COURSE}/members/{user}", json={"manager": manager})
    return COURSE


def home(site, owner: str, name: str):
    return site.backend.files.home(owner, name)


def submitted(site, student, assignment_id: int, notebook: str) -> dict:
    """The student's notebook `notebook` with one file in it, submitted."""
    student.ok("POST", "/api/notebooks", 201, json={"name": notebook, "memory": "512Mi"})
    folder = home(site, student.name, notebook) / "hw"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.ipynb").write_text(json.dumps(TASK))
    return student.ok(
        "POST",
        f"/api/assignments/{assignment_id}/submissions",
        201,
        json={"notebook": notebook, "paths": ["hw"]},
    )


def notebooks_of(site, owner: str) -> list[str]:
    """The owner's notebooks as the database holds them."""

    async def names() -> list[str]:
        async with site.platform.db.session() as session:
            rows = await session.scalars(
                select(Notebook.name)
                .join(User, User.id == Notebook.owner_id)
                .where(User.name == owner)
                .order_by(Notebook.name)
            )
            return list(rows.all())

    return site.call(names)


def count_shares(site, owner: str, name: str) -> int:
    async def count() -> int:
        async with site.platform.db.session() as session:
            nb, _ = await site.platform.notebooks.load(session, owner, name)
            return await session.scalar(
                select(func.count()).select_from(Share).where(Share.notebook_id == nb.id)
            )

    return site.call(count)


# -- item 2: a submission opens one copy per TA, and a refusal leaves nothing ---------------


def test_a_submission_opens_one_copy_per_ta(site, course, login, alice, bob):
    ta = login("onceta")
    teacher = login("teacher")
    assignment = teacher.ok("POST", f"/api/groups/{course}/assignments", 201, json={"name": "hw1"})
    first = submitted(site, alice, assignment["id"], "work")
    began = time.monotonic()
    opened = ta.ok("POST", f"/api/submissions/{first['id']}/open", 202)
    answered = time.monotonic() - began
    assert (opened["owner"], opened["name"]) == ("onceta", "hw1-alice-1")
    assert opened["state"] in ("starting", "running")
    # The page goes to the start page at once: the answer does not wait for the start.
    assert answered < 5, f"the open answered after {answered:.1f} s"
    site.settle("onceta", "hw1-alice-1")
    assert (home(site, "onceta", "hw1-alice-1") / "hw" / "task.ipynb").exists()
    # A second and a third click open the same copy: no hw1-alice-1-2.
    for _ in range(2):
        again = ta.ok("POST", f"/api/submissions/{first['id']}/open", 202)
        assert again["name"] == "hw1-alice-1"
    assert notebooks_of(site, "onceta") == ["hw1-alice-1"]
    opened_entries = login("root-admin").ok(
        "GET", "/api/audit?action=submission.opened&target=assignment:" + course
    )
    assert len(opened_entries) == 1
    # Stopped, it is started again by the next click, still the same copy.
    ta.ok("POST", "/api/notebooks/onceta/hw1-alice-1/stop", 202)
    site.settle("onceta", "hw1-alice-1")
    again = ta.ok("POST", f"/api/submissions/{first['id']}/open", 202)
    # The same copy, started again or still running (the second click may come after
    # the first start has finished).
    assert again["name"] == "hw1-alice-1" and again["state"] in ("starting", "running")
    site.settle("onceta", "hw1-alice-1")

    # Nobody but the course's managers opens a submission.
    assert alice.post(f"/api/submissions/{first['id']}/open").status_code in (403, 404)


# -- the class of bug: every "create then start" path checks first, creates nothing --------


def full_user(site, login, name: str, role: str = "student"):
    """`name`, with one notebook running and a quota of one running notebook."""
    user = login(name, role)
    login("root-admin").ok(
        "PUT", f"/api/users/{name}/quota", json={"cpu": 4, "memory": "8Gi", "notebooks": 1}
    )
    user.ok("POST", "/api/notebooks", 201, json={"name": "busy", "memory": "512Mi", "start": True})
    site.settle(name, "busy")
    return user


def assert_nothing_left(site, owner: str, name: str, started: list[str]) -> None:
    """No row, no home, no server: the refusal left nothing behind."""
    assert notebooks_of(site, owner) == ["busy"]
    assert not home(site, owner, name).exists()
    assert site.backend.started == started


def test_a_refused_open_of_a_submission_leaves_nothing(site, course, login, admin, bob):
    teacher = login("teacher")
    assignment = teacher.ok("POST", f"/api/groups/{course}/assignments", 201, json={"name": "hw2"})
    handed_in = submitted(site, bob, assignment["id"], "bobwork")
    ta = full_user(site, login, "fullta", "ta")
    admin.ok("PUT", f"/api/groups/{course}/members/fullta", json={"manager": True})
    started = list(site.backend.started)
    refused = ta.post(f"/api/submissions/{handed_in['id']}/open")
    assert refused.status_code == 403, refused.text
    assert "running notebook" in refused.json()["message"], refused.json()
    assert_nothing_left(site, "fullta", "hw2-bob-1", started)


@pytest.mark.parametrize(
    "body",
    [
        {"name": "plain", "memory": "512Mi", "start": True},
        {"template": "once-template", "start": True},
    ],
    ids=["new-notebook", "template"],
)
def test_a_refused_create_and_start_leaves_nothing(site, login, teacher, body):
    if "template" in body:
        teacher.ok("POST", "/api/notebooks", 201, json={"name": "tsrc", "memory": "512Mi"})
        folder = home(site, "teacher", "tsrc")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "start.ipynb").write_text(json.dumps(TASK))
        if teacher.get("/api/templates/once-template").status_code == 404:
            teacher.ok(
                "POST",
                "/api/templates",
                201,
                json={
                    "name": "once-template",
                    "notebook": "tsrc",
                    "paths": ["start.ipynb"],
                    "visibility": "public",
                    "memory": "512Mi",
                },
            )
    user = full_user(site, login, f"full-{len(body)}")
    started = list(site.backend.started)
    refused = user.post("/api/notebooks", json=body)
    assert refused.status_code == 403, refused.text
    assert "running notebook" in refused.json()["message"], refused.json()
    assert_nothing_left(site, user.name, body.get("name") or "once-template", started)


# -- item 5: sharing again with the same grantee and scope changes their one grant ---------


def test_sharing_again_replaces_the_grant(site, course, alice, login):
    alice.ok("POST", "/api/notebooks", 201, json={"name": "shared", "memory": "512Mi"})
    base = "/api/notebooks/alice/shared/shares"
    first = alice.ok("POST", base, 201, json={"grantee": "onceta", "access": "read"})
    second = alice.ok(
        "POST", base, 201, json={"grantee": "onceta", "access": "edit", "expires_in_minutes": 60}
    )
    assert second["id"] == first["id"]
    listed = alice.ok("GET", base)
    assert [(s["grantee"]["name"], s["access"]) for s in listed] == [("onceta", "edit")]
    assert listed[0]["expires_at"] is not None
    # One file is another scope: a grant of its own beside the whole notebook's.
    alice.ok("POST", base, 201, json={"grantee": "onceta", "access": "read", "path": "a.ipynb"})
    # A group is a grantee of its own, replaced the same way.
    alice.ok("POST", base, 201, json={"grantee": course, "kind": "group", "access": "read"})
    alice.ok("POST", base, 201, json={"grantee": course, "kind": "group", "access": "edit"})
    listed = alice.ok("GET", base)
    assert sorted((s["grantee"]["name"], s["path"], s["access"]) for s in listed) == [
        (course, "", "edit"),
        ("onceta", "", "edit"),
        ("onceta", "a.ipynb", "read"),
    ]
    changed = login("root-admin").ok(
        "GET", "/api/audit?action=share.changed&target=notebook:alice/shared"
    )
    assert len(changed) == 2
    assert changed[-1]["details"]["changes"]["access"] == ["read", "edit"]


def test_two_grants_at_once_make_one_row_and_the_database_refuses_a_second(site, alice, bob):
    alice.ok("POST", "/api/notebooks", 201, json={"name": "raced", "memory": "512Mi"})
    platform = site.platform
    # Two grants sent at once (two tabs): one row.
    body = {"grantee": "bob", "access": "read"}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(
            pool.map(
                lambda access: alice.post(
                    "/api/notebooks/alice/raced/shares", json={**body, "access": access}
                ),
                ["read", "edit"],
            )
        )
    assert [a.status_code for a in answers] == [201, 201]
    assert count_shares(site, "alice", "raced") == 1

    # The database itself keeps one grant per grantee and scope.
    async def duplicate() -> None:
        async with platform.db.session() as session:
            nb, _ = await platform.notebooks.load(session, "alice", "raced")
            existing = await session.scalar(select(Share).where(Share.notebook_id == nb.id))
            session.add(
                Share(
                    notebook_id=nb.id,
                    user_id=existing.user_id,
                    access="edit",
                    path="",
                    created_by="test",
                )
            )

    with pytest.raises(IntegrityError):
        site.call(duplicate)
    assert count_shares(site, "alice", "raced") == 1


# -- item 3: an admin's "Open as me" needs a reason and says where to go -------------------


def test_open_as_me_needs_a_reason_and_answers_where_to_go(site, admin, alice):
    alice.ok("POST", "/api/notebooks", 201, json={"name": "helpme", "memory": "512Mi"})
    path = "/api/notebooks/alice/helpme/admin-access"
    missing = admin.post(path, json={"access": "read"})
    assert missing.status_code == 400
    assert missing.json()["code"] == "invalid"
    assert "say why" in missing.json()["message"]
    assert count_shares(site, "alice", "helpme") == 0
    # Stopped: the start page, which starts it at once and shows the progress.
    granted = admin.ok("POST", path, json={"access": "read", "reason": "help request"})
    assert granted["state"] == "stopped"
    assert granted["open_url"].startswith("/notebook/auto-start/alice/helpme?")
    assert "start=1" in granted["open_url"]
    page = admin.get(granted["open_url"])
    assert page.status_code == 200 and 'id="start-button"' in page.text
    # Running: the notebook itself. Asking again replaces the grant (one share).
    alice.ok("POST", "/api/notebooks/alice/helpme/start", 202)
    site.settle("alice", "helpme")
    again = admin.ok("POST", path, json={"access": "edit", "reason": "still stuck"})
    assert again["open_url"] == "/notebook/alice/helpme/lab"
    assert count_shares(site, "alice", "helpme") == 1

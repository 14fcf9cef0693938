"""Class sessions: a teacher books a window for a course; the platform holds the capacity
against everyone else's starts, pre-warms each student's notebook (their own, from the
template, on their origin) before the start and stops the unused ones after the grace.

In process, with the platform's FakeClock moved instead of waiting; the pre-warm pass is
run at once (`pass_once`) where the loop would run it on its next turn.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from cgu_lab.core import culling

COURSE = "sess101"
TEMPLATE = "sess-lab"
FILE = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture(scope="module")
def inprocess_settings():
    # The loop waits a day between passes: the tests run each pass themselves. The
    # culler too: its readings of these fake servers would replace the ones a test sets.
    return {
        "class_session_interval": 86400,
        "cull_interval": 86400,
        "class_cpu_capacity": "8",
        "class_memory_capacity": "64Gi",
    }


@pytest.fixture(scope="module")
def site(in_process):
    return in_process


@pytest.fixture(scope="module")
def course(site, admin, login):
    admin.ok("POST", "/api/groups", 201, json={"name": COURSE})
    admin.ok("PUT", f"/api/groups/{COURSE}/members/teacher", json={"manager": True})
    for student in ("alice", "bob"):
        admin.ok("PUT", f"/api/groups/{COURSE}/members/{student}", json={"manager": False})
    teacher = login("teacher")
    teacher.ok("POST", "/api/notebooks", 201, json={"name": "prep", "memory": "512Mi"})
    folder = site.backend.files.home("teacher", "prep") / "week1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.ipynb").write_text(json.dumps(FILE))
    teacher.ok(
        "POST",
        "/api/templates",
        201,
        json={
            "name": TEMPLATE,
            "notebook": "prep",
            "paths": ["week1"],
            "visibility": "group",
            "group": COURSE,
            "cpu": 2,
            "memory": "1Gi",
        },
    )
    return COURSE


def window(site, minutes_ahead: float, length: float = 60) -> dict:
    start = site.clock.now() + timedelta(minutes=minutes_ahead)
    return {
        "starts_at": start.isoformat(),
        "ends_at": (start + timedelta(minutes=length)).isoformat(),
    }


def notebook_id(site, owner: str, name: str) -> int:
    async def read() -> int:
        async with site.platform.db.session() as session:
            nb, _ = await site.platform.notebooks.load(session, owner, name)
            return nb.id

    return site.call(read)


def run_pass(site) -> None:
    site.call(site.platform.class_sessions.pass_once)


def finish(site, teacher, booked: dict) -> None:
    """Cancel a session, so the next test starts from a free platform."""
    teacher.ok("POST", f"/api/courses/{COURSE}/sessions/{booked['id']}/cancel")


def test_only_the_course_teachers_book_and_the_rules_hold(site, course, login):
    teacher, alice, bob = login("teacher"), login("alice"), login("bob")
    outsider = login("carol", "student")
    body = {"title": "Week 1 lab", "template": TEMPLATE, **window(site, 30)}

    refused = alice.post(f"/api/courses/{COURSE}/sessions", json=body)
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert "teachers" in refused.json()["message"]
    hidden = outsider.get(f"/api/courses/{COURSE}/sessions")
    assert hidden.status_code == 404 and hidden.json()["code"] == "not_found"
    assert outsider.post(f"/api/courses/{COURSE}/sessions", json=body).status_code == 404

    backwards = {**body, "ends_at": body["starts_at"], "starts_at": body["ends_at"]}
    wrong = teacher.post(f"/api/courses/{COURSE}/sessions", json=backwards)
    assert wrong.status_code == 400 and "end after it starts" in wrong.json()["message"]
    past = teacher.post(f"/api/courses/{COURSE}/sessions", json={**body, **window(site, -5)})
    assert past.status_code == 400 and "future" in past.json()["message"]
    naive = {**body, "starts_at": body["starts_at"][:19], "ends_at": body["ends_at"][:19]}
    assert teacher.post(f"/api/courses/{COURSE}/sessions", json=naive).status_code == 400
    unknown = teacher.post(f"/api/courses/{COURSE}/sessions", json={**body, "template": "nope"})
    assert unknown.status_code == 404

    booked = teacher.ok("POST", f"/api/courses/{COURSE}/sessions", 201, json=body)
    assert booked["seats"] == 2 and booked["template"] == TEMPLATE
    assert booked["held"]["cpu_milli"] == 4000 and booked["held"]["now"] is False
    assert booked["phase"] == "booked"

    # A second booking in the same window passes the 8 CPUs: refused with what is left.
    crowded = teacher.post(f"/api/courses/{COURSE}/sessions", json={**body, "seats": 3})
    assert crowded.status_code == 409, crowded.text
    assert "4 CPUs left" in crowded.json()["message"] and crowded.json()["code"] == "conflict"
    # Students see the session (and only their own seat); the monitoring list is the admin's.
    seen = bob.ok("GET", f"/api/courses/{COURSE}/sessions")
    assert [s["id"] for s in seen["sessions"]] == [booked["id"]] and not seen["manages"]
    assert [s["id"] for s in bob.ok("GET", "/api/class-sessions/mine")] == [booked["id"]]
    assert outsider.ok("GET", "/api/class-sessions/mine") == []
    assert teacher.get("/api/class-sessions/ahead").status_code == 403
    ahead = login("root-admin").ok("GET", "/api/class-sessions/ahead")
    assert booked["id"] in [s["id"] for s in ahead]
    assert alice.post(f"/api/courses/{COURSE}/sessions/{booked['id']}/cancel").status_code == 403
    cancelled = teacher.ok("POST", f"/api/courses/{COURSE}/sessions/{booked['id']}/cancel")
    assert cancelled["phase"] == "cancelled"
    assert bob.ok("GET", "/api/class-sessions/mine") == []
    # The cancelled one holds nothing: the bigger booking fits now.
    bigger = teacher.ok("POST", f"/api/courses/{COURSE}/sessions", 201, json={**body, "seats": 4})
    finish(site, teacher, bigger)


def test_a_booked_sessions_capacity_cannot_be_taken_by_others(site, course, login):
    teacher, alice = login("teacher"), login("alice")
    outsider = login("carol", "student")
    login("root-admin").ok(
        "PUT", "/api/users/carol/quota", json={"cpu": 8, "memory": "8Gi", "notebooks": 3}
    )
    # Four seats of 2 CPUs (two for students who have not joined yet): 8 CPUs from the
    # pre-warm (5 minutes ahead) to the end.
    body = {"title": "Exam", "template": TEMPLATE, "seats": 4, **window(site, 10)}
    booked = teacher.ok("POST", f"/api/courses/{COURSE}/sessions", 201, json=body)
    outsider.ok("POST", "/api/notebooks", 201, json={"name": "big", "cpu": 4, "memory": "1Gi"})

    site.clock.advance(minutes=6)  # inside the hold, before the pre-warm pass ran
    refused = outsider.post("/api/notebooks/carol/big/start")
    assert refused.status_code == 409, refused.text
    answer = refused.json()
    assert answer["code"] == "capacity_held"
    assert "class session 'Exam'" in answer["message"] and "after the session" in answer["message"]
    # The class's own starts draw from the seats: a student's start is not refused.
    alice.ok("POST", "/api/notebooks", 201, json={"name": "own", "cpu": 2, "memory": "1Gi"})
    alice.ok("POST", "/api/notebooks/alice/own/start", 202)
    site.settle("alice", "own")
    alice.ok("POST", "/api/notebooks/alice/own/stop", 202)
    site.settle("alice", "own")

    # Cancelled: the capacity is free at once.
    finish(site, teacher, booked)
    outsider.ok("POST", "/api/notebooks/carol/big/start", 202)
    site.settle("carol", "big")
    outsider.ok("POST", "/api/notebooks/carol/big/stop", 202)
    site.settle("carol", "big")
    site.clock.advance(minutes=70)


def test_prewarm_at_the_right_moment_and_stop_the_unused_after_the_grace(site, course, login):
    teacher, alice, bob = login("teacher"), login("alice"), login("bob")
    body = {
        "title": "Week 2 lab",
        "template": TEMPLATE,
        "prewarm_minutes": 5,
        "grace_minutes": 10,
        **window(site, 20),
    }
    booked = teacher.ok("POST", f"/api/courses/{COURSE}/sessions", 201, json=body)
    started = len(site.backend.started)
    run_pass(site)
    assert len(site.backend.started) == started  # 20 minutes ahead: too early

    site.clock.advance(minutes=14)
    run_pass(site)
    assert len(site.backend.started) == started  # 6 minutes ahead: still too early
    too_early = alice.post(f"/api/courses/{COURSE}/sessions/{booked['id']}/open")
    assert too_early.status_code == 404 and "pre-warmed" in too_early.json()["message"]

    site.clock.advance(minutes=2)  # 4 minutes ahead: inside the pre-warm
    run_pass(site)
    seen = teacher.ok("GET", f"/api/courses/{COURSE}/sessions/{booked['id']}")
    people = {p["student"]: p for p in seen["people"]}
    assert set(people) == {"alice", "bob"}
    for student, person in people.items():
        assert person["message"] == "Pre-warmed for Week 2 lab", person
        site.settle(student, person["notebook"])
    seen = teacher.ok("GET", f"/api/courses/{COURSE}/sessions/{booked['id']}")
    assert seen["in"] == 2 and seen["phase"] == "warming" and seen["held"]["now"]
    assert {f"{p['student']}/{p['notebook']}" for p in seen["people"]} <= set(site.backend.started)

    # The pre-warmed notebook is the student's own, from the template, on their origin.
    name = people["alice"]["notebook"]
    opened = alice.ok("POST", f"/api/courses/{COURSE}/sessions/{booked['id']}/open")
    assert opened == {"notebook": name, "state": "running", "url": f"/notebook/alice/{name}/lab"}
    mine = alice.ok("GET", f"/api/notebooks/alice/{name}")
    assert mine["state"] == "running"
    home = site.backend.files.home("alice", name)
    assert json.loads((home / "week1" / "task.ipynb").read_text()) == FILE
    assert bob.get(f"/api/notebooks/alice/{name}").status_code == 404
    mine_seen = bob.ok("GET", f"/api/courses/{COURSE}/sessions/{booked['id']}")
    assert [p["student"] for p in mine_seen["people"]] == ["bob"]
    # A student who joins the course after the pre-warm gets theirs on the next pass.
    admin = login("root-admin")
    erin = login("erin", "student")
    admin.ok("PUT", f"/api/groups/{COURSE}/members/erin", json={"manager": False})
    run_pass(site)
    (late,) = erin.ok("GET", f"/api/courses/{COURSE}/sessions/{booked['id']}")["people"]
    assert late["student"] == "erin" and late["message"] == "Pre-warmed for Week 2 lab"
    site.settle("erin", late["notebook"])
    assert erin.ok("GET", f"/api/notebooks/erin/{late['notebook']}")["state"] == "running"
    run_pass(site)  # once: the next pass starts nothing more
    started_now = len(site.backend.started)
    run_pass(site)
    assert len(site.backend.started) == started_now
    erin.ok("POST", f"/api/notebooks/erin/{late['notebook']}/stop", 202)
    site.settle("erin", late["notebook"])
    admin.ok("DELETE", f"/api/groups/{COURSE}/members/erin")

    # The grace ends 10 minutes after the start: bob never opened his; it is stopped.
    site.clock.advance(minutes=10)
    run_pass(site)
    assert f"bob/{people['bob']['notebook']}" not in site.backend.stopped
    site.clock.advance(minutes=5)
    run_pass(site)
    site.settle("bob", people["bob"]["notebook"])
    assert f"bob/{people['bob']['notebook']}" in site.backend.stopped
    assert f"alice/{name}" not in site.backend.stopped
    assert alice.ok("GET", f"/api/notebooks/alice/{name}")["state"] == "running"
    stopped = bob.ok("GET", f"/api/notebooks/bob/{people['bob']['notebook']}")
    assert stopped["state"] == "stopped"
    audit = login("root-admin").ok("GET", "/api/audit", params={"action": "class_session."})
    actions = {e["action"] for e in audit}
    assert {"class_session.booked", "class_session.prewarmed", "class_session.swept"} <= actions
    alice.ok("POST", f"/api/notebooks/alice/{name}/stop", 202)
    site.settle("alice", name)
    site.clock.advance(minutes=60)


def test_booked_gpus_are_kept_for_the_class(site, course, login, admin):
    """Two whole GPUs, both booked. Before the hold an outsider takes one; in the hold
    another outsider's start is refused while seats are outstanding; the pre-warm
    reclaims the first outsider's idle notebook for the class (never the other way
    round), and a student's freed seat stays the class's."""
    teacher, bob = login("teacher"), login("bob")
    carol, dave = login("carol", "student"), login("dave", "student")
    admin.ok("PUT", "/api/gpu-types/cls", json={"display_name": "Class GPU"})
    for index in range(2):
        admin.ok("POST", "/api/gpus", 201, json={"device_id": f"GPU-cls-{index}", "model": "T"})
    limits = {"cpu": 4, "memory": "8Gi", "notebooks": 3, "gpus": {"cls": 1}}
    admin.ok("PUT", "/api/quotas/default", json=limits)
    for outsider in ("carol", "dave"):
        admin.ok("PUT", f"/api/users/{outsider}/quota", json={**limits, "cpu": 8})
    teacher.ok(
        "POST",
        "/api/templates",
        201,
        json={
            "name": "sess-gpu",
            "notebook": "prep",
            "paths": ["week1"],
            "visibility": "group",
            "group": COURSE,
            "cpu": 1,
            "memory": "512Mi",
            "gpu_type": "cls",
            "gpus": 1,
        },
    )
    body = {"title": "GPU lab", "template": "sess-gpu", "grace_minutes": 30, **window(site, 20)}
    booked = teacher.ok("POST", f"/api/courses/{COURSE}/sessions", 201, json=body)
    assert booked["held"]["gpus"] == {"cls": 2}
    more = teacher.post(f"/api/courses/{COURSE}/sessions", json={**body, "seats": 1})
    assert more.status_code == 409 and "1 GPU of type 'cls' asked, 0 left" in more.text

    gpu_body = {"name": "gpu", "cpu": 1, "memory": "512Mi", "gpu_type": "cls", "gpus": 1}
    for outsider in (carol, dave):
        outsider.ok("POST", "/api/notebooks", 201, json=gpu_body)
    carol.ok("POST", "/api/notebooks/carol/gpu/start", 202)  # before the hold: free
    site.settle("carol", "gpu")
    carol_started = site.clock.now()

    site.clock.advance(minutes=16)  # inside the hold (pre-warm: 5 minutes ahead)
    refused = dave.post("/api/notebooks/dave/gpu/start")
    assert refused.status_code == 409 and refused.json()["code"] == "capacity_held"
    assert "'cls' GPU" in refused.json()["message"]

    # Carol's notebook has been idle since it started (as the culler would have read it):
    # the pre-warm reclaims it for the class's second seat.
    admission = site.platform.notebooks.admission
    carol_id = notebook_id(site, "carol", "gpu")
    admission.activity[carol_id] = culling.Activity(carol_id, carol_started, carol_started)
    run_pass(site)
    site.settle("carol", "gpu")
    site.call(admission.drain_queue)  # the queue's turn after the reclaim, done now
    seats = teacher.ok("GET", f"/api/courses/{COURSE}/sessions/{booked['id']}")["people"]
    for person in seats:
        site.settle(person["student"], person["notebook"])
    seen = teacher.ok("GET", f"/api/courses/{COURSE}/sessions/{booked['id']}")
    assert seen["in"] == 2, seen
    reclaimed = carol.ok("GET", "/api/notebooks/carol/gpu")
    assert reclaimed["state"] == "stopped" and "needed this GPU" in reclaimed["message"]
    devices = [
        login(p["student"]).ok("GET", f"/api/notebooks/{p['student']}/{p['notebook']}")["devices"]
        for p in seen["people"]
    ]
    assert sorted(d for held in devices for d in held) == ["GPU-cls-0", "GPU-cls-1"]

    # Both class notebooks idle past the reclaim limit: an outsider's start waits in the
    # queue; reclaim does not stop the class's.
    admission.activity.clear()
    for person in seen["people"]:
        nb_id = notebook_id(site, person["student"], person["notebook"])
        quiet = site.clock.now()
        admission.activity[nb_id] = culling.Activity(nb_id, quiet, quiet)
    site.clock.advance(minutes=11)
    waiting = dave.ok("POST", "/api/notebooks/dave/gpu/start", 202)
    assert waiting["state"] == "queued", waiting
    for person in seen["people"]:
        owner = login(person["student"])
        state = owner.ok("GET", f"/api/notebooks/{person['student']}/{person['notebook']}")
        assert state["state"] == "running"
    dave.ok("POST", "/api/notebooks/dave/gpu/stop", 202)
    admission.activity.clear()

    # Bob stops his: his seat is still the class's, so the GPU he freed is not dave's.
    bobs = next(p["notebook"] for p in seen["people"] if p["student"] == "bob")
    bob.ok("POST", f"/api/notebooks/bob/{bobs}/stop", 202)
    site.settle("bob", bobs)
    again = dave.post("/api/notebooks/dave/gpu/start")
    assert again.status_code == 409 and again.json()["code"] == "capacity_held"
    # ...and bob gets it back with one click.
    opened = bob.ok("POST", f"/api/courses/{COURSE}/sessions/{booked['id']}/open")
    site.settle("bob", bobs)
    assert bob.ok("GET", f"/api/notebooks/bob/{bobs}")["state"] == "running"
    assert opened["url"] == f"/notebook/bob/{bobs}/lab"
    for person in seen["people"]:
        owner = login(person["student"])
        owner.ok("POST", f"/api/notebooks/{person['student']}/{person['notebook']}/stop", 202)
        site.settle(person["student"], person["notebook"])
    finish(site, teacher, booked)
    site.clock.advance(minutes=90)


def test_a_booking_the_quotas_would_refuse_at_the_session_is_refused_now(site, course, login):
    """The pre-warmed starts are charged to the course and run in each student's name: a
    booking past the course's budget, or a seat a student's own quota does not allow, is
    refused when it is booked, with what is left, not at 9:00 one start at a time."""
    teacher, admin = login("teacher"), login("root-admin")
    admin.ok("PUT", f"/api/groups/{COURSE}/quota", json={"cpu": 5, "notebooks": 3})
    body = {"title": "Budgeted", "template": TEMPLATE, **window(site, 30)}
    # Two seats of 2 CPUs: 4 of the budget's 5.
    first = teacher.ok("POST", f"/api/courses/{COURSE}/sessions", 201, json=body)
    # The platform could hold a second (8 CPUs), the course's budget cannot.
    again = teacher.post(f"/api/courses/{COURSE}/sessions", json={**body, "title": "Again"})
    assert again.status_code == 403, again.text
    refusal = again.json()
    assert refusal["code"] == "quota_exceeded"
    assert f"budget of course '{COURSE}'" in refusal["message"]
    assert "4 CPUs asked, 1 CPU left" in refusal["message"]
    assert "2 running notebooks asked, 1 running notebook left" in refusal["message"]
    assert refusal["details"]["left"] == {"cpu_milli": 1000, "notebooks": 1}
    # After the first one's window the whole budget is there again.
    later = {**body, "title": "Later", **window(site, 200)}
    second = teacher.ok("POST", f"/api/courses/{COURSE}/sessions", 201, json=later)
    finish(site, teacher, second)

    # A student whose own quota cannot hold one seat: named, with what they may hold.
    admin.ok("DELETE", f"/api/groups/{COURSE}/quota")
    admin.ok("PUT", "/api/users/alice/quota", json={"cpu": 1, "memory": "8Gi", "notebooks": 2})
    short = teacher.post(f"/api/courses/{COURSE}/sessions", json={**later, "title": "Short"})
    assert short.status_code == 403, short.text
    assert short.json()["code"] == "quota_exceeded"
    assert "the quota of alice allows 1 CPU" in short.json()["message"]
    assert "a seat needs 2 CPUs" in short.json()["message"]
    assert short.json()["details"]["students"] == ["alice"]
    admin.ok("DELETE", "/api/users/alice/quota")
    fits = teacher.ok("POST", f"/api/courses/{COURSE}/sessions", 201, json=later)
    finish(site, teacher, fits)
    finish(site, teacher, first)


def test_the_pages_carry_the_sessions_parts(site, course, login):
    """The course page's tab (its teachers), the monitoring page's bookings ahead and My
    notebooks' upcoming sessions are on their pages (ui-tests drive them in Chromium)."""
    course_page = login("teacher").get(f"/courses/{COURSE}")
    assert course_page.status_code == 200
    assert 'id="panel-sessions"' in course_page.text and 'id="session-form"' in course_page.text
    student_page = login("alice").get(f"/courses/{COURSE}")
    assert student_page.status_code == 200 and 'id="session-form"' not in student_page.text
    monitoring = login("root-admin").get("/admin/monitoring")
    assert monitoring.status_code == 200 and 'id="bookings-ahead"' in monitoring.text
    notebooks = login("alice").get("/notebooks")
    assert notebooks.status_code == 200 and 'id="my-sessions"' in notebooks.text
    module = login("alice").get("/static/js/class_sessions.js")
    assert module.status_code == 200 and "export async function initMine" in module.text

"""Raise hand: a student's request in a course's help queue, taken by the staff with one
click (which shares the notebook with the helper), ended by Done or Thanks (which
revokes it); the course's figures; the refusals a person sees. In process, no servers."""

import pytest


@pytest.fixture(scope="module")
def course(admin, teacher, alice, bob, login):
    admin.ok("POST", "/api/groups", 201, json={"name": "cs101"})
    admin.ok("PUT", "/api/groups/cs101/members/teacher", json={"manager": True})
    for student in ("alice", "bob"):
        admin.ok("PUT", f"/api/groups/cs101/members/{student}", json={"manager": False})
    for who in (alice, bob):
        body = {"name": "lab", "cpu": 1, "memory": "1Gi"}
        who.ok("POST", "/api/notebooks", 201, json=body)
    return "cs101"


def shares_of(session, owner="alice"):
    return session.ok("GET", f"/api/notebooks/{owner}/lab/shares")


def test_round_trip_take_and_done_revokes_the_share(course, alice, bob, teacher, login):
    teacher = login("teacher")  # a fresh principal: its managed groups include cs101 now
    asked = alice.ok(
        "POST",
        "/api/groups/cs101/help",
        201,
        json={"notebook": "lab", "question": "  my loss is NaN\n", "access": "edit"},
    )
    assert asked["state"] == "waiting" and asked["question"] == "my loss is NaN"
    assert asked["position"] == 1
    # One raised hand per course at a time.
    again = alice.post("/api/groups/cs101/help", json={"notebook": "lab"})
    assert again.status_code == 409 and again.json()["code"]
    # The staff see it; another student sees only their own (none).
    queue = teacher.ok("GET", "/api/groups/cs101/help")
    assert [r["student"]["name"] for r in queue["requests"]] == ["alice"]
    assert queue["figures"]["waiting"] == 1
    assert bob.ok("GET", "/api/groups/cs101/help")["requests"] == []
    # A student cannot take requests.
    refused = bob.post(f"/api/groups/cs101/help/{asked['id']}/take")
    assert refused.status_code == 403 and "message" in refused.json()

    taken = teacher.ok("POST", f"/api/groups/cs101/help/{asked['id']}/take")
    assert taken["state"] == "helping" and taken["helper"] == "teacher"
    assert taken["url"] == "/notebook/alice/lab/lab"
    assert taken["position"] is None and taken["helper_display_name"]
    (grant,) = shares_of(alice)
    assert grant["grantee"]["name"] == "teacher" and grant["access"] == "edit"
    assert grant["expires_at"] is not None
    twice = teacher.post(f"/api/groups/cs101/help/{asked['id']}/take")
    assert twice.status_code == 409

    figures = teacher.ok("GET", "/api/groups/cs101/help")["figures"]
    assert figures["waiting"] == 0 and figures["being_helped"] == 1
    assert figures["median_wait_seconds"] is not None

    done = teacher.ok("POST", f"/api/groups/cs101/help/{asked['id']}/end")
    assert done["state"] == "done"
    assert shares_of(alice) == []
    assert teacher.ok("GET", "/api/groups/cs101/help")["figures"]["helped"] == 1
    events = login("root-admin").ok("GET", "/api/audit", params={"action": "help."})
    actions = (
        {e["action"] for e in events["events"]}
        if isinstance(events, dict)
        else {e["action"] for e in events}
    )
    assert {"help.asked", "help.taken", "help.done"} <= actions


def test_read_only_help_and_the_students_thanks(course, bob, login):
    teacher = login("teacher")
    asked = bob.ok(
        "POST", "/api/groups/cs101/help", 201, json={"notebook": "lab", "access": "read"}
    )
    teacher.ok("POST", f"/api/groups/cs101/help/{asked['id']}/take")
    (grant,) = shares_of(bob, "bob")
    assert grant["access"] == "read"
    thanked = bob.ok("POST", f"/api/groups/cs101/help/{asked['id']}/end")
    assert thanked["state"] == "thanked"
    assert shares_of(bob, "bob") == []


def test_bad_input_is_a_4xx_with_a_message(course, alice, bob):
    for body, status in (
        ({"notebook": "lab", "access": "root"}, 400),
        ({"notebook": "lab", "question": "x" * 201}, 400),
        ({"notebook": "nope"}, 404),
    ):
        response = alice.post("/api/groups/cs101/help", json=body)
        assert response.status_code == status, response.text
        assert response.json()["message"]
    outside = alice.post("/api/groups/no-such-course/help", json={"notebook": "lab"})
    assert outside.status_code == 404 and outside.json()["code"]
    # A lowered hand: cancelled, nothing was shared.
    asked = alice.ok("POST", "/api/groups/cs101/help", 201, json={"notebook": "lab"})
    assert alice.ok("POST", f"/api/groups/cs101/help/{asked['id']}/end")["state"] == "cancelled"
    other = bob.post(f"/api/groups/cs101/help/{asked['id']}/end")
    assert other.status_code == 409


def test_positions_in_the_queue_and_the_lab_panel(course, alice, bob, login):
    """Each waiting student sees their place (1: next); JupyterLab's panel (the lab
    routes' `mine`) gives a student their own request and the staff the course's queue."""
    teacher = login("teacher")
    first = alice.ok("POST", "/api/groups/cs101/help", 201, json={"notebook": "lab"})
    second = bob.ok("POST", "/api/groups/cs101/help", 201, json={"notebook": "lab"})
    assert (first["position"], second["position"]) == (1, 2)
    (mine,) = bob.ok("GET", "/api/groups/cs101/help")["requests"]
    assert mine["position"] == 2
    queue = teacher.ok("GET", "/api/groups/cs101/help")
    assert [r["position"] for r in queue["requests"]] == [1, 2]
    alice.ok("POST", f"/api/groups/cs101/help/{first['id']}/end")
    (mine,) = bob.ok("GET", "/api/groups/cs101/help")["requests"]
    assert mine["position"] == 1
    bob.ok("POST", f"/api/groups/cs101/help/{second['id']}/end")

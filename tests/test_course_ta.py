"""A teacher adds a TA to their course in one step (issue 23, item 6), in process.

The teacher names a new TA: the account is made with the TA role and a one-time
password shown once, and manages the course at once (it logs in, must change the
password, and sees the course's submissions list). Only the course's teacher or
an admin may; a TA may not, another course's teacher may not, and the endpoint
never makes teachers or admins. An existing name is handled as what it is: the
teacher's own student becomes a TA, another course's student is refused, a staff
account is invited.
"""

from __future__ import annotations

import pytest

from .harness import Session

COURSE = "ta-course"


@pytest.fixture(scope="module")
def course(teacher, admin, login):
    login("rival2", "teacher").ok("POST", "/api/groups", 201, json={"name": "rival2-course"})
    teacher.ok("POST", "/api/groups", 201, json={"name": COURSE, "kind": "course"})
    admin.ok("PUT", f"/api/groups/{COURSE}/members/alice", json={"manager": False})
    admin.ok("PUT", "/api/groups/rival2-course/members/bob", json={"manager": False})
    return COURSE


def test_a_teacher_creates_a_ta_in_one_step(site, course, teacher, admin):
    added = teacher.ok(
        "POST",
        f"/api/groups/{course}/tas",
        201,
        json={"name": "newta", "display_name": "New TA", "email": "newta@example.edu"},
    )
    assert added["created"] and not added["invited"]
    assert added["member"] == {
        "name": "newta",
        "display_name": "New TA",
        "role": "ta",
        "manager": True,
    }
    password = added["one_time_password"]
    assert password
    members = {m["name"]: m for m in teacher.ok("GET", f"/api/groups/{course}/members")}
    assert members["newta"]["manager"] and members["newta"]["role"] == "ta"
    # The TA logs in with the one-time password, must change it, and manages the course.
    ta = Session(site.url, "newta", password, transport=site.transport(), site=site)
    try:
        me = ta.ok("GET", "/api/me")
        assert me["must_change_password"] and me["role"] == "ta"
        ta.ok("PUT", "/api/me/password", json={"current": password, "new": "a-new-pass-phrase-9"})
        assert ta.ok("GET", f"/api/groups/{course}/members")
    finally:
        ta.close()
    created = admin.ok("GET", "/api/audit?action=user.created&target=user:newta")
    assert created[0]["actor"] == "teacher" and created[0]["details"]["role"] == "ta"
    # The password is shown once: asking again answers no password.
    again = teacher.ok("POST", f"/api/groups/{course}/tas", 201, json={"name": "newta"})
    assert not again["created"] and again["one_time_password"] is None


def test_only_the_courses_teacher_or_an_admin_adds_tas(site, course, teacher, login, admin):
    ta = login("plainta", "ta")
    admin.ok("PUT", f"/api/groups/{course}/members/plainta", json={"manager": True})
    # The page offers the form to the teacher, not to a TA.
    assert 'id="new-ta-form"' in teacher.get(f"/courses/{course}").text
    assert 'id="new-ta-form"' not in ta.get(f"/courses/{course}").text
    assert teacher.get("/static/js/course_new_ta.js").status_code == 200
    for who in (ta, login("rival2"), login("alice")):
        refused = who.post(f"/api/groups/{course}/tas", json={"name": "sneaky"})
        assert refused.status_code == 403, (who.name, refused.text)
        assert refused.json()["code"] == "forbidden" and refused.json()["message"]
    # Only TAs: a role is not a field here, and teachers still create no staff elsewhere.
    role = teacher.post(f"/api/groups/{course}/tas", json={"name": "boss", "role": "admin"})
    assert role.status_code == 400
    assert teacher.post("/api/users", json={"name": "boss", "role": "teacher"}).status_code == 403
    assert admin.get("/api/users/sneaky").status_code == 404
    assert admin.get("/api/users/boss").status_code == 404
    # An admin adds one too.
    assert admin.ok("POST", f"/api/groups/{course}/tas", 201, json={"name": "adminta"})["created"]


def test_existing_accounts_are_handled_as_what_they_are(site, course, teacher, admin, login):
    # The teacher's own student becomes a TA of the course at once.
    promoted = teacher.ok("POST", f"/api/groups/{course}/tas", 201, json={"name": "alice"})
    assert not promoted["created"] and not promoted["invited"]
    assert promoted["member"]["role"] == "ta" and promoted["member"]["manager"]
    assert promoted["one_time_password"] is None
    # Another course's student stays theirs.
    refused = teacher.post(f"/api/groups/{course}/tas", json={"name": "bob"})
    assert refused.status_code == 403 and "course you do not teach" in refused.json()["message"]
    assert admin.ok("GET", "/api/users/bob")["role"] == "student"
    # A staff account of its own is invited, as Make TA does.
    login("freeta", "ta")
    invited = teacher.ok("POST", f"/api/groups/{course}/tas", 201, json={"name": "freeta"})
    assert invited["invited"] and not invited["member"]["manager"]
    assert "accept" in invited["message"]

"""A course's quotas for the whole class at once, and a teacher asking for more budget
(issue 23, item 10a), on the controller app in the test's process."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def course(teacher, admin, login):
    """Course `stats-101`: the teacher, three students; a budget of 8 CPUs, 16 GiB, 2 GPUs."""
    teacher.ok("POST", "/api/groups", 201, json={"name": "stats-101"})
    teacher.ok(
        "POST",
        "/api/groups/stats-101/import",
        json={"csv": "username\nq-ann\nq-ben\nq-cat\n"},
    )
    admin.ok(
        "PUT",
        "/api/groups/stats-101/quota",
        json={"cpu": 8, "memory": "16Gi", "gpus": {"standard": 2}, "notebooks": 6},
    )
    return "stats-101"


STUDENTS = ["q-ann", "q-ben", "q-cat"]
CLASS_QUOTA = {"cpu": 2, "memory": "4Gi", "gpus": {"standard": 1}, "notebooks": 1}


def quota_of(admin, name: str) -> dict:
    return admin.ok("GET", f"/api/users/{name}/quota")


def test_a_teacher_sets_the_quota_of_the_whole_class(course, teacher, admin):
    result = teacher.ok("PUT", f"/api/groups/{course}/student-quotas", json=CLASS_QUOTA)
    assert result["students"] == STUDENTS
    assert "3 students" in result["message"]
    for name in STUDENTS:
        quota = quota_of(admin, name)
        assert quota["source"] == "user"
        assert quota["limits"]["cpu_milli"] == 2000
        assert quota["limits"]["gpus"] == {"standard": 1}
    # The teacher, a member too, keeps the admins' quota.
    assert quota_of(admin, "teacher")["source"] == "default"
    # Each change is in the audit log, by the teacher.
    events = admin.ok("GET", "/api/audit?action=quota.set&actor=teacher&limit=50")
    assert {f"user:{name}" for name in STUDENTS} <= {e["target"] for e in events}


def test_a_class_quota_over_the_budget_changes_nothing(course, teacher, admin):
    over = teacher.put(
        f"/api/groups/{course}/student-quotas", json={**CLASS_QUOTA, "gpus": {"standard": 3}}
    )
    assert over.status_code == 403
    body = over.json()
    assert body["code"] == "quota_exceeded"
    assert "at most 2" in body["message"] and course in body["message"]
    assert all(quota_of(admin, n)["limits"]["gpus"] == {"standard": 1} for n in STUDENTS)


def test_a_class_with_a_student_of_another_course_is_refused_whole(course, teacher, admin):
    # q-cat also takes a course the teacher does not run: her quota is not theirs alone.
    admin.ok("POST", "/api/groups", 201, json={"name": "physics-9"})
    admin.ok("PUT", "/api/groups/physics-9/members/q-cat", json={"manager": False})
    try:
        refused = teacher.put(
            f"/api/groups/{course}/student-quotas", json={**CLASS_QUOTA, "cpu": 1}
        )
        assert refused.status_code == 403
        assert refused.json()["code"] == "forbidden"
        assert "q-cat" in refused.json()["message"]
        assert "nothing was changed" in refused.json()["message"]
        # All or nothing: q-ann and q-ben keep their 2 CPUs too.
        assert all(quota_of(admin, n)["limits"]["cpu_milli"] == 2000 for n in STUDENTS)
        # An administrator may set it for everyone.
        done = admin.ok(
            "PUT", f"/api/groups/{course}/student-quotas", json={**CLASS_QUOTA, "cpu": 1}
        )
        assert done["students"] == STUDENTS
    finally:
        admin.ok("DELETE", "/api/groups/physics-9/members/q-cat")


def test_only_the_course_staff_set_class_quotas(course, alice, bob):
    for who in (alice, bob):
        response = who.put(f"/api/groups/{course}/student-quotas", json=CLASS_QUOTA)
        assert response.status_code == 403 and response.json()["code"] == "forbidden"


def test_a_bad_class_quota_is_a_readable_400(course, teacher):
    response = teacher.put(f"/api/groups/{course}/student-quotas", json={"cpu": "lots"})
    assert response.status_code == 400
    assert response.json()["code"] and response.json()["message"]
    missing = teacher.put("/api/groups/no-such-course/student-quotas", json=CLASS_QUOTA)
    assert missing.status_code in (403, 404)


def test_a_class_without_students_says_so(teacher):
    teacher.ok("POST", "/api/groups", 201, json={"name": "empty-1"})
    response = teacher.put("/api/groups/empty-1/student-quotas", json=CLASS_QUOTA)
    assert response.status_code == 400 and "no students" in response.json()["message"]


def test_a_teacher_sees_the_budget_and_asks_for_more(course, teacher, admin, alice):
    budget = teacher.ok("GET", f"/api/groups/{course}/quota")
    assert budget["limits"]["gpus"] == {"standard": 2}
    sent = teacher.ok(
        "POST",
        f"/api/groups/{course}/quota/requests",
        201,
        json={"message": "Lab 3 needs 2 more standard GPUs"},
    )
    assert "audit log" in sent["message"]
    events = admin.ok("GET", f"/api/audit?action=quota.requested&target=group:{course}")
    assert events and events[0]["actor"] == "teacher"
    details = events[0]["details"]
    assert details["message"] == "Lab 3 needs 2 more standard GPUs"
    assert details["budget"]["gpus"] == {"standard": 2}
    # Students do not ask on the course's behalf; an empty request says what to write.
    refused = alice.post(f"/api/groups/{course}/quota/requests", json={"message": "more"})
    assert refused.status_code == 403
    empty = teacher.post(f"/api/groups/{course}/quota/requests", json={"message": "   "})
    assert empty.status_code == 400 and "say what the course needs" in empty.json()["message"]
    too_long = teacher.post(f"/api/groups/{course}/quota/requests", json={"message": "x" * 1001})
    assert too_long.status_code == 400


def test_a_course_without_a_budget_takes_the_default_as_its_class_quota(teacher, admin):
    """The whole-class dialog starts from the students' default quota (course_staff.js): a
    course with no budget is capped by that default, so it fits; 'any GPUs' does not, and
    the refusal says the cap is the platform's default, not a budget the course lacks."""
    teacher.ok("POST", "/api/groups", 201, json={"name": "free-101"})
    teacher.ok("POST", "/api/groups/free-101/import", json={"csv": "username\nq-dee\n"})
    default = quota_of(admin, "q-dee")["limits"]
    assert quota_of(admin, "q-dee")["source"] == "default"
    body = {
        "cpu": default["cpu_milli"] / 1000,
        "memory": default["memory"],
        "gpus": default["gpus"],
        "notebooks": default["notebooks"],
    }
    assert teacher.ok("PUT", "/api/groups/free-101/student-quotas", json=body)["students"] == [
        "q-dee"
    ]
    refused = teacher.put("/api/groups/free-101/student-quotas", json={**body, "gpus": None})
    assert refused.status_code == 403
    assert "has no budget" in refused.json()["message"]
    assert "platform's default quota" in refused.json()["message"]

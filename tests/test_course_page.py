"""The teacher's one course page (/courses/<group>), on the controller app in the test's
process (conftest's `in_process`; its notebooks "run" without a server, tests/inprocess.py).

A teacher creates a course from the pages (the form posts to /api/groups) and gets
the full page: members, TAs, quotas, templates, lab files, assignments and live, in
tabs whose tables are labelled; the course's students get a read-only page; another
course's teacher and a stranger are refused. The Live tab's API lists the students'
running notebooks (opened only where shared) and End stops one, recorded in the audit
log with the teacher's name. A course's teacher may demote its TAs, never the reverse.
"""

from __future__ import annotations

import re

import pytest

from .harness import Session, follow_while, http_client, wait_running, wait_state

COURSE = "page-course"
TABS = ("members", "tas", "quotas", "templates", "files", "assignments", "live")
SCRIPTS = (
    "course.js",
    "course_util.js",
    "course_members.js",
    "course_staff.js",
    "course_work.js",
    "course_live.js",
    "course_student.js",
)


@pytest.fixture(scope="module")
def people(login):
    """Another course's teacher (rival), a TA, and a student of no course (stranger)."""
    people = (("rival", "teacher"), ("tara", "ta"), ("stranger", "student"))
    sessions = {name: login(name, role) for name, role in people}
    sessions["rival"].ok("POST", "/api/groups", 201, json={"name": "rival-course"})
    return sessions


@pytest.fixture(scope="module")
def course(teacher, admin, people):
    """Made by the teacher as the New course form does; alice joins by the admin's act."""
    created = teacher.ok(
        "POST",
        "/api/groups",
        201,
        json={"name": COURSE, "display_name": "Page Course", "kind": "course"},
    )
    assert created["managed"]
    admin.ok("PUT", f"/api/groups/{COURSE}/members/alice", json={"manager": False})
    return COURSE


def check_habits(session: Session, html: str) -> None:
    """Strict CSP habits; labels point at fields; every table is named."""
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    assert not re.search(r"<[a-z][^>]*\sstyle=", html)
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "duplicate ids"
    assert set(re.findall(r'<label for="([^"]+)"', html)) <= set(ids)
    for table in re.findall(r"<table\b[^>]*>\s*(?:<caption[^>]*>)?", html):
        assert "aria-label" in table or "<caption" in table, table
    assert 'href="/static/course.css"' in html
    assert session.get("/static/course.css").status_code == 200


def test_teachers_get_a_new_course_form_students_do_not(teacher, alice):
    page = teacher.get("/courses")
    assert page.status_code == 200
    assert 'id="new-course-form"' in page.text and 'id="c-display"' in page.text
    assert 'id="new-course-form"' not in alice.get("/courses").text
    script = teacher.get("/static/js/courses.js").text
    assert "'/api/groups'" in script and "kind: 'course'" in script


def test_the_teacher_gets_the_whole_course_in_tabs(course, teacher):
    response = teacher.get(f"/courses/{course}")
    assert response.status_code == 200, response.text
    html = response.text
    assert "Page Course" in html and 'role="tablist"' in html
    for tab in TABS:
        assert f'id="tab-{tab}"' in html and f'id="panel-{tab}"' in html, tab
        assert f'aria-controls="panel-{tab}"' in html
    for landmark in (
        'id="import-form"',
        'id="download-passwords"',
        'id="import-error-lines"',
        'id="invitations"',
        'id="ta-form"',
        'id="quota-dialog"',
        'id="deploy-form"',
        'id="assignment-form"',
        'id="live-notebooks"',
    ):
        assert landmark in html, landmark
    # The quota dialog's budget button is for administrators.
    assert 'id="edit-budget"' not in html
    assert f'href="/admin/groups/{course}"' in html and "Members and invitations" in html
    check_habits(teacher, html)
    assert 'src="/static/js/course.js"' in html
    for script in SCRIPTS:
        assert teacher.get(f"/static/js/{script}").status_code == 200, script
    # Informational lines are status boxes, not errors.
    assert 'class="status" id="member-info" role="status"' in html


def test_the_page_s_api_answers_the_teacher(course, teacher):
    base = f"/api/groups/{course}"
    assert {m["name"] for m in teacher.ok("GET", f"{base}/members")} == {"teacher", "alice"}
    assert teacher.ok("GET", f"{base}/invitations") == []
    assert teacher.ok("GET", f"{base}/quota")["usage"]["notebooks"] == 0
    assert teacher.ok("GET", f"{base}/live") == {"notebooks": [], "views": []}
    assert teacher.ok("GET", f"{base}/deployments") == []
    assert teacher.ok("GET", f"{base}/assignments") == []
    assert teacher.ok("GET", f"/api/templates?group={course}&retired=true") == []
    logins = {u["name"]: u for u in teacher.ok("GET", f"/api/users?group={course}")}
    assert "last_login" in logins["alice"]


def test_students_get_a_read_only_page(course, alice):
    response = alice.get(f"/courses/{course}")
    assert response.status_code == 200
    html = response.text
    for landmark in ('id="student-templates"', 'id="student-assignments"', "Your submissions"):
        assert landmark in html, landmark
    for tool in ("import-form", 'role="tablist"', "deploy-form", "live-notebooks", "quota-dialog"):
        assert tool not in html, tool
    check_habits(alice, html)
    assert alice.ok("GET", f"/api/groups/{course}/submissions/mine") == []
    # Read-only: the page's tools are refused to a student by the API as well.
    assert alice.get(f"/api/groups/{course}/live").status_code == 403
    refused = alice.post(f"/api/groups/{course}/import", json={"csv": "username\nx1\n"})
    assert refused.status_code == 403


def test_another_course_s_teacher_and_strangers_are_refused(course, people, alice):
    rival, stranger = people["rival"], people["stranger"]
    for session in (rival, stranger):
        page = session.get(f"/courses/{course}")
        assert page.status_code == 404 and "that you are in" in page.text
        assert session.get(f"/api/groups/{course}/submissions/mine").status_code == 404
    base = f"/api/groups/{course}"
    assert rival.get(f"{base}/live").status_code == 403
    assert rival.post(f"{base}/live/alice/lab/end").status_code == 403
    assert rival.post(f"{base}/import", json={"csv": "username\nx2\n"}).status_code == 403
    assert rival.put(f"{base}/members/stranger", json={"manager": False}).status_code == 403
    # ...while the rival's own course page is theirs.
    assert rival.get("/courses/rival-course").status_code == 200
    assert alice.get("/courses/rival-course").status_code == 404


def test_end_stops_a_student_s_notebook_and_is_audited(site, course, teacher, alice, admin, people):
    alice.ok("POST", "/api/notebooks", 201, json={"name": "lab", "cpu": 1, "memory": "1Gi"})
    alice.ok("POST", "/api/notebooks/alice/lab/start?wait=true", 202)
    assert wait_running(alice, "alice", "lab")["state"] == "running"
    base = f"/api/groups/{course}"
    live = teacher.ok("GET", f"{base}/live")["notebooks"]
    assert [(n["owner"], n["notebook"], n["state"]) for n in live] == [("alice", "lab", "running")]
    # Not shared with the teacher: listed, but no way in.
    assert live[0]["url"] is None and live[0]["access"] is None
    alice.ok(
        "POST",
        "/api/notebooks/alice/lab/shares",
        201,
        json={"grantee": "teacher", "kind": "user", "access": "read"},
    )
    shared = teacher.ok("GET", f"{base}/live")["notebooks"][0]
    assert shared["access"] == "read" and shared["url"] == "/notebook/alice/lab/lab"
    # Only this course's managers end it; only students' notebooks; the rival cannot.
    assert people["rival"].post(f"{base}/live/alice/lab/end").status_code == 403
    assert teacher.post(f"{base}/live/bob/lab/end").status_code == 404
    ended = teacher.ok("POST", f"{base}/live/alice/lab/end")
    assert "stopping" in ended["message"]
    assert wait_state(alice, "alice", "lab", "stopped")["state"] == "stopped"
    assert site.backend.stopped == ["alice/lab"]
    assert teacher.ok("GET", f"{base}/live")["notebooks"] == []
    again = teacher.ok("POST", f"{base}/live/alice/lab/end")
    assert "not running" in again["message"]
    events = admin.ok("GET", "/api/audit", params={"target": "notebook:alice/lab"})
    ends = [e for e in events if e["action"] == "course.notebook_ended"]
    assert len(ends) == 1 and ends[0]["actor"] == "teacher"
    assert ends[0]["details"]["group"] == course
    stops = [e for e in events if e["action"] == "notebook.stopped"]
    assert stops and stops[0]["details"]["cause"] == "course"
    assert "ended by teacher" in stops[0]["details"]["reason"]


def test_the_live_tab_follows_the_course_s_notebooks(site, course, teacher, alice, bob, people):
    """The Live tab reloads on these events instead of a timer: its students' notebooks
    and those shown to the course, nobody else's; only the course's managers listen."""
    base = f"/api/groups/{course}"
    for session in (alice, people["rival"], people["stranger"]):
        refused = session.get(f"{base}/live/events")
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
        assert refused.json()["message"]
    assert teacher.get("/api/groups/no-such-course/live/events").status_code == 404
    alice.ok("POST", "/api/notebooks", 201, json={"name": "follow", "cpu": 0.5, "memory": "512Mi"})
    bob.ok("POST", "/api/notebooks", 201, json={"name": "elsewhere", "cpu": 0.5, "memory": "512Mi"})
    teacher.ok("POST", "/api/notebooks", 201, json={"name": "demo", "cpu": 0.5, "memory": "512Mi"})
    teacher.ok(
        "POST", "/api/notebooks/teacher/demo/broadcast", 201, json={"group": course, "minutes": 30}
    )
    watcher = http_client(site, "teacher")  # a stream never ends: over HTTP

    def act() -> None:
        for session, name in ((bob, "elsewhere"), (teacher, "demo"), (alice, "follow")):
            session.ok("POST", f"/api/notebooks/{session.name}/{name}/start?wait=true", 202)
            session.ok("POST", f"/api/notebooks/{session.name}/{name}/stop?wait=true", 202)

    with watcher:
        [told] = follow_while([(watcher, f"{base}/live/events", ("alice", "follow"))], act)
    assert {(c["owner"], c["name"]) for c in told} == {("teacher", "demo"), ("alice", "follow")}
    assert [c["state"] for c in told if c["owner"] == "alice"] == [
        "starting",
        "running",
        "stopping",
        "stopped",
    ]
    for session, name in ((bob, "elsewhere"), (teacher, "demo"), (alice, "follow")):
        session.ok("DELETE", f"/api/notebooks/{session.name}/{name}")


def test_a_teacher_demotes_the_course_s_ta_and_a_ta_never_the_teacher(
    course, teacher, admin, people
):
    tara = people["tara"]
    invited = teacher.put(f"/api/groups/{course}/members/tara", json={"manager": True})
    assert invited.status_code == 202 and invited.json()["code"] == "invited"
    tara.ok("POST", f"/api/me/invitations/{course}")
    members = {m["name"]: m for m in teacher.ok("GET", f"/api/groups/{course}/members")}
    assert members["tara"]["manager"]
    assert tara.put(f"/api/groups/{course}/members/teacher", json={}).status_code == 403
    demoted = teacher.ok("PUT", f"/api/groups/{course}/members/tara", json={"manager": False})
    assert demoted["manager"] is False
    members = {m["name"]: m for m in teacher.ok("GET", f"/api/groups/{course}/members")}
    assert members["tara"]["manager"] is False and members["teacher"]["manager"]
    assert tara.get(f"/api/groups/{course}/live").status_code == 403
    events = admin.ok("GET", "/api/audit", params={"action": "group.member_changed"})
    assert any(e["actor"] == "teacher" and e["details"]["user"] == "tara" for e in events)

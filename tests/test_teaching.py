"""The teaching workflow end to end: a template published from a teacher's notebook,
students starting from it, lab files deployed to a class (conflicts kept), a
live broadcast, assignments with deadlines, submissions and TAs opening them,
and the refusals around each."""

import json
import subprocess
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from .harness import running_controller, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.end_to_end]

NOTEBOOK = {
    "type": "notebook",
    "format": "json",
    "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
}


@pytest.fixture(scope="module")
def site():
    """The school: a controller process (its notebooks are real JupyterLab servers, reached
    over HTTP with API tokens too), its accounts made by one CLI run."""
    users = [("headmaster", "admin"), ("prof", "teacher"), ("tina", "ta"), ("otherta", "ta")]
    users += [(student, "student") for student in ("alice", "bob", "eve")]
    with running_controller(users) as ctl:
        with ctl.client("prof") as prof:
            prof.ok(
                "POST", "/api/groups", 201, json={"name": "ml", "display_name": "Machine Learning"}
            )
        # Existing accounts join a course by an admin's act (a teacher's would be an invitation).
        with ctl.client("headmaster") as admin:
            admin.ok("POST", "/api/groups/ml/import", json={"csv": "username\nalice\nbob\n"})
            admin.ok("PUT", "/api/groups/ml/members/tina", json={"manager": True})
            admin.ok("POST", "/api/groups", 201, json={"name": "other"})
            admin.ok("PUT", "/api/groups/other/members/otherta", json={"manager": True})
            admin.ok("PUT", "/api/groups/other/members/eve", json={"manager": False})
        yield ctl


@pytest.fixture(scope="module")
def people(site):
    sessions = {
        name: site.client(name) for name in ("prof", "tina", "otherta", "alice", "bob", "eve")
    }
    yield sessions
    for session in sessions.values():
        session.close()


def token_of(session) -> dict:
    token = session.ok("POST", "/api/me/tokens", 201, json={"name": "t"})["token"]
    return {"Authorization": f"Bearer {token}"}


def put_file(ctl, headers, path, body):
    response = httpx.put(f"{ctl.url}{path}", json=body, headers=headers)
    assert response.status_code in (200, 201), response.text


def wait_running(session, owner, name):
    """harness.wait_running, failing at once should the start go anywhere but running."""

    def running():
        nb = session.ok("GET", f"/api/notebooks/{owner}/{name}")
        assert nb["state"] in ("running", "starting", "queued"), nb
        return nb if nb["state"] == "running" else None

    return wait_until(running, timeout=90, interval=0.5, what=f"{owner}/{name} to start")


@pytest.fixture(scope="module")
def prep(site, people):
    """The teacher's notebook with lab material."""
    prof = people["prof"]
    prof.ok("POST", "/api/notebooks", 201, json={"name": "prep", "cpu": 1, "memory": "1Gi"})
    prof.ok("POST", "/api/notebooks/prof/prep/start?wait=true", 202)
    headers = token_of(prof)
    base = "/notebook/prof/prep/api/contents"
    for folder in ("hw1", "data"):
        put_file(site, headers, f"{base}/{folder}", {"type": "directory"})
    put_file(site, headers, f"{base}/hw1/task.ipynb", NOTEBOOK)
    # A checkpoint appears in hw1/.ipynb_checkpoints: templates must leave it out.
    checkpoint = httpx.post(f"{site.url}{base}/hw1/task.ipynb/checkpoints", headers=headers)
    assert checkpoint.status_code == 201
    put_file(
        site,
        headers,
        f"{base}/data/points.csv",
        {"type": "file", "format": "text", "content": "x,y\n" + "1,2\n" * 1000},
    )
    return headers


def test_publish_a_template_and_start_from_it(site, people, prep):
    prof, alice, bob, eve = people["prof"], people["alice"], people["bob"], people["eve"]
    refused = alice.post("/api/templates", json={"notebook": "x", "name": "mine"})
    assert refused.status_code == 404 or refused.status_code == 403
    published = prof.ok(
        "POST",
        "/api/templates",
        201,
        json={
            "notebook": "prep",
            "name": "ml-lab",
            "display_name": "ML lab",
            "description": "Week 1 to 3",
            "version_label": "2027 spring",
            "visibility": "group",
            "group": "ml",
            "paths": ["hw1", "data"],
            "excluded": [".ipynb_checkpoints"],
        },
    )
    latest = published["latest"]
    assert (latest["version"], latest["files"], latest["environment"]) == (1, 2, "default")
    assert len(latest["content_hash"]) == 64
    assert [t["name"] for t in alice.ok("GET", "/api/templates")] == ["ml-lab"]
    assert eve.ok("GET", "/api/templates") == []
    assert eve.post("/api/notebooks", json={"template": "ml-lab"}).status_code == 404
    # One click for the student: the template's resources and files.
    nb = bob.ok("POST", "/api/notebooks", 201, json={"template": "ml-lab", "start": True})
    assert nb["name"] == "ml-lab" and nb["cpu_milli"] == 1000
    wait_running(bob, "bob", "ml-lab")
    listing = bob.ok("GET", "/notebook/bob/ml-lab/api/contents/hw1")
    assert [item["name"] for item in listing["content"]] == ["task.ipynb"]
    assert bob.ok("GET", "/notebook/bob/ml-lab/api/contents/data/points.csv")["size"] > 4000
    again = bob.ok("POST", "/api/notebooks", 201, json={"template": "ml-lab"})
    assert again["name"] == "ml-lab-2"
    # A template that is too big is refused whole, and nothing is stored.
    too_big = prof.post(
        "/api/templates", json={"notebook": "prep", "name": "huge", "paths": ["/etc"]}
    )
    assert too_big.status_code == 400 and "relative" in too_big.json()["message"]
    assert prof.get("/api/templates/huge").status_code == 404
    # The author retires it: nobody starts it any more.
    prof.ok("PATCH", "/api/templates/ml-lab", json={"retired": True})
    assert alice.post("/api/notebooks", json={"template": "ml-lab"}).status_code == 409
    prof.ok("PATCH", "/api/templates/ml-lab", json={"retired": False})
    assert alice.patch("/api/templates/ml-lab", json={"retired": True}).status_code == 403
    # Its page renders for a student (it once answered 500).
    page = alice.get("/templates/ml-lab")
    assert page.status_code == 200 and 'data-template="ml-lab"' in page.text


def wait_deployment(session, deployment_id):
    """The deployment once its progress stream (the page's) says it is done."""
    path = f"/api/deployments/{deployment_id}/events"
    with session.stream("GET", path, timeout=60) as stream:
        assert stream.status_code == 200, stream.read()
        done = any(
            line.startswith("data: ") and json.loads(line[6:])["done"]
            for line in stream.iter_lines()
        )
    assert done, "the deployment's stream ended before it was done"
    deployment = session.ok("GET", f"/api/deployments/{deployment_id}")
    assert deployment["state"] != "running", deployment
    return deployment


def test_deploy_lab_files_to_the_class_never_overwriting(site, people, prep):
    prof, alice, bob = people["prof"], people["alice"], people["bob"]
    assert (
        alice.post(
            "/api/groups/ml/deployments", json={"notebook": "x", "destination": "w"}
        ).status_code
        == 403
    )
    assert (
        people["otherta"]
        .post("/api/groups/ml/deployments", json={"notebook": "x", "destination": "w"})
        .status_code
        == 403
    )
    bad = prof.post(
        "/api/groups/ml/deployments", json={"notebook": "prep", "destination": "../../etc"}
    )
    assert bad.status_code == 400
    first = prof.ok(
        "POST",
        "/api/groups/ml/deployments",
        202,
        json={"notebook": "prep", "path": "hw1", "destination": "week1", "title": "Week 1"},
    )
    done = wait_deployment(prof, first["id"])
    assert done["state"] == "done" and set(done["report"]) == {"alice", "bob", "tina"}
    assert done["report"]["alice"] == {"copied": 1, "skipped": 0, "conflicts": []}
    # Stored once: every member's file is the same one, root's, which no member can change
    # in place; the store itself is gone (the members' links keep the file).
    courses = site.data_dir / "course-folders"
    copies = [courses / who / "ml/week1/task.ipynb" for who in ("alice", "bob", "tina")]
    assert len({(c.stat().st_ino, c.stat().st_uid, oct(c.stat().st_mode)) for c in copies}) == 1
    assert copies[0].stat().st_uid == 0 and copies[0].stat().st_nlink == 3
    assert copies[1].parent.stat().st_uid != 0  # the folder is Bob's own
    writes = subprocess.run(
        [
            "setpriv",
            f"--reuid={copies[1].parent.stat().st_uid}",
            "--regid=65534",
            "--clear-groups",
            "sh",
            "-c",
            f"echo changed >> '{copies[1]}'",
        ],
        capture_output=True,
        text=True,
    )
    assert writes.returncode != 0 and "Permission denied" in writes.stderr
    assert not any((site.data_dir / "lab-files").iterdir())
    # Bob sees it in every notebook of his, stopped or running, under courses/ml/.
    assert (
        bob.ok("GET", "/notebook/bob/ml-lab/api/contents/courses/ml/week1/task.ipynb")["type"]
        == "notebook"
    )
    # Alice changes her copy in a notebook of hers; a second deployment keeps her version.
    alice.ok("POST", "/api/notebooks", 201, json={"template": "ml-lab", "start": True})
    wait_running(alice, "alice", "ml-lab")
    headers = token_of(alice)
    put_file(
        site,
        headers,
        "/notebook/alice/ml-lab/api/contents/courses/ml/week1/task.ipynb",
        {"type": "file", "format": "text", "content": "my answers"},
    )
    second = wait_deployment(
        prof,
        prof.ok(
            "POST",
            "/api/groups/ml/deployments",
            202,
            json={
                "notebook": "prep",
                "path": "hw1",
                "destination": "week1",
                "title": "Week 1 again",
            },
        )["id"],
    )
    assert second["report"]["bob"] == {"copied": 0, "skipped": 1, "conflicts": []}
    assert second["report"]["alice"]["conflicts"] == [
        {"path": "ml/week1/task.ipynb", "saved_as": "ml/week1/task (from prof).ipynb"}
    ]
    mine = alice.ok(
        "GET",
        "/notebook/alice/ml-lab/api/contents/courses/ml/week1/task.ipynb?format=text&type=file",
    )
    assert mine["content"] == "my answers"
    # Alice's save made her own copy (copy on first write); Bob's is the stored one still.
    assert copies[0].stat().st_uid != 0 and copies[0].stat().st_nlink == 1
    assert copies[1].stat().st_uid == 0 and copies[1].read_text() != "my answers"
    # The course overview flags new material until seen.
    course = alice.ok("GET", "/api/courses")[0]
    assert course["name"] == "ml" and all(d["new"] for d in course["deployments"])
    alice.ok("POST", "/api/courses/seen")
    assert not any(d["new"] for d in alice.ok("GET", "/api/courses")[0]["deployments"])
    events = prof.ok("GET", "/api/groups/ml/deployments")
    assert [d["title"] for d in events] == ["Week 1 again", "Week 1"]


def test_broadcast_is_a_time_limited_read_only_view(site, people, prep):
    prof, alice, eve = people["prof"], people["alice"], people["eve"]
    assert (
        prof.post(
            "/api/notebooks/prof/prep/broadcast", json={"group": "ml", "minutes": 0}
        ).status_code
        == 400
    )
    share = prof.ok(
        "POST", "/api/notebooks/prof/prep/broadcast", 201, json={"group": "ml", "minutes": 45}
    )
    assert share["expires_at"] and share["access"] == "read"
    live = alice.ok("GET", "/api/courses")[0]["broadcasts"]
    assert [(b["owner"], b["notebook"], b["running"]) for b in live] == [("prof", "prep", True)]
    assert alice.get("/notebook/prof/prep/api/contents/hw1").status_code == 200
    write = httpx.put(
        f"{site.url}/notebook/prof/prep/api/contents/hw1/x.txt",
        json={"type": "file", "format": "text", "content": "x"},
        headers=token_of(alice),
    )
    assert write.status_code == 403
    assert eve.get("/notebook/prof/prep/api/contents/hw1").status_code == 404
    prof.ok("DELETE", f"/api/notebooks/prof/prep/shares/{share['id']}")
    assert alice.get("/notebook/prof/prep/api/contents/hw1").status_code == 404


def test_assignments_submissions_and_tas(site, people, prep):
    prof, tina, alice, bob, eve = (people[n] for n in ("prof", "tina", "alice", "bob", "eve"))
    future = (datetime.now(timezone.utc) + timedelta(days=7)).isoformat()
    past = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()
    hw1 = prof.ok(
        "POST",
        "/api/groups/ml/assignments",
        201,
        json={"name": "hw1", "title": "Homework 1", "deadline": future, "allow_late": False},
    )
    closed = prof.ok(
        "POST",
        "/api/groups/ml/assignments",
        201,
        json={"name": "hw0", "deadline": past, "allow_late": False},
    )
    late = prof.ok(
        "POST", "/api/groups/ml/assignments", 201, json={"name": "hw2", "deadline": past}
    )
    tiny = prof.ok(
        "POST", "/api/groups/ml/assignments", 201, json={"name": "tiny", "max_bytes": 100}
    )
    assert alice.post("/api/groups/ml/assignments", json={"name": "x"}).status_code == 403
    assert prof.post("/api/groups/ml/assignments", json={"name": "hw1"}).status_code == 409
    mine = alice.ok("GET", "/api/assignments")
    assert [a["name"] for a in mine] == ["hw1", "tiny", "hw2", "hw0"]
    submit = f"/api/assignments/{hw1['id']}/submissions"
    first = alice.ok(
        "POST", submit, 201, json={"notebook": "ml-lab", "paths": ["hw1"], "note": "done"}
    )
    assert (first["number"], first["files"], first["late"]) == (1, 1, False) and len(
        first["content_hash"]
    ) == 64
    second = alice.ok("POST", submit, 201, json={"notebook": "ml-lab", "paths": ["hw1", "data"]})
    assert (second["number"], second["files"]) == (2, 2) and second["content_hash"] != first[
        "content_hash"
    ]
    # Refusals: another course's student, a closed deadline, size, traversal, nothing chosen.
    assert eve.post(submit, json={"notebook": "ml-lab", "paths": ["hw1"]}).status_code == 403
    closed_answer = alice.post(
        f"/api/assignments/{closed['id']}/submissions",
        json={"notebook": "ml-lab", "paths": ["hw1"]},
    )
    assert (
        closed_answer.status_code == 403
        and "late submissions are not accepted" in closed_answer.json()["message"]
    )
    assert (
        alice.ok(
            "POST",
            f"/api/assignments/{late['id']}/submissions",
            201,
            json={"notebook": "ml-lab", "paths": ["hw1"]},
        )["late"]
        is True
    )
    too_big = alice.post(
        f"/api/assignments/{tiny['id']}/submissions", json={"notebook": "ml-lab", "paths": ["data"]}
    )
    assert too_big.status_code == 400 and "at most" in too_big.json()["message"]
    assert (
        alice.post(submit, json={"notebook": "ml-lab", "paths": ["../../etc"]}).status_code == 400
    )
    assert alice.post(submit, json={"notebook": "ml-lab", "paths": []}).status_code == 400
    # The TA sees every submission; the link works for this course's TAs and the student only.
    listed = tina.ok("GET", submit)
    assert [(s["student"], s["number"]) for s in listed["submissions"]] == [
        ("alice", 2),
        ("alice", 1),
    ]
    assert (
        alice.ok("GET", f"/api/submissions/{first['id']}")["manifest"][0]["path"]
        == "hw1/task.ipynb"
    )
    for outsider in (bob, people["otherta"]):
        assert outsider.get(f"/api/submissions/{first['id']}").status_code == 404
        assert outsider.get(f"/submissions/{first['id']}").status_code == 404
    assert tina.get(f"/submissions/{first['id']}").status_code == 200
    assert bob.get(submit).status_code == 403
    # The TA opens it as a runnable notebook of their own; alice's original is untouched.
    opened = tina.ok("POST", f"/api/submissions/{first['id']}/open", 202)
    assert opened["owner"] == "tina" and opened["name"] == "hw1-alice-1"
    wait_running(tina, "tina", "hw1-alice-1")
    assert (
        tina.ok("GET", "/notebook/tina/hw1-alice-1/api/contents/hw1")["content"][0]["name"]
        == "task.ipynb"
    )
    assert alice.post(f"/api/submissions/{first['id']}/open").status_code == 403


def test_the_server_extension_side(site, people, prep):
    prof, alice = people["prof"], people["alice"]
    headers = token_of(alice)
    files = httpx.get(
        f"{site.url}/notebook/alice/ml-lab/cgu-lab/files?path=", headers=headers
    ).json()
    names = {e["name"]: e for e in files["entries"]}
    assert names["hw1"]["type"] == "directory" and names["hw1"]["files"] == 1
    assert names["courses"]["excluded"]
    assert (
        httpx.get(
            f"{site.url}/notebook/alice/ml-lab/cgu-lab/files?path=../..", headers=headers
        ).status_code
        == 400
    )
    options = httpx.get(
        f"{site.url}/notebook/alice/ml-lab/cgu-lab/templates/options", headers=headers
    ).json()
    assert options["can_publish"] is False and options["defaults"]["cpu_milli"] == 1000
    assignments = httpx.get(
        f"{site.url}/notebook/alice/ml-lab/cgu-lab/assignments", headers=headers
    ).json()
    hw1 = next(a for a in assignments if a["name"] == "hw1")
    receipt = httpx.post(
        f"{site.url}/notebook/alice/ml-lab/cgu-lab/submit",
        headers=headers,
        json={"assignment_id": hw1["id"], "paths": ["hw1/task.ipynb"], "note": "from JupyterLab"},
    )
    assert receipt.status_code == 201 and receipt.json()["number"] == 3
    courses = httpx.get(f"{site.url}/notebook/alice/ml-lab/cgu-lab/courses", headers=headers).json()
    assert courses["groups"][0]["folder"] == "courses/ml"
    teacher = token_of(prof)
    version = httpx.post(
        f"{site.url}/notebook/prof/prep/cgu-lab/templates",
        headers=teacher,
        json={
            "name": "ml-lab",
            "display_name": "ML lab",
            "visibility": "group",
            "group": "ml",
            "paths": ["hw1"],
            "excluded": [],
        },
    )
    assert version.status_code == 201 and version.json()["version"] == 2

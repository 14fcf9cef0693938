"""A class session end to end with real notebook servers: the controller's own loop
pre-warms the student's notebook from the session's template, and it is the student's
own, on its own origin, with the template's files; their Open attaches to it."""

from datetime import datetime, timedelta, timezone

import pytest

from .conftest import STANDARD_USERS
from .harness import notebook_host, running_controller, wait_running, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.end_to_end]

COURSE = "sess-e2e"
TASK = {
    "type": "notebook",
    "format": "json",
    "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
}


@pytest.fixture(scope="module")
def controller():
    """A controller whose class session loop looks every second (the default is 30 s)."""
    with running_controller(STANDARD_USERS, env={"CGU_LAB_CLASS_SESSION_INTERVAL": "1"}) as ctl:
        yield ctl


def test_a_prewarmed_notebook_is_the_students_own_with_the_templates_files(
    controller, admin, teacher, alice, bob
):
    admin.ok("POST", "/api/groups", 201, json={"name": COURSE})
    admin.ok("PUT", f"/api/groups/{COURSE}/members/teacher", json={"manager": True})
    admin.ok("PUT", f"/api/groups/{COURSE}/members/alice", json={"manager": False})
    # The teacher's material, written through their own running notebook.
    body = {"name": "prep", "memory": "512Mi", "start": True}
    teacher.ok("POST", "/api/notebooks", 201, json=body)
    wait_running(teacher, "teacher", "prep")
    teacher.ok("PUT", "/notebook/teacher/prep/api/contents/week1", 201, json={"type": "directory"})
    teacher.ok("PUT", "/notebook/teacher/prep/api/contents/week1/task.ipynb", 201, json=TASK)
    teacher.ok(
        "POST",
        "/api/templates",
        201,
        json={
            "name": "e2e-lab",
            "notebook": "prep",
            "paths": ["week1"],
            "visibility": "group",
            "group": COURSE,
            "memory": "512Mi",
        },
    )
    teacher.ok("POST", "/api/notebooks/teacher/prep/stop", 202)

    # Starts in 3 minutes, pre-warmed 5 minutes ahead: the loop's next pass starts it.
    starts = datetime.now(timezone.utc) + timedelta(minutes=3)
    booked = teacher.ok(
        "POST",
        f"/api/courses/{COURSE}/sessions",
        201,
        json={
            "title": "E2E lab",
            "template": "e2e-lab",
            "starts_at": starts.isoformat(),
            "ends_at": (starts + timedelta(minutes=30)).isoformat(),
        },
    )
    path = f"/api/courses/{COURSE}/sessions/{booked['id']}"

    def seat():
        (person,) = teacher.ok("GET", path)["people"] or [None]
        return person if person and person["notebook"] else None

    person = wait_until(seat, timeout=90, what="alice's notebook pre-warmed")
    assert person["student"] == "alice" and person["message"] == "Pre-warmed for E2E lab"
    name = person["notebook"]
    wait_running(alice, "alice", name, seconds=120)

    # Alice's click attaches to the running notebook.
    opened = alice.ok("POST", f"{path}/open")
    assert opened == {"notebook": name, "state": "running", "url": f"/notebook/alice/{name}/lab"}
    # Her own: its server knows her as its user, and it runs on her notebook's origin.
    me = alice.ok("GET", f"/notebook/alice/{name}/api/me")
    assert me["identity"]["username"] == "alice"
    host = notebook_host(controller.url, "alice", name)
    assert host.startswith(f"alice--{name}.") and host.split(":")[0] != "127.0.0.1"
    # The template's files are in it.
    listing = alice.ok("GET", f"/notebook/alice/{name}/api/contents/week1")
    assert [item["name"] for item in listing["content"]] == ["task.ipynb"]
    # Nobody else's: another student is refused on its origin and in the API.
    assert bob.get(f"/notebook/alice/{name}/api/contents/week1").status_code in (403, 404)
    assert bob.get(f"/api/notebooks/alice/{name}").status_code == 404
    alice.ok("POST", f"/api/notebooks/alice/{name}/stop", 202)

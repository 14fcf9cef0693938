"""A teacher publishes a notebook as a page with Voilà from JupyterLab, with real processes,
and the page survives a restart of the notebook.

The Publish command's two calls, made as JupyterLab makes them on the notebook's origin:
`cgu-lab/apps/voila` (the server extension makes the app `voila-<name>/`, which
jupyter-server-proxy runs) and `cgu-lab/demos` (the controller's lab route publishes it
to the course with the portal's service). A student of the course reads the rendered
notebook; the teacher stops and starts the notebook; the student reads it again, nobody
having run anything. The controller runs in the test's process with real notebook
servers (conftest's `notebook_servers` layer).
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from .test_apps_voila import LESSON

pytestmark = [
    pytest.mark.integration,
    pytest.mark.notebook_servers,
    pytest.mark.skipif(importlib.util.find_spec("voila") is None, reason="voila is not installed"),
]

OWNER, NAME = "teacher", "pages"
SITE = f"/notebook/{OWNER}/{NAME}"
NOTEBOOK_API = f"/api/notebooks/{OWNER}/{NAME}"


@pytest.fixture(scope="module")
def course(admin, teacher, alice, bob):
    """The teacher's running notebook with a lesson; alice in the teacher's course."""
    admin.ok("POST", "/api/groups", 201, json={"name": "pages101"})
    admin.ok("PUT", "/api/groups/pages101/members/alice", json={"manager": False})
    admin.ok("PUT", "/api/groups/pages101/members/teacher", json={"manager": True})
    teacher.ok("POST", "/api/notebooks", 201, json={"name": NAME, "cpu": 1, "memory": "1Gi"})
    teacher.ok("POST", f"{NOTEBOOK_API}/start?wait=true", 202)
    saved = teacher.put(
        f"{SITE}/api/contents/lesson.ipynb",
        json={"type": "notebook", "format": "json", "content": LESSON},
    )
    assert saved.status_code in (200, 201), saved.text
    return "pages101"


def test_a_page_published_from_the_lab_answers_again_after_a_restart(course, teacher, alice, bob):
    options = teacher.ok("GET", f"{SITE}/cgu-lab/demos")
    assert options["may_publish"] is True
    assert {"name": course, "display_name": course} in options["courses"]
    assert options["demos"] == []

    made = teacher.ok("POST", f"{SITE}/cgu-lab/apps/voila", json={"notebook": "lesson.ipynb"})
    assert made == {"app": "voila-lesson/", "notebook": "lesson.ipynb"}
    body = {"app": made["app"], "course": course, "title": "Lesson 1"}
    demo = teacher.ok("POST", f"{SITE}/cgu-lab/demos", 201, json=body)
    assert (demo["app"], demo["course"], demo["title"]) == ("voila-lesson/", course, "Lesson 1")
    assert teacher.ok("GET", f"{SITE}/cgu-lab/demos")["demos"][0]["id"] == demo["id"]

    page = alice.get(f"{SITE}/voila-lesson/")
    assert page.status_code == 200, page.text[:2000]
    assert "rendered by voila: 42" in page.text
    # Every file the page asks for is under the app's path, and reaches the student there.
    assets = re.findall(r'(?:src|href)="(/[^"]*)"', page.text)
    assert assets and all(a.startswith(f"{SITE}/voila-lesson/") for a in assets), assets
    assert alice.get(assets[0]).status_code == 200
    # A student outside the course, and Voilà's server extension of the whole home, stay shut.
    assert bob.get(f"{SITE}/voila-lesson/").status_code == 404
    assert alice.get(f"{SITE}/voila/render/lesson.ipynb").status_code == 403

    teacher.ok("POST", f"{NOTEBOOK_API}/stop?wait=true", 202)
    teacher.ok("POST", f"{NOTEBOOK_API}/start?wait=true", 202)
    again = alice.get(f"{SITE}/voila-lesson/")
    assert again.status_code == 200, again.text[:2000]
    assert "rendered by voila: 42" in again.text


def test_only_the_owner_who_may_publish_is_offered_it(course, teacher, alice):
    # A student of the course reaches the page only: not the dialog's routes.
    assert alice.get(f"{SITE}/cgu-lab/demos").status_code in (403, 404)
    refused = alice.post(f"{SITE}/cgu-lab/apps/voila", json={"notebook": "lesson.ipynb"})
    assert refused.status_code in (403, 404)
    # A student's own notebook offers no publishing (students do not publish).
    alice.ok("POST", "/api/notebooks", 201, json={"name": "mine", "cpu": 1, "memory": "1Gi"})
    mine = alice.ok("GET", "/notebook/alice/mine/cgu-lab/demos")
    assert (mine["may_publish"], mine["courses"]) == (False, [])
    bad = teacher.post(f"{SITE}/cgu-lab/demos", json={"app": "voila/", "course": course})
    assert bad.status_code == 400 and bad.json()["message"]

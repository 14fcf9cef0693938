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

import psutil
import pytest

from .harness import code_notebook
from .test_apps_voila import LESSON

pytestmark = [
    pytest.mark.integration,
    pytest.mark.notebook_servers,
    pytest.mark.skipif(importlib.util.find_spec("voila") is None, reason="voila is not installed"),
]

OWNER, NAME = "teacher", "pages"
SITE = f"/notebook/{OWNER}/{NAME}"
NOTEBOOK_API = f"/api/notebooks/{OWNER}/{NAME}"
QUIZ = code_notebook("print('the quiz page')")


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


def _page_processes(app: str) -> list[psutil.Process]:
    """The Voilà processes serving `app` (the notebook's server runs them; read by their
    command line, whoever's they are)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        line = process.info["cmdline"] or []
        if any(a.startswith("--Voila.base_url=") and a.endswith(f"{SITE}/{app}") for a in line):
            found.append(process)
    return found


def _listed(teacher) -> set[str]:
    """The pages the notebook's server shows (answered after its start's check)."""
    return {d["app"] for d in teacher.ok("GET", f"{SITE}/cgu-lab/apps/voila")["demos"]}


def _publish_quiz(teacher, course: str) -> dict:
    made = teacher.ok("POST", f"{SITE}/cgu-lab/apps/voila", json={"notebook": "quiz.ipynb"})
    assert made["app"] == "voila-quiz/"
    body = {"app": made["app"], "course": course, "title": "Quiz"}
    return teacher.ok("POST", f"{SITE}/cgu-lab/demos", 201, json=body)


def test_an_unpublished_page_stops_and_does_not_come_back(course, teacher, alice):
    saved = teacher.put(
        f"{SITE}/api/contents/quiz.ipynb",
        json={"type": "notebook", "format": "json", "content": QUIZ},
    )
    assert saved.status_code in (200, 201), saved.text

    # Unpublished while the notebook runs: the page leaves its server's list at once, its
    # Voilà stops, and its path answers nobody (the owner neither: it is no app any more).
    demo = _publish_quiz(teacher, course)
    assert "the quiz page" in alice.get(f"{SITE}/voila-quiz/").text
    assert len(_page_processes("voila-quiz/")) == 1
    teacher.ok("DELETE", f"{NOTEBOOK_API}/demos/{demo['id']}")
    # (403: the lesson's page is still hers to visit here, and nothing else.)
    assert alice.get(f"{SITE}/voila-quiz/").status_code == 403
    assert _listed(teacher) == {"voila-lesson/"}
    assert _page_processes("voila-quiz/") == []
    assert teacher.get(f"{SITE}/voila-quiz/").status_code in (302, 404)
    assert _page_processes("voila-quiz/") == []

    # Published again, it runs again; then unpublished while the notebook is stopped:
    # its next start drops it, and keeps the page still published.
    demo = _publish_quiz(teacher, course)
    assert "the quiz page" in alice.get(f"{SITE}/voila-quiz/").text
    teacher.ok("POST", f"{NOTEBOOK_API}/stop?wait=true", 202)
    teacher.ok("DELETE", f"{NOTEBOOK_API}/demos/{demo['id']}")
    teacher.ok("POST", f"{NOTEBOOK_API}/start?wait=true", 202)
    assert _listed(teacher) == {"voila-lesson/"}
    assert teacher.get(f"{SITE}/voila-quiz/").status_code in (302, 404)
    assert _page_processes("voila-quiz/") == []
    assert "rendered by voila: 42" in alice.get(f"{SITE}/voila-lesson/").text

    # The server's question is for its own token (the start above asked with it), not a
    # person's session.
    assert teacher.get(f"{NOTEBOOK_API}/published").status_code == 403

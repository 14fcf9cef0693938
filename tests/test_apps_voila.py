"""A notebook shown as a page with Voilà, run by a real jupyter_server itself.

The owner asks for the page (`POST cgu-lab/apps/voila`); jupyter-server-proxy starts
Voilà on the first request to the app's path and serves the rendered notebook there,
its links under that path. The list is kept in the home, so a server started again
(the persistent notebook restarted) serves the same page at the same path without
being asked: the second test's server finds the list the first kind of request left.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import psutil
import pytest
from tornado.httpclient import HTTPClientError

from cgu_lab.core import publishing
from cgu_lab.core.errors import Invalid
from cgu_lab.notebook.apps.voila_demos import STORE, VoilaDemos

from .harness import code_notebook, extension_server_config
from .harness import proxy_headers as as_user

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(importlib.util.find_spec("voila") is None, reason="voila is not installed"),
]

LESSON = code_notebook("print('rendered by voila:', 6 * 7)")
OWNER = as_user("alice")
# A POST carries the XSRF cookie and header as JupyterLab sends them.
XSRF = {"X-XSRFToken": "x", "Cookie": "_xsrf=x"}


@pytest.fixture
def home(monkeypatch, tmp_path) -> Path:
    place = tmp_path / "home"
    place.mkdir()
    monkeypatch.setenv("HOME", str(place))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    return place


@pytest.fixture
def listed_before_start(request, home, lesson) -> bool:
    """Whether the home lists the lesson as a page when the server starts (as the owner's
    request left it before the notebook was restarted)."""
    listed = getattr(request, "param", False)
    if listed:
        VoilaDemos.load(home, Path("unused")).add(lesson, set())
    return listed


@pytest.fixture
def jp_server_config(listed_before_start):
    config = extension_server_config(CguLabExtension={"apps": "[]"})
    config["ServerApp"]["jpserver_extensions"]["jupyter_server_proxy"] = True
    return config


@pytest.fixture
def lesson(jp_root_dir) -> str:
    (jp_root_dir / "course 1").mkdir()
    (jp_root_dir / "course 1" / "Lesson {1}.ipynb").write_text(json.dumps(LESSON))
    return "course 1/Lesson {1}.ipynb"


async def _add(jp_fetch, notebook: str):
    body = json.dumps({"notebook": notebook})
    headers = {**OWNER, **XSRF}
    return await jp_fetch("cgu-lab", "apps", "voila", method="POST", headers=headers, body=body)


async def _page(jp_fetch, app: str, who: dict) -> str:
    page = await jp_fetch(app, headers=who, request_timeout=90)
    return page.body.decode()


def _voila_processes(app: str) -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if any(a.endswith(f"/{app}") for a in child.cmdline() if a.startswith("--Voila.")):
                found.append(child)
        except psutil.Error:
            continue
    return found


async def test_the_owner_shows_a_notebook_as_a_page_kept_in_the_home(
    jp_fetch, jp_base_url, home, lesson
):
    made = await _add(jp_fetch, lesson)
    answer = json.loads(made.body)
    assert answer == {"app": "voila-lesson-1/", "notebook": lesson}
    assert publishing.check_prefix(answer["app"]) == answer["app"]
    # Kept in the home, where the next start of the server reads it.
    assert json.loads((home / STORE).read_text()) == {"demos": {"voila-lesson-1": lesson}}
    # Asking again gives the same app, not a second one.
    again = await _add(jp_fetch, lesson)
    assert json.loads(again.body)["app"] == "voila-lesson-1/"

    # An editor opens it (as the owner's published demo's visitors would, through the proxy).
    text = await _page(jp_fetch, "voila-lesson-1/", as_user("bob", "edit"))
    assert "rendered by voila: 42" in text
    assets = re.findall(r'(?:src|href)="(/[^"]*)"', text)
    assert assets and all(a.startswith(f"{jp_base_url}voila-lesson-1/") for a in assets), assets
    assert len(_voila_processes("voila-lesson-1/")) == 1

    listed = await jp_fetch("cgu-lab", "apps", "voila", headers=as_user("bob", "edit"))
    assert json.loads(listed.body)["demos"] == [{"app": "voila-lesson-1/", "notebook": lesson}]


@pytest.mark.parametrize("listed_before_start", [True], indirect=True)
async def test_a_server_started_again_serves_the_pages_its_home_lists(jp_fetch, home, lesson):
    text = await _page(jp_fetch, "voila-lesson-1/", OWNER)
    assert "rendered by voila: 42" in text
    assert len(_voila_processes("voila-lesson-1/")) == 1


async def test_only_the_owner_adds_a_page_and_bad_requests_say_why(jp_fetch, home, lesson):
    async def refused(who: dict, body: bytes | str, status: int) -> dict:
        with pytest.raises(HTTPClientError) as caught:
            headers = {**who, **XSRF}
            await jp_fetch("cgu-lab", "apps", "voila", method="POST", headers=headers, body=body)
        assert caught.value.code == status
        return json.loads(caught.value.response.body)

    editor = await refused(as_user("bob", "edit"), json.dumps({"notebook": lesson}), 403)
    assert editor["code"] == "not_owner"
    viewer = as_user("carol", "read")
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("cgu-lab", "apps", "voila", headers=viewer)
    assert caught.value.code == 403
    assert (await refused(OWNER, b"{", 400))["code"] == "invalid"
    assert (await refused(OWNER, json.dumps({"notebook": 7}), 400))["code"] == "invalid"
    outside = await refused(OWNER, json.dumps({"notebook": "../x.ipynb"}), 400)
    assert outside["code"] == "invalid"
    assert "Voilà shows an .ipynb" in (await refused(OWNER, '{"notebook": "a.py"}', 400))["message"]
    missing = await refused(OWNER, json.dumps({"notebook": "none.ipynb"}), 404)
    assert missing["code"] == "not_found"
    assert not (home / STORE).exists()


async def _remove(jp_fetch, app: str, who: dict):
    headers = {**who, **XSRF}
    return await jp_fetch("cgu-lab", "apps", "voila", app, method="DELETE", headers=headers)


async def test_the_owner_removes_a_page_its_voila_stops_and_it_can_come_back(
    jp_fetch, home, lesson
):
    await _add(jp_fetch, lesson)
    assert "rendered by voila: 42" in await _page(jp_fetch, "voila-lesson-1/", OWNER)
    [running] = _voila_processes("voila-lesson-1/")

    for who, status, code in (
        (as_user("bob", "edit"), 403, "not_owner"),
        (OWNER, 404, "not_found"),
    ):
        with pytest.raises(HTTPClientError) as caught:
            await _remove(jp_fetch, "voila-lesson-1" if status == 403 else "voila-other", who)
        assert caught.value.code == status
        assert json.loads(caught.value.response.body)["code"] == code

    removed = await _remove(jp_fetch, "voila-lesson-1", OWNER)
    assert json.loads(removed.body)["app"] == "voila-lesson-1/"
    assert json.loads((home / STORE).read_text()) == {"demos": {}}
    assert not running.is_running() or running.status() == psutil.STATUS_ZOMBIE
    assert _voila_processes("voila-lesson-1/") == []
    # Its path is gone (the server's own answers: its trailing slash dropped, then 404),
    # and a request does not start it again.
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("voila-lesson-1/", headers=OWNER, follow_redirects=False)
    assert caught.value.code == 302
    assert caught.value.response.headers["Location"].endswith("/voila-lesson-1")
    with pytest.raises(HTTPClientError) as caught:
        await jp_fetch("voila-lesson-1", headers=OWNER, follow_redirects=False)
    assert caught.value.code == 404
    assert _voila_processes("voila-lesson-1/") == []
    listed = await jp_fetch("cgu-lab", "apps", "voila", headers=OWNER)
    assert json.loads(listed.body)["demos"] == []

    # Shown again, it runs again, at the same path.
    again = await _add(jp_fetch, lesson)
    assert json.loads(again.body)["app"] == "voila-lesson-1/"
    assert "rendered by voila: 42" in await _page(jp_fetch, "voila-lesson-1/", OWNER)
    assert len(_voila_processes("voila-lesson-1/")) == 1


def test_names_of_pages_and_a_damaged_list(tmp_path):
    taken = {"voila-lesson": "a/lesson.ipynb"}
    assert publishing.voila_app_name("a/lesson.ipynb", taken) == "voila-lesson"
    assert publishing.voila_app_name("b/Lesson.ipynb", taken) == "voila-lesson-2"
    assert publishing.voila_app_name("ü.ipynb", {}) == "voila-page"
    long = publishing.voila_app_name("x" * 80 + ".ipynb", {})
    assert publishing.check_prefix(long + "/") == long + "/"
    (tmp_path / STORE).parent.mkdir(parents=True)
    (tmp_path / STORE).write_text('{"demos": {"voila-a": "../escape.ipynb", "BAD": "b.ipynb",')
    assert VoilaDemos.load(tmp_path, tmp_path).shown == {}
    listed = {"voila-a": "../escape.ipynb", "BAD": "b.ipynb", "voila-c": "c.ipynb"}
    (tmp_path / STORE).write_text(json.dumps({"demos": listed}))
    assert VoilaDemos.load(tmp_path, tmp_path).shown == {"voila-c": "c.ipynb"}


def test_voila_s_arguments_keep_every_request_under_the_app():
    arguments = publishing.voila_arguments("a b/lesson.ipynb", "/notebook/t/s/voila-a/", "9000")
    assert arguments[0] == "a b/lesson.ipynb"
    assert "--Voila.server_url=/" in arguments
    assert "--Voila.base_url=/notebook/t/s/voila-a/" in arguments
    assert "--Voila.ip=127.0.0.1" in arguments and "--port=9000" in arguments
    assert f"--MappingKernelManager.cull_idle_timeout={publishing.VOILA_IDLE}" in arguments
    assert publishing.voila_notebook("a b/lesson.ipynb") == "a b/lesson.ipynb"
    for bad in ("../x.ipynb", "/x.ipynb", "x.py", "/etc/passwd", ""):
        with pytest.raises(Invalid):
            publishing.voila_notebook(bad)

"""A teacher's demo site, with real processes: a teacher's notebook serves a web app on a
port, publishes it to a course, and the course's students use it (pages and websockets)
through the proxy on the notebook's own origin, while its files, kernels, terminals,
JupyterLab and other ports stay closed to them; another course's students get nothing,
and unpublishing ends it at once. The server extension's own rule for a visitor runs in
a real jupyter_server at the end.

The controller runs in the test's process with real notebook servers (conftest's
`notebook_servers` layer): the teacher's JupyterLab, its kernel and its apps are real
processes, reached through the controller's proxy over HTTP and websockets."""

import asyncio
import json
import textwrap
from urllib.parse import quote

import pytest
import websockets
from tornado.httpclient import HTTPClientError
from websockets.exceptions import ConnectionClosed, InvalidStatus

from cgu_lab.core import publishing
from cgu_lab.core.errors import Invalid
from cgu_lab.core.sharing import Access

from .harness import extension_server_config, proxy_headers
from .test_notebooks import execute

pytestmark = [pytest.mark.integration, pytest.mark.notebook_servers]

SITE = "/notebook/teacher/site"

# Run in the teacher's kernel: two HTTP apps (one to publish, one not) and a websocket echo
# app, on free ports of the notebook's own network; prints the three ports once they answer.
START_APPS = textwrap.dedent(
    """
    import json, os, socket, subprocess, sys, time
    def free_port():
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    os.makedirs("site", exist_ok=True)
    os.makedirs("other", exist_ok=True)
    open("site/index.html", "w").write("<h1>teacher demo page</h1>")
    open("other/index.html", "w").write("<h1>not published</h1>")
    ports = [free_port(), free_port(), free_port()]
    for port, folder in zip(ports[:2], ("site", "other")):
        command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
        subprocess.Popen(command + ["--directory", folder],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    echo = (
        "import asyncio, sys, websockets\\n"
        "async def echo(ws):\\n"
        "    async for message in ws:\\n"
        "        await ws.send('echo:' + message)\\n"
        "async def main():\\n"
        "    async with websockets.serve(echo, '127.0.0.1', int(sys.argv[1])):\\n"
        "        await asyncio.Future()\\n"
        "asyncio.run(main())\\n"
    )
    subprocess.Popen([sys.executable, "-c", echo, str(ports[2])],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for port in ports:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
    print(json.dumps(ports))
    """
)


@pytest.fixture(scope="module")
def apps(admin, teacher, alice, bob):
    """The teacher's running notebook with its apps, alice in the course, bob in another."""
    for course, student in (("demo101", "alice"), ("other101", "bob")):
        admin.ok("POST", "/api/groups", 201, json={"name": course})
        admin.ok("PUT", f"/api/groups/{course}/members/{student}", json={"manager": False})
    admin.ok("PUT", "/api/groups/demo101/members/teacher", json={"manager": True})
    teacher.ok("POST", "/api/notebooks", 201, json={"name": "site", "cpu": 1, "memory": "1Gi"})
    teacher.ok("POST", "/api/notebooks/teacher/site/start?wait=true", 202)
    kernel = teacher.post(f"{SITE}/api/kernels", json={"name": "python3"})
    assert kernel.status_code == 201, kernel.text
    url, headers, connect = teacher.notebook_socket(
        f"{SITE}/api/kernels/{kernel.json()['id']}/channels"
    )
    printed = asyncio.run(execute(url, headers, START_APPS, **connect))
    page, other, echo = json.loads(printed.strip().splitlines()[-1])
    return {"page": page, "other": other, "echo": echo, "kernel": kernel.json()["id"]}


def publish(session, port: int, course: str | None = "demo101", status: int = 201) -> dict:
    body = {"app": f"proxy/{port}/", "course": course, "title": "Streamlit-like demo"}
    return session.ok("POST", "/api/notebooks/teacher/site/demos", status, json=body)


def refused(response) -> None:
    """Refused by the controller's proxy itself, before the notebook server saw it (whose
    own rule, tested at the end, refuses the same with a shorter message)."""
    assert response.status_code == 403, (response.status_code, response.text)
    body = response.json()
    assert body["code"] == "demo_only" and "not its files" in body["message"], body


def test_a_course_uses_the_published_app_and_nothing_else(apps, teacher, alice):
    # Before publishing, alice has nothing in the teacher's notebook.
    assert alice.get(f"{SITE}/proxy/{apps['page']}/").status_code == 404
    demo = publish(teacher, apps["page"])
    assert demo["course"] == "demo101" and demo["visitors"] == 0
    assert demo["url"].endswith(f"{SITE}/proxy/{apps['page']}/")
    assert "teacher--site" in demo["url"]  # the notebook's own origin
    listed = alice.ok("GET", "/api/groups/demo101/demos")
    assert [d["id"] for d in listed] == [demo["id"]]
    # The course page lists them for its members (course_demos.js fills the table).
    course_page = alice.get("/courses/demo101")
    assert course_page.status_code == 200 and 'id="course-demos"' in course_page.text
    assert alice.get("/static/js/course_demos.js").status_code == 200
    assert [d["app"] for d in alice.ok("GET", "/api/me/demos")] == [demo["app"]]

    page = alice.get(f"{SITE}/proxy/{apps['page']}/")
    assert page.status_code == 200 and "teacher demo page" in page.text
    # The app's own requests, with another method too (http.server answers 501 to POST:
    # the notebook's app refused it, not the platform).
    assert alice.get(f"{SITE}/proxy/{apps['page']}/index.html").status_code == 200
    assert alice.post(f"{SITE}/proxy/{apps['page']}/", content=b"x").status_code == 501

    xsrf = {"X-XSRFToken": "x", "Cookie": "_xsrf=x"}
    refused(alice.get(f"{SITE}/api/contents"))
    refused(alice.get(f"{SITE}/api/contents/site/index.html"))
    refused(alice.get(f"{SITE}/files/site/index.html"))
    refused(alice.get(f"{SITE}/api/kernels"))
    refused(alice.post(f"{SITE}/api/kernels", json={"name": "python3"}, headers=xsrf))
    refused(alice.get(f"{SITE}/api/terminals"))
    refused(alice.post(f"{SITE}/api/terminals", headers=xsrf))
    refused(alice.get(f"{SITE}/lab"))
    # A browser's navigation to the lab gets the same refusal as a page, with the way back.
    shown = alice.get(f"{SITE}/lab", headers={"Accept": "text/html"})
    assert shown.status_code == 403 and 'data-cgu-code="demo_only"' in shown.text
    assert "published demo only" in shown.text
    assert f'href="{SITE}/proxy/{apps["page"]}/"' in shown.text
    refused(alice.get(f"{SITE}/cgu-lab/info"))
    refused(alice.get(f"{SITE}/proxy/{apps['other']}/"))
    sneaked = alice.get(f"{SITE}/proxy/{apps['page']}/%2E%2E/%2E%2E/api/contents")
    assert sneaked.status_code != 200 and "content" not in sneaked.text
    refused(alice.get(f"{SITE}/vscode/"))
    # ... nor the kernel's websocket.
    url, headers, connect = alice.notebook_socket(f"{SITE}/api/kernels/{apps['kernel']}/channels")
    with pytest.raises((InvalidStatus, ConnectionClosed)):
        asyncio.run(execute(url, headers, "1+1", **connect))

    counted = teacher.ok("GET", "/api/notebooks/teacher/site/demos")
    assert [(d["id"], d["visitors"]) for d in counted] == [(demo["id"], 1)]


def test_a_published_app_s_websocket_reaches_visitors(apps, teacher, alice):
    demo = publish(teacher, apps["echo"])
    url, headers, connect = alice.notebook_socket(f"{SITE}/proxy/{apps['echo']}/")

    async def talk(socket_url: str) -> str:
        async with websockets.connect(socket_url, additional_headers=headers, **connect) as ws:
            await ws.send("hello")
            return await ws.recv()

    assert asyncio.run(talk(url)) == "echo:hello"
    teacher.ok("DELETE", f"/api/notebooks/teacher/site/demos/{demo['id']}")
    with pytest.raises((InvalidStatus, ConnectionClosed)):
        asyncio.run(talk(url))


def test_another_course_is_refused_and_unpublishing_ends_access_at_once(apps, teacher, alice, bob):
    demo = next(
        d
        for d in teacher.ok("GET", "/api/notebooks/teacher/site/demos")
        if d["app"] == f"proxy/{apps['page']}/"
    )
    assert bob.get(f"{SITE}/proxy/{apps['page']}/").status_code == 404
    assert bob.get("/api/groups/demo101/demos").status_code == 404
    assert alice.get(f"{SITE}/proxy/{apps['page']}/").status_code == 200
    teacher.ok("DELETE", f"/api/notebooks/teacher/site/demos/{demo['id']}")
    gone = alice.get(f"{SITE}/proxy/{apps['page']}/")
    assert gone.status_code == 404 and "teacher demo page" not in gone.text
    assert alice.ok("GET", "/api/groups/demo101/demos") == []
    # Published to every logged-in user: bob too, for the app alone.
    everyone = publish(teacher, apps["page"], course=None)
    assert bob.get(f"{SITE}/proxy/{apps['page']}/").status_code == 200
    refused(bob.get(f"{SITE}/api/contents"))
    teacher.ok("DELETE", f"/api/notebooks/teacher/site/demos/{everyone['id']}")
    assert bob.get(f"{SITE}/proxy/{apps['page']}/").status_code == 404


def test_a_read_only_share_and_a_demo_together(apps, teacher, alice):
    """A live view (a read-only share) of the demo's notebook: its files to read, and the
    app to use; the read-only rule still holds outside the app."""
    demo = publish(teacher, apps["page"])
    share = teacher.ok(
        "POST",
        "/api/notebooks/teacher/site/shares",
        201,
        json={"grantee": "alice", "access": "read"},
    )
    assert alice.get(f"{SITE}/proxy/{apps['page']}/").status_code == 200
    assert alice.get(f"{SITE}/api/contents/site/index.html").status_code == 200
    xsrf = {"X-XSRFToken": "x", "Cookie": "_xsrf=x"}
    kernel = alice.post(f"{SITE}/api/kernels", json={"name": "python3"}, headers=xsrf)
    assert kernel.status_code == 403 and kernel.json()["code"] == "read_only"
    other = alice.get(f"{SITE}/proxy/{apps['other']}/")
    assert other.status_code == 403 and "not published" not in other.text
    teacher.ok("DELETE", f"/api/notebooks/teacher/site/shares/{share['id']}")
    teacher.ok("DELETE", f"/api/notebooks/teacher/site/demos/{demo['id']}")


def test_who_may_publish_and_bad_input(apps, teacher, alice, bob):
    body = {"app": f"proxy/{apps['page']}/", "course": "demo101"}
    # A student publishes nobody's notebook, their own neither (demos are the staff's).
    response = alice.post("/api/notebooks/teacher/site/demos", json=body)
    assert response.status_code in (403, 404) and response.json()["code"]
    assert alice.get("/api/notebooks/teacher/site/demos").status_code == 404
    # The teacher publishes only to courses they teach.
    response = teacher.post(
        "/api/notebooks/teacher/site/demos", json={**body, "course": "other101"}
    )
    assert response.status_code == 403 and response.json()["code"]
    bad = [
        {"app": "api/"},
        {"app": "vscode/"},
        {"app": "desktop/"},
        {"app": "proxy/0/"},
        {"app": "proxy/70000/"},
        {"app": "../etc/"},
        {"app": "proxy/80/", "course": "no such course!"},
        {"app": "proxy/80/", "title": "x" * 101},
        {"app": 8080},
        {"course": "demo101"},
        {"app": "proxy/80/", "extra": 1},
    ]
    for payload in bad:
        response = teacher.post("/api/notebooks/teacher/site/demos", json=payload)
        assert 400 <= response.status_code < 500, (payload, response.status_code, response.text)
        assert {"message", "code"} <= set(response.json()), payload
    assert teacher.delete("/api/notebooks/teacher/site/demos/999999").status_code == 404
    missing = teacher.post(
        "/api/notebooks/teacher/nothing/demos", json={"app": "proxy/80/", "course": None}
    )
    assert missing.status_code == 404
    assert bob.delete("/api/notebooks/teacher/site/demos/1").status_code == 404


# -- the rules alone (core/publishing.py, core/sharing.py) --------------------------------


def test_what_may_be_published_and_which_paths_are_under_it():
    assert publishing.check_prefix("proxy/8501") == "proxy/8501/"
    assert publishing.check_prefix("/myapp/") == "myapp/"
    for bad in ("proxy/0/", "proxy/65536/", "api/", "lab/", "vscode/", "desktop/", "a/b/", ""):
        with pytest.raises(Invalid):
            publishing.check_prefix(bad)
    apps = ("proxy/8501/",)
    assert publishing.app_of("/proxy/8501/", apps) == "proxy/8501/"
    assert publishing.app_of("/proxy/8501", apps) == "proxy/8501/"
    assert publishing.app_of("/proxy/8501/_stcore/stream?x=1", apps) == "proxy/8501/"
    for outside in ("/proxy/85011/", "/proxy/8501/../../api/contents", "/api/contents", "/lab"):
        assert publishing.app_of(outside, apps) is None, outside


def test_an_open_demo_websocket_outlives_only_what_still_allows_it():
    opened = Access("visit", apps=("proxy/8501/",))
    assert Access("visit", apps=("proxy/8501/", "proxy/9000/")).at_least(opened)
    assert Access("read", apps=("proxy/8501/",)).at_least(opened)
    assert Access("edit").at_least(opened)  # an editor uses every app
    assert not Access("visit", apps=("proxy/9000/",)).at_least(opened)  # unpublished
    assert not Access("read").at_least(opened)  # a live view's share is not the demo
    assert not Access("edit", scope=("a.ipynb",)).at_least(opened)


# -- the server extension's own rule, in a real jupyter_server ----------------------------


@pytest.fixture
def jp_server_config():
    config = extension_server_config()
    config["ServerApp"]["jpserver_extensions"]["jupyter_server_proxy"] = True
    return config


def visitor(app: str | None) -> dict:
    extra = {"X-Cgu-Via": "token"}
    if app is not None:
        extra["X-Cgu-App"] = quote(app)
    return proxy_headers("ada", "visit", extra=extra)


async def code_of(jp_fetch, *parts, headers, method="GET") -> tuple[int, str]:
    try:
        response = await jp_fetch(*parts, method=method, headers=headers)
        return response.code, ""
    except HTTPClientError as error:
        body = error.response.body.decode() if error.response is not None else ""
        return error.code, body


async def test_the_server_extension_lets_a_visitor_reach_only_the_named_app(jp_fetch):
    headers = visitor("proxy/9/")  # nothing listens on port 9: the proxy itself answers
    for parts in (("api", "contents"), ("api", "kernels"), ("api", "terminals"), ("lab",)):
        code, body = await code_of(jp_fetch, *parts, headers=headers)
        assert code == 403 and json.loads(body)["code"] == "demo_only", parts
    code, body = await code_of(jp_fetch, "proxy", "10", "", headers=headers)
    assert code == 403 and json.loads(body)["code"] == "demo_only"
    code, _ = await code_of(jp_fetch, "proxy", "9", "", headers=visitor(None))
    assert code == 403  # a visit the proxy named no app for
    # Under the named app the request reaches jupyter-server-proxy, which finds nothing on
    # port 9 (an error of the proxy, never the platform's refusal).
    code, body = await code_of(jp_fetch, "proxy", "9", "", headers=headers)
    assert code != 403 and "demo_only" not in body

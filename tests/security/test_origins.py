"""Notebooks on their own origins: the attacks that made a student an admin, replayed.

Each test drives the controller (in the test's process, served on loopback: conftest's
`notebook_servers` layer) and real JupyterLab processes over loopback, addressing a
notebook's origin `<owner>--<name>.localhost:<port>` by its Host header, as a browser
resolving `*.localhost` to loopback does (access by bare IP, a second port for every
notebook, runs on a controller process of its own). The browser half of the
click-to-admin attack runs in Chromium (ui-tests/tests/security.spec.ts).
"""

from __future__ import annotations

import asyncio
import re
import time

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from cgu_lab.backends.kube_settings import KubeSettings
from cgu_lab.controller.api.deps import require_scope
from cgu_lab.controller.proxy.forward import NotebookProxy
from cgu_lab.controller.proxy.replies import ISOLATION

from ..harness import (
    PASSWORD,
    Controller,
    execute_request,
    login_cookie,
    login_cookie_header,
    reachable_dir,
    set_cookies,
)
from ..inprocess import ClusterlessKube, InProcess, LoopbackNotebook
from ..test_notebooks import execute, server_process

pytestmark = [pytest.mark.integration, pytest.mark.notebook_servers]

ISOLATION_NAMES = [name.decode() for name, _ in ISOLATION]


def host_of(site, owner: str, name: str) -> str:
    return f"{owner}--{name}.localhost:{site.port}"


def on_origin(site, owner: str, name: str, **headers) -> dict:
    return {"Host": host_of(site, owner, name), **headers}


@pytest.fixture(scope="module")
def sec(site, alice):
    """alice/sec, running, with a file in it; and alice/idle, never started; the site."""
    alice.ok("POST", "/api/notebooks", 201, json={"name": "sec", "cpu": "0.5", "memory": "1Gi"})
    alice.ok("POST", "/api/notebooks", 201, json={"name": "idle", "cpu": "0.5", "memory": "1Gi"})
    alice.ok("POST", "/api/notebooks/alice/sec/start?wait=true", 202)
    body = {"type": "file", "format": "text", "content": "print('hi')"}
    alice.ok("PUT", "/notebook/alice/sec/api/contents/hw.py", 201, json=body)
    return site


def assert_isolated(response: httpx.Response) -> None:
    for name in ISOLATION_NAMES:
        assert name in response.headers, (name, response.status_code, response.request.url)
    assert "frame-ancestors 'self'" in response.headers["content-security-policy"]
    assert response.headers["cross-origin-opener-policy"] == "same-origin"


def test_every_notebook_origin_answer_carries_isolation_headers(sec, alice):
    url = f"{sec.url}/notebook/alice/sec"
    answers = [
        # the proxy's own: 401 without login, 303 into the hand-off, 404 elsewhere
        httpx.get(f"{url}/api/contents", headers=on_origin(sec, "alice", "sec")),
        httpx.get(f"{url}/lab", headers=on_origin(sec, "alice", "sec", Accept="text/html")),
        httpx.get(f"{sec.url}/notebook/alice/nope/lab", headers=on_origin(sec, "alice", "nope")),
        # the notebook's own pages and API, and a stopped notebook's 503
        alice.get("/notebook/alice/sec/lab", headers={"Accept": "text/html"}),
        alice.get("/notebook/alice/sec/api/contents/hw.py"),
        alice.get("/notebook/alice/idle/api/contents"),
    ]
    assert [a.status_code for a in answers] == [401, 303, 404, 200, 200, 503]
    for response in answers:
        assert_isolated(response)
    # Notebook pages are not served with an open opener policy any more.
    assert "unsafe-none" not in str(answers[3].headers)


def test_controller_origin_sends_browsers_to_the_notebook_origin(sec, alice):
    cookies = login_cookie(alice)
    page = httpx.get(f"{sec.url}/notebook/alice/sec/lab?x=1", cookies=cookies)
    assert page.status_code == 303
    assert (
        page.headers["location"]
        == f"http://{host_of(sec, 'alice', 'sec')}/notebook/alice/sec/lab?x=1"
    )
    assert_isolated(page)
    write = httpx.put(
        f"{sec.url}/notebook/alice/sec/api/contents/x.txt",
        cookies=cookies,
        headers={"X-CSRF-Token": alice.csrf},
        json={"type": "file", "format": "text", "content": "x"},
    )
    assert write.status_code == 421 and write.json()["code"] == "wrong_origin"


def test_controller_session_opens_nothing_on_a_notebook_origin(sec, alice):
    session = login_cookie_header(alice)
    response = httpx.get(
        f"{sec.url}/notebook/alice/sec/api/contents",
        headers=on_origin(sec, "alice", "sec", Cookie=session),
    )
    assert response.status_code == 401
    # Nor does a notebook origin serve any page or API of the controller.
    for path in ("/api/me", "/account", "/api/users"):
        answer = httpx.get(sec.url + path, headers=on_origin(sec, "alice", "sec", Cookie=session))
        assert answer.status_code in (303, 404), path
        if answer.status_code == 303:  # a navigation goes back to the controller's own origin
            assert answer.headers["location"].startswith(sec.url + path)


def handoff(session, site, owner: str, name: str) -> tuple[str, dict, str]:
    """Start a log-in on a notebook origin: (state cookie header, callback query, callback host)."""
    start = httpx.get(
        f"{site.url}/notebook/{owner}/{name}/lab",
        headers=on_origin(site, owner, name, Accept="text/html"),
    )
    state_cookie = "; ".join(f"{k}={v}" for k, v in set_cookies(start).items())
    back = session.get(start.headers["location"])
    assert back.status_code == 303, back.text
    callback = httpx.URL(back.headers["location"])
    return state_cookie, dict(callback.params), callback.netloc.decode()


def callback(site, owner, name, host, params, cookie) -> httpx.Response:
    return httpx.get(
        f"{site.url}/notebook/{owner}/{name}/_cgu_login",
        params=params,
        headers={"Host": host, "Cookie": cookie},
    )


def test_handoff_checks_state_code_and_origin(sec, alice):
    state_cookie, params, host = handoff(alice, sec, "alice", "sec")
    assert host == host_of(sec, "alice", "sec")
    # A forged state, or none, is refused; the code alone is useless.
    forged = {**params, "state": "forged"}
    assert callback(sec, "alice", "sec", host, forged, state_cookie).status_code == 400
    assert callback(sec, "alice", "sec", host, params, "").status_code == 400
    # The code is bound to its notebook's origin: another notebook's refuses it.
    other = host_of(sec, "alice", "idle")
    assert callback(sec, "alice", "idle", other, params, state_cookie).status_code == 400
    state_cookie, params, host = handoff(alice, sec, "alice", "sec")
    done = callback(sec, "alice", "sec", host, params, state_cookie)
    assert done.status_code == 303 and done.headers["location"] == "/notebook/alice/sec/lab"
    cookie_line = next(
        line
        for line in done.headers.get_list("set-cookie")
        if line.startswith("cgu-nb-") and "state" not in line.split("=", 1)[0]
    )
    assert "HttpOnly" in cookie_line and "Path=/notebook/alice/sec/" in cookie_line
    assert "Domain" not in cookie_line  # host-only
    # ... and it is used once.
    assert callback(sec, "alice", "sec", host, params, state_cookie).status_code == 400


def test_logout_and_password_change_end_notebook_access_and_websockets(sec):
    sec.create_user("carol")
    carol = sec.client("carol")
    carol.ok("POST", "/api/notebooks", 201, json={"name": "nb", "cpu": "0.5", "memory": "1Gi"})
    carol.ok("POST", "/api/notebooks/carol/nb/start?wait=true", 202)
    kernel = carol.ok("POST", "/notebook/carol/nb/api/kernels", 201, json={"name": "python3"})
    url, headers, connect = carol.notebook_socket(
        f"/notebook/carol/nb/api/kernels/{kernel['id']}/channels"
    )

    async def logout_while_connected() -> tuple[object, float]:
        async with websockets.connect(url, additional_headers=headers, **connect) as ws:
            _, message = execute_request("1+1", "carol")
            await ws.send(message)
            await asyncio.wait_for(ws.recv(), 30)
            started = time.monotonic()
            await asyncio.to_thread(carol.post, "/logout", data={"csrf": carol.csrf})
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    await asyncio.wait_for(ws.recv(), 15)
            return closed.value, time.monotonic() - started

    closed, seconds = asyncio.run(logout_while_connected())
    assert closed.rcvd is not None and closed.rcvd.code == 1008
    assert seconds < 10
    refused = httpx.get(
        f"{sec.url}/notebook/carol/nb/api/contents",
        headers=on_origin(sec, "carol", "nb", Cookie=headers["Cookie"]),
    )
    assert refused.status_code == 401
    # A password change ends the other browsers' notebook access too.
    other = sec.client("carol")
    cookie = other.notebook_cookie("carol", "nb")
    again = sec.client("carol")
    again.ok("PUT", "/api/me/password", json={"current": PASSWORD, "new": "a-new-long-password"})
    after = httpx.get(
        f"{sec.url}/notebook/carol/nb/api/contents",
        headers=on_origin(sec, "carol", "nb", Cookie=cookie),
    )
    assert after.status_code == 401


def test_a_kernel_cannot_turn_the_notebook_token_into_a_share(sec, alice, bob):
    """Attack 4: an editor reads the notebook's token from the server's environment."""
    share = alice.ok(
        "POST", "/api/notebooks/alice/sec/shares", 201, json={"grantee": "bob", "access": "edit"}
    )
    kernel = bob.ok("POST", "/notebook/alice/sec/api/kernels", 201, json={"name": "python3"})
    url, headers, connect = bob.notebook_socket(
        f"/notebook/alice/sec/api/kernels/{kernel['id']}/channels"
    )
    code = (
        "import os\n"
        "try:\n"
        "    env = open(f'/proc/{os.getppid()}/environ', 'rb').read().split(b'\\0')\n"
        "except PermissionError:\n"
        "    print('PermissionError')\n"
        "else:\n"
        "    key = b'CGU_API_TOKEN='\n"
        "    print([v[len(key):].decode() for v in env if v.startswith(key)][0])"
    )
    token = asyncio.run(execute(url, headers, code, **connect)).strip()
    if token == "PermissionError":
        # A server forked by the warm launcher dropped from root without an exec, so the
        # kernel cannot read its environment at all. The token is still in the server's
        # memory: take it as root, and show that it grants nothing either.
        token = server_process("alice", "sec").environ()["CGU_API_TOKEN"]
    assert re.fullmatch(r"[\w-]{20,}", token), token
    stolen = {"Authorization": f"Bearer {token}"}
    grab = httpx.post(
        f"{sec.url}/api/notebooks/alice/sec/shares",
        headers=stolen,
        json={"grantee": "bob", "access": "edit"},
    )
    assert grab.status_code == 403, grab.text
    for method, path in [
        ("GET", "/api/me"),
        ("GET", "/api/notebooks/alice/sec/shares"),
        ("PATCH", "/api/notebooks/alice/sec"),
        ("POST", "/api/me/tokens"),
        ("POST", "/api/notebooks/alice/idle/start"),
    ]:
        answer = httpx.request(method, sec.url + path, headers=stolen, json={})
        assert answer.status_code == 403, (method, path, answer.status_code, answer.text)
    # Nor does it open the notebook itself, on either origin.
    assert (
        httpx.get(f"{sec.url}/notebook/alice/sec/api/contents", headers=stolen).status_code == 404
    )
    lab = httpx.post(
        f"{sec.url}/notebook/alice/sec/cgu-lab/shares",
        headers=on_origin(sec, "alice", "sec", **stolen),
        json={"grantee": "bob", "access": "edit"},
    )
    assert lab.status_code == 401
    # Revoking the share ends bob's access; nothing he made outlives it.
    alice.ok("DELETE", f"/api/notebooks/alice/sec/shares/{share['id']}")
    assert bob.get("/notebook/alice/sec/api/contents").status_code == 404
    assert alice.ok("GET", "/api/notebooks/alice/sec/shares") == []


def test_lab_calls_act_for_the_browser_user_within_their_access(sec, alice, bob):
    share = alice.ok(
        "POST", "/api/notebooks/alice/sec/shares", 201, json={"grantee": "bob", "access": "edit"}
    )
    # The owner's lab shares, reads the quota; an editor's may not share.
    assert alice.get("/notebook/alice/sec/cgu-lab/quota").status_code == 200
    widen = bob.post(
        "/notebook/alice/sec/cgu-lab/shares", json={"grantee": "teacher", "access": "edit"}
    )
    assert widen.status_code == 403, widen.text
    assert bob.get("/notebook/alice/sec/cgu-lab/culling").status_code == 200
    assert bob.get("/notebook/alice/sec/cgu-lab/directory?q=te").status_code == 403
    alice.ok("DELETE", f"/api/notebooks/alice/sec/shares/{share['id']}")
    # The lab's routes answer nobody on the controller's origin, session or token.
    assert alice.get("/api/lab/alice/sec/quota").status_code == 403
    token = alice.ok("POST", "/api/me/tokens", 201, json={"name": "script"})["token"]
    direct = httpx.get(
        f"{sec.url}/api/lab/alice/sec/quota", headers={"Authorization": f"Bearer {token}"}
    )
    assert direct.status_code == 403


def test_read_only_users_write_nothing_not_even_settings(sec, alice, bob):
    share = alice.ok(
        "POST", "/api/notebooks/alice/sec/shares", 201, json={"grantee": "bob", "access": "read"}
    )
    shortcut = {"raw": '{"shortcuts": [{"command": "notebook:run-all-cells", "keys": ["A"]}]}'}
    for method, path, body in [
        ("PUT", "/lab/api/settings/@jupyterlab/shortcuts-extension:shortcuts", shortcut),
        ("PUT", "/lab/api/workspaces/default", {"data": {}, "metadata": {"id": "default"}}),
        ("POST", "/api/contents/hw.py/checkpoints", None),
        ("POST", "/api/contents/hw.py/trust", None),
    ]:
        answer = bob.request(method, f"/notebook/alice/sec{path}", json=body)
        assert answer.status_code == 403, (method, path, answer.status_code, answer.text)
        assert answer.json()["code"] == "read_only"
    alice.ok("DELETE", f"/api/notebooks/alice/sec/shares/{share['id']}")


def test_state_changes_from_another_origin_are_refused(sec, alice):
    evil = f"http://bob--lab.localhost:{sec.port}"
    answer = alice.put(
        "/notebook/alice/sec/api/contents/evil.txt",
        headers={"Origin": evil},
        json={"type": "file", "format": "text", "content": "x"},
    )
    assert answer.status_code == 403 and answer.json()["code"] == "cross_origin"
    # The controller's API refuses a session's writes from any other origin, token or not.
    refused = alice.post("/api/me/tokens", headers={"Origin": evil}, json={"name": "x"})
    assert refused.status_code == 403


def test_unknown_scope_names_fail_at_import():
    with pytest.raises(KeyError, match="unknown scope"):
        require_scope("notebooks:everything")


@pytest.mark.parametrize("configured", ["x-auth-request-email", "kubeflow-userid"])
def test_clients_cannot_send_an_ingress_identity(tmp_path, configured):
    """Kubernetes behind an ingress: the notebook server trusts one header
    (CGU_LAB_KUBE_INGRESS_HEADER). Through the real proxy of a controller with a real
    KubernetesBackend, the notebook receives that header once, naming the user the proxy
    authenticated, and none of the identity headers the client wrote."""
    with LoopbackNotebook() as upstream:
        kube = KubeSettings.from_env({"CGU_LAB_KUBE_INGRESS_HEADER": configured})
        backend = ClusterlessKube(kube, upstream.url)
        app = InProcess(tmp_path / "data", backend=lambda _settings: backend).start()
        try:
            app.create_user("kiri")
            with app.client("kiri") as kiri:
                body = {"name": "lab", "cpu": "0.5", "memory": "1Gi", "image": "jupyter/minimal"}
                kiri.ok("POST", "/api/notebooks", 201, json=body)
                kiri.ok("POST", "/api/notebooks/kiri/lab/start?wait=true", 202)
                forged = {
                    configured: "admin@school.edu",
                    "Kubeflow-Userid": "admin",
                    "X-Auth-Request-User": "admin",
                    "X-Auth-Request-Email": "admin@school.edu",
                    "X-Forwarded-User": "admin",
                    "X-Forwarded-Email": "admin@school.edu",
                    "Remote-User": "admin",
                    "X-Cgu-User": "admin",
                    "X-Cgu-Access": "owner",
                    "X-Cgu-Proxy-Secret": "guessed",
                }
                answer = kiri.get("/notebook/kiri/lab/api/status", headers=forged)
                assert answer.status_code == 200, answer.text
        finally:
            app.stop()
    (received,) = upstream.seen
    assert received[configured] == ["kiri"]
    assert received["x-cgu-user"] == ["kiri"] and received["x-cgu-access"] == ["owner"]
    assert received["x-cgu-proxy-secret"] != ["guessed"]
    values = [value for values in received.values() for value in values]
    assert not [value for value in values if "admin" in value], received


def test_host_names_and_made_up_tokens_do_not_grow_the_proxys_memory(tmp_path, monkeypatch):
    """A client picks the Host header and the token of every request: neither may grow the
    controller's memory. The proxy keeps nothing by Host; the identities it looks up for a
    request (misses included, so a made-up token costs one query, not one per request) are
    cached within a bound."""
    from types import SimpleNamespace

    from cgu_lab.controller.accounts import auth as auth_module
    from cgu_lab.controller.clock import Clock
    from cgu_lab.controller.notebooks.routes import Route
    from cgu_lab.controller.proxy.origin_auth import OriginAuth
    from cgu_lab.core.lifecycle import State
    from cgu_lab.core.origins import OriginPlan
    from cgu_lab.store.db import Database

    bound = 20
    monkeypatch.setattr(auth_module, "CACHE_ENTRIES", bound)
    db = Database(f"sqlite:///{tmp_path / 'hosts.sqlite'}")
    db.upgrade_sync()
    clock = Clock()
    auth = auth_module.Authenticator(db, session_hours=1, clock=clock)
    route = Route(1, 1, "alice", "lab", State.RUNNING, "http://127.0.0.1:9", "secret")

    async def lookup(owner: str, name: str):
        return route if (owner, name) == ("alice", "lab") else None

    platform = SimpleNamespace(
        settings=SimpleNamespace(origins=OriginPlan("http://127.0.0.1:8000", domain="localhost")),
        auth=auth,
        origin_auth=OriginAuth(auth, tmp_path / "secrets", clock),
        backend=SimpleNamespace(ingress_header=""),
        notebooks=SimpleNamespace(
            routes=SimpleNamespace(lookup=lookup, at_server_path=lambda first, second: None)
        ),
    )
    proxy = NotebookProxy(platform)

    async def status_of(host: str, token: str) -> int:
        sent = []

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            sent.append(message)

        scope = {
            "type": "http",
            "method": "GET",
            "scheme": "http",
            "path": "/notebook/alice/lab/api/status",
            "query_string": b"",
            "server": ("127.0.0.1", 8000),
            "headers": [(b"host", host.encode()), (b"authorization", f"Bearer {token}".encode())],
        }
        await proxy(scope, receive, send)
        return sent[0]["status"]

    async def flood() -> set[int]:
        answers = set()
        for i in range(150):
            token = f"made-up-{i}"
            answers.add(await status_of(f"alice--lab.localhost:{1024 + i}", token))  # its origin
            answers.add(await status_of(f"n{i}--other.localhost:8000", token))  # another origin
            answers.add(await status_of(f"host-{i}.example", token))  # no notebook origin
        await db.close()
        return answers

    assert asyncio.run(flood()) == {401, 303, 404}
    assert len(auth._identities) <= bound
    held = [v for v in vars(proxy).values() if hasattr(v, "__len__") and not isinstance(v, str)]
    assert all(len(value) <= bound for value in held)
    assert len(platform.origin_auth._codes) == 0


@pytest.mark.end_to_end  # its own controller process, on other settings
def test_without_a_wildcard_domain_notebooks_get_their_own_port():
    """Access by bare IP: one separate origin (another port) for all notebooks."""
    from ..harness import free_port

    base = reachable_dir()
    port = free_port()
    ctl = Controller(
        base / "data", env={"CGU_LAB_NOTEBOOK_DOMAIN": "none", "CGU_LAB_NOTEBOOK_PORT": str(port)}
    )
    ctl.create_user("dora")
    ctl.start()
    try:
        dora = ctl.client("dora")
        dora.ok("POST", "/api/notebooks", 201, json={"name": "nb", "cpu": "0.5", "memory": "1Gi"})
        session = login_cookie(dora)
        page = httpx.get(f"{ctl.url}/notebook/dora/nb/lab", cookies=session)
        assert page.headers["location"] == f"http://127.0.0.1:{port}/notebook/dora/nb/lab"
        nb = f"http://127.0.0.1:{port}"
        # The controller's pages and API are not served there, even with its session cookie.
        assert httpx.get(f"{nb}/api/me", cookies=session).status_code in (303, 404)
        assert httpx.get(f"{nb}/notebook/dora/nb/api/contents", cookies=session).status_code == 401
        origins = dora.ok("GET", "/api/version")["backend"]["notebook_origins"]
        assert origins["mode"] == "port" and "not from each other" in origins["isolation"]
    finally:
        ctl.stop()
        ctl.kill_notebooks()

"""Notebooks end to end: real controller, real JupyterLab processes, real proxy.

Covers the lifecycle (create, start, stop, resize, delete), the proxy (HTTP
and the kernel websocket), progress events, and the forbidden paths: another
user's notebook, no login, forged identity headers, direct port access,
cross-site websockets, quotas (also under concurrent starts) and bad input.
"""

import asyncio
import concurrent.futures
import json
from pathlib import Path

import httpx
import psutil
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from .harness import execute_request, follow_while, login_cookie_header

pytestmark = [pytest.mark.integration, pytest.mark.end_to_end]


def server_process(owner: str, name: str, controller=None) -> psutil.Process:
    """The JupyterLab server of owner/name; of `controller`'s installation when given (test
    modules running side by side may each have an alice/lab)."""
    instance = None
    if controller is not None:
        instance = (controller.data_dir / "instance-id").read_text().strip()
    for process in psutil.process_iter():
        try:
            env = process.environ()
        except (psutil.Error, OSError):
            continue
        if (
            env.get("CGU_NOTEBOOK_OWNER") == owner
            and env.get("CGU_NOTEBOOK_NAME") == name
            and instance in (None, env.get("CGU_LAB_INSTANCE"))
            and "jupyter-lab" in " ".join(process.cmdline())
        ):
            return process
    raise AssertionError(f"no server process for {owner}/{name}")


def server_client(controller, process: psutil.Process) -> tuple[httpx.Client, str]:
    """A client straight to the server, past the proxy, and its base URL: over its Unix
    socket in its private network (backends/local.py), else over its loopback port."""
    sockets = list((controller.data_dir / "run").glob("nb-*/jupyter.sock"))
    owned = [s for s in sockets if s.stat().st_uid == process.uids().real]
    if owned:
        return httpx.Client(transport=httpx.HTTPTransport(uds=str(owned[0]))), "http://notebook"
    listening = [c for c in process.net_connections(kind="tcp") if c.status == psutil.CONN_LISTEN]
    return httpx.Client(), f"http://127.0.0.1:{listening[0].laddr.port}"


async def execute(url: str, headers: dict, code: str, origin: str | None = None, **connect) -> str:
    extra = dict(headers)
    if origin:
        extra["Origin"] = origin
    async with websockets.connect(url, additional_headers=extra, **connect) as ws:
        msg_id, message = execute_request(code)
        await ws.send(message)
        result = None
        while True:
            message = json.loads(await ws.recv())
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "execute_result":
                result = message["content"]["data"]["text/plain"]
            if message["msg_type"] == "stream":
                result = (result or "") + message["content"]["text"]
            if message["msg_type"] == "error":
                result = message["content"]["ename"]
            # iopub and shell arrive on one socket in no fixed order: the reply can
            # precede the stream output, so the run ends at iopub's "idle".
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                return result


def ws_url(controller, path: str) -> str:
    return controller.url.replace("http", "ws", 1) + path


@pytest.fixture(scope="module")
def running(controller, alice):
    """alice/lab: created and started once for the module."""
    alice.ok("POST", "/api/notebooks", 201, json={"name": "lab", "cpu": "0.5", "memory": "1Gi"})
    started = alice.ok("POST", "/api/notebooks/alice/lab/start?wait=true", 202)
    assert started["state"] == "running", started
    return started


def test_start_reaches_jupyterlab_through_the_proxy(running, alice):
    status = alice.get("/notebook/alice/lab/api/status")
    assert status.status_code == 200, status.text
    info = alice.ok("GET", "/notebook/alice/lab/cgu-lab/info")
    assert info["user"]["name"] == "alice" and info["access"] == "owner"
    page = alice.get("/notebook/alice/lab/lab", headers={"Accept": "text/html"})
    assert page.status_code == 200 and "JupyterLab" in page.text
    # Served on its own origin, with the proxy's isolation headers (tests/security/).
    assert page.headers["content-security-policy"].startswith("frame-ancestors 'self'")
    assert page.headers["cross-origin-opener-policy"] == "same-origin"


def test_resources_are_applied(controller, running):
    process = server_process("alice", "lab", controller)
    assert process.environ()["CGU_CPU_LIMIT"] == "0.5"
    cgroups = Path(f"/proc/{process.pid}/cgroup").read_text()
    if "/cgu-lab/" in cgroups:
        for line in cgroups.splitlines():
            if ":memory:" in line:
                path = line.split(":", 2)[2]
                limit = Path(f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes").read_text()
                assert int(limit) == 2**30
    else:
        import resource

        assert resource.prlimit(process.pid, resource.RLIMIT_DATA)[0] == 2**30


def test_temporary_files_are_the_notebooks_own_and_leave_with_it(controller, alice):
    """The host's /tmp is every user's: a notebook's temporary files and apps' sockets go
    to its own runtime folder instead, which is gone once it stops, even after a kill."""
    alice.ok("POST", "/api/notebooks", 201, json={"name": "scratch", "cpu": "0.5"})
    started = alice.ok("POST", "/api/notebooks/alice/scratch/start?wait=true", 202)
    assert started["state"] == "running", started
    process = server_process("alice", "scratch", controller)
    env = process.environ()
    runtime = Path(env["XDG_RUNTIME_DIR"])
    assert runtime.parent == controller.data_dir / "run" and runtime.name.startswith("nb-")
    assert Path(env["TMPDIR"]) == runtime / "tmp"
    for folder in (runtime, runtime / "tmp"):
        info = folder.stat()
        assert (info.st_uid, info.st_mode & 0o777) == (process.uids().real, 0o700)
    assert list(runtime.glob("apps-*")), "the apps' socket folder is in the runtime folder"
    process.kill()  # no clean exit: nothing of the server's removes its own files
    process.wait(10)
    alice.ok("POST", "/api/notebooks/alice/scratch/stop?wait=true", 202)
    assert not runtime.exists()
    alice.ok("DELETE", "/api/notebooks/alice/scratch")


def test_kernel_runs_through_the_websocket_proxy(controller, running, alice):
    # As JupyterLab does, on the notebook's own origin (the harness adds cookie and XSRF).
    kernel = alice.ok("POST", "/notebook/alice/lab/api/kernels", 201, json={"name": "python3"})
    url, headers, connect = alice.notebook_socket(
        f"/notebook/alice/lab/api/kernels/{kernel['id']}/channels"
    )
    result = asyncio.run(execute(url, headers, "1+1", **connect))
    assert result == "2"
    # The kernel runs as the notebook's own account, inside the notebook's home.
    whoami = asyncio.run(execute(url, headers, "import os; print(os.getcwd())", **connect))
    assert whoami.strip().endswith("/homes/alice/lab")


def test_cross_site_websocket_is_refused(controller, running, alice):
    url, headers, connect = alice.notebook_socket("/notebook/alice/lab/api/events/subscribe")
    for origin in ("https://evil.example", controller.url, "http://bob--lab.localhost"):
        with pytest.raises(InvalidStatus) as refused:
            asyncio.run(execute(url, {**headers, "Origin": origin}, "1", **connect))
        assert refused.value.response.status_code == 403
    with pytest.raises(InvalidStatus):
        asyncio.run(execute(url, {}, "1", **connect))


def test_other_users_cannot_reach_or_manage_it(controller, running, bob):
    assert bob.get("/notebook/alice/lab/api/status").status_code == 404
    assert bob.get("/notebook/alice/lab/lab", headers={"Accept": "text/html"}).status_code == 404
    for method, path in [
        ("GET", "/api/notebooks/alice/lab"),
        ("POST", "/api/notebooks/alice/lab/stop"),
        ("POST", "/api/notebooks/alice/lab/start"),
        ("DELETE", "/api/notebooks/alice/lab"),
        ("PATCH", "/api/notebooks/alice/lab"),
        ("GET", "/api/notebooks/alice/lab/events"),
    ]:
        response = bob.request(method, path, json={"cpu": 1} if method == "PATCH" else None)
        assert response.status_code == 404, (method, path, response.text)
    assert bob.get("/api/notebooks?owner=alice").status_code == 403
    assert bob.ok("GET", "/api/notebooks") == []
    # bob's controller session opens nothing on the notebook's origin.
    session = login_cookie_header(bob)
    url, headers, connect = bob.notebook_socket(
        "/notebook/alice/lab/api/events/subscribe", cookie=session
    )
    with pytest.raises(InvalidStatus):
        asyncio.run(execute(url, headers, "1", **connect))


def test_anonymous_requests_are_sent_to_login(controller, running):
    page = httpx.get(f"{controller.url}/notebook/alice/lab/lab", headers={"Accept": "text/html"})
    origin = f"http://alice--lab.localhost:{controller.port}"
    assert (
        page.status_code == 303 and page.headers["location"] == origin + "/notebook/alice/lab/lab"
    )
    host = {"Host": f"alice--lab.localhost:{controller.port}"}
    lab = httpx.get(
        f"{controller.url}/notebook/alice/lab/lab", headers={**host, "Accept": "text/html"}
    )
    assert lab.status_code == 303
    assert lab.headers["location"].startswith(f"{controller.url}/login/notebook?owner=alice")
    handoff = httpx.get(lab.headers["location"])
    assert handoff.status_code == 303 and handoff.headers["location"].startswith("/login?next=")
    status = httpx.get(f"{controller.url}/notebook/alice/lab/api/status", headers=host)
    assert status.status_code == 401 and status.json()["code"] == "login"


def test_forged_identity_headers_are_ignored(controller, running, bob, alice):
    forged = {"X-Cgu-User": "alice", "X-Cgu-Access": "owner", "X-Cgu-Proxy-Secret": "guess"}
    # Through the proxy: bob stays bob (and has no access).
    assert bob.get("/notebook/alice/lab/api/status", headers=forged).status_code == 404
    info = alice.ok("GET", "/notebook/alice/lab/cgu-lab/info", headers={"X-Cgu-User": "bob"})
    assert info["user"]["name"] == "alice"


def test_direct_port_access_is_refused(controller, running):
    client, server = server_client(controller, server_process("alice", "lab", controller))
    base = f"{server}/notebook/alice/lab"
    with client:
        assert client.get(f"{base}/api/status").status_code == 403
        assert client.get(f"{base}/api/status", headers={"X-Cgu-User": "alice"}).status_code == 403
        wrong = {"X-Cgu-User": "alice", "X-Cgu-Proxy-Secret": "not-the-secret"}
        assert client.get(f"{base}/api/status", headers=wrong).status_code == 403
        assert client.get(f"{base}/api/contents", headers=wrong).status_code == 403
        assert client.get(f"{base}/lab", headers=wrong).status_code in (403, 302)


def test_traversal_in_the_notebook_path_finds_nothing(controller, alice, running):
    for raw in (
        "/notebook/alice/%2e%2e/bob/x/api/status",
        "/notebook/alice/lab%2f..%2f..%2fbob/api/status",
        "/notebook/%2e%2e/api/me",
        "/notebook/alice/lab%00/api/status",
    ):
        response = alice.get(httpx.URL(controller.url).copy_with(raw_path=raw.encode()))
        assert response.status_code in (400, 404), (raw, response.status_code)


def test_start_and_stop_are_idempotent_and_progress_is_streamed(controller, alice):
    alice.ok(
        "POST", "/api/notebooks", 201, json={"name": "progress", "cpu": 0.5, "memory": "512Mi"}
    )
    alice.ok("POST", "/api/notebooks/alice/progress/start", 202)
    again = alice.ok("POST", "/api/notebooks/alice/progress/start", 202)
    assert again["state"] in ("starting", "running")
    events = []
    with alice.stream("GET", "/api/notebooks/alice/progress/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if events[-1]["done"]:
                    break
    assert events[-1]["state"] == "running" and events[-1]["url"] == "/notebook/alice/progress/lab"
    assert [e["percent"] for e in events] == sorted(e["percent"] for e in events)
    process = server_process("alice", "progress", controller)
    stopped = alice.ok("POST", "/api/notebooks/alice/progress/stop?wait=true", 202)
    assert stopped["state"] == "stopped"
    assert not process.is_running()
    assert (
        alice.ok("POST", "/api/notebooks/alice/progress/stop?wait=true", 202)["state"] == "stopped"
    )
    # A stopped notebook sends browsers to its start page, API clients get 503.
    page = alice.get("/notebook/alice/progress/lab", headers={"Accept": "text/html"})
    assert page.status_code == 303
    assert page.headers["location"].startswith(
        f"{controller.url}/notebook/auto-start/alice/progress?next="
    )
    start_page = alice.get(page.headers["location"])
    assert start_page.status_code == 200 and "Start notebook" in start_page.text
    api = alice.get("/notebook/alice/progress/api/status")
    assert api.status_code == 503 and "is stopped" in api.json()["message"]


def test_notebook_list_events_stream_only_the_callers_notebooks(controller, alice, bob, admin):
    alice.ok("POST", "/api/notebooks", 201, json={"name": "watched", "cpu": 0.5, "memory": "512Mi"})
    bob.ok("POST", "/api/notebooks", 201, json={"name": "unseen", "cpu": 0.5, "memory": "512Mi"})
    # Asking for another student's notebooks is refused outright, as the list is.
    refused = bob.get("/api/notebooks/events?owner=alice")
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    watcher = controller.client("alice")  # the test's alice session keeps acting meanwhile
    streams = [
        (watcher, "/api/notebooks/events", ("alice", "watched")),
        (admin, "/api/notebooks/events?owner=bob", ("bob", "unseen")),
    ]

    def act() -> None:
        bob.ok("POST", "/api/notebooks/bob/unseen/start?wait=true", 202)
        bob.ok("POST", "/api/notebooks/bob/unseen/stop?wait=true", 202)
        alice.ok("POST", "/api/notebooks/alice/watched/start?wait=true", 202)
        alice.ok("POST", "/api/notebooks/alice/watched/stop?wait=true", 202)

    with watcher:
        alices, bobs = follow_while(streams, act)
    # alice hears of her own notebook's every state and nothing of bob's.
    assert {(c["owner"], c["name"]) for c in alices} == {("alice", "watched")}
    assert [c["state"] for c in alices] == ["starting", "running", "stopping", "stopped"]
    assert alices[-1]["done"] and alices[-1]["ok"]
    # An admin may follow one owner's notebooks, and then only that owner's.
    assert {(c["owner"], c["name"]) for c in bobs} == {("bob", "unseen")}
    # The module's later tests count alice's notebooks against her quota.
    alice.ok("DELETE", "/api/notebooks/alice/watched")
    bob.ok("DELETE", "/api/notebooks/bob/unseen")


def test_quota_refuses_with_the_limit_and_the_use(controller, admin, alice):
    admin.ok(
        "PUT",
        "/api/users/alice/quota",
        json={"cpu": 2, "memory": "4Gi", "gpus": {}, "notebooks": 1},
    )
    # alice/lab is running: a second notebook is one too many.
    alice.ok("POST", "/api/notebooks", 201, json={"name": "second", "cpu": 0.5, "memory": "512Mi"})
    refused = alice.post("/api/notebooks/alice/second/start")
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        "your quota allows 1 running notebook; you use 1 running notebook "
        "and asked for 1 running notebook more."
    )
    assert alice.ok("GET", "/api/notebooks/alice/second")["state"] == "stopped"
    # "Create and start" over quota creates nothing.
    both = alice.post(
        "/api/notebooks", json={"name": "both", "cpu": 0.5, "memory": "512Mi", "start": True}
    )
    assert both.status_code == 403 and both.json()["code"] == "quota_exceeded", both.text
    assert alice.get("/api/notebooks/alice/both").status_code == 404
    # A notebook that could never fit is refused when created.
    too_big = alice.post("/api/notebooks", json={"name": "huge", "cpu": 8, "memory": "1Gi"})
    assert too_big.status_code == 403 and "allows 2 CPUs" in too_big.json()["message"]
    gpu = alice.post("/api/notebooks", json={"name": "gpu", "gpus": 1, "gpu_type": "standard"})
    assert gpu.status_code == 404 and "no GPU type 'standard'" in gpu.json()["message"]


def test_concurrent_starts_cannot_both_pass_the_quota(controller, admin, alice):
    alice.ok("POST", "/api/notebooks/alice/lab/stop?wait=true", 202)
    alice.ok("POST", "/api/notebooks", 201, json={"name": "third", "cpu": 0.5, "memory": "512Mi"})

    def start(name):
        return alice.post(f"/api/notebooks/alice/{name}/start").status_code

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        statuses = sorted(pool.map(start, ["second", "third"]))
    assert statuses == [202, 403]
    states = {nb["name"]: nb["state"] for nb in alice.ok("GET", "/api/notebooks")}
    assert sorted(states.values()).count("stopped") == 3
    for name, state in states.items():
        if state != "stopped":
            alice.ok("POST", f"/api/notebooks/alice/{name}/stop?wait=true", 202)
    admin.ok("DELETE", "/api/users/alice/quota")


def test_resize_restarts_within_quota_and_refuses_beyond(controller, admin, alice):
    alice.ok("POST", "/api/notebooks/alice/lab/start?wait=true", 202)
    before = server_process("alice", "lab", controller).pid
    resized = alice.ok(
        "PATCH", "/api/notebooks/alice/lab?wait=true", json={"cpu": 1, "memory": "1.5Gi"}
    )
    assert resized["state"] == "running" and resized["cpu_milli"] == 1000
    after = server_process("alice", "lab", controller)
    assert after.pid != before and after.environ()["CGU_CPU_LIMIT"] == "1.0"
    over = alice.patch("/api/notebooks/alice/lab", json={"cpu": 64})
    assert over.status_code == 403 and "your quota allows 4 CPUs" in over.json()["message"]
    unchanged = alice.ok("GET", "/api/notebooks/alice/lab")
    assert unchanged["cpu_milli"] == 1000 and unchanged["state"] == "running"
    assert server_process("alice", "lab", controller).pid == after.pid
    bad = alice.patch("/api/notebooks/alice/lab", json={"memory": "a lot"})
    assert bad.status_code == 400 and "not a memory amount" in bad.json()["message"]


def test_bad_notebook_input(alice):
    for body, text in [
        ({"name": "Bad Name"}, "not a valid notebook name"),
        ({"name": "x", "cpu": 0}, "more than 0"),
        ({"name": "x", "memory": "10Mi"}, "at least 256 MiB"),
        ({"name": "x", "gpus": 2}, "choose a GPU type"),
        ({"name": "x", "environment": "nope"}, "no environment 'nope'"),
        ({"name": "x", "persistent": True}, "only administrators"),
    ]:
        response = alice.post("/api/notebooks", json=body)
        assert 400 <= response.status_code < 500 and text in response.json()["message"], (
            body,
            response.text,
        )
    assert alice.post("/api/notebooks", json={"name": "lab"}).status_code == 409


def test_delete_needs_a_stopped_notebook_and_moves_files_aside(controller, alice):
    conflict = alice.delete("/api/notebooks/alice/lab")
    assert conflict.status_code == 409 and "stop it before deleting" in conflict.json()["message"]
    alice.ok("DELETE", "/api/notebooks/alice/progress")
    assert alice.get("/api/notebooks/alice/progress").status_code == 404
    assert not (controller.data_dir / "homes" / "alice" / "progress").exists()
    assert any(
        p.name.startswith("alice--progress--") for p in (controller.data_dir / "trash").iterdir()
    )


def test_controller_restart_adopts_running_notebooks_and_cleans_up(controller, alice, admin):
    kept = server_process("alice", "lab", controller)
    controller.stop()
    assert kept.is_running()
    controller.start()
    with controller.client("alice") as fresh:
        assert fresh.ok("GET", "/api/notebooks/alice/lab")["state"] == "running"
        assert fresh.get("/notebook/alice/lab/api/status").status_code == 200
    assert server_process("alice", "lab", controller).pid == kept.pid
    # A server that died while the controller was down is marked stopped, not left "running".
    controller.stop()
    kept.kill()
    kept.wait(10)
    controller.start()
    with controller.client("alice") as fresh:
        state = fresh.ok("GET", "/api/notebooks/alice/lab")
    assert state["state"] == "stopped" and "server process is gone" in state["message"]
    with controller.client("root-admin") as fresh_admin:
        events = fresh_admin.ok("GET", "/api/audit?action=controller.reconciled")
    assert events and "alice/lab" in events[0]["details"]["stopped"]

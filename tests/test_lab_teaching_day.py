"""A teaching day without a single raw error: what a student or TA meets inside JupyterLab.

The rules first (no server): the idle figures and their words, the GPU devices a
notebook was given, the pages the proxy shows browsers. Then the controller in the
test's process (tests/inprocess.py, with the real local backend) and real JupyterLab
processes, so that idle time passes by moving the platform's clock: a notebook that
is culled or dies answers the page's requests with why and where to restart; a
revoked visitor reloading gets a page, not JSON; the idle countdown follows kernel
activity at once; a group-exempt notebook says so; the Submit dialog learns the
template's files.
"""

from __future__ import annotations

import asyncio
import shutil
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from cgu_lab.backends.local import LocalBackend
from cgu_lab.controller.proxy.replies import page_html
from cgu_lab.core.culling import Activity, CullPolicy, decide, minutes_text, time_left_text
from cgu_lab.notebook.gpus import allocation, parse_device, summary, visible_devices

from .harness import (
    kill_notebooks,
    notebook_host,
    reachable_dir,
    wait_running,
    wait_state,
    wait_until,
)
from .inprocess import InProcess
from .test_notebooks import execute, server_process

T0 = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)


# -- the idle figures -----------------------------------------------------------------------


def test_idle_words_count_like_a_clock_and_never_say_1_minutes():
    assert minutes_text(0) == minutes_text(59) == "less than a minute"
    assert minutes_text(60) == minutes_text(119) == "1 minute"
    assert minutes_text(4 * 60 + 50) == "4 minutes"
    assert time_left_text(17) == "in less than a minute"
    assert time_left_text(60) == time_left_text(89) == "in 1 minute"
    assert time_left_text(600) == "in 10 minutes"


def test_a_warning_with_seconds_left_says_so():
    policy = CullPolicy(idle_minutes=5, warn_minutes=1)
    activity = Activity(1, started_at=T0, last_activity=T0, warned_at=T0 + timedelta(minutes=4))
    now = T0 + timedelta(minutes=4, seconds=43)  # 0:17 left on the countdown
    decision = decide(policy, activity, now)
    assert decision.stop_at == T0 + timedelta(minutes=5)
    assert "idle for 4 minutes (limit 5)" in decision.message
    assert "will be stopped in less than a minute" in decision.message
    one = decide(policy, Activity(1, T0, T0), T0 + timedelta(minutes=1, seconds=30))
    assert one.reason == "idle for 1 minute (limit 5)"


def test_an_exempt_notebook_says_why_and_is_never_stopped():
    policy = CullPolicy(idle_minutes=5, warn_minutes=1, max_lifetime_hours=1)
    why = "exempt through its group 'research': the idle culler never stops its notebooks"
    for minutes in (4.5, 6, 600):
        decision = decide(policy, Activity(1, T0, T0, exempt=why), T0 + timedelta(minutes=minutes))
        assert (decision.action, decision.reason, decision.stop_at) == ("keep", why, None)
    lifetime = CullPolicy(idle_minutes=600, warn_minutes=10, max_lifetime_hours=1)
    aged = decide(lifetime, Activity(1, T0, T0 + timedelta(minutes=59)), T0 + timedelta(hours=1))
    assert aged.reason == "running for 1 hour (limit 1)"


# -- GPUs the notebook was given ------------------------------------------------------------


def test_visible_devices_understand_gpus_mig_slices_and_indices():
    env = {
        "CUDA_VISIBLE_DEVICES": "MIG-4b5c1d2e-0000-5f6a-8b9c-0123456789ab,"
        "MIG-GPU-8a7b6c5d-1111-2222-3333-444455556666/3/0,GPU-0f0e0d0c-aaaa,2",
        "CGU_GPU_TYPE": "h200-1g",
    }
    kinds = [(d.kind, d.uuid, d.parent, d.gpu_instance, d.index) for d in visible_devices(env)]
    assert kinds == [
        ("mig", "MIG-4b5c1d2e-0000-5f6a-8b9c-0123456789ab", "", None, None),
        ("mig", "", "GPU-8a7b6c5d-1111-2222-3333-444455556666", 3, None),
        ("gpu", "GPU-0f0e0d0c-aaaa", "", None, None),
        ("index", "", "", None, 2),
    ]
    assert allocation(env) == {
        "gpu_type": "h200-1g",
        "count": 4,
        "devices": env["CUDA_VISIBLE_DEVICES"].split(","),
        "mig": True,
    }
    assert parse_device("MIG-GPU-8a7b6c5d-1111-2222-3333-444455556666/3/0").compute_instance == 0


def test_which_environment_names_the_devices():
    # Set (even empty) by the local backend: it decides.
    assert visible_devices({"CUDA_VISIBLE_DEVICES": "", "NVIDIA_VISIBLE_DEVICES": "GPU-1"}) == []
    # Kubernetes: the device plugin's variable; an image's "all" is no allocation.
    assert [d.given for d in visible_devices({"NVIDIA_VISIBLE_DEVICES": "MIG-9"})] == ["MIG-9"]
    for nothing in ("all", "none", "void", ""):
        assert visible_devices({"NVIDIA_VISIBLE_DEVICES": nothing}) == []
    # CUDA stops at the first invalid entry: "-1" hides everything after it.
    assert [d.given for d in visible_devices({"CUDA_VISIBLE_DEVICES": "0,-1,1"})] == ["0"]


def test_without_nvml_the_allocation_is_shown_not_no_gpu():
    """This machine has no NVIDIA driver (NVML is missing), like a container without it."""
    given = summary({"CUDA_VISIBLE_DEVICES": "MIG-4b5c1d2e", "CGU_GPU_TYPE": "half"})
    assert not given["available"] and given["devices"] == []
    assert given["allocated"]["count"] == 1 and given["allocated"]["mig"]
    assert given["message"].startswith("1 GPU (half) allocated; no figures:")
    typed_only = summary({"NVIDIA_VISIBLE_DEVICES": "all", "CGU_GPU_TYPE": "standard"})
    assert typed_only["message"].startswith("a GPU (standard) allocated")
    assert summary({"CUDA_VISIBLE_DEVICES": ""})["message"] == "no GPU on this notebook"


def test_proxy_pages_escape_what_they_show():
    body = page_html("No access", "<script>alert(1)</script>", "no_access", [("Back", '/"x')])
    assert b"<script>alert" not in body and b"&lt;script&gt;" in body
    assert b'href="/&quot;x"' in body and b'data-cgu-code="no_access"' in body


# -- the controller, with real notebook servers ---------------------------------------------


@pytest.fixture(scope="module")
def day():
    """The controller in this process with real JupyterLab servers. The culler passes only
    when a test runs one (`day.cull()`): the page's figures must not wait for a pass. The
    liveness check runs every second, as a deployment's does every few."""
    base = reachable_dir()
    site = InProcess(
        base / "data", backend=LocalBackend, cull_interval=86400, liveness_interval=1
    ).start()
    # Served over HTTP too: notebook servers ask the controller, kernels' websockets and
    # the browser's plain requests reach it on its port.
    site.serve()
    site.create_user("ops", "admin")
    site.create_user("prof", "teacher")
    site.create_user("ann")
    site.create_user("tom", "ta")
    yield site
    site.stop()
    kill_notebooks(site.data_dir)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def people(day):
    sessions = {name: day.client(name) for name in ("ops", "prof", "ann", "tom")}
    yield sessions
    for session in sessions.values():
        session.close()


def run_cell(session, owner: str, name: str, kernel_id: str, code: str = "1+1") -> str:
    url, headers, connect = session.notebook_socket(
        f"/notebook/{owner}/{name}/api/kernels/{kernel_id}/channels"
    )
    return asyncio.run(execute(url, headers, code, **connect))


@pytest.mark.integration
def test_the_submit_dialog_learns_the_templates_files(day, people):
    prof, ann = people["prof"], people["ann"]
    prof.ok("POST", "/api/notebooks", 201, json={"name": "prep", "cpu": 0.5, "memory": "512Mi"})
    prof.ok("POST", "/api/notebooks/prof/prep/start?wait=true", 202)
    base = "/notebook/prof/prep/api/contents"
    prof.ok("PUT", f"{base}/data", 201, json={"type": "directory"})
    prof.ok(
        "PUT",
        f"{base}/data/iris.csv",
        201,
        json={"type": "file", "format": "text", "content": "a,b\n1,2\n"},
    )
    prof.ok("PUT", f"{base}/helper.py", 201, json={"type": "file", "format": "text", "content": ""})
    prof.ok(
        "POST",
        "/api/templates",
        201,
        json={
            "notebook": "prep",
            "name": "iris",
            "visibility": "public",
            "paths": ["data", "helper.py"],
        },
    )
    prof.ok("POST", "/api/notebooks/prof/prep/stop?wait=true", 202)
    ann.ok("POST", "/api/notebooks", 201, json={"template": "iris", "start": True})
    wait_running(ann, "ann", "iris")
    came = ann.ok("GET", "/notebook/ann/iris/cgu-lab/templates/files")
    assert came["template"] == "iris" and came["version"] == 1
    assert sorted(came["files"]) == ["data/iris.csv", "helper.py"]
    # The lab checks which of them (and of what the code reads) exist, with sizes.
    stat = ann.ok(
        "GET",
        "/notebook/ann/iris/cgu-lab/files/stat",
        params=[("path", p) for p in [*came["files"], "data", "nowhere.csv"]],
    )
    sizes = {e["path"]: e["size"] for e in stat["entries"]}
    assert sizes == {"data/iris.csv": 8, "helper.py": 0, "data": 8}
    # Not the TA's business: the owner's only (and a notebook without template has none).
    prof.ok("POST", "/api/notebooks", 201, json={"name": "plain", "cpu": 0.5, "memory": "512Mi"})
    plain = prof.ok("GET", "/notebook/prof/plain/cgu-lab/templates/files")
    assert plain == {"template": None, "display_name": "", "version": None, "files": []}
    ann.ok("POST", "/api/notebooks/ann/iris/stop?wait=true", 202)


@pytest.mark.integration
def test_a_revoked_visitor_is_told_in_json_and_a_reload_gets_a_page(day, people):
    ann, tom = people["ann"], people["tom"]
    ann.ok("POST", "/api/notebooks", 201, json={"name": "day", "cpu": 0.5, "memory": "512Mi"})
    ann.ok("POST", "/api/notebooks/ann/day/start?wait=true", 202)
    share = ann.ok(
        "POST", "/api/notebooks/ann/day/shares", 201, json={"grantee": "tom", "access": "edit"}
    )
    assert tom.ok("GET", "/notebook/ann/day/cgu-lab/info")["access"] == "edit"
    ann.ok("DELETE", f"/api/notebooks/ann/day/shares/{share['id']}")
    # JupyterLab's poll: JSON it can act on.
    gone = tom.get("/notebook/ann/day/cgu-lab/info")
    assert gone.status_code == 404
    body = gone.json()
    assert body["code"] == "no_access" and "no longer have access" in body["message"]
    assert body["portal_url"] == f"{day.url}/"
    # A reload: a page with the way back, never raw JSON.
    page = tom.get("/notebook/ann/day/lab", headers={"Accept": "text/html,*/*"})
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert "no longer have access" in page.text and f'href="{day.url}/"' in page.text
    assert page.headers["x-frame-options"] == "SAMEORIGIN"  # still a notebook-origin answer
    # A stale log-in link: a page for the browser, JSON for a script.
    stale = "/notebook/ann/day/_cgu_login?code=old&state=old"
    headers = {"Host": notebook_host(day.url, "ann", "day")}
    page = httpx.get(day.url + stale, headers={**headers, "Accept": "text/html"})
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
    assert "Open the notebook again" in page.text and 'href="/notebook/ann/day/lab"' in page.text
    script = httpx.get(day.url + stale, headers=headers)
    assert script.status_code == 400 and script.json()["code"] == "login_failed"


@pytest.mark.integration
def test_the_idle_countdown_follows_the_kernel_and_a_culled_page_is_told_why(day, people):
    ops, ann = people["ops"], people["ann"]
    # Idle after 30 s, warned 15 s before.
    ops.ok("PUT", "/api/culling/policy", json={"idle_minutes": 0.5, "warn_minutes": 0.25})
    kernel = ann.ok("POST", "/notebook/ann/day/api/kernels", 201, json={"name": "python3"})
    assert run_cell(ann, "ann", "day", kernel["id"], "print('hi')") == "hi\n"
    status = ann.ok("GET", "/notebook/ann/day/cgu-lab/culling")
    assert status["action"] == "keep" and status["idle_seconds"] < 10 and not status["exempt"]
    # The page's poll finds the warning as the window opens, not at the next pass. (These
    # 15 s pass in real time: the cell run below is stamped by the kernel with the real
    # time, and must read as later than this warning, as it is for a student.)
    warned = wait_until(
        lambda: (s := ann.ok("GET", "/notebook/ann/day/cgu-lab/culling"))["action"] == "warn" and s,
        timeout=40,
        what="the idle warning",
    )
    now = datetime.fromisoformat(warned["now"])
    left = (datetime.fromisoformat(warned["stop_at"]) - now).total_seconds()
    assert 10 <= left <= 15.5, warned
    assert "in less than a minute" in warned["message"] and "1 minutes" not in warned["message"]
    assert warned["idle_seconds"] >= 15 and warned["cause"] == "idle"
    # A cell run now ends the warning at once: the status reads the kernel, not a stale pass.
    run_cell(ann, "ann", "day", kernel["id"])
    fresh = ann.ok("GET", "/notebook/ann/day/cgu-lab/culling")
    assert fresh["action"] == "keep" and fresh["message"] == "" and fresh["idle_seconds"] < 5
    # Left alone, it is culled; JupyterLab's next request learns why and where to restart.
    # The culler's passes, each after the clock is moved past the idle 30 s (a warning
    # first, then its 15 s).
    for _ in range(3):
        day.clock.advance(seconds=31)
        day.cull()
        if ann.ok("GET", "/api/notebooks/ann/day")["state"] != "running":
            break
    wait_state(ann, "ann", "day", "stopped")
    stopped = ann.get("/notebook/ann/day/cgu-lab/info")
    assert stopped.status_code == 503
    body = stopped.json()
    assert (body["code"], body["cause"], body["state"]) == ("notebook_stopped", "idle", "stopped")
    assert body["reason"] == "stopped for idleness" and body["detail"].startswith("idle for")
    assert body["restart_url"].startswith(f"{day.url}/notebook/auto-start/ann/day?next=")
    assert "stopped for idleness" in body["message"]
    sessions = ann.get("/notebook/ann/day/api/sessions")  # what JupyterLab polls itself
    assert sessions.status_code == 503 and sessions.json()["code"] == "notebook_stopped"
    page = ann.get("/notebook/ann/day/lab", headers={"Accept": "text/html"})
    assert page.status_code == 303 and "/notebook/auto-start/ann/day" in page.headers["location"]
    ops.ok("PUT", "/api/culling/policy", json={"idle_minutes": 600, "warn_minutes": 10})


@pytest.mark.integration
def test_a_notebook_that_died_says_so(day, people):
    ann = people["ann"]
    ann.ok("POST", "/api/notebooks/ann/day/start?wait=true", 202)
    server_process("ann", "day").kill()
    # The liveness check (every second) notices; its stop is the controller's own task.
    wait_until(
        lambda: ann.ok("GET", "/api/notebooks/ann/day")["state"] != "running",
        timeout=20,
        interval=0.2,
        what="the dead server to be noticed",
    )
    wait_state(ann, "ann", "day", "stopped")
    body = ann.get("/notebook/ann/day/cgu-lab/info").json()
    assert (body["code"], body["cause"]) == ("notebook_stopped", "died")
    assert body["reason"] == "its server stopped by itself"
    # A stop by its owner says that instead.
    ann.ok("POST", "/api/notebooks/ann/day/start?wait=true", 202)
    ann.ok("POST", "/api/notebooks/ann/day/stop?wait=true", 202)
    body = ann.get("/notebook/ann/day/cgu-lab/info").json()
    assert (body["cause"], body["reason"]) == ("user", "stopped by its owner")


@pytest.mark.integration
def test_a_group_exempt_notebook_says_it_is_exempt_through_its_group(day, people):
    ops, ann = people["ops"], people["ann"]
    ops.ok("POST", "/api/groups", 201, json={"name": "research"})
    ops.ok("PUT", "/api/groups/research/members/ann", json={"manager": False})
    ops.ok(
        "PUT",
        "/api/groups/research/culling",
        json={"enabled": False, "idle_minutes": 60, "warn_minutes": 10},
    )
    ann.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "deep", "cpu": 0.5, "memory": "512Mi", "group": "research"},
    )
    status = ann.ok("GET", "/notebook/ann/deep/cgu-lab/culling")
    assert not status["enabled"] and not status["persistent"]
    assert "exempt through its group 'research'" in status["exempt"]
    assert status["reason"] == status["exempt"]
    public = ann.ok("GET", "/api/notebooks/ann/deep/culling")
    assert "exempt through its group 'research'" in public["reason"]

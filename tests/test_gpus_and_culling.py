"""GPU types, placement, the queue and reclaim, the idle culler and monitoring,
with real notebook servers (their environment, a kernel kept busy, their memory)
and the controller in this process, so that idle time passes by moving its clock.

The controller is `InProcess` with the real local backend (tests/inprocess.py):
the app, its store and proxy as a process would run them, and JupyterLab servers
really started. Its culler and monitor wait a day between passes and the test runs
each pass when it wants it (`cull`, `sample_monitor`), after moving the platform's
clock past a reclaim threshold, an idle limit or a warning's countdown instead of
sleeping through them. The servers' own times (a kernel's last activity) are real
time: a moved clock reads them as that much older, as a later real pass would.

No GPU is on this machine, so an admin declares one (as the API allows for
planning a layout); notebooks given it start with CUDA_VISIBLE_DEVICES set.
"""

import asyncio
import json
import shutil

import pytest
import websockets

from cgu_lab.backends.local import LocalBackend

from .harness import (
    PASSWORD,
    Session,
    execute_request,
    kill_notebooks,
    reachable_dir,
    wait_running,
    wait_state,
    wait_until,
)
from .inprocess import InProcess
from .test_notebooks import server_process

pytestmark = pytest.mark.integration


# Between passes of the culler and the monitor: longer than any move of this module's
# clock, so that each pass is one the test runs (`fast.cull()`, `fast.sample_monitor()`).
A_DAY = 86400


@pytest.fixture(scope="module")
def fast():
    """The controller in this process with real notebook servers; reclaim takes notebooks
    idle 30 s (of its clock, which the tests move)."""
    base = reachable_dir()
    site = InProcess(
        base / "data",
        backend=LocalBackend,
        cull_interval=A_DAY,
        monitor_interval=A_DAY,
        reclaim_idle_minutes=0.5,
    ).start()
    # Served over HTTP too: notebook servers ask the controller, kernels' websockets go
    # through its proxy.
    site.serve()
    site.create_user("ops", "admin")
    for name in ("ann", "ben", "cat"):
        site.create_user(name)
    with client(site, "ops") as ops:
        ops.ok(
            "PUT",
            "/api/quotas/default",
            json={"cpu": 4, "memory": "8Gi", "notebooks": 3, "gpus": {"standard": 1, "premium": 1}},
        )
    yield site
    site.stop()
    kill_notebooks(site.data_dir)
    shutil.rmtree(base, ignore_errors=True)


def client(site, name):
    """`name` logged in on the app over real HTTP (the notebook servers' own requests and
    the websockets need the served app; one way for every client of the module)."""
    return Session(site.url, name, PASSWORD, site=site)


@pytest.fixture(scope="module")
def ops(fast):
    with client(fast, "ops") as session:
        yield session


@pytest.fixture(scope="module")
def users(fast):
    sessions = {name: client(fast, name) for name in ("ann", "ben", "cat")}
    yield sessions
    for session in sessions.values():
        session.close()


def state(session, owner, name):
    return session.ok("GET", f"/api/notebooks/{owner}/{name}")


def test_gpu_types_are_admin_defined_and_validated(ops, users):
    assert users["ann"].put("/api/gpu-types/standard", json={}).status_code == 403
    bad = ops.put("/api/gpu-types/half", json={"share": 1, "fraction": 0.5})
    assert bad.status_code == 400 and "share > 1" in bad.json()["message"]
    assert ops.put("/api/gpu-types/x", json={"resource_name": "gpu"}).status_code == 400
    # On nodes GFD calls "-SHARED" every nvidia.com/gpu is a time-slice: a whole type is
    # refused there (resource given or not), a shared one takes the slices' resource.
    sliced = {"node_selector": {"nvidia.com/gpu.product": "NVIDIA-RTX-A5000-SHARED"}}
    for body in (sliced, {**sliced, "resource_name": "nvidia.com/gpu"}):
        refused = ops.put("/api/gpu-types/sliced", json=body)
        assert refused.status_code == 400 and "time-sliced" in refused.json()["message"]
    slices = ops.ok("PUT", "/api/gpu-types/sliced", json={**sliced, "share": 4})
    assert slices["resource_name"] == "nvidia.com/gpu"
    ops.ok("DELETE", "/api/gpu-types/sliced")
    standard = ops.ok(
        "PUT",
        "/api/gpu-types/standard",
        json={"display_name": "Shared GPU", "resource_name": "nvidia.com/gpu.shared", "share": 2},
    )
    assert standard["capacity"] == 0
    ops.ok("PUT", "/api/gpu-types/premium", json={"display_name": "Whole GPU"})
    ops.ok(
        "POST",
        "/api/gpus",
        201,
        json={"device_id": "GPU-test-0", "model": "NVIDIA RTX A5000", "memory": "24Gi"},
    )
    assert ops.post("/api/gpus", json={"device_id": "GPU-test-0"}).status_code == 409
    types = {t["name"]: t for t in users["ann"].ok("GET", "/api/gpu-types")}
    assert types["standard"]["capacity"] == 2 and types["premium"]["capacity"] == 1
    inventory = ops.ok("GET", "/api/gpus")
    assert [(g["device_id"], g["declared"], g["memory"]) for g in inventory] == [
        ("GPU-test-0", True, 24 * 2**30)
    ]


def test_shared_gpu_placement_queue_and_drain(fast, ops, users):
    ann, ben, cat = users["ann"], users["ben"], users["cat"]
    for session in (ann, ben, cat):
        session.ok(
            "POST",
            "/api/notebooks",
            201,
            json={"name": "gpu", "cpu": 0.5, "memory": "512Mi", "gpu_type": "standard", "gpus": 1},
        )
    assert ann.ok("POST", "/api/notebooks/ann/gpu/start?wait=true", 202)["devices"] == [
        "GPU-test-0"
    ]
    assert ben.ok("POST", "/api/notebooks/ben/gpu/start?wait=true", 202)["state"] == "running"
    assert server_process("ann", "gpu").environ()["CUDA_VISIBLE_DEVICES"] == "GPU-test-0"
    # Two notebooks share the one GPU; the third waits, and is told where it stands.
    queued = cat.ok("POST", "/api/notebooks/cat/gpu/start", 202)
    assert queued["state"] == "queued"
    assert queued["message"].startswith("You are next in the queue for a 'standard' GPU")
    # GPU types and devices in use cannot be removed; the refusal names who uses them.
    refused = ops.delete("/api/gpu-types/standard")
    assert (
        refused.status_code == 409
        and "ann" in refused.json()["message"]
        and "ben" in refused.json()["message"]
    )
    assert ops.delete("/api/gpus/GPU-test-0").status_code == 409
    holders = ops.ok("GET", "/api/gpus")[0]["holders"]
    assert holders == ["ann/gpu", "ben/gpu"]
    # When ann stops, cat's turn comes by itself (in a task of the controller's: wait for it).
    ann.ok("POST", "/api/notebooks/ann/gpu/stop?wait=true", 202)
    fast.drain_queue()
    wait_running(cat, "cat", "gpu")
    assert state(cat, "cat", "gpu")["devices"] == ["GPU-test-0"]


def test_reclaim_stops_idle_notebooks_for_a_waiting_start(fast, ops, users):
    ann, ben, cat = users["ann"], users["ben"], users["cat"]
    ann.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "big", "cpu": 0.5, "memory": "512Mi", "gpu_type": "premium", "gpus": 1},
    )
    # ben and cat hold the GPU (shared); once idle for 30 s a whole-GPU start reclaims it.
    assert ann.ok("POST", "/api/notebooks/ann/big/start", 202)["state"] == "queued"
    ann.ok("POST", "/api/notebooks/ann/big/stop", 202)
    # Idle time passes on the controller's clock, moved past the reclaim threshold; both
    # read as idle for longer than it (JupyterLab's countdown asks the same reading).
    fast.clock.advance(seconds=32)
    wait_until(
        lambda: all(
            (s.ok("GET", f"/notebook/{s.name}/gpu/cgu-lab/culling")["idle_seconds"] or 0) > 31
            for s in (ben, cat)
        ),
        timeout=10,
        what="ben's and cat's notebooks to be idle for 30 s",
    )
    started = ann.ok("POST", "/api/notebooks/ann/big/start", 202)
    assert started["state"] == "queued" and "stopping 2 idle notebooks" in started["message"]
    # The controller stops them in tasks of its own; each stop gives the queue its turn.
    for session in (ben, cat):
        fast.settle(session.name, "gpu")
    fast.drain_queue()
    wait_running(ann, "ann", "big")
    for session in (ben, cat):
        stopped = state(session, session.name, "gpu")
        assert stopped["state"] == "stopped"
        assert "needed this GPU for a waiting notebook" in stopped["message"]
    stops = ops.ok("GET", "/api/audit?action=notebook.stopped&limit=50")
    assert {e["target"] for e in stops if (e["details"] or {}).get("cause") == "reclaim"} == {
        "notebook:ben/gpu",
        "notebook:cat/gpu",
    }
    ann.ok("POST", "/api/notebooks/ann/big/stop?wait=true", 202)


def test_idle_culler_warns_then_stops_and_spares_the_busy_the_persistent_and_the_kept(
    fast, ops, users
):
    ann, ben, cat = users["ann"], users["ben"], users["cat"]
    # Idle after 24 s, warned 12 s before.
    ops.ok("PUT", "/api/culling/policy", json={"idle_minutes": 0.4, "warn_minutes": 0.2})
    assert ann.put("/api/culling/policy", json={"idle_minutes": 1}).status_code == 403
    bad = ops.put("/api/culling/policy", json={"idle_minutes": 1, "warn_minutes": 2})
    assert bad.status_code == 400 and "shorter than the idle limit" in bad.json()["message"]
    for session in (ann, ben, cat):
        session.ok(
            "POST", "/api/notebooks", 201, json={"name": "cull", "cpu": 0.5, "memory": "512Mi"}
        )
    ops.ok("PATCH", "/api/notebooks/cat/cull", json={"persistent": True})
    for session in (ann, ben, cat):
        session.ok("POST", f"/api/notebooks/{session.name}/cull/start?wait=true", 202)
    # ben keeps a kernel busy for a minute.
    kernel = ben.ok("POST", "/notebook/ben/cull/api/kernels", 201, json={"name": "python3"})
    url, headers, connect = ben.notebook_socket(
        f"/notebook/ben/cull/api/kernels/{kernel['id']}/channels"
    )

    async def start_long_cell():
        # The kernel's own sleep (not the test's): the cell keeps ben's kernel busy.
        msg_id, message = execute_request("import time; time.sleep(90)", "ben")
        async with websockets.connect(url, additional_headers=headers, **connect) as ws:
            await ws.send(message)
            # Left running once the kernel says it is busy with the cell.
            while True:
                reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if (
                    reply["msg_type"] == "status"
                    and reply["parent_header"].get("msg_id") == msg_id
                    and reply["content"]["execution_state"] == "busy"
                ):
                    break

    asyncio.run(start_long_cell())
    # ann is warned first (12 s idle: the clock is moved past it), with a countdown, and
    # presses "keep running" once.
    fast.clock.advance(seconds=13)
    warned = wait_until(
        lambda: (s := ann.ok("GET", "/api/notebooks/ann/cull/culling"))["action"] == "warn" and s,
        timeout=10,
        what="ann's warning",
    )
    assert warned["stop_at"] and "will be stopped" in warned["message"]
    ann.ok("POST", "/api/notebooks/ann/cull/keep-running")
    assert ann.ok("GET", "/api/notebooks/ann/cull/culling")["action"] == "keep"
    kept_at = fast.clock.monotonic()
    # ... and is stopped only a full idle period after that, with the reason recorded:
    # warned again 12 s idle after keeping it, stopped 12 s after that warning.
    fast.clock.advance(seconds=13)
    fast.cull()
    assert ann.ok("GET", "/api/notebooks/ann/cull")["state"] == "running"
    fast.clock.advance(seconds=12)
    fast.cull()
    wait_state(ann, "ann", "cull", "stopped")
    assert fast.clock.monotonic() - kept_at >= 20
    stopped = state(ann, "ann", "cull")
    assert stopped["message"].startswith("Stopped by the idle culler: idle for")
    assert state(ben, "ben", "cull")["state"] == "running"
    assert state(cat, "cat", "cull")["state"] == "running"
    assert ben.ok("GET", "/api/notebooks/ben/cull/culling")["action"] == "keep"
    cat_status = cat.ok("GET", "/api/notebooks/cat/cull/culling")
    assert cat_status["persistent"] and not cat_status["enabled"]
    events = ops.ok("GET", "/api/audit?target=notebook:ann/cull&limit=20")
    actions = [e["action"] for e in events]
    assert {"notebook.warned", "notebook.kept_running", "notebook.stopped"} <= set(actions)
    stop = next(e for e in events if e["action"] == "notebook.stopped")
    assert stop["actor"] == "system" and stop["details"]["cause"] == "idle"
    # The culler's own reading never counted as activity: ann's server saw no API use from it.
    ops.ok("PUT", "/api/culling/policy", json={"idle_minutes": 600, "warn_minutes": 10})
    for session in (ben, cat):
        session.ok("POST", f"/api/notebooks/{session.name}/cull/stop?wait=true", 202)


def test_monitoring_and_metrics(fast, ops, users):
    ann = users["ann"]
    ann.ok("POST", "/api/notebooks/ann/gpu/start?wait=true", 202)
    # Two passes of the monitor, now (a history of at least two samples).
    fast.sample_monitor()
    fast.sample_monitor()
    snapshot = wait_until(
        lambda: (m := ops.ok("GET", "/api/monitoring"))["notebooks"] and m,
        timeout=10,
        what="a monitoring sample with the notebook",
    )
    assert snapshot["node"]["memory_total"] > 0 and 0 <= snapshot["node"]["cpu_percent"] <= 100
    row = next(
        nb for nb in snapshot["notebooks"] if nb["owner"] == "ann" and nb["notebook"] == "gpu"
    )
    assert row["readable"] and row["memory_bytes"] > 10 * 2**20 and row["gpus"] == 1
    assert any(u["user"] == "ann" and u["gpus"] == 1 for u in snapshot["users"])
    allocation = {a["gpu_type"]: a for a in snapshot["allocation"]}
    assert allocation["standard"] == {"gpu_type": "standard", "allocated": 1, "capacity": 2}
    assert snapshot["stops"]["reclaim"] == 2 and snapshot["stops"]["idle"] >= 1
    assert snapshot["reclaimed_gpu_hours"] > 0 and snapshot["energy_saved_kwh"] > 0
    assert len(snapshot["history"]) >= 2
    metrics = ops.get("/api/metrics")
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    text = metrics.text
    for name in (
        "cgu_lab_node_cpu_percent",
        'cgu_lab_notebook_memory_bytes{notebook="gpu",owner="ann"}',
        'cgu_lab_gpus_allocated{gpu_type="standard"} 1.0',
        'cgu_lab_notebook_stops_total{cause="reclaim"} 2.0',
        "cgu_lab_reclaimed_gpu_hours_total",
        'cgu_lab_user_gpus{user="ann"} 1.0',
    ):
        assert name in text, name
    assert ann.get("/api/metrics").status_code == 403
    assert ann.get("/api/monitoring").status_code == 403
    ann.ok("POST", "/api/notebooks/ann/gpu/stop?wait=true", 202)

"""Idle kernels shut down while their notebook stays up, by the notebook server's own
kernel culler (jupyter-server's MappingKernelManager), which the idle policy configures
at the server's launch (core.culling.kernel_culling, backends/base.kernel_culling_args).

A real JupyterLab server, started by the local backend for the controller in this
process. The culling is the server's own timer on real time, so the policy's kernel limit
is a few seconds and the test asks the server again until it has acted.
"""

import asyncio
import shutil
from dataclasses import replace

import pytest
import websockets

from cgu_lab.backends.base import kernel_culling_args
from cgu_lab.backends.local import LocalBackend
from cgu_lab.core import culling
from cgu_lab.core.errors import Invalid

from .harness import PASSWORD, Session, kill_notebooks, reachable_dir, wait_until
from .inprocess import InProcess
from .test_notebooks import server_process

pytestmark = pytest.mark.integration

COURSE = "kc-course"
# Three seconds: jupyter-server then looks at its kernels every second.
KERNEL_IDLE_MINUTES = 0.05


@pytest.fixture(scope="module")
def site():
    base = reachable_dir()
    app = InProcess(base / "data", backend=LocalBackend, cull_interval=86400).start()
    app.serve()  # kernels' websockets go through the proxy over real HTTP
    app.create_user("kc-ops", "admin")
    app.create_user("kc-ann", "student")
    yield app
    app.stop()
    kill_notebooks(app.data_dir)
    shutil.rmtree(base, ignore_errors=True)


def client(site, name: str) -> Session:
    return Session(site.url, name, PASSWORD, site=site)


def test_a_policy_gives_the_server_its_kernel_culling_in_its_own_units():
    policy = culling.CullPolicy(idle_minutes=60, warn_minutes=10)
    assert culling.kernel_culling(policy) is None and kernel_culling_args(None) == []
    half_hour = culling.kernel_culling(replace(policy, kernel_idle_minutes=30))
    assert half_hour == culling.KernelCulling(1800, 60, False)
    with_tabs = replace(policy, kernel_idle_minutes=2, kernel_cull_connected=True)
    tabs = culling.kernel_culling(with_tabs)
    assert tabs == culling.KernelCulling(120, 30, True)
    assert kernel_culling_args(tabs) == [
        "--MappingKernelManager.cull_idle_timeout=120",
        "--MappingKernelManager.cull_interval=30",
        "--MappingKernelManager.cull_connected=True",
        "--MappingKernelManager.cull_busy=False",
    ]
    assert culling.kernel_culling(replace(policy, kernel_idle_minutes=0.001)).idle_seconds == 1
    for wrong in (0, -1, float("nan"), culling.MAX_KERNEL_MINUTES + 1):
        with pytest.raises(Invalid, match="idle limit of kernels"):
            replace(policy, kernel_idle_minutes=wrong).validate()


def test_idle_kernels_stop_while_the_server_stays(site):
    with client(site, "kc-ops") as ops, client(site, "kc-ann") as ann:
        bad = ops.put("/api/culling/policy", json={"kernel_idle_minutes": -1})
        assert bad.status_code == 400 and bad.json()["code"] == "invalid"
        assert ann.put(f"/api/groups/{COURSE}/culling", json={}).status_code in (403, 404)
        ops.ok("POST", "/api/groups", 201, json={"name": COURSE})
        ops.ok("PUT", f"/api/groups/{COURSE}/members/kc-ann", json={"manager": False})
        # The course is exempt from stops, and its idle kernels still go.
        policy = ops.ok(
            "PUT",
            f"/api/groups/{COURSE}/culling",
            json={"enabled": False, "kernel_idle_minutes": KERNEL_IDLE_MINUTES},
        )
        assert policy["kernel_idle_minutes"] == KERNEL_IDLE_MINUTES
        assert policy["kernel_cull_connected"] is False and policy["enabled"] is False
        assert ops.ok("GET", "/api/culling/policy")["kernel_idle_minutes"] is None
        body = {"name": "k", "cpu": 0.5, "memory": "1Gi", "group": COURSE}
        ann.ok("POST", "/api/notebooks", 201, json=body)
        ann.ok("POST", "/api/notebooks/kc-ann/k/start?wait=true", 202)
        # The server was launched with the policy's settings.
        argv = server_process("kc-ann", "k").cmdline()
        assert "--MappingKernelManager.cull_idle_timeout=3" in argv
        assert "--MappingKernelManager.cull_interval=1" in argv

        kernels = "/notebook/kc-ann/k/api/kernels"
        idle = ann.ok("POST", kernels, 201, json={"name": "python3"})["id"]
        watched = ann.ok("POST", kernels, 201, json={"name": "python3"})["id"]
        url, headers, connect = ann.notebook_socket(f"{kernels}/{watched}/channels")

        def culled() -> list[str] | None:
            ids = [k["id"] for k in ann.ok("GET", kernels)]
            return None if idle in ids else ids

        async def while_a_tab_is_open() -> list[str]:
            # A tab connected to one kernel: kept (the policy does not cull connected
            # kernels); the other one, idle and alone, is shut down by the server.
            async with websockets.connect(url, additional_headers=headers, **connect):
                what = "the server to shut its idle kernel down"
                return await asyncio.to_thread(wait_until, culled, 60, 0.5, what)

        left = asyncio.run(while_a_tab_is_open())
        assert left == [watched]
        # The server stays up and the notebook running.
        assert ann.ok("GET", "/notebook/kc-ann/k/api/status")["kernels"] >= 1
        assert ann.ok("GET", "/api/notebooks/kc-ann/k")["state"] == "running"
        ann.ok("POST", "/api/notebooks/kc-ann/k/stop?wait=true", 202)

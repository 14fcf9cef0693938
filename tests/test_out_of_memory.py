"""A kernel that outgrows its notebook's memory limit: the server says so.

The kernel's OOM killer stops the process that asks for memory over the notebook's
cgroup ceiling (usually the kernel computing), and JupyterLab says only that the kernel
restarted. The server extension reads the count of such kills from its own memory group
(`cgu-lab/resources`' `memory.oom_kills`), which the lab extension compares answer to
answer to tell the student what happened (src/resources/outOfMemory.ts). Here a real
kernel of a real JupyterLab in a 384 MiB notebook fills a gigabyte, and the count rises
while the server, and the kernel restarted by it, carry on. The controller runs in the
test's process (conftest's `notebook_servers` layer).
"""

from __future__ import annotations

import asyncio

import pytest

from .harness import overfill_memory, run_code, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.notebook_servers]

OWNER, NAME = "oona", "tight"
SITE = f"/notebook/{OWNER}/{NAME}"


@pytest.fixture(scope="module")
def oona(site):
    if site.platform.backend.limiter.mode == "rlimit":
        pytest.skip("this host gives notebooks no cgroups: the kernel keeps no count of kills")
    site.create_user(OWNER)
    client = site.client(OWNER)
    body = {"name": NAME, "cpu": "1", "memory": "384Mi"}
    client.ok("POST", "/api/notebooks", 201, json=body)
    client.ok("POST", f"/api/notebooks/{OWNER}/{NAME}/start?wait=true", 202)
    return client


def test_a_kernel_over_the_memory_limit_is_counted_and_the_notebook_carries_on(oona):
    resources = f"{SITE}/cgu-lab/resources"
    before = oona.ok("GET", resources)["memory"]
    assert before["limit_bytes"] == 384 * 2**20, before
    assert before["oom_kills"] == 0, before

    kernel = oona.ok("POST", f"{SITE}/api/kernels", 201, json={})["id"]
    asyncio.run(overfill_memory(oona, OWNER, NAME, kernel, 1))
    after = wait_until(
        lambda: (memory := oona.ok("GET", resources)["memory"])["oom_kills"] and memory,
        timeout=60,
        what="the kill to be counted",
    )
    assert after["oom_kills"] >= 1, after

    # The server lives on, and restarts the kernel, which runs cells again.
    assert oona.get(f"{SITE}/api/status").status_code == 200
    ran = asyncio.run(run_code(oona, OWNER, NAME, "print(6 * 7)", kernel))
    assert ran == "42\n"
    gone = oona.request("DELETE", f"{SITE}/api/kernels/{kernel}")
    assert gone.status_code == 204


def test_a_notebook_reads_its_own_group_and_no_other(site, oona):
    """The count is read from inside the notebook: its account may read its own memory
    group, but neither list the installation's groups nor read another notebook's."""
    site.create_user("olaf")
    olaf = site.client("olaf")
    olaf.ok("POST", "/api/notebooks", 201, json={"name": "peer", "cpu": "0.5", "memory": "512Mi"})
    olaf.ok("POST", "/api/notebooks/olaf/peer/start?wait=true", 202)
    limiter = site.platform.backend.limiter
    parent = next(p for p in limiter.parents() if limiter.mode == "cgroup2" or "memory" in p.parts)
    events = "memory.events" if limiter.mode == "cgroup2" else "memory.oom_control"
    groups = sorted(str(group / events) for group in parent.glob("nb-*"))
    assert len(groups) == 2, groups
    code = f"""
import os
from cgu_lab.notebook.usage import own_oom_kills
print("own:", own_oom_kills(384 * 2**20))
for path in [{str(parent)!r}, *{groups!r}]:
    try:
        (os.listdir if os.path.isdir(path) else open)(path)
        print("read", path)
    except PermissionError:
        pass
"""
    ran = asyncio.run(run_code(oona, OWNER, NAME, code))
    # its own group it reads (through its own path); the folder and the other group, never
    own, *read = ran.splitlines()
    assert own.startswith("own: ") and own != "own: None", ran
    assert len(read) == 1 and read[0].startswith("read "), ran
    assert read[0].removeprefix("read ") in groups, ran  # its own group's file

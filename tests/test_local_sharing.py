"""How local notebooks share the host's CPU: cgroup weights and the queue of starts.

local_limits' "Sharing the CPU" and local_servers.StartQueue; on fake cgroup trees and
with events, no timing (benchmarks/class_burst.py measures what they buy).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cgu_lab.backends.local_limits import (
    PLATFORM_NICE,
    PLATFORM_WEIGHT,
    STARTING_WEIGHT,
    WEIGHT,
    Limiter,
    cpu_cgroup,
)
from cgu_lab.backends.local_servers import LAUNCHER, StartQueue, ordinal


def v1(tmp_path, tag: str) -> Limiter:
    for hierarchy in ("cpu", "memory"):
        (tmp_path / hierarchy).mkdir(exist_ok=True)
    limiter = Limiter(root=tmp_path, tag=tag)
    assert limiter.mode == "cgroup1"
    return limiter


def shares(path) -> int:
    return int((path / "cpu.shares").read_text())


def test_notebooks_weigh_as_many_processes_as_they_are_and_starts_go_first(tmp_path):
    first, second = v1(tmp_path, "aaaa1111"), v1(tmp_path, "bbbb2222")
    top = tmp_path / "cpu" / "cgu-lab"
    first.prepare(1, 1000, 2**30, [])
    first.prepare(2, 500, 2**30, [])
    second.prepare(1, 1000, 2**30, [])
    mine = top / "aaaa1111"
    # Another installation counts while its notebooks hold processes (below: when none do).
    (top / "bbbb2222" / "nb-1" / "cgroup.procs").write_text("4242\n")
    first.reweigh()
    # Starting: twice a process, until the server answers.
    assert shares(mine / "nb-1") == STARTING_WEIGHT
    first.settle("nb-1")
    assert shares(mine / "nb-1") == WEIGHT
    # Each installation: one process per group; the shared top: the sum of them.
    assert shares(mine) == 2 * WEIGHT
    assert shares(top / "bbbb2222") == WEIGHT
    assert shares(top) == 3 * WEIGHT
    # The quota is still the notebook's own: the weight decides only who goes first.
    assert (mine / "nb-2" / "cpu.cfs_quota_us").read_text() == "50000"
    # A group removed (here by hand: a fake tree's files keep rmdir from working).
    shutil.rmtree(mine / "nb-2")
    first.reweigh()
    assert shares(mine) == WEIGHT and shares(top) == 2 * WEIGHT
    # An installation whose controller died with its groups left behind, none running:
    # its weight no longer counts (it made the notebooks outweigh the controller).
    (top / "bbbb2222" / "nb-1" / "cgroup.procs").write_text("")
    first.reweigh()
    assert shares(top) == WEIGHT
    shutil.rmtree(top / "bbbb2222")  # an installation's parent goes with its last group
    first.reweigh()
    assert shares(top) == WEIGHT


def test_cgroup_v2_weights(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    limiter = Limiter(root=tmp_path, tag="aaaa1111")
    assert limiter.mode == "cgroup2"
    for notebook in (1, 2, 3):
        limiter.prepare(notebook, 1000, 2**30, [])
    parent = tmp_path / "cgu-lab" / "aaaa1111"
    assert (parent / "nb-1" / "cpu.weight").read_text() == "200"
    limiter.settle("nb-1")
    assert (parent / "nb-1" / "cpu.weight").read_text() == "100"
    assert (parent / "cpu.weight").read_text() == "300"
    assert (tmp_path / "cgu-lab" / "cpu.weight").read_text() == "300"


def test_no_core_is_pinned_where_cgroups_apply(tmp_path):
    plan = v1(tmp_path, "aaaa1111").prepare(1, 2000, 2**30, busy_cpus=[0, 0, 1])
    assert "cpus" not in plan


def test_starts_take_turns_and_are_told_their_place():
    async def scenario():
        queue = StartQueue(2)
        inside, most = 0, 0
        release = asyncio.Event()
        told: dict[int, list[str]] = {i: [] for i in range(5)}

        async def start(i: int) -> None:
            nonlocal inside, most

            async def progress(_percent: int, message: str) -> None:
                told[i].append(message)

            async with queue.turn(progress):
                inside += 1
                most = max(most, inside)
                await release.wait()
                inside -= 1

        tasks = [asyncio.create_task(start(i)) for i in range(5)]
        for _ in range(10):
            await asyncio.sleep(0)
        assert inside == 2 and queue.running == 2 and len(queue.waiting) == 3
        # The third in line leaves (its student stopped it): its place goes to the next.
        tasks[4].cancel()
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(queue.waiting) == 2
        release.set()
        await asyncio.gather(*tasks[:4])
        assert most == 2 and queue.running == 0 and not queue.waiting
        assert told[0] == [] and told[1] == []
        assert told[2][0] == "Waiting for a free core: 1st in line"
        assert told[3][0] == "Waiting for a free core: 2nd in line"

    asyncio.run(scenario())


def test_a_slot_handed_to_a_cancelled_start_is_passed_on():
    async def scenario():
        queue = StartQueue(1)
        done = []

        async def quiet(*_args) -> None:
            return None

        async def start(i: int) -> None:
            async with queue.turn(quiet):
                done.append(i)

        holder = queue.turn(quiet)
        await holder.__aenter__()
        second = asyncio.create_task(start(1))
        third = asyncio.create_task(start(2))
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(queue.waiting) == 2
        await holder.__aexit__(None, None, None)  # the slot is handed to the second...
        second.cancel()  # ...which is cancelled before it could take it (or just after)
        await asyncio.gather(second, third, return_exceptions=True)
        # Whether the second took its slot or passed it on, the third got one, none leaked.
        assert done[-1] == 2 and queue.running == 0 and not queue.waiting

    asyncio.run(scenario())


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"
    ]  # fmt: skip


def test_what_the_launcher_starts_runs_at_the_default_nice(tmp_path):
    """The controller's loop may run favoured (favour_platform); its notebooks never are."""
    if os.geteuid() != 0:
        pytest.skip("a negative nice value needs root")
    show = "import os; print(os.getpriority(os.PRIO_PROCESS, 0))"
    plan = {"argv": [sys.executable, "-c", show], "env": {}, "cwd": str(tmp_path)}
    launched = subprocess.run(
        [sys.executable, "-I", "-S", LAUNCHER],
        env={"CGU_LAUNCH_PLAN": json.dumps(plan)},
        preexec_fn=lambda: os.setpriority(os.PRIO_PROCESS, 0, PLATFORM_NICE),
        capture_output=True,
        text=True,
        check=True,
    )
    assert launched.stdout.strip() == "0"


def test_favouring_the_platform_covers_the_threads_it_already_has(tmp_path):
    """The executor's thread made for the migrations, before the backend opens, runs every
    start's blocking steps: it is favoured with the event loop, and so is a thread made
    afterwards (it inherits its maker's nice value)."""
    if os.geteuid() != 0:
        pytest.skip("a negative nice value needs root")
    for hierarchy in ("cpu", "memory"):
        (tmp_path / hierarchy).mkdir()
    probe = f"""
import os, threading
from pathlib import Path
from cgu_lab.backends.local_limits import Limiter, favour_platform
nice = lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
ready, done, seen = threading.Event(), threading.Event(), []
def early():
    ready.set(); done.wait(); seen.append(nice())
thread = threading.Thread(target=early, daemon=True); thread.start(); ready.wait()
assert favour_platform(Limiter(root=Path({str(tmp_path)!r}), tag="nice0001"))
later = threading.Thread(target=lambda: seen.append(nice())); later.start(); later.join()
done.set(); thread.join()
print(nice(), *seen)
"""
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert shown == [str(PLATFORM_NICE)] * 3


def test_the_controller_weighs_in_a_group_of_its_own_beside_its_notebooks(tmp_path):
    """Its nice value alone ranked it only within its own session's autogroup (the
    module's "Sharing the CPU"): in a group beside its notebooks its weight is theirs to
    compare with, and the installation still weighs as many processes as notebooks."""
    limiter = v1(tmp_path, "aaaa1111")
    mine = tmp_path / "cpu" / "cgu-lab" / "aaaa1111"
    assert limiter.hold_platform(os.getpid())
    assert (mine / "platform" / "cgroup.procs").read_text() == str(os.getpid())
    assert shares(mine / "platform") == PLATFORM_WEIGHT
    limiter.prepare(1, 1000, 2**30, [])
    assert shares(mine) == WEIGHT  # the controller's group is not a notebook's
    # What it starts for a notebook goes back where the controller came from.
    came_from = cpu_cgroup(Path("/proc/self/cgroup").read_text(), False).lstrip("/")
    prefix = limiter.outside_platform()
    assert prefix[-2:] == [str(tmp_path / "cpu" / came_from / "cgroup.procs"), "--"]


def test_the_controller_moves_into_its_group_and_back_on_the_host(tmp_path):
    """On the host's own cgroups (root only): the controller's every thread moves into
    `cgu-lab/<tag>/platform`, a program started outside_platform() runs where the
    controller came from, and release_platform() puts it back and removes the group."""
    probe = """
import os, subprocess, threading, uuid
from cgu_lab.backends.local_limits import Limiter, cpu_cgroup, favour_platform
limiter = Limiter(tag="platform-" + uuid.uuid4().hex[:12])
if limiter.mode == "rlimit":
    raise SystemExit(77)
v2 = limiter.mode == "cgroup2"
where = lambda pid="self": cpu_cgroup(open(f"/proc/{pid}/cgroup").read(), v2)
started = where()
worker = threading.Thread(target=threading.Event().wait, args=(30,), daemon=True)
worker.start()
assert favour_platform(limiter)
group = f"/cgu-lab/{limiter.tag}/platform"
assert where() == group, where()
assert where(f"{os.getpid()}/task/{worker.native_id}") == group
outside = subprocess.run([*limiter.outside_platform(), "cat", "/proc/self/cgroup"],
                         capture_output=True, text=True, check=True).stdout
assert cpu_cgroup(outside, v2) == started, outside
limiter.release_platform()
assert where() == started
assert not (limiter.parents()[0] / "platform").exists()
print("ok")
"""
    if os.geteuid() != 0:
        pytest.skip("moving a process between cgroups needs root")
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if shown.returncode == 77:
        pytest.skip("this host has no writable cgroups")
    assert shown.stdout.strip() == "ok", shown.stderr

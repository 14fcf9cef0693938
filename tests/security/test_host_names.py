"""Two installations on one host never touch each other's notebooks.

Notebook ids come from each installation's own database, so both have a
notebook 1 and 2. Every host-wide name the local backend makes carries the
installation's id: cgroups are `cgu-lab/<instance>/nb-<id>`, and a process is
only ever signalled when it carries this installation's marker (or sits in
its cgroup) and belongs to that notebook. Proved with real controller
processes, real JupyterLab servers and (here: cgroup v1, as root) real
cgroups: one installation stops and restarts its notebooks, and its
controller, while the other's servers keep running, keep answering and keep
their memory limits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from cgu_lab.backends.base import EnvironmentSpec, NotebookSpec
from cgu_lab.backends.local import LocalBackend
from cgu_lab.controller.settings import Settings

from ..harness import Controller, reachable_dir

pytestmark = pytest.mark.end_to_end

CGROUPS = Path("/sys/fs/cgroup")
# Different limits, so a limit written into the other installation's cgroup shows.
MEMORY = {"east": 512 * 2**20, "west": 768 * 2**20}
NAMES = {1: "one", 2: "two"}


def spec(notebook_id: int) -> NotebookSpec:
    return NotebookSpec(
        id=notebook_id,
        owner="alice",
        name=NAMES.get(notebook_id, "x"),
        base_path="/notebook/alice/x/",
        environment=EnvironmentSpec(name="default"),
        cpu_milli=500,
        memory=2**28,
        gpu_type=None,
        gpus=0,
        proxy_secret="s",
        controller_url="http://127.0.0.1:1",
    )


def sleeper(instance: str, notebook_id: int) -> subprocess.Popen:
    env = {"PATH": "/usr/bin:/bin", "CGU_LAB_INSTANCE": instance}
    env["CGU_NOTEBOOK_ID"] = str(notebook_id)
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"], env=env)


def recorded(process: subprocess.Popen) -> dict:
    return {"pid": process.pid, "create_time": psutil.Process(process.pid).create_time()}


def test_stop_and_sweep_never_signal_another_installations_process(tmp_path):
    """The same notebook id, a recorded pid: only our marker makes a process ours."""

    async def scenario() -> None:
        backend = LocalBackend(Settings(data_dir=tmp_path, use_cgroups=False, run_as="self"))
        await backend.open()
        theirs = sleeper("0ther0installation", 1)
        ours = sleeper(backend.instance, 1)
        try:
            await asyncio.sleep(0.2)
            assert (await backend.observe(spec(1), recorded(theirs))).alive is False
            await backend.stop(spec(1), recorded(theirs))  # a row pointing at their pid
            assert await backend.sweep(set()) == [1]  # only ours is a stray
            assert theirs.poll() is None and ours.wait(5) is not None
            other_id = sleeper(backend.instance, 2)
            await backend.stop(spec(1), recorded(other_id))  # ours, but notebook 2's
            assert other_id.poll() is None
            await backend.stop(spec(2), recorded(other_id))
            assert other_id.wait(5) is not None
        finally:
            for process in (theirs, ours):
                process.kill()
                process.wait()
            await backend.close()

    asyncio.run(scenario())


# -- two real installations -----------------------------------------------------


def instance_of(ctl: Controller) -> str:
    return (ctl.data_dir / "instance-id").read_text().strip()


def server(ctl: Controller, notebook_id: int) -> psutil.Process:
    """The JupyterLab server of this installation's notebook `notebook_id`."""
    instance = instance_of(ctl)
    for process in psutil.process_iter():
        try:
            env = process.environ()
            if (
                env.get("CGU_LAB_INSTANCE") == instance
                and env.get("CGU_NOTEBOOK_ID") == str(notebook_id)
                and "jupyter-lab" in " ".join(process.cmdline())
            ):
                return process
        except (psutil.Error, OSError):
            continue
    raise AssertionError(f"no server for notebook {notebook_id} of {ctl.data_dir}")


def cgroup_of(process: psutil.Process) -> tuple[str, int] | None:
    """The memory cgroup and its limit, or None where limits are rlimits."""
    for line in Path(f"/proc/{process.pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(",") and "/cgu-lab/" in path:
            limit = int(
                (CGROUPS / "memory" / path.lstrip("/") / "memory.limit_in_bytes").read_text()
            )
            return path, limit
    return None


def snapshot(ctl: Controller) -> dict[int, tuple]:
    """Per notebook: the server's pid, its start time and its memory cgroup with the limit."""
    taken = {}
    for notebook_id in NAMES:
        process = server(ctl, notebook_id)
        taken[notebook_id] = (process.pid, process.create_time(), cgroup_of(process))
    return taken


def assert_unharmed(ctl: Controller, before: dict[int, tuple]) -> None:
    """The installation's servers are the same processes, answer, and kept their limits."""
    assert snapshot(ctl) == before
    with ctl.client("alice") as alice:
        for name in NAMES.values():
            status = alice.get(f"/notebook/alice/{name}/api/status")
            assert status.status_code == 200, (ctl.data_dir, name, status.text)


def at_once(action, jobs) -> None:
    """`action(job)` for every job, each in a thread of its own: what is mostly waiting for
    processes (a controller importing, a JupyterLab starting) overlaps. The first failure
    is raised once all have ended."""
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        for future in [pool.submit(action, job) for job in jobs]:
            future.result()


def prepare(ctl: Controller) -> None:
    ctl.create_users([("boss", "admin"), ("alice", "student")])
    ctl.start()


def create_notebooks(label: str, ctl: Controller) -> None:
    with ctl.client("alice") as alice:
        for name in NAMES.values():  # in this order: ids 1 and 2 in each installation
            body = {"name": name, "cpu": 0.5, "memory": f"{MEMORY[label] // 2**20}Mi"}
            alice.ok("POST", "/api/notebooks", 201, json=body)


@pytest.fixture(scope="module")
def twins():
    """Two installations on this host, each running alice's notebooks one and two (the
    same ids in both), all four started at once: every test starts from that, so any
    one of them runs alone too."""
    installations = {}
    for label in MEMORY:
        base = reachable_dir()
        installations[label] = (base, Controller(base / "data"))
    try:
        at_once(prepare, [ctl for _, ctl in installations.values()])
        both = {label: ctl for label, (_, ctl) in installations.items()}
        for label, ctl in both.items():
            create_notebooks(label, ctl)
        at_once(lambda job: start(*job), [(c, n) for c in both.values() for n in NAMES.values()])
        yield both
    finally:
        for base, ctl in installations.values():
            ctl.stop()
            ctl.kill_notebooks()
            if (ctl.data_dir / "instance-id").exists():
                remove_cgroups(instance_of(ctl))
            shutil.rmtree(base, ignore_errors=True)


def remove_cgroups(instance: str) -> None:
    """What a failed test left below `cgu-lab/<instance>/` (once its processes are gone)."""
    deadline = time.monotonic() + 10
    for hierarchy in ("cpu", "memory"):
        parent = CGROUPS / hierarchy / "cgu-lab" / instance
        found = [*parent.glob("nb-*"), parent / "platform", parent] if parent.is_dir() else []
        for directory in found:
            while directory.exists() and time.monotonic() < deadline:
                try:
                    directory.rmdir()
                except OSError:
                    time.sleep(0.2)


def start(ctl: Controller, name: str) -> None:
    with ctl.client("alice") as alice:
        started = alice.ok("POST", f"/api/notebooks/alice/{name}/start?wait=true", 202)
        assert started["state"] == "running", started


def stop(ctl: Controller, name: str) -> None:
    with ctl.client("alice") as alice:
        stopped = alice.ok("POST", f"/api/notebooks/alice/{name}/stop?wait=true", 202)
        assert stopped["state"] == "stopped", stopped


@pytest.mark.integration
def test_both_installations_run_notebooks_with_the_same_ids(twins):
    # (the four servers started at once, in the fixture)
    for label, ctl in twins.items():
        instance = instance_of(ctl)
        for notebook_id, (_, _, cgroup) in snapshot(ctl).items():
            if cgroup is None:  # no writable cgroups on this host: rlimits
                process = server(ctl, notebook_id)
                assert os.sched_getaffinity(process.pid)
                continue
            assert cgroup == (f"/cgu-lab/{instance}/nb-{notebook_id}", MEMORY[label])
    assert instance_of(twins["east"]) != instance_of(twins["west"])
    # Each server listens on a socket of its own below its installation's data, in a
    # network of its own; none holds a port of this host, least of all a controller's.
    sockets = []
    for ctl in twins.values():
        for notebook_id in NAMES:
            process = server(ctl, notebook_id)
            sock = ctl.data_dir / "run" / f"nb-{notebook_id}" / "jupyter.sock"
            assert stat.S_ISSOCK(sock.stat().st_mode)
            assert sock.stat().st_uid == process.uids().real
            assert os.readlink(f"/proc/{process.pid}/ns/net") != os.readlink("/proc/self/ns/net")
            sockets.append(sock)
    assert len(set(sockets)) == 4


@pytest.mark.integration
def test_stopping_and_restarting_a_notebook_spares_the_others_with_its_id(twins):
    east, west = twins["east"], twins["west"]
    before = snapshot(west)
    stop(east, "two")
    assert_unharmed(west, before)
    start(east, "two")
    assert_unharmed(west, before)
    assert cgroup_of(server(east, 2)) in (
        None,
        (f"/cgu-lab/{instance_of(east)}/nb-2", MEMORY["east"]),
    )
    # and the other way round, on the other id
    before = snapshot(east)
    stop(west, "one")
    assert_unharmed(east, before)
    start(west, "one")
    assert_unharmed(east, before)


@pytest.mark.integration
def test_a_controller_restart_adopts_and_cleans_only_its_own(twins):
    east, west = twins["east"], twins["west"]
    theirs, ours = snapshot(west), snapshot(east)
    east.stop()
    east.start()
    assert snapshot(east) == ours  # adopted, not restarted
    assert_unharmed(west, theirs)
    # A server of east dies while east is down: its restart stops notebook 1 and sweeps;
    # west's notebook 1 (same id, same user, same name) must not notice.
    east.stop()
    gone = server(east, 1)
    gone.kill()
    gone.wait(10)
    east.start()
    with east.client("alice") as alice:
        assert alice.ok("GET", "/api/notebooks/alice/one")["state"] == "stopped"
    assert_unharmed(west, theirs)
    if ours[1][2] is not None:
        assert not (CGROUPS / "memory" / ours[1][2][0].lstrip("/")).exists()
    # and west's controller restarting leaves east's remaining server alone
    survivor = server(east, 2)
    west.stop()
    west.start()
    assert_unharmed(west, theirs)
    assert server(east, 2).pid == survivor.pid


@pytest.mark.integration
def test_stopping_everything_removes_only_that_installations_cgroups(twins):
    east, west = twins["east"], twins["west"]
    theirs = snapshot(west)
    stop(east, "two")
    assert_unharmed(west, theirs)
    for hierarchy in ("cpu", "memory"):
        assert only_the_controllers_group(CGROUPS / hierarchy / "cgu-lab" / instance_of(east))
    with_cgroups = theirs[1][2] is not None
    for name in NAMES.values():
        stop(west, name)
    for hierarchy in ("cpu", "memory"):
        parent = CGROUPS / hierarchy / "cgu-lab"
        assert only_the_controllers_group(parent / instance_of(west))
        if with_cgroups:
            assert parent.is_dir()  # the shared top stays for other installations


def only_the_controllers_group(installation: Path) -> bool:
    """Whether an installation's cgroups are gone but for the one its controller runs in
    while it runs (`platform`, in the CPU hierarchy: local_limits "Sharing the CPU")."""
    if not installation.exists():
        return True
    groups = [entry.name for entry in installation.iterdir() if entry.is_dir()]
    return installation.parent.parent.name in ("cpu", "cgroup") and groups == ["platform"]

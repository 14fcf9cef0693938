"""Resource limits for local notebooks, and which processes are a notebook's.

Limits: cgroups when we may write them, else rlimits.

cgroup v2 (unified) and v1 (separate cpu, memory and pids hierarchies) are
both supported: a notebook gets a CPU quota (CFS), a memory ceiling and a
ceiling on its tasks (processes and threads, `pids.max`) that cover the server
and every kernel it starts. The task ceiling is there because the per-account
RLIMIT_NPROC a host gives by default is above the host's own pid_max: one
kernel that spawned threads without end could take every pid of the machine,
for every user and installation. Without writable cgroups, CPU is limited by
affinity to whole cores and memory by RLIMIT_DATA, which applies to each
process separately. `describe()` says which one applies.

The same cgroups serve training jobs (`job-<key>`) and competition runs
(`run-<token>`, backends/competition_notebook_run.py): `make()`, `drop()`, `kill()`
and `members_of()` take a group's name, so every kind of group is created,
limited, emptied and removed by this one piece of code.

Names. Notebook ids come from each installation's own database, so two
installations on one host both have a notebook 1. Every installation
therefore has a parent cgroup of its own, `cgu-lab/<installation tag>/`
(the random `instance-id` of its data directory), and each notebook a child
`nb-<id>` below it; a shared `cgu-lab/nb-<id>` once let one installation's
stop kill another's servers and overwrite its memory limit.

Ownership. The limiter reads the members of, writes limits into and removes
only cgroups that are exactly `<hierarchy>/cgu-lab/<own tag>/nb-<id>`. Paths
recorded by an older layout are never trusted: the backend finds a notebook's
cgroup from its tag and id, not from what a database row says. The parent is
created with the first notebook (on v2 with cpu and memory enabled for its
children) and removed when its last notebook's cgroup goes.

`Processes` applies the same rule to signals: see its docstring for what
marks a process as one notebook's of this installation.

Sharing the CPU (the policy; measured by benchmarks/class_burst.py). The kernel shares
the CPU between the entities of each level of the cgroup tree by weight (v1 `cpu.shares`,
v2 `cpu.weight`), and a process of the host's root group is one entity of weight 1024 (nice
0). Left at its default, the whole `cgu-lab/` subtree was one such entity: on a host busy
with other work, every notebook of every installation together got as much CPU as one
other process, so a class's starts, and a student's own server answering through the
proxy, waited behind each busy process of the host (a burst of 10 took 2.5x JupyterHub's,
whose servers are plain processes; a bystander's p99 through the proxy up to 11x). So:

- each group is worth one process of its own (`WEIGHT`), and a notebook that is starting
  twice that (`STARTING_WEIGHT`) until its server answers (`settle()`): a student waiting
  for the page goes before a kernel that computes, and never behind it;
- each installation's parent weighs as many processes as it holds groups (at least one),
  and the shared top `cgu-lab/` the sum of its installations: the platform's notebooks
  share the host with its other work as that many processes would, no more, no less;
- the controller (its API, its proxy, every start's orchestration) runs in a CPU group
  of its own beside its notebooks, `cgu-lab/<tag>/platform`, worth `PLATFORM_WEIGHT`
  (about 87 processes; `favour_platform()`, with cgroups and as root), and its threads
  at nice `PLATFORM_NICE`, which ranks them only against what they start in that group.
  Why a group and not a nice value alone: the kernel ranks by nice only between tasks of
  one group. Started from a shell, the controller sat in the host's root group, where
  the kernel's autogroups (sched_autogroup_enabled, on by default) put each session's
  processes in one group of one process's weight: its nice -20 counted against its own
  session only, while a burst of 30 starting notebooks weighed 60 processes. Measured
  (class_burst, busy burst of 30, /proc's schedstat): its event loop waited 22.8 s in
  the run queue for 0.3 s of running, up to 0.8 s at a time, and a bystander's
  request through the proxy took 2.2 s at p99 where its server alone answered in 0.3 s
  (a service manager's cgroup does the same: one weight for the whole service). In a
  group beside the notebooks, its weight is compared with theirs directly; the
  installation's parent still weighs only as many processes as it holds notebook
  groups (at least one), so the platform and its notebooks together take no more of
  the host than before. The controller spends about 0.07 CPU-s per start, so going
  first costs the notebooks almost nothing. What it starts does not keep its place:
  the launcher (local_launch) puts every program back at nice 0 and into the
  notebook's own group before it runs;
- the CFS quota (`cpu.cfs_quota_us`, `cpu.max`) stays the notebook's own from its first
  instruction (what it may use at most; the weights decide only who goes first);
- no core is pinned where cgroups apply; without cgroups (rlimit mode) affinity is the only
  CPU limit there is, and `pick_cpus` chooses the least used cores.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from ..core import memory_events

PERIOD_US = 100_000
TOP = "cgu-lab"
# CPU weights (the module's "Sharing the CPU"): one group, one process's worth (v1 cpu.shares
# of nice 0; v2 cpu.weight 100); a starting notebook twice that until its server answers.
WEIGHT = 1024
STARTING_WEIGHT = 2 * WEIGHT
MAX_SHARES = 262_144  # v1's ceiling of cpu.shares; v2's cpu.weight goes to 10,000
# The controller's group (its API and proxy): what nice -20 weighs, 88761 against a
# process's 1024; its threads at nice -20 within it, ahead of the helpers it starts.
PLATFORM = "platform"
PLATFORM_WEIGHT = 88_761
PLATFORM_NICE = -20
# An installation tag becomes a directory name under /sys/fs/cgroup: no '/', no '..'.
TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
NOTEBOOK = re.compile(r"nb-([0-9]+)")
# A group below the installation's parent: a notebook, a training job or a competition run.
GROUP = re.compile(r"(nb|job|run)-[A-Za-z0-9_-]{1,80}")
# Tasks (processes and threads) one notebook may hold at once: the default of the admin
# setting `notebook_pids` (CGU_LAB_NOTEBOOK_PIDS). JupyterLab, a few kernels and a
# DataLoader's workers use a few hundred; a host has 32,768 pids by default.
NOTEBOOK_PIDS = 1024
KILL_ROUNDS = 200  # passes of kill() over a group's members before it gives up
# Joins the cgroups named as arguments up to `--`, then becomes the rest of the arguments:
# the program starts inside its group, with no moment outside it (see join_command).
JOIN = (
    'for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; '
    'shift; exec "$@"'
)
# prepare() and remove() run in worker threads, and several limiters (the backend's, the
# competition runs') share one installation's parent: it must not be removed between
# another group's mkdir of it and of its child.
_PARENTS = threading.Lock()


@dataclass(frozen=True)
class Enforcement:
    cpu: str
    memory: str
    processes: str = "not limited"


def check_tag(tag: str) -> str:
    """The installation tag if it is safe as one directory name, else ValueError."""
    if not isinstance(tag, str) or not TAG.fullmatch(tag):
        raise ValueError(f"the installation id {tag!r} is not a plain name (letters, digits, -, _)")
    return tag


def in_cgroup(proc_cgroup_text: str, tag: str, notebook_id: int) -> bool:
    """Whether `/proc/<pid>/cgroup` text puts the process in this installation's notebook cgroup.

    Read again just before a kill, so a pid listed in `cgroup.procs` and then
    reused by an unrelated program is not signalled.
    """
    return in_group(proc_cgroup_text, tag, f"nb-{notebook_id}")


def in_group(proc_cgroup_text: str, tag: str, name: str) -> bool:
    """Whether `/proc/<pid>/cgroup` text puts the process in this installation's group `name`."""
    suffix = f"/{TOP}/{tag}/{name}"
    for line in proc_cgroup_text.splitlines():
        path = line.split(":", 2)[-1]
        if path == suffix or path.endswith(suffix):
            return True
    return False


def cpu_cgroup(proc_cgroup_text: str, v2: bool) -> str:
    """The path of a process's cgroup in the CPU hierarchy, from `/proc/<pid>/cgroup`
    (v2: the unified line `0::/path`; v1: the line whose controllers include `cpu`)."""
    for line in proc_cgroup_text.splitlines():
        _, controllers, path = line.split(":", 2)
        if (v2 and controllers == "") or (not v2 and "cpu" in controllers.split(",")):
            return path
    return "/"


def instance_id(marker: Path) -> str:
    """The installation's random identity, made once; it names cgroups, so it must be plain."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "w") as handle:
            handle.write(uuid.uuid4().hex)
    instance = marker.read_text().strip()
    try:
        return check_tag(instance)
    except ValueError as error:
        raise ValueError(f"{marker}: {error}; delete the file to make a new one") from None


class Limiter:
    """Creates and removes the per-notebook cgroups of one installation, or plans rlimits."""

    def __init__(
        self,
        enabled: bool = True,
        root: Path = Path("/sys/fs/cgroup"),
        tag: str = "",
        pids: int = NOTEBOOK_PIDS,
    ) -> None:
        """`pids`: the tasks one notebook may hold (Settings.notebook_pids)."""
        self.root = root
        self.tag = check_tag(tag) if tag else ""
        self.pids = int(pids)
        if self.pids < 1:
            raise ValueError(f"a notebook's process limit must be at least 1, not {pids}")
        # The controllers this installation's groups use (pids when the host has it).
        self.controllers: tuple[str, ...] = ()
        self.mode = self._detect() if enabled else "rlimit"
        # The process hold_platform() moved and the CPU cgroup it came from.
        self._platform: tuple[int, str] | None = None

    def bind(self, tag: str) -> None:
        """Name this installation; its cgroups live below `cgu-lab/<tag>/`."""
        self.tag = check_tag(tag)

    def _writable(self, path: Path) -> bool:
        probe = path / TOP
        try:
            probe.mkdir(exist_ok=True)
        except OSError:
            return False
        return os.access(probe, os.W_OK)

    def _detect(self) -> str:
        if (self.root / "cgroup.controllers").exists():
            controllers = (self.root / "cgroup.controllers").read_text().split()
            if {"cpu", "memory"} <= set(controllers) and self._writable(self.root):
                wanted = ("cpu", "memory", "pids") if "pids" in controllers else ("cpu", "memory")
                enable = " ".join(f"+{c}" for c in wanted)
                try:
                    (self.root / "cgroup.subtree_control").write_text(enable)
                    (self.root / TOP / "cgroup.subtree_control").write_text(enable)
                except OSError:
                    return "rlimit"
                self.controllers = wanted
                return "cgroup2"
            return "rlimit"
        if all(self._writable(self.root / c) for c in ("cpu", "memory")):
            has_pids = (self.root / "pids").is_dir() and self._writable(self.root / "pids")
            self.controllers = ("cpu", "memory", "pids") if has_pids else ("cpu", "memory")
            return "cgroup1"
        return "rlimit"

    def describe(self) -> Enforcement:
        tasks = (
            f"cgroup {'v2' if self.mode == 'cgroup2' else 'v1'} pids.max: {self.pids} "
            "processes and threads per notebook"
            if "pids" in self.controllers
            else "not limited (no pids cgroup on this host)"
        )
        if self.mode == "cgroup2":
            return Enforcement(
                "cgroup v2 cpu.max", "cgroup v2 memory.max (server and kernels together)", tasks
            )
        if self.mode == "cgroup1":
            return Enforcement(
                "cgroup v1 CFS quota",
                "cgroup v1 memory.limit_in_bytes (server and kernels together)",
                tasks,
            )
        return Enforcement(
            "CPU affinity (whole cores)", "RLIMIT_DATA (per process)", "not limited (no cgroups)"
        )

    def parents(self) -> list[Path]:
        """This installation's parent cgroups: one on v2, one per hierarchy on v1
        (cpu, memory, then pids when the host has it)."""
        if not self.tag:
            return []
        if self.mode == "cgroup2":
            return [self.root / TOP / self.tag]
        if self.mode == "cgroup1":
            return [self.root / c / TOP / self.tag for c in self.controllers]
        return []

    def dirs(self, notebook_id: int) -> list[Path]:
        """The notebook's cgroups (which may not exist): the only ones ever touched for it."""
        return self.group_dirs(f"nb-{int(notebook_id)}")

    def group_dirs(self, name: str) -> list[Path]:
        """A group's cgroups (which may not exist), in the order of parents()."""
        if not GROUP.fullmatch(name):
            raise ValueError(f"{name!r} is not a group name of this installation")
        return [parent / name for parent in self.parents()]

    def _make_parents(self) -> None:
        for parent in self.parents():
            parent.mkdir(parents=True, exist_ok=True)
            # Passable, not listable: a notebook's account reaches its own group below
            # (`_open_to`) without learning which others exist.
            for level in (parent.parent, parent):
                with contextlib.suppress(OSError):
                    if level.stat().st_mode & 0o777 != 0o711:
                        level.chmod(0o711)
            if self.mode == "cgroup2":
                # v2 hands controllers down one level at a time.
                enable = " ".join(f"+{c}" for c in self.controllers)
                (parent / "cgroup.subtree_control").write_text(enable)

    @staticmethod
    def _open_to(directory: Path, reader_gid: int | None) -> None:
        """The group's folder: the controller's alone (0700), or also readable by the
        Unix group `reader_gid` (0750, root's, that group's), which reads its files (all
        the kernel's, read-only to anyone but root) and can change none of them."""
        with contextlib.suppress(OSError):
            if reader_gid is None:
                directory.chmod(0o700)
                return
            if os.geteuid() == 0:
                os.chown(directory, 0, reader_gid)
            directory.chmod(0o750)

    @staticmethod
    def _write_weight(cpu_dir: Path, shares: int, v2: bool) -> None:
        """A cgroup's CPU weight in v1 shares (1024 = one process at nice 0)."""
        shares = max(2, min(MAX_SHARES, int(shares)))
        with contextlib.suppress(OSError):
            if v2:
                (cpu_dir / "cpu.weight").write_text(str(max(1, min(10_000, shares * 100 // 1024))))
            else:
                (cpu_dir / "cpu.shares").write_text(str(shares))

    def cpu_dir(self, name: str) -> Path | None:
        """The group's cgroup that holds its CPU settings (None without cgroups)."""
        if self.mode == "rlimit" or not self.tag:
            return None
        return self.group_dirs(name)[0]  # v2's one, or v1's cpu hierarchy (listed first)

    def reweigh(self) -> None:
        """Weigh this installation's parent as the groups it holds, and the shared top
        `cgu-lab/` as the sum of its installations (the module's "Sharing the CPU").
        Called with `_PARENTS` held, after a group is made or removed."""
        if self.mode == "rlimit" or not self.tag:
            return
        v2 = self.mode == "cgroup2"
        parent = self.parents()[0]  # v2's one, or v1's cpu hierarchy (listed first)
        with contextlib.suppress(OSError):
            groups = sum(1 for e in os.scandir(parent) if e.is_dir() and GROUP.fullmatch(e.name))
            self._write_weight(parent, WEIGHT * max(1, groups), v2)
        top = parent.parent
        total = 0
        with contextlib.suppress(OSError):
            for entry in os.scandir(top):
                if entry.is_dir(follow_symlinks=False) and TAG.fullmatch(entry.name):
                    other = Path(entry.path)
                    if other == parent or self._populated(other, v2):
                        total += self._read_shares(other, v2)
        self._write_weight(top, max(WEIGHT, total), v2)

    @staticmethod
    def _populated(installation: Path, v2: bool) -> bool:
        """Whether another installation's groups hold processes now. One whose controller
        was killed leaves its groups behind with their weights; summed into the top, two
        benchmarks killed mid-burst left it weighing 78 processes with none running, and
        the next burst's notebooks outweighed the controller eightfold: its API answered in
        20 s and 7 of 30 starts failed waiting for the database (class_burst, busy host)."""
        if v2:
            try:
                return "populated 1" in (installation / "cgroup.events").read_text()
            except OSError:
                return False
        try:
            groups = [e.path for e in os.scandir(installation) if e.is_dir(follow_symlinks=False)]
        except OSError:
            return False
        for group in groups:
            with contextlib.suppress(OSError):
                if (Path(group) / "cgroup.procs").read_text().strip():
                    return True
        return False

    @staticmethod
    def _read_shares(cpu_dir: Path, v2: bool) -> int:
        try:
            if v2:
                return int((cpu_dir / "cpu.weight").read_text()) * 1024 // 100
            return int((cpu_dir / "cpu.shares").read_text())
        except (OSError, ValueError):
            return 0

    def hold_platform(self, pid: int) -> bool:
        """Move process `pid`, every thread of it, into the controller's CPU group (the
        module's "Sharing the CPU"), made with PLATFORM_WEIGHT; where it was is kept for
        release_platform(). Whether it moved (no cgroups, or not allowed: it did not)."""
        if self.mode == "rlimit" or not self.tag:
            return False
        v2 = self.mode == "cgroup2"
        directory = self.parents()[0] / PLATFORM  # v2's one, or v1's cpu hierarchy
        try:
            came_from = cpu_cgroup(Path(f"/proc/{int(pid)}/cgroup").read_text(), v2)
            with _PARENTS:
                self._make_parents()
                directory.mkdir(exist_ok=True)
                self._write_weight(directory, PLATFORM_WEIGHT, v2)
                (directory / "cgroup.procs").write_text(str(int(pid)))
        except OSError:
            return False
        self._platform = (int(pid), came_from)
        return True

    def outside_platform(self) -> list[str]:
        """An argv prefix (join_command) that starts a program back in the CPU cgroup the
        controller came from, not in its group: for what the controller starts that is a
        notebook's work, not the platform's (a warm launcher's imports). Empty when
        hold_platform() did not move it."""
        if self._platform is None:
            return []
        return self.join_command([self._came_from()])

    def _came_from(self) -> Path:
        """The CPU cgroup hold_platform() took the controller from."""
        assert self._platform is not None
        hierarchy = self.root if self.mode == "cgroup2" else self.root / self.controllers[0]
        return hierarchy / self._platform[1].lstrip("/")

    def release_platform(self) -> None:
        """Put the process hold_platform() moved back where it was, and remove the group
        (and the installation's parent, if nothing else is left in it)."""
        if self._platform is None:
            return
        with contextlib.suppress(OSError):
            (self._came_from() / "cgroup.procs").write_text(str(self._platform[0]))
        with _PARENTS:
            with contextlib.suppress(OSError):
                (self.parents()[0] / PLATFORM).rmdir()
            self._drop_parents()
            self.reweigh()
        self._platform = None

    def settle(self, name: str) -> None:
        """The group's start is over (its server answers): from now on it weighs one
        process, like every running notebook."""
        directory = self.cpu_dir(name)
        if directory is not None and directory.is_dir():
            self._write_weight(directory, WEIGHT, self.mode == "cgroup2")

    def make(
        self,
        name: str,
        cpu_milli: int,
        memory: int,
        pids: int | None = None,
        starting: bool = False,
        reader_gid: int | None = None,
    ) -> list[Path]:
        """Create the group `name` with a CPU quota, a memory ceiling and a task ceiling
        (`pids`, the notebooks' setting by default); returns its cgroups. A `starting`
        notebook weighs twice a process until `settle()` (the module's "Sharing the CPU").

        Who may read the group (`_open_to`): the controller only, or also the Unix group
        `reader_gid` (a notebook's own account, whose server reads its count of OOM kills
        from inside: core/memory_events.py); never anyone else, whatever the umask."""
        if self.mode == "rlimit":
            return []
        if not self.tag:
            raise RuntimeError("the limiter has no installation tag; call bind() first")
        quota = str(max(1000, cpu_milli * PERIOD_US // 1000))
        tasks = str(self.pids if pids is None else int(pids))
        dirs = self.group_dirs(name)
        with _PARENTS:
            self._make_parents()
            for directory in dirs:
                directory.mkdir(exist_ok=True)
                self._open_to(directory, reader_gid)
            self.reweigh()
        weight = STARTING_WEIGHT if starting else WEIGHT
        if self.mode == "cgroup2":
            (cgroup,) = dirs
            self._write_weight(cgroup, weight, True)
            (cgroup / "cpu.max").write_text(f"{quota} {PERIOD_US}")
            (cgroup / "memory.max").write_text(str(memory))
            if "pids" in self.controllers:
                (cgroup / "pids.max").write_text(tasks)
            return dirs
        by_controller = dict(zip(self.controllers, dirs, strict=True))
        self._write_weight(by_controller["cpu"], weight, False)
        (by_controller["cpu"] / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (by_controller["cpu"] / "cpu.cfs_quota_us").write_text(quota)
        (by_controller["memory"] / "memory.limit_in_bytes").write_text(str(memory))
        if "pids" in by_controller:
            (by_controller["pids"] / "pids.max").write_text(tasks)
        return dirs

    @staticmethod
    def procs_files(dirs: list[Path]) -> list[str]:
        """What a launcher writes its pid into to join the group."""
        return [str(directory / "cgroup.procs") for directory in dirs]

    @staticmethod
    def join_command(dirs: list[Path]) -> list[str]:
        """An argv prefix that starts a program inside the group `dirs`.

        Why a shell: the launcher of notebooks (local_launch.py) also closes
        every inherited descriptor, and a competition run is handed its files
        as descriptors; `sh` joins the cgroups and then execs, so the program,
        and all it forks, is inside from its first instruction (moving it in
        after the spawn would leave what it forked meanwhile outside).
        """
        if not dirs:
            return []
        return ["/bin/sh", "-c", JOIN, "cgu-lab-join", *Limiter.procs_files(dirs), "--"]

    def prepare(
        self,
        notebook_id: int,
        cpu_milli: int,
        memory: int,
        busy_cpus: list[int],
        reader_gid: int | None = None,
    ) -> dict:
        """Create the cgroups (if any) and return the launcher's share of the plan;
        `reader_gid`: the notebook's account's group, which may read them (`make`)."""
        if self.mode == "rlimit":
            return {"rlimit_data": memory, "cpus": pick_cpus(cpu_milli, busy_cpus)}
        dirs = self.make(
            f"nb-{int(notebook_id)}", cpu_milli, memory, starting=True, reader_gid=reader_gid
        )
        return {"cgroup_procs": self.procs_files(dirs), "cgroups": [str(d) for d in dirs]}

    def members(self, notebook_id: int) -> set[int]:
        """Pids in this installation's cgroups of the notebook (none in rlimit mode)."""
        return self.members_of(f"nb-{int(notebook_id)}")

    def members_of(self, name: str) -> set[int]:
        """Pids in this installation's cgroups of the group `name` (none in rlimit mode)."""
        pids: set[int] = set()
        for directory in self.group_dirs(name):
            try:
                text = (directory / "cgroup.procs").read_text()
            except OSError:
                continue
            pids.update(int(line) for line in text.split())
        return pids

    def kill(self, name: str) -> bool:
        """SIGKILL every process of the group, until it is empty; whether it is.

        Processes of a group may fork while they are being killed, so the
        members are read and killed again until none is left; the group's task
        ceiling bounds how many there can be. Each pid is checked against
        `/proc/<pid>/cgroup` just before its signal (a pid read from
        `cgroup.procs` may have ended and been reused).
        """
        if self.mode == "rlimit" or not self.tag:
            return True
        for _ in range(KILL_ROUNDS):
            members = self.members_of(name)
            if not members:
                return True
            for pid in members:
                with contextlib.suppress(OSError):
                    if in_group(Path(f"/proc/{pid}/cgroup").read_text(), self.tag, name):
                        os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        return not self.members_of(name)

    def oom_kills(self, name: str) -> int:
        """How many of the group's processes the kernel killed for its memory ceiling."""
        for directory in self.group_dirs(name):
            for file in memory_events.FILES:
                with contextlib.suppress(OSError):
                    count = memory_events.oom_kill_count((directory / file).read_text())
                    if count is not None:
                        return count
        return 0

    def drop(self, name: str, wait: float = 0.0) -> None:
        """Remove the group's cgroups, then the installation's parent if it is now empty.

        A cgroup that still holds a process cannot be removed (EBUSY); with
        `wait` it is tried again for that many seconds (killed processes leave
        their cgroup a moment after the signal), else it stays for a later sweep.
        The shared top `cgu-lab/` is never removed: other installations live below it.
        """
        deadline = time.monotonic() + wait
        dirs = self.group_dirs(name)
        while True:
            with _PARENTS:
                for directory in dirs:
                    with contextlib.suppress(OSError):
                        directory.rmdir()
                left = [directory for directory in dirs if directory.exists()]
                if not left:
                    self._drop_parents()
                self.reweigh()
            if not left or time.monotonic() >= deadline:
                return
            time.sleep(0.02)

    def _drop_parents(self) -> None:
        """Remove the installation's parents that nothing is left in (the kernel refuses
        to remove a cgroup that still has a group or a process). Called with `_PARENTS`."""
        for parent in self.parents():
            with contextlib.suppress(OSError):
                parent.rmdir()

    def holds(self, pid: int, notebook_id: int) -> bool:
        """Whether the kernel says `pid` is in this installation's cgroup of the notebook now."""
        if not self.tag or self.mode == "rlimit":
            return False
        try:
            text = Path(f"/proc/{int(pid)}/cgroup").read_text()
        except OSError:
            return False
        return in_cgroup(text, self.tag, notebook_id)

    def notebooks(self) -> set[int]:
        """Ids of the notebooks that have a cgroup of this installation (to clean up strays)."""
        return {int(NOTEBOOK.fullmatch(name).group(1)) for name in self.groups("nb")}

    def groups(self, kind: str) -> set[str]:
        """Names of this installation's groups of one kind (`nb`, `job`, `run`) that exist."""
        pattern = NOTEBOOK if kind == "nb" else re.compile(rf"{re.escape(kind)}-.+")
        found: set[str] = set()
        for parent in self.parents():
            with contextlib.suppress(OSError):
                for entry in os.scandir(parent):
                    if (
                        pattern.fullmatch(entry.name)
                        and GROUP.fullmatch(entry.name)
                        and entry.is_dir(follow_symlinks=False)
                    ):
                        found.add(entry.name)
        return found

    def remove(self, notebook_id: int) -> None:
        """Remove the notebook's cgroups (see drop())."""
        self.drop(f"nb-{int(notebook_id)}")


class Processes:
    """Which host processes belong to one notebook of this installation.

    A process is this installation's notebook N when the kernel puts it in
    `cgu-lab/<tag>/nb-N` (students cannot move themselves out of, or into, a
    cgroup), or when its environment carries `CGU_LAB_INSTANCE=<tag>` and
    `CGU_NOTEBOOK_ID=N` (every server, kernel and terminal inherits both; the
    launcher carries them from its first instruction). Nothing else is ever
    signalled: not a pid recorded in a database row alone, not a child that
    dropped the marker in rlimit mode, not another installation's notebook N.
    """

    def __init__(self, instance: str, limiter: Limiter) -> None:
        self.instance = instance
        self.limiter = limiter

    def marked(self, process: psutil.Process, notebook_id: int | None = None) -> bool:
        try:
            env = process.environ()
        except (psutil.Error, OSError):
            return False
        if not self.instance or env.get("CGU_LAB_INSTANCE") != self.instance:
            return False
        return notebook_id is None or env.get("CGU_NOTEBOOK_ID") == str(notebook_id)

    def belongs(self, process: psutil.Process, notebook_id: int) -> bool:
        return self.limiter.holds(process.pid, notebook_id) or self.marked(process, notebook_id)

    def server(self, state: Mapping[str, Any], notebook_id: int) -> psutil.Process | None:
        """The recorded server, unless its pid now names some other program."""
        try:
            process = psutil.Process(state["pid"])
            if abs(process.create_time() - state["create_time"]) > 0.01:
                return None
        except (psutil.NoSuchProcess, KeyError, TypeError):
            return None
        return process if self.belongs(process, notebook_id) else None

    def tree(self, state: Mapping[str, Any], notebook_id: int) -> list[psutil.Process]:
        """The server, its descendants and its cgroups' members that belong to the notebook."""
        found: dict[int, psutil.Process] = {}
        root = self.server(state, notebook_id)
        candidates: list[psutil.Process] = []
        if root is not None:
            found[root.pid] = root
            with contextlib.suppress(psutil.NoSuchProcess):
                candidates.extend(root.children(recursive=True))
        for pid in self.limiter.members(notebook_id):
            with contextlib.suppress(psutil.NoSuchProcess):
                candidates.append(psutil.Process(pid))
        for process in candidates:
            # psutil.Process fixed the start time first; belongs() then checks that
            # same program, and a kill of a reused pid raises NoSuchProcess.
            if process.pid not in found and self.belongs(process, notebook_id):
                found[process.pid] = process
        return list(found.values())

    @staticmethod
    def listens(server: psutil.Process, port: Any, socket_path: str | None = None) -> bool:
        """Whether our server itself holds its recorded port, or its Unix socket in a
        private network (not some other program that took its place)."""
        if socket_path:
            return Processes._holds_socket(server.pid, socket_path)
        try:
            connections = server.net_connections(kind="tcp")
        except psutil.AccessDenied:
            return True  # cannot tell; the proxy secret still has to answer
        except psutil.Error:
            return False
        return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in connections)

    @staticmethod
    def _holds_socket(pid: int, socket_path: str) -> bool:
        """Whether the process has the Unix socket bound at `socket_path` open.

        psutil reads the sockets of the caller's network namespace, where a server in
        a private one shows nothing; its own namespace's table is /proc/<pid>/net/unix.
        """
        try:
            held = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            table = Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]
        except OSError:
            return False
        for line in table:
            fields = line.split()
            if len(fields) >= 8 and fields[7] == socket_path and f"socket:[{fields[6]}]" in held:
                return True
        return False

    def strays(self, keep: set[int]) -> tuple[list[psutil.Process], set[int]]:
        """Marked processes and cgroups of notebooks not in `keep` (after a restart)."""
        victims: dict[int, psutil.Process] = {}
        ids: set[int] = set()
        for process in psutil.process_iter():
            if not self.marked(process):
                continue
            try:
                notebook_id = int(process.environ().get("CGU_NOTEBOOK_ID", "0"))
            except (psutil.Error, OSError, ValueError):
                continue
            if notebook_id not in keep:
                victims[process.pid] = process
                ids.add(notebook_id)
        for notebook_id in self.limiter.notebooks() - keep:
            for pid in self.limiter.members(notebook_id):
                with contextlib.suppress(psutil.NoSuchProcess):
                    process = psutil.Process(pid)
                    if pid not in victims and self.limiter.holds(pid, notebook_id):
                        victims[pid] = process
                        ids.add(notebook_id)
        return list(victims.values()), ids


def favour_platform(limiter: Limiter) -> bool:
    """Put the controller in its own CPU group beside its notebooks (Limiter.hold_platform)
    and its threads (its event loop: the API and the proxy; the database driver's and the
    executor's threads, which run its queries and file work) at PLATFORM_NICE, when
    cgroups hold the notebooks (the module's "Sharing the CPU"). Whether the group holds
    it (root may; others may not, and keep only what a nice value gives).

    Linux keeps a nice value per thread and a new thread inherits its maker's, so the
    threads that exist already are set one by one: the executor's thread, made for the
    migrations before this call and then running every start's blocking steps, stayed at
    nice 0 otherwise."""
    if limiter.mode == "rlimit":
        return False  # notebooks share our cgroup: a nice value would rank them, not us
    held = limiter.hold_platform(os.getpid())
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    with contextlib.suppress(OSError):
        for tid in threads:
            with contextlib.suppress(ProcessLookupError):  # a thread that just ended
                os.setpriority(os.PRIO_PROCESS, tid, PLATFORM_NICE)
    return held


def pick_cpus(
    cpu_milli: int, busy_cpus: list[int], available: list[int] | None = None
) -> list[int]:
    """Whole cores for a notebook: the least-used ones first, ties by number."""
    cores = available if available is not None else sorted(os.sched_getaffinity(0))
    wanted = min(len(cores), max(1, math.ceil(cpu_milli / 1000)))
    load = {core: 0 for core in cores}
    for core in busy_cpus:
        if core in load:
            load[core] += 1
    return sorted(sorted(cores, key=lambda c: (load[c], c))[:wanted])

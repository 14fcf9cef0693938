"""Resource limits for local notebooks, and which processes are a notebook's.

Limits: cgroups when we may write them, else rlimits.

cgroup v2 (unified) and v1 (separate cpu and memory hierarchies) are both
supported: a notebook gets a CPU quota (CFS) and a memory ceiling that cover
the server and every kernel it starts. Without writable cgroups, CPU is
limited by affinity to whole cores and memory by RLIMIT_DATA, which applies to
each process separately. `describe()` says which one applies.

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
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

PERIOD_US = 100_000
TOP = "cgu-lab"
# An installation tag becomes a directory name under /sys/fs/cgroup: no '/', no '..'.
TAG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
NOTEBOOK = re.compile(r"nb-([0-9]+)")


@dataclass(frozen=True)
class Enforcement:
    cpu: str
    memory: str


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
    suffix = f"/{TOP}/{tag}/nb-{notebook_id}"
    for line in proc_cgroup_text.splitlines():
        path = line.split(":", 2)[-1]
        if path == suffix or path.endswith(suffix):
            return True
    return False


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
        self, enabled: bool = True, root: Path = Path("/sys/fs/cgroup"), tag: str = ""
    ) -> None:
        self.root = root
        self.tag = check_tag(tag) if tag else ""
        self.mode = self._detect() if enabled else "rlimit"
        # prepare() and remove() run in worker threads; the parent must not be
        # removed between another notebook's mkdir of it and of its child.
        self._lock = threading.Lock()

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
                try:
                    (self.root / "cgroup.subtree_control").write_text("+cpu +memory")
                    (self.root / TOP / "cgroup.subtree_control").write_text("+cpu +memory")
                except OSError:
                    return "rlimit"
                return "cgroup2"
            return "rlimit"
        if all(self._writable(self.root / c) for c in ("cpu", "memory")):
            return "cgroup1"
        return "rlimit"

    def describe(self) -> Enforcement:
        if self.mode == "cgroup2":
            return Enforcement(
                "cgroup v2 cpu.max", "cgroup v2 memory.max (server and kernels together)"
            )
        if self.mode == "cgroup1":
            return Enforcement(
                "cgroup v1 CFS quota",
                "cgroup v1 memory.limit_in_bytes (server and kernels together)",
            )
        return Enforcement("CPU affinity (whole cores)", "RLIMIT_DATA (per process)")

    def parents(self) -> list[Path]:
        """This installation's parent cgroups: one on v2, one per hierarchy on v1."""
        if not self.tag:
            return []
        if self.mode == "cgroup2":
            return [self.root / TOP / self.tag]
        if self.mode == "cgroup1":
            return [self.root / "cpu" / TOP / self.tag, self.root / "memory" / TOP / self.tag]
        return []

    def dirs(self, notebook_id: int) -> list[Path]:
        """The notebook's cgroups (which may not exist): the only ones ever touched for it."""
        return [parent / f"nb-{int(notebook_id)}" for parent in self.parents()]

    def _make_parents(self) -> None:
        for parent in self.parents():
            parent.mkdir(parents=True, exist_ok=True)
            if self.mode == "cgroup2":
                # v2 hands controllers down one level at a time.
                (parent / "cgroup.subtree_control").write_text("+cpu +memory")

    def prepare(self, notebook_id: int, cpu_milli: int, memory: int, busy_cpus: list[int]) -> dict:
        """Create the cgroups (if any) and return the launcher's share of the plan."""
        if self.mode != "rlimit" and not self.tag:
            raise RuntimeError("the limiter has no installation tag; call bind() first")
        quota = str(max(1000, cpu_milli * PERIOD_US // 1000))
        if self.mode == "cgroup2":
            (cgroup,) = self.dirs(notebook_id)
            with self._lock:
                self._make_parents()
                cgroup.mkdir(exist_ok=True)
            (cgroup / "cpu.max").write_text(f"{quota} {PERIOD_US}")
            (cgroup / "memory.max").write_text(str(memory))
            return {"cgroup_procs": [str(cgroup / "cgroup.procs")], "cgroups": [str(cgroup)]}
        if self.mode == "cgroup1":
            cpu_dir, memory_dir = self.dirs(notebook_id)
            with self._lock:
                self._make_parents()
                for directory in (cpu_dir, memory_dir):
                    directory.mkdir(exist_ok=True)
            (cpu_dir / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (cpu_dir / "cpu.cfs_quota_us").write_text(quota)
            (memory_dir / "memory.limit_in_bytes").write_text(str(memory))
            dirs = [cpu_dir, memory_dir]
            return {
                "cgroup_procs": [str(d / "cgroup.procs") for d in dirs],
                "cgroups": [str(d) for d in dirs],
            }
        return {"rlimit_data": memory, "cpus": pick_cpus(cpu_milli, busy_cpus)}

    def members(self, notebook_id: int) -> set[int]:
        """Pids in this installation's cgroups of the notebook (none in rlimit mode)."""
        pids: set[int] = set()
        for directory in self.dirs(notebook_id):
            try:
                text = (directory / "cgroup.procs").read_text()
            except OSError:
                continue
            pids.update(int(line) for line in text.split())
        return pids

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
        found: set[int] = set()
        for parent in self.parents():
            with contextlib.suppress(OSError):
                for entry in os.scandir(parent):
                    match = NOTEBOOK.fullmatch(entry.name)
                    if match and entry.is_dir(follow_symlinks=False):
                        found.add(int(match.group(1)))
        return found

    def remove(self, notebook_id: int) -> None:
        """Remove the notebook's cgroups, then the installation's parent if it is now empty.

        A cgroup that still holds a process cannot be removed (EBUSY); it stays
        and a later sweep takes it. The shared top `cgu-lab/` is never removed:
        other installations live below it.
        """
        with self._lock:
            for directory in self.dirs(notebook_id):
                with contextlib.suppress(OSError):
                    directory.rmdir()
            for parent in self.parents():
                with contextlib.suppress(OSError):
                    parent.rmdir()


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
    def listens(server: psutil.Process, port: Any) -> bool:
        """Whether our server itself holds its recorded port (not some other program)."""
        try:
            connections = server.net_connections(kind="tcp")
        except psutil.AccessDenied:
            return True  # cannot tell; the proxy secret still has to answer
        except psutil.Error:
            return False
        return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port for c in connections)

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

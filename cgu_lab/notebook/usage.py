"""CPU, memory and GPU use of this notebook: the server and everything it started.

CPU is measured as the change of the process tree's CPU time between two
readings, so the figure is the average over the refresh interval rather than
a snapshot. GPUs are read with NVML for the devices this notebook was given,
MIG slices included (gpus.py).

A reading walks the process tree (psutil) and asks NVML, which takes
milliseconds to seconds on a busy machine: it runs in a worker thread, one at
a time (the CPU rate needs the previous reading), never on tornado's event
loop, which serves the notebook's kernels and files meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from ..core import memory_events
from . import gpus as gpu_devices

# Where the cgroup filesystems are mounted (a v1 host: one folder per controller below it).
CGROUPS = Path("/sys/fs/cgroup")
PAGE = os.sysconf("SC_PAGE_SIZE")  # bytes: what a memory ceiling is rounded down to

# The key of the server's Sampler in the tornado application's settings.
SETTING = "cgu_lab_sampler"


def _same_ceiling(text: str, limit: int) -> bool:
    """Whether a group's ceiling is `limit` bytes (the kernel keeps it in whole pages)."""
    value = text.strip()
    return value.isdigit() and int(value) // PAGE == limit // PAGE


def own_oom_kills(
    limit: int | None, proc: Path = Path("/proc/self/cgroup"), root: Path = CGROUPS
) -> int | None:
    """How many of this server's group's processes the kernel stopped for the group's
    memory ceiling (core/memory_events.py); None where it cannot be read. The server
    runs in its notebook's memory group (a local notebook's cgroup, a container's), so
    its own group is the notebook's: the kernels it starts are in it too.

    The group is found by the path /proc names, below the hierarchy's mount; in a
    container the mount's root is the container's own group while /proc may still name
    the host's path (cgroup v1, or v2 without a cgroup namespace), so where that path
    does not exist the mount's root is read instead. A group counts only if its ceiling
    is the notebook's `limit`: a server outside a group of its own (rlimits, a shared
    slice, the host's root) would otherwise count other people's processes."""
    if not limit:
        return None
    try:
        lines = proc.read_text().splitlines()
    except OSError:
        return None
    for line in lines:  # "0::/path" (v2) or "4:memory:/path" (v1)
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            mount, ceiling, events = root, "memory.max", "memory.events"
        elif "memory" in controllers.split(","):
            mount, ceiling, events = root / "memory", "memory.limit_in_bytes", "memory.oom_control"
        else:
            continue
        for group in (mount / path.lstrip("/"), mount):
            try:
                if not _same_ceiling((group / ceiling).read_text(), limit):
                    break  # not the notebook's own group
                return memory_events.oom_kill_count((group / events).read_text())
            except FileNotFoundError:
                continue  # not this mount's path: the container's root, next
            except OSError:
                break
    return None


def _tree() -> list[psutil.Process]:
    me = psutil.Process(os.getpid())
    try:
        return [me, *me.children(recursive=True)]
    except psutil.NoSuchProcess:
        return [me]


@dataclass
class Sampler:
    """Remembers the previous reading so that CPU use is a rate; knows the notebook's limits."""

    cpu_limit: float | None = None  # cores
    memory_limit: int | None = None  # bytes
    _cpu_seconds: dict[int, float] = field(default_factory=dict)
    _taken: float = 0.0
    _busy: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def read(self) -> dict:
        """A reading taken in a worker thread; concurrent callers wait for their turn."""
        async with self._busy:
            return await asyncio.to_thread(self.reading)

    def cpu_cores(self) -> float | None:
        now = time.monotonic()
        seconds: dict[int, float] = {}
        for process in _tree():
            try:
                times = process.cpu_times()
            except psutil.Error:
                continue
            seconds[process.pid] = (
                times.user + times.system + times.children_user + times.children_system
            )
        used = None
        if self._taken and now > self._taken:
            delta = sum(
                max(0.0, value - self._cpu_seconds.get(pid, value))
                for pid, value in seconds.items()
            )
            used = delta / (now - self._taken)
        self._cpu_seconds, self._taken = seconds, now
        return used

    def reading(self) -> dict:
        """CPU, memory and GPUs now (blocking: call `read` from the event loop)."""
        cores = self.cpu_cores()
        limit_cores = self.cpu_limit
        memory = 0
        for process in _tree():
            try:
                memory += process.memory_info().rss
            except psutil.Error:
                continue
        return {
            "cpu": {
                "used_cores": round(cores, 3) if cores is not None else 0.0,
                "limit_cores": limit_cores,
                "percent": round(100 * cores / limit_cores, 1)
                if cores is not None and limit_cores
                else None,
            },
            "memory": {
                "used_bytes": memory,
                "limit_bytes": self.memory_limit or None,
                "oom_kills": own_oom_kills(self.memory_limit),
            },
            "gpus": gpu_devices.summary(),
        }

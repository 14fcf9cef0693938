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

# The key of the server's Sampler in the tornado application's settings.
SETTING = "cgu_lab_sampler"


def own_oom_kills(proc: Path = Path("/proc/self/cgroup"), root: Path = CGROUPS) -> int | None:
    """How many of this server's group's processes the kernel stopped for the group's
    memory ceiling (core/memory_events.py); None where it cannot be read. The server
    runs in its notebook's memory group (a local notebook's cgroup, a container's), so
    its own group is the notebook's: the kernels it starts are in it too."""
    try:
        lines = proc.read_text().splitlines()
    except OSError:
        return None
    for line in lines:  # "0::/path" (v2) or "4:memory:/path" (v1)
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            places = [root / path.lstrip("/") / "memory.events"]
        elif "memory" in controllers.split(","):
            places = [root / "memory" / path.lstrip("/") / "memory.oom_control"]
        else:
            continue
        for place in places:
            try:
                count = memory_events.oom_kill_count(place.read_text())
            except OSError:
                continue
            if count is not None:
                return count
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
                "oom_kills": own_oom_kills(),
            },
            "gpus": gpu_devices.summary(),
        }

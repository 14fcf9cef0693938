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

import psutil

from . import gpus as gpu_devices

# The key of the server's Sampler in the tornado application's settings.
SETTING = "cgu_lab_sampler"


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
            },
            "gpus": gpu_devices.summary(),
        }

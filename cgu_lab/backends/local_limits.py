"""Resource limits for local notebooks: cgroups when we may write them, else rlimits.

cgroup v2 (unified) and v1 (separate cpu and memory hierarchies) are both
supported: a notebook gets `cgu-lab/<id>` with a CPU quota (CFS) and a memory
ceiling that covers the server and every kernel it starts. Without writable
cgroups, CPU is limited by affinity to whole cores and memory by RLIMIT_DATA,
which applies to each process separately. `describe()` says which one applies.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass
from pathlib import Path

PERIOD_US = 100_000


@dataclass(frozen=True)
class Enforcement:
    cpu: str
    memory: str


class Limiter:
    """Creates and removes the per-notebook cgroups, or plans rlimits instead."""

    def __init__(self, enabled: bool = True, root: Path = Path("/sys/fs/cgroup")) -> None:
        self.root = root
        self.mode = self._detect() if enabled else "rlimit"

    def _writable(self, path: Path) -> bool:
        probe = path / "cgu-lab"
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
                    (self.root / "cgu-lab" / "cgroup.subtree_control").write_text("+cpu +memory")
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

    def _dirs(self, notebook_id: int) -> list[Path]:
        name = f"cgu-lab/nb-{notebook_id}"
        if self.mode == "cgroup2":
            return [self.root / name]
        if self.mode == "cgroup1":
            return [self.root / "cpu" / name, self.root / "memory" / name]
        return []

    def prepare(self, notebook_id: int, cpu_milli: int, memory: int, busy_cpus: list[int]) -> dict:
        """Create the cgroups (if any) and return the launcher's share of the plan."""
        quota = str(max(1000, cpu_milli * PERIOD_US // 1000))
        if self.mode == "cgroup2":
            (cgroup,) = self._dirs(notebook_id)
            cgroup.mkdir(parents=True, exist_ok=True)
            (cgroup / "cpu.max").write_text(f"{quota} {PERIOD_US}")
            (cgroup / "memory.max").write_text(str(memory))
            return {"cgroup_procs": [str(cgroup / "cgroup.procs")], "cgroups": [str(cgroup)]}
        if self.mode == "cgroup1":
            cpu_dir, memory_dir = self._dirs(notebook_id)
            for directory in (cpu_dir, memory_dir):
                directory.mkdir(parents=True, exist_ok=True)
            (cpu_dir / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (cpu_dir / "cpu.cfs_quota_us").write_text(quota)
            (memory_dir / "memory.limit_in_bytes").write_text(str(memory))
            dirs = [cpu_dir, memory_dir]
            return {
                "cgroup_procs": [str(d / "cgroup.procs") for d in dirs],
                "cgroups": [str(d) for d in dirs],
            }
        return {"rlimit_data": memory, "cpus": pick_cpus(cpu_milli, busy_cpus)}

    def members(self, state: dict) -> set[int]:
        pids: set[int] = set()
        for directory in state.get("cgroups", []):
            try:
                text = (Path(directory) / "cgroup.procs").read_text()
            except OSError:
                continue
            pids.update(int(line) for line in text.split())
        return pids

    def remove(self, state: dict) -> None:
        for directory in state.get("cgroups", []):
            with contextlib.suppress(FileNotFoundError):
                Path(directory).rmdir()


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

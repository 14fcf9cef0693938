"""Reading NVIDIA GPUs through NVML (the nvidia-ml-py package).

Shared by the controller (inventory: which devices exist) and the server
extension (utilisation and memory of the GPUs a notebook sees). A machine
without the NVIDIA driver has no NVML library; that is "no GPU", never an
error.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

try:
    import pynvml
except ImportError:  # pragma: no cover - nvidia-ml-py is a dependency
    pynvml = None

_lock = threading.Lock()
_MIG_PROFILE = re.compile(r"(\d+g\.\d+gb)", re.IGNORECASE)


@dataclass(frozen=True)
class GpuInfo:
    index: int
    uuid: str
    model: str
    memory_total: int
    mig_enabled: bool = False
    mig_profile: str = ""
    parent_uuid: str = ""


@dataclass(frozen=True)
class GpuUsage:
    uuid: str
    model: str
    utilization: float | None  # percent; None where NVML cannot tell (MIG instances)
    memory_used: int
    memory_total: int


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


@contextmanager
def nvml() -> Iterator[bool]:
    """Yield True with NVML initialised, or False on a machine without it."""
    if pynvml is None:
        yield False
        return
    with _lock:
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError:
            yield False
            return
        try:
            yield True
        finally:
            pynvml.nvmlShutdown()


def _mig_instances(handle, parent: GpuInfo) -> list[GpuInfo]:
    found = []
    try:
        count = pynvml.nvmlDeviceGetMaxMigDeviceCount(handle)
    except pynvml.NVMLError:
        return found
    for slot in range(count):
        try:
            mig = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
        except pynvml.NVMLError:
            continue
        name = _text(pynvml.nvmlDeviceGetName(mig))
        profile = _MIG_PROFILE.search(name)
        found.append(
            GpuInfo(
                index=parent.index,
                uuid=_text(pynvml.nvmlDeviceGetUUID(mig)),
                model=parent.model,
                memory_total=pynvml.nvmlDeviceGetMemoryInfo(mig).total,
                mig_enabled=True,
                mig_profile=profile.group(1).lower() if profile else name,
                parent_uuid=parent.uuid,
            )
        )
    return found


def inventory() -> list[GpuInfo]:
    """Every schedulable device: whole GPUs, or their MIG instances where MIG is on."""
    with nvml() as available:
        return _devices() if available else []


def usage(visible: list[str] | None = None) -> list[GpuUsage]:
    """Utilisation and memory of the GPUs whose UUIDs (or indices) are `visible`; all if None."""
    result: list[GpuUsage] = []
    with nvml() as available:
        if not available:
            return result
        wanted = set(visible) if visible is not None else None
        for gpu in _devices():
            if wanted is not None and gpu.uuid not in wanted and str(gpu.index) not in wanted:
                continue
            handle = pynvml.nvmlDeviceGetHandleByUUID(gpu.uuid)
            try:
                utilization = float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
            except pynvml.NVMLError:
                utilization = None
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            result.append(GpuUsage(gpu.uuid, gpu.model, utilization, memory.used, memory.total))
    return result


def _devices() -> list[GpuInfo]:
    """The inventory, for callers already inside `nvml()`."""
    devices: list[GpuInfo] = []
    for index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        try:
            mig_on = pynvml.nvmlDeviceGetMigMode(handle)[0] == pynvml.NVML_DEVICE_MIG_ENABLE
        except pynvml.NVMLError:
            mig_on = False
        gpu = GpuInfo(
            index=index,
            uuid=_text(pynvml.nvmlDeviceGetUUID(handle)),
            model=_text(pynvml.nvmlDeviceGetName(handle)),
            memory_total=pynvml.nvmlDeviceGetMemoryInfo(handle).total,
            mig_enabled=mig_on,
        )
        devices.extend(_mig_instances(handle, gpu) if mig_on else [gpu])
    return devices

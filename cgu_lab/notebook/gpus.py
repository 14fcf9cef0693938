"""The GPUs this notebook was given, and what NVML says of them: whole GPUs and MIG slices.

A notebook learns its devices from its environment: `CUDA_VISIBLE_DEVICES`
(set by the local backend; empty means none) or, where that is unset,
`NVIDIA_VISIBLE_DEVICES` (set by the NVIDIA device plugin on Kubernetes;
`all`, `none` and `void` name no allocation). An entry is a GPU UUID
(`GPU-<uuid>`), a MIG device (`MIG-<uuid>`, or the older
`MIG-GPU-<uuid>/<gpu instance>/<compute instance>`), or an index.

NVML reads MIG devices by their own handles: memory per slice, no
utilisation (NVML does not measure it per MIG instance, so it is None, not
0). When NVML cannot read a device (no driver in this container, an unknown
UUID), the notebook still shows what it was allocated instead of "no GPU".
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from .. import gpu_probe

NO_ALLOCATION = frozenset({"", "all", "none", "void"})
_LEGACY_MIG = re.compile(r"^MIG-(GPU-[0-9A-Fa-f-]+)/(\d+)/(\d+)$")
_PROFILE = re.compile(r"(\d+g\.\d+gb)", re.IGNORECASE)


@dataclass(frozen=True)
class VisibleDevice:
    """One entry of the visible-devices list, understood."""

    given: str  # as the environment says it
    kind: str  # "gpu", "mig", "index" or "unknown"
    uuid: str = ""  # GPU-... or MIG-...; "" for an index or a legacy MIG entry
    parent: str = ""  # legacy MIG entry: its GPU's UUID
    gpu_instance: int | None = None
    compute_instance: int | None = None
    index: int | None = None

    @property
    def is_mig(self) -> bool:
        return self.kind == "mig"


def parse_device(entry: str) -> VisibleDevice:
    entry = entry.strip()
    legacy = _LEGACY_MIG.match(entry)
    if legacy:
        return VisibleDevice(
            entry,
            "mig",
            parent=legacy.group(1),
            gpu_instance=int(legacy.group(2)),
            compute_instance=int(legacy.group(3)),
        )
    if entry.startswith("MIG-"):
        return VisibleDevice(entry, "mig", uuid=entry)
    if entry.startswith("GPU-"):
        return VisibleDevice(entry, "gpu", uuid=entry)
    if entry.isdigit():
        return VisibleDevice(entry, "index", index=int(entry))
    return VisibleDevice(entry, "unknown")


def visible_devices(env: Mapping[str, str] | None = None) -> list[VisibleDevice]:
    """The devices this notebook was given, from its environment."""
    env = os.environ if env is None else env
    if "CUDA_VISIBLE_DEVICES" in env:
        raw = env["CUDA_VISIBLE_DEVICES"]
    else:
        raw = env.get("NVIDIA_VISIBLE_DEVICES", "")
        if raw.strip().lower() in NO_ALLOCATION:
            raw = ""
    entries = [e.strip() for e in raw.split(",")]
    # CUDA ignores everything from the first invalid entry on ("-1" hides every GPU).
    devices = []
    for entry in entries:
        if not entry or entry.startswith("-"):
            break
        devices.append(parse_device(entry))
    return devices


def allocation(env: Mapping[str, str] | None = None) -> dict:
    """What this notebook was given, whether or not NVML can read it."""
    env = os.environ if env is None else env
    devices = visible_devices(env)
    return {
        "gpu_type": env.get("CGU_GPU_TYPE") or None,
        "count": len(devices),
        "devices": [d.given for d in devices],
        "mig": any(d.is_mig for d in devices),
    }


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _handle(pynvml, device: VisibleDevice):
    """NVML's handle for a visible device (raises pynvml.NVMLError when it has none)."""
    if device.uuid:
        return pynvml.nvmlDeviceGetHandleByUUID(device.uuid)
    if device.index is not None:
        return pynvml.nvmlDeviceGetHandleByIndex(device.index)
    if device.parent:
        parent = pynvml.nvmlDeviceGetHandleByUUID(device.parent)
        for slot in range(pynvml.nvmlDeviceGetMaxMigDeviceCount(parent)):
            try:
                mig = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(parent, slot)
            except pynvml.NVMLError:
                continue
            if (
                pynvml.nvmlDeviceGetGpuInstanceId(mig) == device.gpu_instance
                and pynvml.nvmlDeviceGetComputeInstanceId(mig) == device.compute_instance
            ):
                return mig
    raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)


def _is_mig(pynvml, handle) -> bool:
    try:
        return bool(pynvml.nvmlDeviceIsMigDeviceHandle(handle))
    except (pynvml.NVMLError, AttributeError):
        return False


def _model(pynvml, handle, mig: bool) -> tuple[str, str]:
    """(model, MIG profile): "NVIDIA H200", "1g.18gb"."""
    name = _text(pynvml.nvmlDeviceGetName(handle))
    if not mig:
        return name, ""
    profile = _PROFILE.search(name)
    try:
        parent = pynvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle)
        model = _text(pynvml.nvmlDeviceGetName(parent))
    except pynvml.NVMLError:
        model = name.split(" MIG")[0]
    return model, profile.group(1).lower() if profile else ""


def _reading(pynvml, device: VisibleDevice) -> dict | None:
    try:
        handle = _handle(pynvml, device)
        mig = _is_mig(pynvml, handle) or device.is_mig
        model, profile = _model(pynvml, handle, mig)
        memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
        uuid = _text(pynvml.nvmlDeviceGetUUID(handle))
    except pynvml.NVMLError:
        return None
    utilization = None
    if not mig:  # NVML measures no utilisation per MIG instance
        try:
            utilization = float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except pynvml.NVMLError:
            utilization = None
    return {
        "uuid": uuid,
        "model": model,
        "mig_profile": profile,
        "utilization": utilization,
        "memory_used": int(memory.used),
        "memory_total": int(memory.total),
    }


def read(devices: list[VisibleDevice]) -> tuple[list[dict], str]:
    """NVML's figures of the devices it can read, and why the others are missing ("")."""
    if not devices:
        return [], ""
    with gpu_probe.nvml() as available:
        if not available:
            return [], "the GPU driver (NVML) cannot be read from this notebook"
        pynvml = gpu_probe.pynvml
        readings = [r for r in (_reading(pynvml, d) for d in devices) if r is not None]
    missing = len(devices) - len(readings)
    why = "" if not missing else f"NVML could not read {missing} of {len(devices)} devices"
    return readings, why


def summary(env: Mapping[str, str] | None = None) -> dict:
    """The `gpus` part of `GET cgu-lab/resources`."""
    given = allocation(env)
    devices, why = read(visible_devices(env))
    count = given["count"]
    if not count and not given["gpu_type"]:
        message = "no GPU on this notebook"
    elif devices:
        message = f"{len(devices)} GPU{'s' if len(devices) != 1 else ''}" + (
            f"; {why}" if why else ""
        )
    else:
        kind = f" ({given['gpu_type']})" if given["gpu_type"] else ""
        what = f"{count} GPU{'s' if count != 1 else ''}" if count else "a GPU"
        message = f"{what}{kind} allocated; no figures: {why or 'none could be read'}"
    return {
        "available": bool(devices),
        "message": message,
        "devices": devices,
        "allocated": given,
    }

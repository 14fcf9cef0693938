"""Whole GPUs passed through to local VM notebooks (VFIO), checked before QEMU starts.

A GPU given to a VM leaves the host: it must be bound to the `vfio-pci` driver,
where NVML no longer sees it. So an administrator declares such a GPU by hand
(the GPUs page) with the id `pci:<address>`, e.g. `pci:0000:3b:00.0`, and a GPU
type of its own that only VM notebooks use; the controller places it like any
GPU. Binding is the administrator's, once per machine (for instance
`driverctl set-override 0000:3b:00.0 vfio-pci`); the platform never rebinds a
device, it only refuses, with what to do, when one is not ready:

- the id is not a PCI address, or no such device exists on this machine;
- the device is bound to another driver (nvidia: a notebook may be using it);
- its IOMMU group has other devices not bound to vfio-pci (the group goes to a
  guest whole, so every device in it must be free of host drivers);
- /dev/vfio/<group> is missing (no IOMMU: `intel_iommu=on` / `amd_iommu=on`).

QEMU runs as the notebook's account, so for the VM's life the group's device
node is given to that account and given back to root (0600) when it stops.
Guest memory is pinned for DMA: the launcher raises the account's
RLIMIT_MEMLOCK to the notebook's memory. Passthrough needs KVM.

Written for one machine's sysfs, and checked here against a sysfs tree made by
the tests: this platform's CI has no GPU, so no guest ever drove a real one.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .base import BackendError

PREFIX = "pci:"
DRIVER = "vfio-pci"
ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


class VfioError(ValueError):
    """A GPU cannot go to a VM; the message says what an administrator must do."""


@dataclass(frozen=True)
class PassedGpu:
    address: str  # 0000:3b:00.0
    group: str  # its IOMMU group's number

    def qemu_args(self) -> list[str]:
        return ["-device", f"vfio-pci,host={self.address}"]


def is_vm_gpu(device_id: str) -> bool:
    """Whether a declared GPU's id names a PCI device for VMs."""
    return device_id.startswith(PREFIX)


def refuse_for_processes(devices) -> None:
    """A notebook server or a training job cannot use a GPU bound to vfio-pci."""
    passed = [device for device in devices if is_vm_gpu(device)]
    if passed:
        raise BackendError(
            f"GPU {passed[0]} is bound to vfio-pci for VM notebooks; create a VM notebook "
            "with this GPU type, or choose another GPU type"
        )


def _driver(device: Path) -> str:
    with contextlib.suppress(OSError):
        return os.path.basename(os.readlink(device / "driver"))
    return ""


def check(device_id: str, sysfs: Path = Path("/sys"), dev: Path = Path("/dev")) -> PassedGpu:
    """The GPU `pci:<address>` ready for a guest, or VfioError saying why not."""
    if not is_vm_gpu(device_id):
        raise VfioError(
            f"GPU '{device_id}' is the host's: VM notebooks get only GPUs an administrator "
            f"declared as {PREFIX}<PCI address> and bound to {DRIVER}"
        )
    address = device_id[len(PREFIX) :].lower()
    if not ADDRESS.match(address):
        raise VfioError(f"GPU '{device_id}': '{address}' is not a PCI address like 0000:3b:00.0")
    device = sysfs / "bus" / "pci" / "devices" / address
    if not device.exists():
        raise VfioError(f"GPU '{device_id}': this machine has no PCI device {address}")
    driver = _driver(device)
    if driver != DRIVER:
        bound = f"bound to {driver}" if driver else "bound to no driver"
        raise VfioError(
            f"GPU '{device_id}' is {bound}, not {DRIVER}; an administrator binds it once "
            f"(driverctl set-override {address} {DRIVER}) to give it to VMs"
        )
    try:
        group = os.path.basename(os.readlink(device / "iommu_group"))
    except OSError:
        raise VfioError(
            f"GPU '{device_id}' is in no IOMMU group: the IOMMU is off "
            "(boot with intel_iommu=on or amd_iommu=on)"
        ) from None
    members = device / "iommu_group" / "devices"
    for member in sorted(members.iterdir()) if members.is_dir() else []:
        if member.name != address and _driver(member) not in ("", DRIVER, "pcieport"):
            raise VfioError(
                f"GPU '{device_id}' shares IOMMU group {group} with {member.name}, which is "
                f"bound to {_driver(member)}; a group goes to a guest whole, so bind it to "
                f"{DRIVER} too"
            )
    if not (dev / "vfio" / group).exists():
        raise VfioError(f"GPU '{device_id}': /dev/vfio/{group} is missing (is vfio-pci loaded?)")
    return PassedGpu(address, group)


def check_all(device_ids: tuple[str, ...], **roots) -> list[PassedGpu]:
    return [check(device_id, **roots) for device_id in device_ids]


def give(gpus: list[PassedGpu], uid: int | None, gid: int | None, dev: Path = Path("/dev")):
    """The groups' device nodes to the VM's account for its life (QEMU opens them)."""
    if uid is None:
        return
    for gpu in gpus:
        node = dev / "vfio" / gpu.group
        os.chown(node, uid, gid if gid is not None else -1)
        os.chmod(node, 0o600)


def take_back(groups: list[str], dev: Path = Path("/dev")) -> None:
    """Back to root alone when the VM has stopped (or never started)."""
    for group in (str(g) for g in groups if str(g).isdigit()):
        node = dev / "vfio" / group
        with contextlib.suppress(OSError):
            os.chown(node, 0, 0)
            os.chmod(node, 0o600)

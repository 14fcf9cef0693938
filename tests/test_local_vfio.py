"""A whole GPU passed through to a local VM: the checks, the hand-over, the command line.

The checks read sysfs; here they read a sysfs tree made in a temporary folder in
the kernel's layout (bus/pci/devices/<address> with `driver` and `iommu_group`
links, kernel/iommu_groups/<n>/devices), since this machine has no GPU and no
IOMMU. The launcher's pinned-memory limit is read back from a real process it
started. tests/test_local_vm.py starts real VMs through the API and shows a
GPU that is not ready refused before anything is made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cgu_lab.backends import local_qemu as qemu
from cgu_lab.backends import local_vfio as vfio
from cgu_lab.backends.base import BackendError

GPU = "0000:3b:00.0"


def fake_machine(root: Path, driver: str = "vfio-pci", neighbour: str | None = None) -> dict:
    """sysfs and /dev of a machine with one GPU in IOMMU group 7 (and a neighbour in it)."""
    sysfs, dev = root / "sys", root / "dev"
    group = sysfs / "kernel" / "iommu_groups" / "7"
    (group / "devices").mkdir(parents=True)
    devices = [(GPU, driver)] + ([("0000:3b:00.1", neighbour)] if neighbour else [])
    for address, bound in devices:
        device = sysfs / "devices" / "pci0000:3a" / address
        device.mkdir(parents=True)
        (sysfs / "bus" / "pci" / "drivers" / bound).mkdir(parents=True, exist_ok=True)
        (device / "driver").symlink_to(sysfs / "bus" / "pci" / "drivers" / bound)
        (device / "iommu_group").symlink_to(group)
        (group / "devices" / address).symlink_to(device)
        listed = sysfs / "bus" / "pci" / "devices"
        listed.mkdir(parents=True, exist_ok=True)
        (listed / address).symlink_to(device)
    (dev / "vfio").mkdir(parents=True)
    (dev / "vfio" / "7").write_text("")
    return {"sysfs": sysfs, "dev": dev}


def test_a_gpu_bound_to_vfio_pci_goes_to_the_guest(tmp_path) -> None:
    roots = fake_machine(tmp_path, neighbour="vfio-pci")  # its audio function, bound too
    gpu = vfio.check(f"pci:{GPU.upper()}", **roots)
    assert gpu == vfio.PassedGpu(GPU, "7")
    assert gpu.qemu_args() == ["-device", f"vfio-pci,host={GPU}"]


@pytest.mark.parametrize(
    ("device_id", "driver", "neighbour", "said"),
    [
        ("GPU-1234", "vfio-pci", None, "the host's"),
        ("pci:3b:00.0", "vfio-pci", None, "not a PCI address"),
        ("pci:0000:3c:00.0", "vfio-pci", None, "no PCI device 0000:3c:00.0"),
        (f"pci:{GPU}", "nvidia", None, f"bound to nvidia, not vfio-pci; .*set-override {GPU}"),
        (f"pci:{GPU}", "vfio-pci", "snd_hda_intel", "shares IOMMU group 7 with 0000:3b:00.1"),
    ],
)
def test_what_is_not_ready_is_refused_with_what_to_do(tmp_path, device_id, driver, neighbour, said):
    roots = fake_machine(tmp_path, driver, neighbour)
    with pytest.raises(vfio.VfioError, match=said):
        vfio.check(device_id, **roots)


def test_no_iommu_or_no_vfio_node_is_refused(tmp_path) -> None:
    roots = fake_machine(tmp_path)
    (roots["dev"] / "vfio" / "7").unlink()
    with pytest.raises(vfio.VfioError, match="/dev/vfio/7 is missing"):
        vfio.check(f"pci:{GPU}", **roots)
    (roots["sysfs"] / "bus" / "pci" / "devices" / GPU / "iommu_group").unlink()
    with pytest.raises(vfio.VfioError, match="intel_iommu=on"):
        vfio.check(f"pci:{GPU}", **roots)


def test_processes_never_get_a_gpu_meant_for_vms() -> None:
    vfio.refuse_for_processes(("GPU-1234",))
    with pytest.raises(BackendError, match="bound to vfio-pci for VM notebooks"):
        vfio.refuse_for_processes(("GPU-1234", f"pci:{GPU}"))


@pytest.mark.skipif(os.geteuid() != 0, reason="hands a device node to another account")
def test_the_group_is_the_vms_account_for_its_life(tmp_path) -> None:
    roots = fake_machine(tmp_path)
    node = roots["dev"] / "vfio" / "7"
    vfio.give([vfio.PassedGpu(GPU, "7")], 4242, 4243, dev=roots["dev"])
    assert (node.stat().st_uid, node.stat().st_gid, node.stat().st_mode & 0o777) == (
        4242,
        4243,
        0o600,
    )
    vfio.take_back(["7", "../../etc"], dev=roots["dev"])  # a name that is no group is skipped
    assert (node.stat().st_uid, node.stat().st_gid) == (0, 0)


def test_a_guest_with_a_gpu_gets_a_pcie_machine_and_the_host_cpu(tmp_path) -> None:
    (tmp_path / "disk.qcow2").write_bytes(b"")
    (tmp_path / "vm.json").write_text('{"disk": "disk.qcow2"}')
    image = qemu.read_image(tmp_path)
    args = ("qemu", image, tmp_path / "run", tmp_path / "d", tmp_path, 2000, 8 * 2**30, "kvm", "n")
    plain = qemu.argv(*args)
    assert plain[plain.index("-machine") + 1] == "pc" and "-cpu" not in plain
    passed = qemu.argv(*args, passthrough=tuple(vfio.PassedGpu(GPU, "7").qemu_args()))
    assert passed[passed.index("-machine") + 1] == "q35"
    assert passed[passed.index("-cpu") + 1] == "host"
    assert passed[passed.index(f"vfio-pci,host={GPU}") - 1] == "-device"


def may_raise_limits() -> bool:
    """CAP_SYS_RESOURCE (bit 24) in this process's effective capabilities."""
    status = Path("/proc/self/status").read_text()
    effective = int(status.split("CapEff:")[1].split()[0], 16)
    return bool(effective >> 24 & 1)


@pytest.mark.skipif(os.geteuid() != 0, reason="the launcher runs as root")
def test_the_launcher_lets_the_vm_pin_its_memory(tmp_path) -> None:
    """QEMU pins guest memory for a GPU's DMA: the launcher raises RLIMIT_MEMLOCK to it,
    or, where the controller may not (a container without CAP_SYS_RESOURCE), says so."""
    code = "import resource; print(resource.getrlimit(resource.RLIMIT_MEMLOCK))"
    pinned = 3 * 2**30
    plan = {"argv": [sys.executable, "-c", code], "env": {}, "cwd": str(tmp_path)}
    ran = subprocess.run(
        [sys.executable, "-m", "cgu_lab.backends.local_launch"],
        input=json.dumps({**plan, "rlimit_memlock": pinned}),
        capture_output=True,
        text=True,
        check=False,
    )
    if may_raise_limits():
        assert ran.stdout.strip() == f"({pinned}, {pinned})", ran.stderr
    else:
        assert ran.returncode == 1 and ran.stdout == "", ran.stdout
        assert "may not pin its 3072 MiB" in ran.stderr and "CAP_SYS_RESOURCE" in ran.stderr

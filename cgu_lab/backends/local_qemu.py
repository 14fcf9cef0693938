"""QEMU for local VM notebooks: the image an admin provides, the command line, and QMP.

An image is a folder on this machine (a local environment's prefix) with a
manifest `vm.json`:

    {"title": "...", "disk": "disk.qcow2", "format": "qcow2",
     "firmware": "bios" | "uefi", "kernel": "vmlinuz", "initrd": "initrd.img",
     "append": "console=tty1", "shared_folder": "home"}

`disk` is the base every VM of the environment gets a copy-on-write overlay
of (never written itself); `firmware` "uefi" boots through OVMF with a VM's
own copy of the firmware variables; `kernel`/`initrd`/`append` boot a kernel
directly (the test image: no bootloader in its disk); `shared_folder` is the
9p mount tag under which the guest finds the notebook's home (virtio-9p,
`security_model=none`: files the guest writes there belong to the notebook's
account, as QEMU runs as it). Every path stays inside the image's folder.

The accelerator: KVM when /dev/kvm can be opened and is a hardware KVM; else
TCG (emulation, several times slower: the start's progress and the page say
so). A kernel's "PVM" KVM (kvm_pvm, for nested machines without hardware
virtualisation) runs only guest kernels built for it, so it counts as no KVM.

QMP is QEMU's JSON control protocol on a Unix socket: a greeting, then
`qmp_capabilities`, then commands; the client here speaks just enough of it
to power a VM down and ask how it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "vm.json"
FORMATS = frozenset({"qcow2", "raw"})
QEMU = "qemu-system-x86_64"
OVMF_CODE = ("/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_CODE.fd")
OVMF_VARS = ("/usr/share/OVMF/OVMF_VARS_4M.fd", "/usr/share/OVMF/OVMF_VARS.fd")
# What QEMU itself needs beside the guest's memory; the notebook's memory limit
# covers both, so the guest gets the rest.
OVERHEAD = 192 * 2**20
MIN_GUEST = 128 * 2**20
# A Unix socket's path must fit sockaddr_un.sun_path (108 bytes with the NUL).
SOCKET_PATH_MAX = 107


class ImageError(ValueError):
    """The image folder or its manifest is not usable; the message says what to fix."""


@dataclass(frozen=True)
class VmImage:
    folder: Path
    title: str
    disk: Path
    format: str
    firmware: str
    kernel: Path | None
    initrd: Path | None
    append: str
    shared_folder: str


def _inside(folder: Path, name: Any, field: str) -> Path:
    if not isinstance(name, str) or not name:
        raise ImageError(f"{folder / MANIFEST}: '{field}' must name a file in {folder}")
    path = (folder / name).resolve()
    if folder.resolve() not in path.parents:
        raise ImageError(f"{folder / MANIFEST}: '{field}' must stay inside {folder}")
    if not path.is_file():
        raise ImageError(f"{folder / MANIFEST}: '{field}' names {path}, which does not exist")
    return path


def read_image(folder: Path) -> VmImage:
    """The image in `folder`, checked; ImageError when the admin must fix something."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        raise ImageError(
            f"{folder} has no {MANIFEST}, so it is not a VM image; "
            "scripts/vm-test-image.sh shows what one holds"
        ) from None
    except (OSError, ValueError) as error:
        raise ImageError(f"{folder / MANIFEST} cannot be read: {error}") from None
    if not isinstance(manifest, dict):
        raise ImageError(f"{folder / MANIFEST} must hold a JSON object")
    disk_format = manifest.get("format", "qcow2")
    if disk_format not in FORMATS:
        raise ImageError(f"{folder / MANIFEST}: 'format' is qcow2 or raw, not {disk_format!r}")
    firmware = manifest.get("firmware", "bios")
    if firmware not in ("bios", "uefi"):
        raise ImageError(f"{folder / MANIFEST}: 'firmware' is bios or uefi, not {firmware!r}")
    kernel = manifest.get("kernel")
    initrd = manifest.get("initrd")
    append = manifest.get("append", "")
    shared = manifest.get("shared_folder", "")
    if not isinstance(append, str) or not isinstance(shared, str) or "," in shared:
        raise ImageError(f"{folder / MANIFEST}: 'append' and 'shared_folder' are plain text")
    return VmImage(
        folder=folder,
        title=str(manifest.get("title", folder.name)),
        disk=_inside(folder, manifest.get("disk"), "disk"),
        format=disk_format,
        firmware=firmware,
        kernel=_inside(folder, kernel, "kernel") if kernel else None,
        initrd=_inside(folder, initrd, "initrd") if initrd else None,
        append=append,
        shared_folder=shared,
    )


def qemu_binary() -> str | None:
    return shutil.which(QEMU)


def kvm_usable(device: str = "/dev/kvm") -> bool:
    """Whether guests get hardware KVM here (see the module's notes on PVM)."""
    if Path("/sys/module/kvm_pvm").exists():
        return False
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    os.close(fd)
    return True


def ovmf_files() -> tuple[Path, Path] | None:
    code = next((Path(p) for p in OVMF_CODE if Path(p).is_file()), None)
    variables = next((Path(p) for p in OVMF_VARS if Path(p).is_file()), None)
    return (code, variables) if code and variables else None


def guest_memory_mib(memory: int) -> int:
    """The guest's RAM in MiB for a notebook memory limit in bytes (QEMU's share taken off)."""
    return max(MIN_GUEST, memory - OVERHEAD) // 2**20


def vcpus(cpu_milli: int) -> int:
    return max(1, math.ceil(cpu_milli / 1000))


def argv(
    qemu: str,
    image: VmImage,
    run: Path,
    disk: Path,
    home: Path,
    cpu_milli: int,
    memory: int,
    accel: str,
    name: str,
    uefi_vars: Path | None = None,
    passthrough: tuple[str, ...] = (),
) -> list[str]:
    """QEMU's command line: no network, the console's VNC and QMP on Unix sockets in `run`.

    `passthrough`: the `-device vfio-pci,...` arguments of GPUs given to the guest
    (local_vfio); such a guest gets a PCI Express machine (q35) and the host's CPU model,
    which GPU drivers expect.
    """
    return [
        qemu,
        *_machine_args(name, accel, cpu_milli, memory, gpus=bool(passthrough)),
        *_device_args(run, disk),
        *passthrough,
        *_shared_folder_args(image, home),
        *_kernel_args(image),
        *_firmware_args(image, uefi_vars),
    ]


def _machine_args(name: str, accel: str, cpu_milli: int, memory: int, gpus: bool) -> list[str]:
    return [
        "-name",
        f"{name},process={name}",
        "-accel",
        accel,
        *(("-machine", "q35", "-cpu", "host") if gpus else ("-machine", "pc")),
        "-smp",
        str(vcpus(cpu_milli)),
        "-m",
        f"{guest_memory_mib(memory)}M",
        "-nodefaults",
        "-no-user-config",
    ]


def _device_args(run: Path, disk: Path) -> list[str]:
    """Only what the console needs, and no network device at all."""
    return [
        "-vga",
        "std",
        "-display",
        "none",
        "-vnc",
        f"unix:{run / 'vnc.sock'},share=force-shared",
        "-qmp",
        f"unix:{run / 'qmp.sock'},server=on,wait=off",
        "-serial",
        f"file:{run / 'serial.log'}",
        "-drive",
        f"file={disk},if=virtio,format=qcow2,discard=unmap",
        "-usb",
        "-device",
        "usb-tablet",
    ]


def _shared_folder_args(image: VmImage, home: Path) -> list[str]:
    if not image.shared_folder:
        return []
    return [
        "-virtfs",
        f"local,path={home},mount_tag={image.shared_folder},security_model=none,id=home",
    ]


def _kernel_args(image: VmImage) -> list[str]:
    """A kernel booted directly, for images with no bootloader in their disk."""
    if image.kernel is None:
        return []
    args = ["-kernel", str(image.kernel)]
    if image.initrd is not None:
        args += ["-initrd", str(image.initrd)]
    if image.append:
        args += ["-append", image.append]
    return args


def _firmware_args(image: VmImage, uefi_vars: Path | None) -> list[str]:
    """OVMF's code, read-only, and the VM's own copy of its variables."""
    if image.firmware != "uefi":
        return []
    found = ovmf_files()
    if found is None or uefi_vars is None:
        raise ImageError("this image boots with UEFI, but OVMF is not installed (apt: ovmf)")
    return [
        "-drive",
        f"if=pflash,format=raw,unit=0,readonly=on,file={found[0]}",
        "-drive",
        f"if=pflash,format=raw,unit=1,file={uefi_vars}",
    ]


class QmpError(RuntimeError):
    pass


class Qmp:
    """One QMP session: `async with Qmp(path) as qmp: await qmp.command("query-status")`."""

    def __init__(self, path: Path, timeout: float = 5) -> None:
        self.path = path
        self.timeout = timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> Qmp:
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(self.path), limit=2**20), self.timeout
            )
            greeting = await self._read()
            if "QMP" not in greeting:
                raise QmpError(f"{self.path} does not speak QMP")
            await self.command("qmp_capabilities")
        except (OSError, asyncio.TimeoutError) as error:
            await self.__aexit__(None, None, None)
            raise QmpError(f"QMP at {self.path}: {error}") from None
        return self

    async def __aexit__(self, *_exc) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()

    async def _read(self) -> dict:
        assert self._reader is not None
        line = await asyncio.wait_for(self._reader.readline(), self.timeout)
        if not line:
            raise QmpError("QEMU closed its QMP socket")
        return json.loads(line)

    async def command(self, name: str, **arguments: Any) -> Any:
        assert self._writer is not None
        message: dict[str, Any] = {"execute": name}
        if arguments:
            message["arguments"] = arguments
        self._writer.write(json.dumps(message).encode() + b"\n")
        await self._writer.drain()
        while True:  # events may come before the answer
            reply = await self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise QmpError(reply["error"].get("desc", "QMP error"))

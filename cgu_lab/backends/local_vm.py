"""VM notebooks on the local backend: QEMU on this machine, one console server per VM.

A VM notebook's environment is a VM image: a folder with a `vm.json` manifest
(local_qemu.py), declared as the environment's local prefix. Starting one:

1. its own copy-on-write disk, made once: `vms/<owner>/<notebook>/disk.qcow2`,
   a qcow2 overlay on the image's base disk (which is never written), plus a
   copy of the UEFI variables when the image boots with UEFI. The disk stays
   across stops and resizes, like a notebook's home; deleting the notebook
   moves the folder to the trash with the home.
2. its runtime folder `run/<notebook id>/` for the VNC and QMP sockets and the
   serial log (short paths: a socket path must fit in 107 bytes).
3. the console server (local_vm_console.py) started by the launcher exactly
   as JupyterLab is: as the notebook's account, in the notebook's cgroup,
   with the installation's markers; it starts QEMU as its child. The
   notebook's home is the guest's shared folder (9p), so the owner's files
   are in the VM and the VM's in the home.

The controller then treats it as any notebook: the proxy forwards to the
console server, `observe` and the culler ask it, `sweep` finds it by its
markers. Only a stop differs: the guest is asked to power off through QMP
(an ACPI power button press) and given `vm_shutdown_timeout` seconds before
the ordinary stop ends QEMU. Resizes (vCPUs, memory) apply at the next start,
since the command line is made from the notebook's resources at each start.

The accelerator: KVM when the setting allows it and the notebook's account can
use /dev/kvm, else TCG, which the start's progress and the console page say
is slow. A whole GPU an administrator declared as `pci:<address>` and bound to
vfio-pci is passed through to the guest (local_vfio says how and what is
checked); the host's own GPUs are not.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import local_qemu as qemu
from . import local_vfio as vfio
from .base import BackendError, NotebookSpec, ProgressCallback
from .local_accounts import Account, Accounts
from .local_homes import Homes
from .local_servers import Servers, free_port, log_tail
from .local_settings import LocalSettings

CONSOLE_MODULE = "cgu_lab.backends.local_vm_console"


@dataclass(frozen=True)
class Boot:
    """What every try at starting one VM shares, made once before the first."""

    spec: NotebookSpec
    image: qemu.VmImage
    account: Account
    home: Path
    folder: Path
    run: Path
    disk: Path
    uefi_vars: Path | None
    accel: str
    log_path: Path
    gpus: tuple[vfio.PassedGpu, ...] = ()

    @property
    def title(self) -> str:
        return f"VM '{self.spec.name}'"

    @property
    def vfio_groups(self) -> list[str]:
        """The IOMMU groups of its passed GPUs, whose device nodes it holds while it runs."""
        return [gpu.group for gpu in self.gpus]

    @property
    def how(self) -> str:
        return "KVM" if self.accel == "kvm" else "TCG emulation, no KVM here: slow"


def account_can_use(device: str, uid: int | None, gid: int | None) -> bool:
    """Whether a process of this account may open `device` for reading and writing."""
    try:
        info = os.stat(device)
    except OSError:
        return False
    if uid is None or uid == 0:
        return os.access(device, os.R_OK | os.W_OK)
    if info.st_uid == uid:
        return info.st_mode & 0o600 == 0o600
    groups = {gid} if gid is not None else set()
    with contextlib.suppress(KeyError):
        name = pwd.getpwuid(uid).pw_name
        groups |= {g.gr_gid for g in grp.getgrall() if name in g.gr_mem}
    if info.st_gid in groups:
        return info.st_mode & 0o060 == 0o060
    return info.st_mode & 0o006 == 0o006


def unreadable_by_others(path: Path) -> Path | None:
    """The first folder others cannot enter, or the file itself when they cannot read it.

    QEMU runs as the notebook's account, which is in no group of the admin's files:
    an image in /root/... would fail deep inside QEMU; this names the folder instead.
    """
    for directory in reversed(path.parents):
        if not directory.stat().st_mode & stat.S_IXOTH:
            return directory
    return None if path.stat().st_mode & stat.S_IROTH else path


def check_readable(image: qemu.VmImage) -> None:
    """Refuse an image whose files a notebook's account could not open."""
    files = [image.disk, image.kernel, image.initrd]
    for path in [p for p in files if p is not None]:
        blocked = unreadable_by_others(path)
        if blocked is not None:
            raise BackendError(
                f"the VM image's file {path} cannot be read by notebook accounts "
                f"({blocked} is closed to them); an administrator must put the image "
                "in a folder every account can read, e.g. /var/lib/cgu-lab/images"
            )


class LocalVms:
    """The VM half of the local backend: it shares the backend's servers (launcher, limits,
    liveness), accounts and homes, which it is given, and never the backend itself."""

    def __init__(
        self,
        settings: LocalSettings,
        root: Path,
        servers: Servers,
        accounts: Accounts,
        files: Homes,
    ):
        self.settings = settings
        self.servers = servers
        self.accounts = accounts
        self.files = files
        self.disks = root / "vms"
        self.runtime = root / "run"

    def available(self) -> bool:
        return qemu.qemu_binary() is not None and shutil.which("qemu-img") is not None

    def describe(self) -> dict[str, Any]:
        if not self.available():
            return {
                "vm_notebooks": False,
                "vm_detail": "QEMU is not installed (apt: qemu-system-x86)",
            }
        accel = self.accelerator(None, None)
        return {"vm_notebooks": True, "vm_accelerator": accel}

    def accelerator(self, uid: int | None, gid: int | None) -> str:
        wanted = self.settings.vm_accelerator
        if wanted == "tcg":
            return "tcg"
        usable = qemu.kvm_usable() and account_can_use("/dev/kvm", uid, gid)
        if wanted == "kvm" and not usable:
            raise BackendError(
                "this platform is set to run VMs with KVM, but /dev/kvm is not usable here "
                "(or not by the notebook's account); an administrator can set vm_accelerator "
                "to auto"
            )
        return "kvm" if usable else "tcg"

    def disk_folder(self, owner: str, name: str) -> Path:
        return self.disks / owner / name

    # -- start ------------------------------------------------------------------

    async def start(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        image = self._image(spec)
        await progress(10, "Preparing the VM's disk and your home folder")
        boot = await self._provision(spec, image)
        boot.log_path.parent.mkdir(parents=True, exist_ok=True)
        busy = self.servers.busy_cpus()
        last_error = ""
        for attempt in range(3):
            state, process = await self._start_console(boot, attempt, busy, progress)
            try:
                await self._wait_booted(boot, state, process, progress)
            except BackendError as error:
                last_error = str(error)
                await self._abandon(spec, state)
                if "address already in use" not in log_tail(boot.log_path).lower():
                    break
                continue
            except asyncio.CancelledError:
                await self._abandon(spec, state)
                raise
            self.servers.cpus[spec.id] = state["cpus"]
            return state
        raise BackendError(last_error)

    async def _abandon(self, spec: NotebookSpec, state: dict[str, Any]) -> None:
        """A try that failed: its console server and QEMU end, its passed GPUs go back."""
        await self.servers.end(spec.id, state)
        groups = list(state.get("vfio_groups") or [])
        await asyncio.to_thread(self.forget_runtime, spec.id, groups)

    def _image(self, spec: NotebookSpec) -> qemu.VmImage:
        """The notebook's VM image, refusing what cannot start before anything is made."""
        if not self.available():
            raise BackendError(
                "VM notebooks need QEMU on this machine, which is not installed; "
                "ask an administrator (apt: qemu-system-x86 qemu-utils ovmf)"
            )
        try:
            return qemu.read_image(Path(spec.environment.local_prefix))
        except qemu.ImageError as error:
            raise BackendError(
                f"environment '{spec.environment.name}' is not a usable VM image: {error}"
            ) from None

    async def _provision(self, spec: NotebookSpec, image: qemu.VmImage) -> Boot:
        """The home, disk and runtime folder every try at starting the VM reuses."""
        account = await self.accounts.account(spec.owner)
        gpus = await asyncio.to_thread(self._gpus, spec)
        accel = self.accelerator(account.uid, account.gid)
        if gpus and accel != "kvm":
            raise BackendError(
                "a GPU is passed to a VM only under KVM, which VMs cannot use on this "
                "machine; choose no GPU for this VM notebook"
            )
        home = self.files.home(spec.owner, spec.name)
        await asyncio.to_thread(self.files.prepare_home, home, account.uid, account.gid)
        folder = self.disk_folder(spec.owner, spec.name)
        run = self.runtime / str(spec.id)
        disk, uefi_vars = await asyncio.to_thread(
            self._prepare, image, folder, run, account.uid, account.gid
        )
        return Boot(
            spec=spec,
            image=image,
            account=account,
            home=home,
            folder=folder,
            run=run,
            disk=disk,
            uefi_vars=uefi_vars,
            accel=accel,
            log_path=self.servers.log_path(spec.owner, spec.name),
            gpus=tuple(gpus),
        )

    @staticmethod
    def _gpus(spec: NotebookSpec) -> list[vfio.PassedGpu]:
        """The GPUs the controller placed, each ready for the guest, or why not."""
        if not spec.gpus:
            return []
        try:
            return vfio.check_all(spec.devices)
        except vfio.VfioError as error:
            raise BackendError(str(error)) from None

    async def _start_console(
        self, boot: Boot, attempt: int, busy: list[int], progress: ProgressCallback
    ) -> tuple[dict[str, Any], asyncio.subprocess.Process]:
        """One try: the console server started under fresh limits on a fresh port."""
        spec, account = boot.spec, boot.account
        limits = await asyncio.to_thread(
            self.servers.limiter.prepare, spec.id, spec.cpu_milli, spec.memory, busy
        )
        port = free_port()
        argv = self._qemu(boot)
        info = self._info(boot)
        plan = {
            "argv": [sys.executable, "-m", CONSOLE_MODULE],
            "env": self._env(spec, boot.home, account.name, boot.run, port, argv, info),
            "cwd": str(boot.folder),
            "uid": account.uid,
            "gid": account.gid,
            **{k: v for k, v in limits.items() if k != "cgroups"},
        }
        if boot.gpus:
            plan["rlimit_memlock"] = spec.memory  # guest memory is pinned for the GPU's DMA
        suffix = f" (try {attempt + 1})" if attempt else ""
        await progress(25, f"Starting the VM with {boot.how}{suffix}")
        try:  # the GPUs' groups are the VM account's until its stop (or this failing)
            await asyncio.to_thread(vfio.give, list(boot.gpus), account.uid, account.gid)
            process = await self.servers.launch(plan, boot.log_path, spec.id)
        except BaseException:
            await asyncio.to_thread(vfio.take_back, boot.vfio_groups)
            raise
        state = {
            "kind": "vm",
            **self.servers.launched(spec.id, process, port, account, limits),
            "accel": boot.accel,
            "run": str(boot.run),
            "vfio_groups": boot.vfio_groups,
        }
        return state, process

    def _qemu(self, boot: Boot) -> list[str]:
        spec = boot.spec
        return qemu.argv(
            qemu.qemu_binary() or qemu.QEMU,
            boot.image,
            boot.run,
            boot.disk,
            boot.home,
            spec.cpu_milli,
            spec.memory,
            boot.accel,
            f"cgu-{self.servers.instance[:8]}-{spec.id}",
            boot.uefi_vars,
            tuple(arg for gpu in boot.gpus for arg in gpu.qemu_args()),
        )

    def _info(self, boot: Boot) -> dict[str, Any]:
        """What the console page shows of the VM."""
        spec = boot.spec
        return {
            "title": boot.image.title,
            "notebook": spec.name,
            "accel": boot.accel,
            "vcpus": qemu.vcpus(spec.cpu_milli),
            "memory_mib": qemu.guest_memory_mib(spec.memory),
            "shared_folder": boot.image.shared_folder,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }

    async def _wait_booted(
        self,
        boot: Boot,
        state: dict[str, Any],
        process: asyncio.subprocess.Process,
        progress: ProgressCallback,
    ) -> None:
        """Until the console server answers and QEMU has made its VNC socket."""
        title, how = boot.title, boot.how
        vnc = Path(state["run"]) / "vnc.sock"
        await self.servers.wait_ready(
            boot.spec,
            state,
            process,
            progress,
            server=title,
            waiting=lambda waited: f"Booting {title} ({how}; {waited} s)",
            answered=f"{title} is running ({how}); its console is ready",
            ready=vnc.exists,
        )

    def _prepare(
        self, image: qemu.VmImage, folder: Path, run: Path, uid: int | None, gid: int | None
    ) -> tuple[Path, Path | None]:
        """The VM's own folders, disk overlay and UEFI variables (blocking: run in a thread)."""
        if uid is not None and uid != 0:
            check_readable(image)
        self._make_folders(folder, run, uid, gid)
        if len(str(run / "vnc.sock")) > qemu.SOCKET_PATH_MAX:
            raise BackendError(
                f"the data directory's path is too long for the VM's control sockets "
                f"({run}); choose a shorter data directory, e.g. /var/lib/cgu-lab"
            )
        disk = _overlay(image, folder)
        uefi_vars = _uefi_vars(image, folder)
        for path in [disk, *([uefi_vars] if uefi_vars else [])]:
            _hand_over(path, 0o600, uid, gid)
        return disk, uefi_vars

    def _make_folders(self, folder: Path, run: Path, uid: int | None, gid: int | None) -> None:
        """The VM's disk folder (kept) and an empty runtime folder, the account's alone."""
        for directory in (self.disks, folder.parent, self.runtime):
            directory.mkdir(parents=True, exist_ok=True)
            directory.chmod(0o711)
        folder.mkdir(exist_ok=True)
        if run.exists():
            shutil.rmtree(run)
        run.mkdir()
        for directory in (folder, run):
            _hand_over(directory, 0o700, uid, gid)

    def _env(
        self,
        spec: NotebookSpec,
        home: Path,
        account: str,
        run: Path,
        port: int,
        argv: list[str],
        info: Mapping[str, Any],
    ) -> dict[str, str]:
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "USER": account,
            "LOGNAME": account,
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            "CGU_LAB_INSTANCE": self.servers.instance,
            "CGU_NOTEBOOK_ID": str(spec.id),
            "CGU_PROXY_SECRET": spec.proxy_secret,
            "CGU_VM_BASE": spec.base_path,
            "CGU_VM_PORT": str(port),
            "CGU_VM_RUN": str(run),
            "CGU_VM_QEMU": json.dumps(argv),
            "CGU_VM_INFO": json.dumps(dict(info)),
            "CGU_VM_IDLE_CPU": os.environ.get("CGU_LAB_VM_IDLE_CPU", "10"),
        }

    # -- stop and storage ---------------------------------------------------------

    async def shutdown(self, spec: NotebookSpec, state: Mapping[str, Any]) -> None:
        """Ask the guest to power off (ACPI) and wait for it; the caller's stop does the rest."""
        server = self.servers.processes.server(state, spec.id)
        if server is None or not state.get("run"):
            return
        socket = Path(str(state["run"])) / "qmp.sock"
        try:
            async with qemu.Qmp(socket) as qmp:
                await qmp.command("system_powerdown")
        except (qemu.QmpError, OSError, ValueError):
            return  # no QMP: the ordinary stop ends QEMU
        timeout = self.settings.vm_shutdown_timeout
        await self.servers.wait_exit(spec.id, server, timeout)

    async def remove_storage(self, owner: str, name: str, trash: Path, stamp: str) -> None:
        folder = self.disk_folder(owner, name)
        if folder.exists():
            target = trash / f"{owner}--{name}--vm--{stamp}"
            await asyncio.to_thread(shutil.move, str(folder), str(target))

    def forget_runtime(self, notebook_id: int, vfio_groups: list[str] = ()) -> None:
        """After a stop: the runtime folder goes, and passed GPUs go back to root."""
        with contextlib.suppress(OSError):
            shutil.rmtree(self.runtime / str(int(notebook_id)))
        vfio.take_back(list(vfio_groups))


def _overlay(image: qemu.VmImage, folder: Path) -> Path:
    """The VM's copy-on-write disk over the image's, made once and kept across starts."""
    disk = folder / "disk.qcow2"
    if not disk.exists():
        made = folder / "disk.qcow2.new"
        result = _run(
            "qemu-img",
            "create",
            "-q",
            "-f",
            "qcow2",
            "-b",
            str(image.disk),
            "-F",
            image.format,
            str(made),
        )
        if result:
            raise BackendError(f"the VM's disk could not be made: {result}")
        made.rename(disk)
    return disk


def _uefi_vars(image: qemu.VmImage, folder: Path) -> Path | None:
    """The VM's own copy of OVMF's variables when the image boots with UEFI."""
    if image.firmware != "uefi":
        return None
    found = qemu.ovmf_files()
    if found is None:
        raise BackendError(
            "this VM image boots with UEFI, but OVMF is not installed here; "
            "ask an administrator (apt: ovmf)"
        )
    uefi_vars = folder / "uefi-vars.fd"
    if not uefi_vars.exists():
        shutil.copyfile(found[1], uefi_vars)
    return uefi_vars


def _hand_over(path: Path, mode: int, uid: int | None, gid: int | None) -> None:
    """Set `mode` and give `path` to the notebook's account, when it has its own."""
    path.chmod(mode)
    if uid is not None:
        os.chown(path, uid, gid if gid is not None else -1)


def _run(*command: str) -> str:
    """Run a short tool; '' on success, else its error output."""
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode == 0:
        return ""
    return (result.stderr or result.stdout).strip()[-500:]

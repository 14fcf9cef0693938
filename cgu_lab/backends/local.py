"""The local backend: each notebook is a `jupyter lab` process on loopback.

Layout below the data directory:
    homes/<user>/<notebook>/   the notebook's home and root directory
    course-folders/<user>/<group>/
                               a member's folder of each course, where its lab
                               files land; every home links it as `courses`
    logs/<user>/<notebook>.log the server's output (for the owner and admins)
    run/nb-<id>/jupyter.sock   the socket a server in a private network listens on
    run/controller.sock        the controller's API, for those servers (cli.py)
    trash/                     homes of deleted notebooks, moved aside
    instance-id                this installation's identity: tags every process
                               we start and names its cgroups, so a restarted
                               controller finds (or cleans up) its own servers

Processes run in their own session and survive a controller restart; the
controller then adopts them (`observe`) and kills any it no longer knows
(`sweep`). Each server is told its proxy secret, so a request that reaches its
port without passing through the controller's proxy is refused.

Cookies ignore ports: a browser sends the controller's log-in to every port of its host,
so student code must never listen on that host. With `notebook_network = "private"` (the
default when notebooks run as per-user accounts) each server and its kernels live in a
network namespace of their own (local_launch.outbound): the internet is reachable, the
host's loopback is not, and the proxy reaches the server over a Unix socket.

Several installations on one host: notebook ids collide between their
databases, so every host-wide name carries the instance id. Cgroups are
`cgu-lab/<instance>/nb-<id>`; a process is signalled only when it is this
installation's and that notebook's (`local_limits.Processes`). A port is any
port free at start, bound without retries: of two installations racing for it
the loser fails and tries another, and a server is adopted only when it is our
process, holds the recorded port and answers with the notebook's random proxy
secret. Runtime and kernel files live in the home, below this installation's
data directory; nothing is made under /tmp or /run.

The parts live beside it: accounts in local_accounts, homes and copies of their
files in local_homes (the file tool itself in local_files), limits and process
bookkeeping in local_limits, launching, watching and ending servers in local_servers
(which VM notebooks share), the launcher itself in local_launch (and, forking JupyterLab
from a pre-imported process per environment, local_warm), environments in
local_environments, training jobs (torchrun) in local_training,
VM notebooks (QEMU) in local_vm.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import stat
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil

from .. import gpu_probe
from ..core.gpus import Device
from ..store.db import Database
from . import local_host
from . import local_vfio as vfio
from .base import (
    Backend,
    BackendError,
    NotebookSpec,
    Observation,
    ProgressCallback,
    TrainingSpec,
    TrainingStatus,
)
from .local_accounts import Account, Accounts
from .local_command import notebook_argv, notebook_env
from .local_homes import Homes
from .local_limits import PLATFORM_NICE, PLATFORM_WEIGHT, Limiter, favour_platform, instance_id
from .local_servers import Servers, free_port, log_tail
from .local_settings import LocalSettings
from .local_storage import Storage
from .local_training import LocalTraining
from .local_vm import LocalVms

log = logging.getLogger("cgu_lab.local")


class LocalBackend(Backend):
    name = "local"

    def __init__(self, settings: LocalSettings) -> None:
        self.settings = settings
        self.root = Path(settings.data_dir)
        self.homes = self.root / "homes"
        self.course_folders = self.root / "course-folders"
        self.logs = self.root / "logs"
        self.trash = self.root / "trash"
        self.accounts = Accounts(
            settings.run_as, instance=lambda: self.instance, db_url=settings.db_url
        )
        self.files = Homes(self.homes, self.course_folders, self.accounts)
        # Personal and course storage, outliving notebooks (local_storage says how).
        self.storage = Storage(self.root / "storage", self.course_folders, self.accounts)
        self.limiter = Limiter(enabled=settings.use_cgroups, pids=settings.notebook_pids)
        self.instance = ""
        self.servers = Servers(settings, self.logs, self.limiter)
        self.run = self.root / "run"
        self.slirp4netns = shutil.which("slirp4netns") or ""
        self.vms = LocalVms(settings, self.root, self.servers, self.accounts, self.files)
        self.training = LocalTraining(
            self.root / "training",
            self.accounts,
            self.limiter,
            lambda: self.instance,
            network=settings.training_network,
        )

    # -- lifecycle of the backend itself ---------------------------------

    async def open(self) -> None:
        await asyncio.to_thread(self.files.move_old_course_folders, self.root / "coursework")
        for directory, mode in (
            (self.root, 0o711),
            (self.homes, 0o711),
            (self.course_folders, 0o711),
            (self.logs, 0o700),
            (self.trash, 0o700),
            (self.run, 0o711),
        ):
            directory.mkdir(parents=True, exist_ok=True)
            directory.chmod(mode)
        try:
            self.instance = instance_id(self.root / "instance-id")
        except ValueError as error:
            raise BackendError(str(error)) from None
        self.limiter.bind(self.instance)
        self.servers.bind(self.instance)
        # In the event loop's own thread: the proxy and the API go before the notebooks.
        if favour_platform(self.limiter):
            log.info(
                "controller in its own CPU group (weight %d), threads at nice %d (local_limits)",
                PLATFORM_WEIGHT,
                PLATFORM_NICE,
            )
        await asyncio.to_thread(local_host.prepare_x11_dir)  # before any desktop starts
        await asyncio.to_thread(self.storage.open)
        if self.accounts.mode == "per-user":
            self._check_reachable(self.homes)
        if self.private_network and not self.slirp4netns:
            log.warning(
                "slirp4netns is not installed: notebooks run in private networks without "
                "the internet (apt-get install slirp4netns)"
            )

    @staticmethod
    def _check_reachable(path: Path) -> None:
        """Per-user accounts must be able to walk down to their homes."""
        for directory in [path, *path.parents]:
            if not directory.stat().st_mode & stat.S_IXOTH:
                mode = oct(directory.stat().st_mode & 0o777)
                raise BackendError(
                    f"notebook accounts cannot enter {directory} (mode {mode}), so they could "
                    f"not reach their homes below {path}; choose a data directory outside it, "
                    "e.g. /var/lib/cgu-lab"
                )

    def share_database(self, db: Database) -> None:
        self.accounts.database = db

    async def close(self) -> None:
        await self.servers.close()
        await self.accounts.close()
        await asyncio.to_thread(self.limiter.release_platform)

    @property
    def private_network(self) -> bool:
        """Whether notebook servers get network namespaces of their own: the setting, when
        notebooks run as per-user accounts (making a namespace needs root; run as ourselves,
        a kernel could read the controller's files anyway)."""
        wanted = self.settings.notebook_network == "private"
        return wanted and self.accounts.mode == "per-user"

    def network_sentence(self) -> str:
        """How notebooks meet the network, for the System page."""
        if not self.private_network:
            return (
                "Notebooks share this machine's network: a kernel can listen on the host "
                "name the platform is served at (set CGU_LAB_NOTEBOOK_NETWORK=private and "
                "run as root to isolate them)."
            )
        if not self.slirp4netns:
            return (
                "Each notebook has a private network with no internet: install slirp4netns "
                "to give notebooks the internet."
            )
        return (
            "Each notebook has a private network: the internet is reachable, this machine's "
            "loopback and other notebooks are not, and nothing a kernel listens on can be "
            "reached from outside."
        )

    def describe(self) -> dict[str, Any]:
        enforcement = self.limiter.describe()
        return {
            "name": self.name,
            "run_as": self.accounts.mode,
            "cpu_limit": enforcement.cpu,
            "memory_limit": enforcement.memory,
            "process_limit": enforcement.processes,
            **self.vms.describe(),  # vm_notebooks and how they run
            "notebook_network": self.network_sentence(),
            "training_jobs": True,
            "training_network": self.training.network_sentence(),
        }

    async def inventory(self) -> list[Device]:
        found = await asyncio.to_thread(gpu_probe.inventory)
        node = socket.gethostname()
        return [
            Device(
                id=gpu.uuid,
                node=node,
                model=gpu.model,
                memory=gpu.memory_total,
                mig_profile=gpu.mig_profile,
                index=gpu.index,
            )
            for gpu in found
        ]

    # -- paths -----------------------------------------------------------

    def log_path(self, owner: str, name: str) -> Path:
        return self.servers.log_path(owner, name)

    def endpoint(self, state: Mapping[str, Any]) -> str:
        return self.servers.endpoint(state)

    def socket_dir(self, notebook_id: int) -> Path:
        """The notebook's own runtime folder (its XDG_RUNTIME_DIR and TMPDIR's parent)."""
        return self.run / f"nb-{notebook_id}"

    def _prepare_runtime(self, notebook_id: int, account: Account) -> Path:
        """A fresh runtime folder of the notebook's account, removed when it stops.

        Why: `/tmp` is the host's, shared by every user. What a notebook's processes
        leave there (apps' socket folders, Voila's and kernels' temporary files) would
        outlive a server that was killed, not stopped, and pile up across users for
        good. Its XDG_RUNTIME_DIR and TMPDIR point here instead (only that account,
        and the controller as root, may enter), and stop() and the sweep remove it.
        A private network's server socket lives here too.
        """
        folder = self.socket_dir(notebook_id)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(mode=0o700)
        (folder / "tmp").mkdir(mode=0o700)
        if account.uid is not None:  # else every notebook runs as the controller's account
            for path in (folder, folder / "tmp"):
                os.chown(path, account.uid, account.gid)
        return folder

    # -- start -----------------------------------------------------------

    async def start(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        vfio.refuse_for_processes(spec.devices)
        await progress(10, "Preparing your home directory")
        account = await self.accounts.account(spec.owner)
        home = self.files.home(spec.owner, spec.name)
        await asyncio.to_thread(self.files.prepare_home, home, account.uid, account.gid)
        await asyncio.to_thread(self.files.link_courses, spec.owner, home, account.uid, account.gid)
        groups = await self.storage.mount(spec.owner, home, account, spec.courses)
        prefix = self.interpreter_prefix(spec)
        jupyter = prefix / "bin" / "jupyter-lab"
        if not jupyter.exists():
            raise BackendError(
                f"environment '{spec.environment.name}' has no JupyterLab ({jupyter} is missing); "
                "ask an administrator to install it there"
            )
        log_path = self.log_path(spec.owner, spec.name)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        # Starts take turns for the cores (local_servers.StartQueue); the wait is shown.
        async with self.servers.queue.turn(progress):
            return await self._launch(spec, progress, account, home, groups, prefix, jupyter)

    async def _launch(
        self,
        spec: NotebookSpec,
        progress: ProgressCallback,
        account: Account,
        home: Path,
        groups: list[int],
        prefix: Path,
        jupyter: Path,
    ) -> dict[str, Any]:
        """Launch JupyterLab (a port taken meanwhile is tried again) and wait until it
        answers; its cgroup weighs a starting notebook's until then (local_limits)."""
        log_path = self.log_path(spec.owner, spec.name)
        busy = self.servers.busy_cpus()
        last_error = ""
        private = self.private_network
        for attempt in range(3):
            limits = await asyncio.to_thread(
                self.limiter.prepare, spec.id, spec.cpu_milli, spec.memory, busy, account.gid
            )
            runtime = await asyncio.to_thread(self._prepare_runtime, spec.id, account)
            sock = runtime / "jupyter.sock" if private else None
            port = None if private else free_port()
            env = notebook_env(self.instance, spec, prefix, home, account.name)
            env.update(XDG_RUNTIME_DIR=str(runtime), TMPDIR=str(runtime / "tmp"))
            if self.settings.controller_socket.exists():
                # In a private network the controller's port is out of reach; its socket is not.
                env["CGU_CONTROLLER_SOCKET"] = str(self.settings.controller_socket)
            plan = {
                "argv": notebook_argv(jupyter, spec, port, sock),
                "env": env,
                "cwd": str(home),
                "uid": account.uid,
                "gid": account.gid,
                "groups": groups,
                **{k: v for k, v in limits.items() if k != "cgroups"},
            }
            if private:
                plan["private_network"] = True
                if self.slirp4netns:
                    plan["outbound"] = self.slirp4netns
            await progress(25, "Starting JupyterLab" + (f" (try {attempt + 1})" if attempt else ""))
            process = await self.servers.launch(plan, log_path, spec.id, warm=jupyter)
            state = self.servers.launched(spec.id, process, port, account, limits)
            if sock is not None:
                state["socket"] = str(sock)
            try:
                await self.servers.wait_ready(spec, state, process, progress)
            except BackendError as error:
                last_error = str(error)
                await self.stop(spec, state)
                if "address already in use" not in log_tail(log_path).lower():
                    break
                continue
            except asyncio.CancelledError:
                await self.stop(spec, state)
                raise
            self.servers.cpus[spec.id] = state["cpus"]
            await asyncio.to_thread(self.limiter.settle, f"nb-{int(spec.id)}")
            return state
        raise BackendError(last_error)

    async def start_vm(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        return await self.vms.start(spec, progress)

    def interpreter_prefix(self, spec: NotebookSpec) -> Path:
        """The Python prefix whose `bin/jupyter-lab` serves the notebook: its environment's.

        Never the platform's own as a fallback: an environment with only an
        image is for the kubernetes backend, and running it here would give
        the user other packages than they chose (the controller refuses such
        a notebook before it gets here; this is the backstop).
        """
        environment = spec.environment
        if not environment.local_prefix:
            raise BackendError(
                f"environment '{environment.name}' has only a container image "
                f"({environment.image or 'none'}), which the local backend cannot run; "
                "choose an environment built on this machine"
            )
        return Path(environment.local_prefix)

    async def pack(
        self,
        owner: str,
        area: str,
        paths: list[str],
        excluded: list[str],
        max_bytes: int,
        max_files: int,
        into: Path,
        base: str = "",
        image: str = "",  # copies run on this machine: no image
    ) -> dict:
        return await self.files.pack(owner, area, paths, excluded, max_bytes, max_files, into, base)

    async def unpack(
        self,
        owner: str,
        area: str,
        source: Path,
        destination: str,
        label: str,
        on_progress=None,
        image: str = "",  # copies run on this machine: no image
    ) -> dict:
        return await self.files.unpack(owner, area, source, destination, label, on_progress)

    async def store_once(self, source: Path) -> Any | None:
        return await self.files.store_once(source)

    async def unpack_stored(
        self, owner: str, area: str, stored: Any, destination: str, label: str
    ) -> dict:
        return await self.files.unpack_stored(owner, area, stored, destination, label)

    async def drop_stored(self, stored: Any) -> None:
        await self.files.drop_stored(stored)

    # -- stop, observe, sweep ---------------------------------------------

    async def stop(self, spec: NotebookSpec, state: Mapping[str, Any]) -> None:
        if state.get("kind") == "vm":
            await self.vms.shutdown(spec, state)  # the guest powers off, or is ended below
        await self.servers.end(spec.id, state)
        await asyncio.to_thread(shutil.rmtree, self.socket_dir(spec.id), True)
        if str(state.get("kind", "")).startswith("vm"):
            groups = list(state.get("vfio_groups") or [])
            await asyncio.to_thread(self.vms.forget_runtime, spec.id, groups)

    async def observe(self, spec: NotebookSpec, state: Mapping[str, Any]) -> Observation:
        return await self.servers.observe(spec, state)

    async def sweep(self, keep: set[int]) -> list[int]:
        return await asyncio.to_thread(self._sweep, keep)

    def _sweep(self, keep: set[int]) -> list[int]:
        """Kill this installation's processes of notebooks it no longer runs; drop their cgroups."""
        victims, stopped = self.servers.processes.strays(keep)
        for process in victims:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        psutil.wait_procs(victims, 5)
        for notebook_id in self.limiter.notebooks() - keep:
            self.limiter.remove(notebook_id)
        for folder in self.run.glob("nb-*"):
            if folder.name[3:].isdigit() and int(folder.name[3:]) not in keep:
                shutil.rmtree(folder, ignore_errors=True)
        return sorted(stopped)

    async def remove_storage(self, owner: str, name: str) -> None:
        home = self.files.home(owner, name)
        if home.exists():
            target = self.trash / f"{owner}--{name}--{time.strftime('%Y%m%d-%H%M%S')}"
            await asyncio.to_thread(shutil.move, str(home), str(target))
        await self.vms.remove_storage(owner, name, self.trash, time.strftime("%Y%m%d-%H%M%S"))
        with contextlib.suppress(FileNotFoundError):
            self.log_path(owner, name).unlink()

    # -- training jobs (local_training) ------------------------------------

    async def submit_training(self, job: TrainingSpec) -> dict[str, Any]:
        return await self.training.submit(job)

    async def training_status(self, owner: str, name: str, group=None) -> TrainingStatus:
        return await self.training.status(owner, name)

    async def training_logs(
        self, owner: str, name: str, group=None, replica="master", index=0, tail_lines=200
    ) -> str:
        return await self.training.logs(owner, name, replica, index, tail_lines)

    async def delete_training(self, owner: str, name: str, group=None) -> None:
        await self.training.delete(owner, name)

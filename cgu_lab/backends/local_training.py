"""Training jobs on the local backend: the one-machine equivalent of a PyTorchJob.

A job of one master and `workers` workers becomes one `torchrun` (`python -m
torch.distributed.run --standalone --nnodes 1 --nproc-per-node N --no-python
<command>`) in the environment the owner chose: rank 0 plays the master,
rank i+1 worker i, and each rank runs the job's command with the variables
torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), as the
replicas of a PyTorchJob do. It runs as the owner's account, inside cgroups of
its own with the job's CPU and memory (per replica times replicas, like the
quota counts it), on the GPUs the controller placed (CUDA_VISIBLE_DEVICES),
and by default in a network namespace of its own with only a loopback
(Settings.training_network): torchrun's rendezvous store listens on every
interface and takes any client, which on the machine's network would let
another user join or disturb the job.

Layout below `<data>/training/<owner>/<job>/` (0711, the controller's):
    job.json     what was started: the watcher's pid and start time, cgroups, GPUs
    result.json  how it ended, written by the watcher (local_training_supervisor)
    job.log      torchrun's own output (which rank failed, and how)
    ranks/       torchrun's --log-dir, the owner's: each rank's stdout and stderr
    home/        the job's HOME, the owner's

Host-wide names carry the installation id: cgroups are
`cgu-lab/<instance>/job-<key>` beside the notebooks' `nb-<id>` (the key is a
hash of owner and job name, which may hold any label characters), and every
process carries `CGU_LAB_TRAINING=<instance>/<key>` instead of the notebooks'
marker, so a notebook sweep never takes a job and a job's stop never takes
anything else. A process is this job's only when the kernel puts it in the
job's cgroup or it carries that marker.

Logs are files the owner writes and the controller reads: each is opened with
O_NOFOLLOW and read only when it is a regular file of the job's account, so
a link planted among them cannot make the controller read another file.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from ..core.errors import NotFound
from . import local_vfio as vfio
from .base import BackendError, TrainingSpec, TrainingStatus
from .local_files import Refused, own_folder
from .local_limits import Limiter, pick_cpus

MARKER = "CGU_LAB_TRAINING"
LOG_BYTES = 256 * 1024  # read at most this much of a log's end
ROOT_CAUSE = re.compile(r"Root Cause.*?rank\s*:\s*(\d+).*?exitcode\s*:\s*(-?\d+)", re.S)


def job_key(owner: str, name: str) -> str:
    """A short, plain, collision-free stand-in for (owner, job name) in host-wide names."""
    return hashlib.sha256(f"{owner}\0{name}".encode()).hexdigest()[:16]


def replica_name(rank: int) -> str:
    return "master" if rank == 0 else f"worker {rank - 1}"


def torchrun_argv(python: Path, replicas: int, log_dir: Path, command: tuple[str, ...]) -> list:
    """One node, `replicas` processes, each rank's output in its own files under `log_dir`."""
    return [
        str(python),
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc-per-node",
        str(replicas),
        "--log-dir",
        str(log_dir),
        "--redirects",
        "3",
        "--no-python",
        *command,
    ]


def read_tail(path: Path, uid: int | None, size: int = LOG_BYTES) -> str:
    """The end of a log the job's account wrote; "" when it is not a plain file of that account."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with open(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or (uid is not None and info.st_uid != uid):
            return ""
        handle.seek(max(0, info.st_size - size))
        return handle.read().decode(errors="replace")


def last_lines(text: str, count: int) -> str:
    lines = text.splitlines()
    return "\n".join(lines[-count:]) if count > 0 else ""


class LocalTraining:
    """Starts, watches, reads and stops the training jobs of one installation."""

    def __init__(
        self, root: Path, accounts, limiter: Limiter, instance, network: str = "private"
    ) -> None:
        self.root = root  # <data>/training
        self.accounts = accounts
        self.limiter = limiter
        self.network = network  # "private" or "host" (Settings.training_network)
        self._instance = instance  # called: the id is known once the backend is open
        self._cleaned: set[str] = set()  # ended jobs whose processes and cgroups are gone

    @property
    def instance(self) -> str:
        return self._instance()

    def folder(self, owner: str, name: str) -> Path:
        return self.root / owner / name

    @property
    def private_network(self) -> bool:
        """A loopback of each job's own (local_launch.private_network): needs root, which
        the per-user mode has; as ourselves, every notebook is one account anyway."""
        return self.network == "private" and self.accounts.mode == "per-user"

    def network_sentence(self) -> str:
        """What a job's code can reach, said on the training page."""
        if self.private_network:
            return (
                "Its ranks talk over a private loopback no one else can reach, and it has "
                "no other network: download data sets in a notebook first."
            )
        return "It runs on this machine's network, where other users can reach its ranks' ports."

    def marker(self, key: str) -> str:
        return f"{self.instance}/{key}"

    # -- cgroups (beside the notebooks' ones, named job-<key>) -------------------------

    def cgroups(self, key: str) -> list[Path]:
        return self.limiter.group_dirs(f"job-{key}")

    def _limits(
        self,
        key: str,
        cpu_milli: int,
        memory: int,
        per_process: int,
        replicas: int = 1,
        reader_gid: int | None = None,
    ) -> dict:
        """The launcher's share of the plan: join the job's cgroups, or rlimits without them.

        Its task ceiling is a notebook's per rank, as its CPU and memory are; the job's
        account may read its groups (its CPU quota, by which joblib sizes its workers)."""
        if self.limiter.mode == "rlimit":
            return {"rlimit_data": per_process, "cpus": pick_cpus(cpu_milli, [])}
        dirs = self.limiter.make(
            f"job-{key}", cpu_milli, memory, self.limiter.pids * replicas, reader_gid=reader_gid
        )
        return {"cgroup_procs": self.limiter.procs_files(dirs)}

    def _remove_cgroups(self, key: str) -> None:
        self.limiter.drop(f"job-{key}")

    def processes(self, key: str) -> list[psutil.Process]:
        """Every process of the job: in its cgroups (as the kernel says now) or marked."""
        found: dict[int, psutil.Process] = {}
        suffix = f"/cgu-lab/{self.instance}/job-{key}"
        for directory in self.cgroups(key):
            with contextlib.suppress(OSError):
                for line in (directory / "cgroup.procs").read_text().split():
                    with contextlib.suppress(psutil.Error, OSError):
                        process = psutil.Process(int(line))
                        text = Path(f"/proc/{process.pid}/cgroup").read_text()
                        if any(row.endswith(suffix) for row in text.splitlines()):
                            found[process.pid] = process
        marker = self.marker(key)
        for process in psutil.process_iter():
            with contextlib.suppress(psutil.Error, OSError):
                if process.pid not in found and process.environ().get(MARKER) == marker:
                    found[process.pid] = process
        return list(found.values())

    # -- submit ------------------------------------------------------------------------

    async def submit(self, job: TrainingSpec) -> dict[str, Any]:
        if not job.local_prefix:
            raise BackendError(
                f"environment '{job.image}' has no Python environment on this machine; "
                "choose one built here (e.g. from the PyTorch recipe)"
            )
        vfio.refuse_for_processes(job.devices)
        python = Path(job.local_prefix) / "bin" / "python"
        if not python.exists():
            raise BackendError(f"environment '{job.image}' has no Python ({python} is missing)")
        account = await self.accounts.account(job.owner)
        key = job_key(job.owner, job.name)
        folder = self.folder(job.owner, job.name)
        await self.delete(job.owner, job.name)  # a leftover of an earlier job of that name
        self._cleaned.discard(key)
        try:
            await asyncio.to_thread(self._prepare, folder, account.uid, account.gid)
        except Refused as error:
            raise BackendError(str(error)) from None
        try:
            return await self._start(job, key, folder, python, account)
        except BaseException:
            # Nothing half-done stays: no process, no cgroup, no folder.
            await self.delete(job.owner, job.name)
            raise

    async def _start(self, job: TrainingSpec, key: str, folder: Path, python: Path, account):
        replicas = job.workers + 1
        limits = await asyncio.to_thread(
            self._limits,
            key,
            job.cpu_milli * replicas,
            job.memory * replicas,
            job.memory,
            replicas,
            account.gid,
        )
        env = {
            "PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(folder / "home"),
            "USER": account.name,
            "LOGNAME": account.name,
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "PYTHONUNBUFFERED": "1",  # each line reaches the page as it is printed
            # One node: ranks meet on loopback, never on the host's other networks
            # (and in a private network, the loopback is all there is).
            "GLOO_SOCKET_IFNAME": "lo",
            "NCCL_SOCKET_IFNAME": "lo",
            "CUDA_VISIBLE_DEVICES": ",".join(job.devices),
            "CGU_TRAINING_OWNER": job.owner,
            "CGU_TRAINING_NAME": job.name,
            **dict(job.device_env),
            **dict(job.env),
            MARKER: self.marker(key),
        }
        launch = {
            "argv": torchrun_argv(python, replicas, folder / "ranks", job.command),
            "env": env,
            "cwd": str(folder / "home"),
            "uid": account.uid,
            "gid": account.gid,
            "private_network": self.private_network,
            **limits,
        }
        plan = {
            "launch": launch,
            "result": str(folder / "result.json"),
            "log": str(folder / "job.log"),
            "cgroups": [str(directory) for directory in self.cgroups(key)]
            if self.limiter.mode != "rlimit"
            else [],
            "grace": 5,
        }
        pid = await self._start_watcher(plan, key)
        try:
            started = psutil.Process(pid).create_time()
        except psutil.NoSuchProcess:
            started = 0.0  # already over: result.json says how it ended
        record = {
            "pid": pid,
            "create_time": started,
            "key": key,
            "uid": account.uid,
            "replicas": replicas,
            "devices": list(job.devices),
            "started_at": time.time(),
        }
        await asyncio.to_thread(self._write_record, folder / "job.json", record)
        return {"key": key, "pid": pid, "replicas": replicas}

    def _prepare(self, folder: Path, uid: int | None, gid: int | None) -> None:
        own_folder(self.root, 0o711)
        own_folder(folder.parent, 0o711)
        own_folder(folder, 0o711)  # the owner reaches ranks/ and home/, lists nothing
        own_folder(folder / "ranks", 0o700, uid, gid)
        own_folder(folder / "home", 0o700, uid, gid)

    @staticmethod
    def _write_record(path: Path, record: dict) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with open(fd, "w") as handle:
            json.dump(record, handle)

    async def _start_watcher(self, plan: dict, key: str) -> int:
        """Start the job's watcher, detached from the controller; its pid."""
        starter = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "cgu_lab.backends.local_training_supervisor",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, MARKER: self.marker(key)},
            start_new_session=True,
        )
        said, _ = await starter.communicate(json.dumps(plan).encode())
        try:
            return int(said.decode().strip())
        except ValueError:
            raise BackendError(f"the job's watcher did not start: {said[:200]!r}") from None

    # -- what the controller reads -----------------------------------------------------

    @staticmethod
    def _load(path: Path) -> dict | None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with open(fd) as handle:
                return json.load(handle)
        except (OSError, ValueError):
            return None

    def _watcher(self, record: dict) -> psutil.Process | None:
        """The recorded watcher, unless its pid now names another program."""
        try:
            process = psutil.Process(record["pid"])
            if abs(process.create_time() - record["create_time"]) > 0.01:
                return None
            if process.environ().get(MARKER) != self.marker(record["key"]):
                return None
            return process
        except (psutil.Error, OSError, KeyError, TypeError):
            return None

    async def status(self, owner: str, name: str) -> TrainingStatus:
        return await asyncio.to_thread(self._status, owner, name)

    def _status(self, owner: str, name: str) -> TrainingStatus:
        folder = self.folder(owner, name)
        record = self._load(folder / "job.json")
        if record is None:
            return TrainingStatus("Failed", "this machine has no record of the job any more")
        replicas = int(record.get("replicas", 1))
        result = self._load(folder / "result.json")
        if result is None and self._watcher(record) is not None:
            active = {"Master": {"active": 1}}
            if replicas > 1:
                active["Worker"] = {"active": replicas - 1}
            return TrainingStatus(
                "Running",
                f"{replicas} processes on this machine",
                active,
                tuple(record.get("devices", ())),
            )
        result = result or self._load(folder / "result.json")  # it may have just ended
        self._clean(record["key"])
        counts = {"Master": 1, "Worker": replicas - 1}
        if result is None:
            return TrainingStatus(
                "Failed",
                "the job's processes ended while the controller was not watching "
                "(the machine or its watcher stopped), so how it ended is unknown",
                self._replicas(counts, "failed"),
            )
        if result.get("stopped"):
            return TrainingStatus("Failed", "the job was stopped", self._replicas(counts, "failed"))
        if result.get("exit_code") == 0:
            return TrainingStatus(
                "Succeeded",
                f"all {replicas} processes finished",
                self._replicas(counts, "succeeded"),
            )
        return TrainingStatus(
            "Failed", self._failure(folder, record), self._replicas(counts, "failed")
        )

    @staticmethod
    def _replicas(counts: dict[str, int], key: str) -> dict[str, dict[str, int]]:
        return {kind: {key: n} for kind, n in counts.items() if n}

    def _failure(self, folder: Path, record: dict) -> str:
        """Which rank failed first and the last line it printed to stderr (its error)."""
        summary = read_tail(folder / "job.log", None)
        found = ROOT_CAUSE.search(summary)
        if found is None:
            lines = [line for line in summary.splitlines() if line.strip()]
            return f"torchrun failed: {lines[-1] if lines else 'it printed nothing'}"[:1000]
        rank, code = int(found.group(1)), int(found.group(2))
        error = self._rank_text(folder, record, rank, "stderr")
        lines = [line.strip() for line in error.splitlines() if line.strip()]
        said = f": {lines[-1]}" if lines else ""
        return f"the {replica_name(rank)} (rank {rank}) exited with code {code}{said}"[:1000]

    def _rank_text(self, folder: Path, record: dict, rank: int, stream: str) -> str:
        """What one rank wrote to one stream, in torchrun's newest attempt."""
        ranks = folder / "ranks"
        found = sorted(
            ranks.glob(f"*/attempt_*/{rank}/{stream}.log"),
            key=lambda p: (p.parent.parent.name, p.stat().st_mtime if p.exists() else 0),
        )
        return read_tail(found[-1], record.get("uid")) if found else ""

    async def logs(self, owner: str, name: str, replica: str, index: int, lines: int) -> str:
        return await asyncio.to_thread(self._logs, owner, name, replica, index, lines)

    def _logs(self, owner: str, name: str, replica: str, index: int, lines: int) -> str:
        folder = self.folder(owner, name)
        record = self._load(folder / "job.json")
        if record is None:
            return ""
        rank = 0 if replica == "master" else index + 1
        replicas = int(record.get("replicas", 1))
        if rank >= replicas:
            raise NotFound(
                f"training job '{name}' has {replicas - 1} workers (numbered from 0); "
                f"there is no {replica_name(rank)}"
            )
        out = self._rank_text(folder, record, rank, "stdout")
        err = self._rank_text(folder, record, rank, "stderr")
        text = out + (f"\n--- stderr ---\n{err}" if err.strip() else "")
        return last_lines(text, lines)

    # -- stop and clean up -------------------------------------------------------------

    async def delete(self, owner: str, name: str) -> None:
        """Stop the job (torchrun first, then whatever is left) and remove all of it."""
        folder = self.folder(owner, name)
        record = await asyncio.to_thread(self._load, folder / "job.json")
        key = job_key(owner, name)
        if record is not None:
            watcher = self._watcher(record)
            if watcher is not None:
                with contextlib.suppress(psutil.Error):
                    watcher.send_signal(signal.SIGTERM)
                await asyncio.to_thread(self._wait_watcher, record, 10)
        self._cleaned.discard(key)
        await asyncio.to_thread(self._clean, key)
        await asyncio.to_thread(shutil.rmtree, folder, True)

    def _wait_watcher(self, record: dict, timeout: float) -> None:
        """Until the watcher is gone; not psutil.wait_procs, since it is not our child
        and a zombie counts as gone (init may reap it late)."""
        deadline = time.monotonic() + timeout
        while self._watcher(record) is not None and time.monotonic() < deadline:
            time.sleep(0.1)

    def _clean(self, key: str) -> None:
        """Kill whatever of the job is left and remove its cgroups (once per ended job)."""
        if key in self._cleaned:
            return
        for _ in range(3):
            left = self.processes(key)
            if not left:
                break
            for process in left:
                with contextlib.suppress(psutil.Error):
                    process.kill()
            psutil.wait_procs(left, 5)
        self._remove_cgroups(key)
        self._cleaned.add(key)

"""Where competition entries are scored: a sandboxed child process on this machine.

Each scoring is one run of `competition_sandbox_child` as this installation's scorer
account, with:
- no network: a network namespace of its own (`unshare --net`), holding only a
  loopback interface that is down, so neither the controller, a notebook nor the
  internet can be reached;
- limits (`prlimit`): address space (`memory_limit`), CPU seconds, file size,
  open files and processes; the wall clock is the controller's, which kills
  the process group when the time is up;
- no right to read anything: the hidden solution, the predictions and the
  teacher's script are opened here, by the controller, and handed over as file
  descriptors. The data directory stays the controller's alone (0700), so the
  scorer (or a teacher's script inside it) cannot read other competitions'
  solutions, students' homes or the database.

The account: `cgs-<installation tag>-scorer`, one per installation (the tag as
in local_accounts.py, so two installations on a host never share it; the `cgs-`
prefix can never be a user's `cgu-` account). It is made on first need when the
controller runs as root. Without root there are no accounts to switch to: the
child then runs as the controller's own account in a user and network
namespace (`unshare --user --net`), which still keeps the network away but not
the controller's files; `describe()` says which applies.

Why rlimits and not cgroups for a scoring: scorings are short and many and run
no student code (a predictions file is data; a teacher's script is the staff's);
RLIMIT_AS bounds each process of the sandbox (the child and a teacher's script
separately, which the process limit keeps to a few).

A code competition's run is a student's code, so it gets more (`confined()`):
a cgroup of its own, `cgu-lab/<installation id>/run-<token>`, made by the same
Limiter as notebooks' (local_limits.py), with a memory ceiling for all its
processes together, a task ceiling and a CPU quota. RLIMIT_AS alone was per
process: an entry that forked 4 children touching 1 GiB each held 4 GiB under
a 2 GiB limit, and a fork bomb loaded a 2-core host to 33. At the run's end,
or when its time is up, every process in the cgroup is killed and the cgroup
removed, so nothing of a run outlives it. Without writable cgroups (not root)
runs keep the rlimits alone, and `describe()` says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import pwd
import shutil
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from .base import BackendError
from .local_accounts import create_system_account, installation_tag
from .local_limits import Limiter

MAX_OUTPUT = 1_000_000
MAX_FILE = 64 * 2**20
MAX_FILES = 64
MAX_PROCESSES = 16
# One run's cgroup: tasks (processes and threads) and CPU. A run's own driver and kernel
# use about 25 tasks; the scorer account's RLIMIT_NPROC (MAX_PROCESSES * 8) is shared by
# every scoring at once, so it alone let one entry take them all. One core: two runs at
# once (PARALLEL_SCORINGS) leave the controller and the notebooks the rest of the host.
RUN_PIDS = 64
RUN_CPU_MILLI = 1000


def scorer_name(instance: str) -> str:
    return f"cgs-{installation_tag(instance)}-scorer"


def scorer_comment(instance: str) -> str:
    return f"cgu-lab {instance} competition scorer"


@dataclass
class Confinement:
    """One run's cgroup: `prefix` starts a program inside it; `end()` kills it all."""

    limiter: Limiter
    name: str
    prefix: list[str] = field(default_factory=list)
    oom_kills: int = 0

    def end(self) -> int:
        """Kill every process of the run, count the kernel's memory kills, remove the
        cgroup (waiting a moment for the killed to leave it); the kills, again later."""
        if self.name:
            self.limiter.kill(self.name)
            self.oom_kills = max(self.oom_kills, self.limiter.oom_kills(self.name))
            self.limiter.drop(self.name, wait=5)
        return self.oom_kills


@dataclass(frozen=True)
class Sandboxed:
    """What one scoring gave: the child's answer (or None) and its output for the teacher."""

    answer: dict | None
    log: str
    timed_out: bool = False


class ScorerSandbox:
    def __init__(
        self,
        instance: Callable[[], str] | str,
        separate: bool | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        """`separate`: use a scorer account (default: when the controller is root).
        `limiter`: makes the runs' cgroups (none: runs have rlimits only)."""
        self._instance = instance
        self.separate = os.geteuid() == 0 if separate is None else separate
        self.limiter = limiter if limiter is not None else Limiter(enabled=False)
        self._lock = asyncio.Lock()
        self._account: tuple[int, int] | None = None
        self._swept = False

    @property
    def instance(self) -> str:
        return self._instance() if callable(self._instance) else self._instance

    def describe(self) -> dict:
        return {
            "account": scorer_name(self.instance) if self.separate else "the controller's own",
            "network": "none (a network namespace of its own)",
            "limits": "rlimits: address space, CPU seconds, file size, open files, processes",
            "notebook_runs": (
                f"a cgroup per run ({self.limiter.mode}): memory of all its processes "
                f"together, {RUN_PIDS} tasks, {RUN_CPU_MILLI / 1000:g} CPU; killed whole"
                if self.limiter.mode != "rlimit"
                else "rlimits only (no writable cgroups): memory is limited per process"
            ),
        }

    @contextlib.asynccontextmanager
    async def confined(self, memory: int) -> AsyncIterator[Confinement]:
        """A cgroup of one run's own for the body (memory, RUN_PIDS, RUN_CPU_MILLI); at
        its end every process in it is killed and it is removed, whatever happened."""
        if self.limiter.mode == "rlimit":
            yield Confinement(self.limiter, "")
            return
        instance = self.instance
        if not instance:
            raise BackendError("the local backend is not open yet (no installation id)")
        if self.limiter.tag != instance:
            self.limiter.bind(instance)
        if not self._swept:  # runs of an earlier controller of this installation
            self._swept = True
            for stale in self.limiter.groups("run"):
                await asyncio.to_thread(Confinement(self.limiter, stale).end)
        name = f"run-{uuid.uuid4().hex[:16]}"
        # The run may read its own limits (joblib sizes its workers by the CPU quota).
        reader = (await self.account())[1] if self.separate else None
        dirs = await asyncio.to_thread(
            self.limiter.make, name, RUN_CPU_MILLI, memory, RUN_PIDS, reader_gid=reader
        )
        run = Confinement(self.limiter, name, Limiter.join_command(dirs))
        try:
            yield run
        finally:
            await asyncio.to_thread(run.end)

    async def account(self) -> tuple[int, int]:
        """The scorer account's (uid, gid), made on first need."""
        async with self._lock:
            if self._account is not None:
                return self._account
            instance = self.instance
            if not instance:
                raise BackendError("the local backend is not open yet (no installation id)")
            name, comment = scorer_name(instance), scorer_comment(instance)
            try:
                entry = pwd.getpwnam(name)
            except KeyError:
                try:
                    await create_system_account(name, comment)
                except OSError as error:
                    raise BackendError(f"could not create the scorer account: {error}") from None
                entry = pwd.getpwnam(name)
            if entry.pw_gecos != comment:
                raise BackendError(
                    f"the system account '{name}' exists but is not this installation's "
                    "scorer; ask an administrator"
                )
            self._account = (entry.pw_uid, entry.pw_gid)
            return self._account

    async def command(self, memory_limit: int, time_limit: float) -> list[str]:
        limits = [
            shutil.which("prlimit") or "/usr/bin/prlimit",
            f"--as={memory_limit}",
            f"--cpu={max(1, math.ceil(time_limit))}",
            f"--fsize={MAX_FILE}",
            f"--nofile={MAX_FILES}",
            "--core=0",
        ]
        unshare = [shutil.which("unshare") or "/usr/bin/unshare"]
        if self.separate:
            uid, gid = await self.account()
            # Processes are counted per account: the scorer's own, so the limit is
            # shared by every scoring running at once.
            limits.append(f"--nproc={MAX_PROCESSES * 8}")
            unshare += ["--net", f"--setgid={gid}", f"--setuid={uid}"]
        else:
            unshare += ["--user", "--net"]
        return [
            *limits,
            "--",
            *unshare,
            "--",
            sys.executable,
            "-I",
            "-m",
            __package__ + ".competition_sandbox_child",
        ]

    async def run(
        self,
        job: dict,
        solution: Path,
        predictions: Path,
        script: Path | None,
        time_limit: float,
        memory_limit: int,
    ) -> Sandboxed:
        """Score one entry; never raises for what happens inside the sandbox."""
        command = await self.command(memory_limit, time_limit)
        process = await self._spawn(command, job, solution, predictions, script, time_limit)
        exchanged = await _exchange(process, job, time_limit * 2 + 10)
        if exchanged is None:
            return Sandboxed(None, f"killed after {time_limit * 2 + 10:.0f} s", timed_out=True)
        out, err = exchanged
        return _outcome(process.returncode, out, err)

    async def _spawn(
        self,
        command: list[str],
        job: dict,
        solution: Path,
        predictions: Path,
        script: Path | None,
        time_limit: float,
    ) -> asyncio.subprocess.Process:
        """The sandboxed child, handed the files it may read as descriptors (listed in `job`)."""
        opened: list[int] = []
        try:
            for key, path in (
                ("solution_fd", solution),
                ("predictions_fd", predictions),
                ("script_fd", script),
            ):
                if path is not None:
                    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
                    opened.append(fd)
                    job[key] = fd
            job["time_limit"] = time_limit
            # Its scratch folder in /tmp is named for the installation, as host-wide names are.
            job["tag"] = installation_tag(self.instance)
            return await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=opened,
                cwd="/",
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp"},  # noqa: S108 - the sandbox's own private mkdtemp,
                start_new_session=True,
            )
        finally:
            for fd in opened:
                os.close(fd)


def _outcome(returncode: int, out: bytes, err: bytes) -> Sandboxed:
    """The scoring's answer from the child's exit and output, with its stderr as the log."""
    log = err.decode(errors="replace")
    if returncode != 0:
        reason = f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"
        return Sandboxed(None, f"the scorer ended with {reason}\n{log}")
    try:
        answer = json.loads(out)
    except ValueError:
        return Sandboxed(None, f"the scorer's answer is not JSON\n{log}")
    return Sandboxed(answer if isinstance(answer, dict) else None, log)


async def _exchange(
    process: asyncio.subprocess.Process, job: dict, timeout: float
) -> tuple[bytes, bytes] | None:
    """Send the job, then read the answer and the log; None when `timeout` ran out.

    The wall clock is the controller's: at its end the whole process group is killed.
    """
    process.stdin.write(json.dumps(job).encode())
    process.stdin.close()
    reading = asyncio.gather(_capped(process.stdout), _capped(process.stderr), process.wait())
    try:
        out, err, _ = await asyncio.wait_for(reading, timeout)
    except asyncio.TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        return None
    return out, err


async def _capped(stream: asyncio.StreamReader) -> bytes:
    """Read a stream to its end, keeping at most MAX_OUTPUT bytes."""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < MAX_OUTPUT:
            kept += chunk[: MAX_OUTPUT - len(kept)]
    return bytes(kept)

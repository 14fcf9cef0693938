"""Running a code competition's notebook on the hidden inputs, in the scorer's sandbox.

One run is one `competition_notebook_child` under the same account and rlimits as a
scoring (backends/competition_sandbox.py), in a cgroup of its own (memory of all its
processes together, tasks, CPU; `ScorerSandbox.confined`), and in network, PID
and mount namespaces of its own (why each, and why the kernel talks over Unix
sockets, is in the child's docstring). When the kernel killed a process of the
run for the cgroup's memory ceiling, the run failed for memory, even if the
notebook went on (a child killed under it) and wrote predictions. The
controller opens the notebook and the hidden inputs for reading and the
predictions file for writing and hands over the descriptors;
the solution is never part of a run: the predictions come back to the
controller and are scored afterwards by a separate scoring, exactly as an
uploaded predictions file (so nothing the student's code does can reach the
labels, not even through /proc of a scorer holding them).

What the student learns of a failed run (`student_message`): the cell and the
exception's type name, the limit that was hit, or that no predictions file was
written. Never the exception's message, stdout or stderr, which could print
the hidden inputs. Even the type name is the student's to choose
(`raise type(row, (Exception,), {})()`), so only the names of Python's own
exceptions are repeated; any other class is named to the staff only.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import math
import os
import shutil
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .competition_sandbox import MAX_FILE, MAX_FILES, MAX_PROCESSES, ScorerSandbox, _exchange

TMP_FLOOR = 64 * 2**20
# Added to a run's memory ceiling for what is the platform's, not the student's: the run's
# driver (nbclient, jupyter_client) beside the kernel. The copy of the inputs in the run's
# RAM-backed /tmp is added too, at its size.
RUN_OVERHEAD = 192 * 2**20
NOTEBOOK_FILES = 256  # the kernel's sockets, libraries and the student's own files


@dataclass(frozen=True)
class NotebookRun:
    """A run's outcome: `ok` with the predictions written, else `student` and `log`."""

    ok: bool
    student: str
    log: str


def _builtin_exception(name: str) -> bool:
    found = getattr(builtins, name, None)
    return isinstance(found, type) and issubclass(found, BaseException)


def student_message(answer: dict, time_limit: float, memory_limit: int) -> str:
    """The sentence a student reads of a failed run, built from fixed words and numbers."""
    reason = answer.get("reason")
    cell = answer.get("cell")
    where = f"cell {cell}" if isinstance(cell, int) and 0 < cell < 100_000 else "a cell"
    if reason == "time":
        return (
            f"your notebook ran longer than the competition's {time_limit:g} s "
            f"(it was running {where}, counting every cell from 1)"
        )
    if reason == "memory":
        return (
            f"your notebook needed more memory than the competition's "
            f"{memory_limit // 2**20} MiB ({where}, counting every cell from 1, ran out)"
        )
    if reason == "cell":
        name = str(answer.get("ename", ""))
        what = (
            name
            if name.isidentifier() and _builtin_exception(name)
            else "an exception of a class outside Python's builtins (your course's staff "
            "see its name)"
        )
        return (
            f"{where} of your notebook (counting every cell from 1, Markdown ones too) "
            f"raised {what}; its message and output are not shown, since they could "
            "print the hidden inputs. Run it on the training set to find out why"
        )
    if reason == "no_output":
        return (
            "your notebook ran to its end but wrote no predictions file: write a CSV to the "
            "path in the environment variable CGU_COMPETITION_OUTPUT"
        )
    if reason == "too_large":
        return "your notebook wrote a predictions file larger than the competition allows"
    if reason == "kernel":
        return (
            f"your notebook's kernel stopped during {where} (counting every cell from 1); "
            "it may have used more memory than the competition allows"
        )
    return "your notebook could not be run; your course's staff can see why"


# A CPU run's address space in its cgroup, as a multiple of its memory limit (command()).
AS_BACKSTOP = 3


class NotebookRunner:
    def __init__(self, sandbox: ScorerSandbox) -> None:
        self.sandbox = sandbox

    async def command(
        self, memory_limit: int, time_limit: float, per_process: bool = True, gpu: bool = False
    ) -> tuple[list[str], dict]:
        """The run's argv and ids. `per_process`: limit each process's address space to
        `memory_limit` (RLIMIT_AS), for runs without a cgroup of their own. With one, the
        cgroup's ceiling is the limit: address space is not memory (a child forked from a
        kernel inherits its reservations), so RLIMIT_AS refused what the limit allows while
        letting many processes hold it each. A CPU run in a cgroup still gets a generous
        address-space backstop (AS_BACKSTOP times the limit): Linux hands out a huge
        `bytearray(4 GiB)` without charging a page until it is touched, so only the
        address space can refuse it at once with a MemoryError the student can read. A GPU
        run gets none: CUDA reserves far more address space than it ever uses."""
        if per_process:
            space = [f"--as={memory_limit}"]
        elif gpu:
            space = []
        else:
            space = [f"--as={memory_limit * AS_BACKSTOP}"]
        limits = [
            shutil.which("prlimit") or "/usr/bin/prlimit",
            *space,
            # CPU seconds a little over the wall limit: the wall clock inside the run
            # is what reports "time"; this is the backstop for a kernel that spins.
            f"--cpu={max(1, math.ceil(time_limit)) + 10}",
            f"--fsize={MAX_FILE}",
            f"--nofile={max(MAX_FILES, NOTEBOOK_FILES)}",
            "--core=0",
        ]
        unshare = [
            shutil.which("unshare") or "/usr/bin/unshare",
            "--net",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount",
            "--mount-proc",
        ]
        ids: dict = {"uid": None, "gid": None}
        if self.sandbox.separate:
            ids["uid"], ids["gid"] = await self.sandbox.account()
            limits.append(f"--nproc={MAX_PROCESSES * 8}")
        else:
            unshare += ["--user", "--map-root-user"]
        child = [sys.executable, "-I", "-m", __package__ + ".competition_notebook_child"]
        return [*limits, "--", *unshare, "--", *child], ids

    async def run(
        self,
        notebook: Path,
        inputs: Path,
        predictions: Path,
        python: str,
        time_limit: float,
        memory_limit: int,
        max_bytes: int,
        gpu_env: Mapping[str, str] | None = None,
    ) -> NotebookRun:
        """Run one notebook; the predictions land in `predictions` (made 0600 here).

        `gpu_env`: the GPU the run was given (CUDA_VISIBLE_DEVICES...), for its kernel."""
        size = (await asyncio.to_thread(inputs.stat)).st_size
        async with self.sandbox.confined(memory_limit + RUN_OVERHEAD + size) as run:
            command, ids = await self.command(
                memory_limit, time_limit, per_process=not run.name, gpu=bool(gpu_env)
            )
            job = {
                **ids,
                "python": python,
                "time_limit": time_limit,
                "max_bytes": max_bytes,
                "tmp_bytes": max(TMP_FLOOR, size * 2 + max_bytes * 2),
                # /dev/shm is RAM the run's cgroup counts: at most its memory limit.
                "shm_bytes": memory_limit,
                "gpu_env": dict(gpu_env or {}),
            }
            process = await _spawn(run.prefix + command, job, notebook, inputs, predictions)
            # The run's own clock reports "time"; this one ends a run that ignores it
            # (the kernel's start and shutdown included).
            exchanged = await _exchange(process, job, time_limit + 90)
            oom_kills = await asyncio.to_thread(run.end)
        if exchanged is None:
            answer = {"reason": "time"}
            return NotebookRun(False, student_message(answer, time_limit, memory_limit), "killed")
        out, err = exchanged
        return _outcome(process.returncode, out, err, time_limit, memory_limit, oom_kills)


async def _spawn(
    command: list[str], job: dict, notebook: Path, inputs: Path, predictions: Path
) -> asyncio.subprocess.Process:
    """The run's child, handed the notebook, the inputs and the predictions as descriptors."""
    opened: list[int] = []
    try:
        for key, path, flags in (
            ("notebook_fd", notebook, os.O_RDONLY),
            ("inputs_fd", inputs, os.O_RDONLY),
            ("output_fd", predictions, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        ):
            fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            opened.append(fd)
            job[key] = fd
        return await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=opened,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            start_new_session=True,
        )
    finally:
        for fd in opened:
            os.close(fd)


def _outcome(
    returncode: int,
    out: bytes,
    err: bytes,
    time_limit: float,
    memory_limit: int,
    oom_kills: int = 0,
) -> NotebookRun:
    """The run's outcome from the child's answer; without one, from how it ended.

    `oom_kills`: processes of the run the kernel killed for its memory ceiling; any
    makes the run fail for memory, at the cell the answer names if it names one."""
    log = err.decode(errors="replace")
    if oom_kills:
        ended = f"the kernel killed {oom_kills} process(es) of the run for its memory ceiling"
        log = f"{ended}\n{log}"
    try:
        answer = json.loads(out)
        if not isinstance(answer, dict):
            raise ValueError("not an object")
    except ValueError:
        reason = f"exit {returncode}"
        if oom_kills:
            answer = {"reason": "memory"}
        elif returncode == -signal.SIGXCPU or returncode == 128 + 24:
            answer = {"reason": "time"}
        else:
            answer = {"reason": "?"}
        return NotebookRun(
            False,
            student_message(answer, time_limit, memory_limit),
            f"the run ended with {reason} and no answer\n{log}",
        )
    full = "\n".join(part for part in (str(answer.get("log", "")), log) if part)
    if oom_kills:
        answer = {"reason": "memory", "cell": answer.get("cell")}
    elif answer.get("ok") is True:
        return NotebookRun(True, "", full)
    return NotebookRun(False, student_message(answer, time_limit, memory_limit), full)

"""The controller's side of warm launchers (local_warm_launcher): start, use, replace.

One warm launcher per environment's `jupyter-lab`, started by the first start of a
notebook of that environment, which waits for it: its imports cost what an exec'd start's
do, and every later start then costs a fork and the server's own set-up, not the imports
(benchmarks/start_profile.py, issue 25). Starts that arrive while it imports (a class's
burst) wait for it too, rather than each importing the same packages again.

Only where cgroups hold the notebooks: a forked server's /proc/<pid>/environ is the
launcher's, without the notebook's markers, so the cgroup is what tells whose it is
(local_limits.Processes.belongs); in rlimit mode every start is exec'd.

A launcher that died (killed, crashed, or an import that started a thread) or does not
answer costs no start: the request fails before anything runs for it, the start is
exec'd (local_servers.Servers.launch), and the next start begins a new launcher. So
does an environment whose `jupyter-lab` is not a Python script.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import IO

log = logging.getLogger("cgu_lab.local.warm")
# Run by the environment's interpreter as a file, never imported here.
PROGRAM = str(Path(__file__).with_name("local_warm_launcher.py"))
READY_TIMEOUT = 120.0  # its imports, on a busy host
PID_TIMEOUT = 10.0
ROOM = 4096  # bytes of a server's command line; 8 times that of its environment


def interpreter_of(jupyter: Path) -> Path | None:
    """The Python that `jupyter-lab` runs under (its `#!` line), or None: not a Python one."""
    try:
        with jupyter.open("rb") as script:
            first = script.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode(errors="replace").split()
    if len(words) != 1 or "python" not in Path(words[0]).name:
        return None
    program = Path(words[0])
    return program if program.is_file() and os.access(program, os.X_OK) else None


class WarmProcess:
    """A server forked by a warm launcher, as the backend follows its own children:
    `pid`, `returncode` (None while it runs) and `wait()`. Its exit status comes from
    the launcher; should the launcher die first, the end is seen on a pidfd (status -1,
    unknown)."""

    def __init__(self, pid: int, reply: socket.socket) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._reply = reply
        self._task = asyncio.get_running_loop().create_task(self._follow())

    async def _follow(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            data = await loop.sock_recv(self._reply, 256)
        except OSError:
            data = b""
        finally:
            self._reply.close()
        if data:
            self.returncode = int(json.loads(data)["status"])
            return
        try:
            pidfd = os.pidfd_open(self.pid)
        except ProcessLookupError:
            self.returncode = -1
            return
        ended = loop.create_future()
        loop.add_reader(pidfd, lambda: ended.done() or ended.set_result(None))
        try:
            await ended
        finally:
            loop.remove_reader(pidfd)
            os.close(pidfd)
        self.returncode = -1

    async def wait(self) -> int:
        await asyncio.shield(self._task)
        assert self.returncode is not None
        return self.returncode


KNOWN_AT_FORK = {"JUPYTER_CONFIG_DIR", "XDG_RUNTIME_DIR"}


class WarmLauncher:
    """One running warm launcher and the controller's end of its socket pair."""

    def __init__(self, process: asyncio.subprocess.Process, control: socket.socket) -> None:
        self.process = process
        self.control = control

    @property
    def alive(self) -> bool:
        return self.process.returncode is None and self.control.fileno() >= 0

    async def launch(self, plan: dict, log_file: IO[bytes]) -> WarmProcess | None:
        """Fork a server for `plan`; None when the launcher cannot (then nothing ran), or
        when its environment names Jupyter's folders otherwise than an exec'd server's
        (the launcher computed them, at import, from HOME alone)."""
        env = plan["env"]
        home = env.get("HOME", "")
        if not home or env.get("JUPYTER_CONFIG_DIR") != f"{home}/.jupyter":
            return None
        # Paths the launcher's imports computed without them. Not XDG_RUNTIME_DIR: no
        # import reads it (jupyter_core's runtime folder is under its data folder).
        if any(name.startswith(("JUPYTER_", "XDG_")) for name in set(env) - KNOWN_AT_FORK):
            return None
        loop = asyncio.get_running_loop()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        mine.setblocking(False)
        try:
            try:
                socket.send_fds(self.control, [b"start"], [theirs.fileno(), log_file.fileno()])
            finally:
                theirs.close()
            data = await asyncio.wait_for(loop.sock_recv(mine, 256), PID_TIMEOUT)
            if not data:
                raise OSError("the warm launcher ended")
            pid = int(json.loads(data)["pid"])
            # Only now, to the child alone: the plan, with the notebook's secrets.
            await loop.sock_sendall(mine, json.dumps(plan).encode())
        except (OSError, ValueError, KeyError, asyncio.TimeoutError) as error:
            log.warning(
                "warm launcher %s failed a start (%s): exec'ing it", self.process.pid, error
            )
            mine.close()
            self.close()
            return None
        return WarmProcess(pid, mine)

    def close(self) -> None:
        """Closing our end ends the launcher (a stuck one is killed); the servers it
        forked keep running."""
        self.control.close()
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()


class WarmLaunchers:
    """The warm launchers of this controller, one per interpreter of an environment."""

    def __init__(self, logs: Path, outside: Callable[[], list[str]] = list) -> None:
        """`outside`: an argv prefix that starts a launcher out of the controller's own
        CPU group (local_limits.Limiter.outside_platform): its imports are a notebook's
        work and wait their turn like one."""
        self.logs = logs
        self.outside = outside
        self.ready: dict[Path, WarmLauncher] = {}
        self.starting: dict[Path, asyncio.Task] = {}

    async def launcher(self, jupyter: Path) -> WarmLauncher | None:
        """The launcher for this `jupyter-lab`, begun or waited for if need be; None
        when it has none (not a Python script, or its launcher could not start)."""
        python = interpreter_of(jupyter)
        if python is None:
            return None
        current = self.ready.get(jupyter)
        if current is not None and current.alive:
            return current
        self.ready.pop(jupyter, None)
        task = self.starting.get(jupyter)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._begin(jupyter, python))
            self.starting[jupyter] = task
        await asyncio.shield(task)  # a cancelled start leaves it to the next one
        return self.ready.get(jupyter)

    async def _begin(self, jupyter: Path, python: Path) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        mine.setblocking(False)
        process = None
        try:
            self.logs.mkdir(parents=True, exist_ok=True)
            empty = (self.logs / "warm-launcher-home").resolve()
            empty.mkdir(mode=0o700, exist_ok=True)
            with open(self.logs / "warm-launcher.log", "ab") as output:  # noqa: ASYNC230
                process = await asyncio.create_subprocess_exec(
                    *self.outside(),
                    str(python),
                    PROGRAM,
                    str(theirs.fileno()),
                    str(jupyter.parent),
                    "-" * ROOM,  # room for a server's command line (local_warm_launcher)
                    pass_fds=(theirs.fileno(),),
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=output,
                    stderr=output,
                    # Nothing of the controller's: no secrets, no markers (a sweep would
                    # take a marked launcher for a notebook's stray process).
                    env={
                        "PATH": f"{jupyter.parent}:/usr/local/bin:/usr/bin:/bin",
                        # A folder of its own: paths modules compute from HOME at import
                        # start with it, and a forked server moves them to its home
                        # (local_warm_launcher.rebase).
                        "HOME": str(empty),
                        "LANG": os.environ.get("LANG", "C.UTF-8"),
                        "CGU_WARM_ROOM": "-" * (8 * ROOM),  # and for its environment
                    },
                    start_new_session=True,
                    cwd=empty,
                )
            theirs.close()
            loop = asyncio.get_running_loop()
            greeting = await asyncio.wait_for(loop.sock_recv(mine, 16), READY_TIMEOUT)
            if greeting != b"ready":
                raise OSError(f"it ended (exit {await process.wait()})")
            self.ready[jupyter] = WarmLauncher(process, mine)
            log.info("warm launcher %s ready for %s", process.pid, jupyter)
        except (OSError, asyncio.TimeoutError) as error:
            theirs.close()
            mine.close()
            if process is not None and process.returncode is None:
                process.kill()
            log.warning("no warm launcher for %s: %s", jupyter, error)
        finally:
            self.starting.pop(jupyter, None)

    async def close(self) -> None:
        for task in list(self.starting.values()):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        for launcher in self.ready.values():
            launcher.close()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(launcher.process.wait(), 5)
        self.ready.clear()

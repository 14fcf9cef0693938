"""The servers the local backend launches: JupyterLab, or a VM notebook's console server.

Both are started the same way (local_launch, as the notebook's account, inside its limits),
waited for the same way (until they answer the proxy's way), watched and ended the same way
(their whole process tree, by the installation's markers). This object does that and
nothing else; the LocalBackend (JupyterLab's command line, homes, private networks) and
LocalVms (QEMU, disks) each hold it and give it what differs, so neither needs the other.

Processes run in their own session and survive a controller restart; a restarted
controller finds them again through `processes` (local_limits.Processes), which knows this
installation's markers. Our own children are followed in `children`, so a stop waits for
them through the event loop that reaps them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import psutil

from . import local_launch
from .base import BackendError, NotebookSpec, Observation, ProgressCallback
from .local_accounts import Account
from .local_limits import Limiter, Processes
from .local_settings import LocalSettings
from .local_warm import WarmLaunchers, WarmProcess
from .upstream import UNIX, Upstreams, unix_path

USER_HEADER = "X-Cgu-User"
SECRET_HEADER = "X-Cgu-Proxy-Secret"  # noqa: S105 - a header name
LAUNCHER = local_launch.__file__
# Asking a starting server whether it answers: first after POLL_FIRST s, then each time
# POLL_GROWTH times later, at most every POLL_MOST s. A fixed 50 ms made 20 requests a
# second per start (a burst of 30 on a busy host: thousands), each costing the controller
# and the starting server CPU that the starts themselves needed.
POLL_FIRST, POLL_GROWTH, POLL_MOST = 0.05, 1.5, 0.5


def free_port() -> int:
    """A port free right now; a race for it is lost by a failed bind (local.py's notes)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StartQueue:
    """Admission that paces server starts to the cores: at most `slots` at once.

    Why: a JupyterLab start costs seconds of CPU (benchmarks/class_burst.py). Thirty
    launched at once on a small host share the cores thirty ways, so every student waits
    as long as the last one, each half-started server holds its memory meanwhile, and a
    start timed from its launch can run out of time on a busy host. In line, the first
    ones answer after one start's time, the rest follow in order, and the bound the cores
    allow is the same. A start waiting here is not launched yet, so its wait counts
    against no timeout: a busy host makes starts later, never lost. Its place in line is
    reported with the start's progress ("2nd in line for a free core").
    """

    def __init__(self, slots: int) -> None:
        self.slots = max(1, int(slots))
        self.running = 0
        self.waiting: list[asyncio.Future] = []

    def position(self, ticket: asyncio.Future) -> int:
        return self.waiting.index(ticket) + 1 if ticket in self.waiting else 0

    @contextlib.asynccontextmanager
    async def turn(self, progress: ProgressCallback):
        """Hold one of the slots for the body; wait in line (with progress) for it."""
        if self.running < self.slots and not self.waiting:
            self.running += 1
        else:
            ticket = asyncio.get_running_loop().create_future()
            self.waiting.append(ticket)
            reported = 0
            try:
                while not ticket.done():
                    place = self.position(ticket)
                    if place != reported:
                        reported = place
                        await progress(20, f"Waiting for a free core: {ordinal(place)} in line")
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(asyncio.shield(ticket), 1.0)
            except BaseException:
                if ticket in self.waiting:
                    self.waiting.remove(ticket)
                elif ticket.done() and not ticket.cancelled():
                    self._release()  # handed a slot while being cancelled: pass it on
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        """Hand the slot to the first in line, or free it."""
        while self.waiting:
            ticket = self.waiting.pop(0)
            if not ticket.done():
                ticket.set_result(None)
                return
        self.running -= 1


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def log_tail(path: Path, lines: int = 5) -> str:
    """The last lines of a server's log, on one line, for a message."""
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:])


class Servers:
    """Launch, wait for, observe and end this installation's notebook servers."""

    def __init__(self, settings: LocalSettings, logs: Path, limiter: Limiter) -> None:
        self.settings = settings  # start_timeout, stop_timeout, parallel_starts
        self.logs = logs
        self.limiter = limiter
        self.instance = ""
        self.processes = Processes("", limiter)
        self.children: dict[int, asyncio.subprocess.Process | WarmProcess] = {}
        self.cpus: dict[int, list[int]] = {}
        # Starts in parallel: the setting, else one per core this process may use.
        slots = settings.parallel_starts or len(os.sched_getaffinity(0))
        self.queue = StartQueue(slots)
        # Liveness checks ask each server's status over its port or socket, briefly.
        self.http = Upstreams(lambda: {"timeout": aiohttp.ClientTimeout(total=2)}, keepalive=15)
        # JupyterLab forked from a pre-imported launcher per environment (local_warm).
        self.warm = WarmLaunchers(logs, limiter.outside_platform)

    def bind(self, instance: str) -> None:
        """This installation's identity, known once the backend opens."""
        self.instance = instance
        self.processes = Processes(instance, self.limiter)

    async def close(self) -> None:
        await self.http.close()
        await self.warm.close()

    def log_path(self, owner: str, name: str) -> Path:
        return self.logs / owner / f"{name}.log"

    def busy_cpus(self) -> list[int]:
        """The cores running servers are pinned to, one entry per server on a core."""
        return [cpu for cpus in self.cpus.values() for cpu in cpus]

    @staticmethod
    def endpoint(state: Mapping[str, Any]) -> str:
        """Where the proxy reaches a server: its Unix socket, or its loopback port."""
        if state.get("socket"):
            return UNIX + str(state["socket"])
        return f"http://127.0.0.1:{state['port']}"

    # -- start -------------------------------------------------------------------

    async def launch(
        self, plan: dict, log_path: Path, notebook_id: int, warm: Path | None = None
    ) -> asyncio.subprocess.Process | WarmProcess:
        """Start `plan` through the launcher; a JupyterLab (`warm`: its `jupyter-lab`) is
        forked by that environment's warm launcher (begun, or waited for while it imports)
        where cgroups tell whose the server is (local_warm), else exec'd as below."""
        if warm is not None and self.settings.warm_starts and self.limiter.mode != "rlimit":
            launcher = await self.warm.launcher(warm)
            if launcher is not None:
                log = await asyncio.to_thread(open, log_path, "ab")
                with log:
                    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
                    log.write(f"\n--- starting at {stamp} (warm launcher) ---\n".encode())
                    log.flush()
                    forked = await launcher.launch(plan, log)
                if forked is not None:
                    return forked
        # The launcher carries the marker from its first instruction, so a stop
        # that comes before it has exec'd the server still recognises it.
        env = {**os.environ, "CGU_LAB_INSTANCE": self.instance, "CGU_NOTEBOOK_ID": str(notebook_id)}
        log = await asyncio.to_thread(open, log_path, "ab")
        with log:
            log.write(f"\n--- starting at {time.strftime('%Y-%m-%d %H:%M:%S')} ---\n".encode())
            log.flush()
            # The launcher as a file, isolated (-I) and without site (-S): it needs only
            # the standard library, and `-m` imported the package and its base module
            # first (3x the CPU of the launcher itself, benchmarks/start_profile.py).
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-S",
                LAUNCHER,
                stdin=asyncio.subprocess.PIPE,
                stdout=log,
                stderr=log,
                env=env,
                start_new_session=True,
            )
        assert process.stdin is not None
        process.stdin.write(json.dumps(plan).encode())
        process.stdin.close()
        return process

    def launched(
        self,
        notebook_id: int,
        process: asyncio.subprocess.Process | WarmProcess,
        port: int | None,
        account: Account,
        limits: dict[str, Any],
    ) -> dict[str, Any]:
        """The state of a server the launcher started (JupyterLab, or a VM's console):
        what the liveness watch, stop and the limiter read of it. Its child is followed
        from now on."""
        self.children[notebook_id] = process
        return {
            "pid": process.pid,
            "create_time": psutil.Process(process.pid).create_time(),
            "port": port,
            "uid": account.uid,
            "account": account.name,
            "cgroups": limits.get("cgroups", []),
            "cpus": limits.get("cpus", []),
            "enforcement": self.limiter.describe().cpu,
        }

    async def wait_ready(
        self,
        spec: NotebookSpec,
        state: dict,
        process: asyncio.subprocess.Process,
        progress: ProgressCallback,
        server: str = "JupyterLab",
        waiting: Callable[[int], str] = lambda waited: f"Waiting for JupyterLab ({waited} s)",
        answered: str = "JupyterLab is answering",
        ready: Callable[[], bool] = lambda: True,
    ) -> None:
        """Until the server answers the proxy's way (and `ready` holds), with a progress
        line each second; its exit or the start timeout fails with its log's last lines.
        VM notebooks wait here too, for their console server."""
        log_path = self.log_path(spec.owner, spec.name)
        deadline = time.monotonic() + self.settings.start_timeout
        started = time.monotonic()
        reported = 0
        pause = POLL_FIRST
        sock = state.get("socket")
        while time.monotonic() < deadline:
            if process.returncode is not None:
                tail = log_tail(log_path)
                raise BackendError(f"{server} exited with code {process.returncode}: {tail}")
            # A server on a Unix socket cannot answer before the socket exists (a stat).
            listening = not sock or os.path.exists(sock)  # noqa: ASYNC240 - one stat
            if listening and ready() and await self.answers(spec, state):
                await progress(95, answered)
                return
            waited = int(time.monotonic() - started)
            if waited > reported:
                reported = waited
                await progress(min(90, 30 + waited * 10), waiting(waited))
            await asyncio.sleep(pause)
            pause = min(POLL_MOST, pause * POLL_GROWTH)
        raise BackendError(
            f"{server} did not answer within {self.settings.start_timeout:.0f} s; "
            f"last lines of its log: {log_tail(log_path)}"
        )

    async def answers(self, spec: NotebookSpec, state: Mapping[str, Any]) -> bool:
        client, base = self.http.client(self.endpoint(state))
        url = f"{base}{spec.base_path}api/status"
        headers = {USER_HEADER: spec.owner, SECRET_HEADER: spec.proxy_secret}
        try:
            async with client.get(url, headers=headers) as response:
                return response.status == 200
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
            return False

    # -- observe and end -----------------------------------------------------------

    async def observe(self, spec: NotebookSpec, state: Mapping[str, Any]) -> Observation:
        server = self.processes.server(state, spec.id)
        if server is None:
            return Observation(alive=False, detail="its server process is gone")
        if not self.processes.listens(server, state.get("port"), unix_path(self.endpoint(state))):
            return Observation(alive=True, ready=False, detail="its server left its port")
        if not await self.answers(spec, state):
            return Observation(alive=True, ready=False, detail="its server does not answer")
        self.cpus[spec.id] = list(state.get("cpus", []))
        return Observation(alive=True, ready=True)

    async def end(self, notebook_id: int, state: Mapping[str, Any]) -> None:
        """Stop a server and everything it started; give back its cores and cgroups."""
        tree = await asyncio.to_thread(self.processes.tree, state, notebook_id)
        root = self.processes.server(state, notebook_id)
        child = self.children.pop(notebook_id, None)
        if root is not None:
            with contextlib.suppress(psutil.NoSuchProcess):
                root.send_signal(signal.SIGTERM)  # JupyterLab shuts its kernels down
            await self._wait_server(root, child, self.settings.stop_timeout)
        # Kernels run in sessions of their own; make sure nothing outlives the server.
        again = await asyncio.to_thread(self.processes.tree, state, notebook_id)
        others = {p.pid: p for p in tree + again if root is None or p.pid != root.pid}
        leftovers = [p for p in others.values() if p.is_running()]
        for process in leftovers:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        await asyncio.to_thread(psutil.wait_procs, leftovers, 5)
        if root is not None and root.is_running() and root.status() != psutil.STATUS_ZOMBIE:
            with contextlib.suppress(psutil.NoSuchProcess):
                root.kill()
            await self._wait_server(root, child, 5)
        self.cpus.pop(notebook_id, None)
        await asyncio.to_thread(self.limiter.remove, notebook_id)

    async def wait_exit(self, notebook_id: int, server: psutil.Process, timeout: float) -> None:
        """Wait up to `timeout` for a server to end by itself (a VM powering off)."""
        await self._wait_server(server, self.children.get(notebook_id), timeout)

    @staticmethod
    async def _wait_server(
        root: psutil.Process, child: asyncio.subprocess.Process | WarmProcess | None, timeout: float
    ) -> None:
        """Wait for the server to exit. Our own child is reaped by the event loop, so
        it is waited for through asyncio; calling waitpid on it would race the loop."""
        if child is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(child.wait(), timeout)
            return
        await asyncio.to_thread(psutil.wait_procs, [root], timeout)

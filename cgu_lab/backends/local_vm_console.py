"""The console server of a local VM notebook: QEMU's parent and the VM's web face.

A VM has no JupyterLab, yet the controller's proxy, its shares and its culler
all talk to a notebook as an HTTP server on loopback that checks the proxy's
secret. This small server is that for a VM, so none of them needs a case of
its own: it runs as the notebook's account inside the notebook's cgroup (the
launcher put it there), starts QEMU as its child (QEMU inherits both), and
serves below the notebook's base path:

    lab, console        the console page (noVNC), read-only for a read-only share
    static/...          the page's script, noVNC (vendored) and the style
    websockify          the console's websocket, bridged to QEMU's VNC Unix socket
    api/status          200 while QEMU runs (the backend's readiness check)
    api/vm              how the VM runs (accelerator, vCPUs, memory) for the page
    api/kernels         the VM's activity as one "kernel" for the idle culler:
    api/terminals       busy while a console is open or the guest uses CPU

Read-only viewers are enforced here, not in the page: every byte a viewer's
websocket sends passes the desktop's view-only RFB filter (rfb/filter.py,
one filter for both screens), which drops key, pointer and clipboard messages;
what QEMU sends a viewer passes it too, which drops the guest's clipboard.
A single-file share opens no console.
It exits when QEMU exits (a guest shutdown is a stop) and ends QEMU when it
is told to stop (SIGTERM), so the backend keeps one process to watch.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import signal
import sys
import time
from datetime import datetime, timezone
from html import escape
from pathlib import Path

import psutil
from aiohttp import WSMsgType, web

from ..rfb.filter import RfbViolation, ViewOnlyFilter

log = logging.getLogger("cgu_lab.vm_console")

STATIC = Path(__file__).resolve().parent.parent / "controller" / "static"
PAGE = Path(__file__).resolve().parent.parent / "controller" / "templates" / "vm_console.html"
SAMPLE_SECONDS = 5.0
ACCESS_LEVELS = ("owner", "edit", "read")


class Console:
    def __init__(self, env: dict[str, str]) -> None:
        self.base = env["CGU_VM_BASE"]
        self.secret = env["CGU_PROXY_SECRET"]
        self.run = Path(env["CGU_VM_RUN"])
        self.qemu_argv = json.loads(env["CGU_VM_QEMU"])
        self.info = json.loads(env.get("CGU_VM_INFO", "{}"))
        self.idle_cpu = float(env.get("CGU_VM_IDLE_CPU", "10"))  # % of one core
        self.qemu: asyncio.subprocess.Process | None = None
        self.connections = 0
        self.last_activity = datetime.now(timezone.utc)
        self.cpu_percent = 0.0

    # -- QEMU -------------------------------------------------------------------

    async def start_qemu(self) -> None:
        # QEMU gets the markers (CGU_LAB_INSTANCE, CGU_NOTEBOOK_ID) but not the secret.
        env = {k: v for k, v in os.environ.items() if not k.startswith("CGU_VM_")}
        env.pop("CGU_PROXY_SECRET", None)
        self.qemu = await asyncio.create_subprocess_exec(*self.qemu_argv, env=env)

    async def sample(self) -> None:
        """Every few seconds: the guest's CPU use, and whether it counts as activity."""
        assert self.qemu is not None
        process = psutil.Process(self.qemu.pid)
        before, then = process.cpu_times(), time.monotonic()
        while True:
            await asyncio.sleep(SAMPLE_SECONDS)
            with contextlib.suppress(psutil.Error):
                now_times, now = process.cpu_times(), time.monotonic()
                used = (now_times.user + now_times.system) - (before.user + before.system)
                self.cpu_percent = 100 * used / max(0.001, now - then)
                before, then = now_times, now
            if self.busy():
                self.last_activity = datetime.now(timezone.utc)

    def busy(self) -> bool:
        return self.connections > 0 or self.cpu_percent >= self.idle_cpu

    # -- requests ---------------------------------------------------------------

    @web.middleware
    async def guard(self, request: web.Request, handler):
        """Only the controller's proxy (or its reader) knows the secret; everyone else: 403."""
        given = request.headers.get("X-Cgu-Proxy-Secret", "")
        if not hmac.compare_digest(given.encode(), self.secret.encode()):
            return problem(403, "this console answers only through the platform", "no_secret")
        if request.path == self.base + "api/status":  # the backend's readiness check
            return await handler(request)
        if request.headers.get("X-Cgu-Access", "") not in ACCESS_LEVELS:
            return problem(403, "no access to this VM", "no_access")
        if request.headers.get("X-Cgu-Scope"):
            return problem(
                403,
                "your share covers one file only; the VM's console needs a share of the notebook",
                "file_share",
            )
        return await handler(request)

    def view_only(self, request: web.Request) -> bool:
        return request.headers.get("X-Cgu-Access") == "read"

    async def status(self, _request: web.Request) -> web.Response:
        running = self.qemu is not None and self.qemu.returncode is None
        if not running:
            return problem(503, "the VM is not running", "vm_stopped")
        return web.json_response({"started": self.info.get("started", ""), "kind": "vm"})

    async def vm(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                **self.info,
                "view_only": self.view_only(request),
                "connections": self.connections,
                "cpu_percent": round(self.cpu_percent, 1),
            }
        )

    async def kernels(self, _request: web.Request) -> web.Response:
        state = "busy" if self.busy() else "idle"
        return web.json_response(
            [
                {
                    "id": "vm",
                    "name": "vm",
                    "execution_state": state,
                    "last_activity": self.last_activity.isoformat(),
                    "connections": self.connections,
                }
            ]
        )

    async def terminals(self, _request: web.Request) -> web.Response:
        return web.json_response([])

    async def page(self, request: web.Request) -> web.Response:
        view_only = self.view_only(request)
        values = {
            "base": escape(self.base),
            "title": escape(str(self.info.get("title", "VM"))),
            "name": escape(str(self.info.get("notebook", ""))),
            "view_only": "true" if view_only else "false",
            "accel": escape(str(self.info.get("accel", ""))),
        }
        text = PAGE.read_text()
        for key, value in values.items():
            text = text.replace("{{ " + key + " }}", value)
        return web.Response(
            text=text, content_type="text/html", headers={"Cache-Control": "no-store"}
        )

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        try:
            reader, writer = await asyncio.open_unix_connection(str(self.run / "vnc.sock"))
        except OSError:
            return problem(503, "the VM's screen is not up yet; try again in a moment", "no_vnc")
        ws = web.WebSocketResponse(protocols=("binary",), max_msg_size=0, heartbeat=30)
        await ws.prepare(request)
        screen_filter = ViewOnlyFilter() if self.view_only(request) else None
        self.connections += 1
        self.last_activity = datetime.now(timezone.utc)

        async def to_vm() -> None:
            async for message in ws:
                if message.type == WSMsgType.BINARY:
                    data = message.data
                elif message.type == WSMsgType.TEXT:
                    data = message.data.encode("latin-1", "replace")
                else:
                    break
                try:
                    writer.write(screen_filter.feed(data) if screen_filter is not None else data)
                except RfbViolation as error:
                    await ws.close(code=1008, message=str(error).encode()[:120])
                    return
                await writer.drain()

        async def to_browser() -> None:
            while chunk := await reader.read(65536):
                try:
                    shown = screen_filter.from_server(chunk) if screen_filter is not None else chunk
                except RfbViolation as error:
                    await ws.close(code=1008, message=str(error).encode()[:120])
                    return
                if shown:
                    await ws.send_bytes(shown)
            await ws.close()

        tasks = [asyncio.create_task(to_vm()), asyncio.create_task(to_browser())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            writer.close()
            await ws.close()
            self.connections -= 1
            self.last_activity = datetime.now(timezone.utc)
        return ws

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self.guard])
        base = self.base
        app.router.add_get(base + "api/status", self.status)
        app.router.add_get(base + "api/vm", self.vm)
        app.router.add_get(base + "api/kernels", self.kernels)
        app.router.add_get(base + "api/terminals", self.terminals)
        app.router.add_get(base + "lab", self.page)
        app.router.add_get(base + "console", self.page)
        app.router.add_get(base + "websockify", self.websocket)
        app.router.add_static(base + "static/vendor/novnc", STATIC / "vendor" / "novnc")
        app.router.add_static(base + "static/js", STATIC / "js")
        app.router.add_get(base + "static/style.css", self.style)
        return app

    async def style(self, _request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "style.css")


def problem(status: int, message: str, code: str) -> web.Response:
    return web.json_response({"message": message, "code": code}, status=status)


async def serve(console: Console, port: int) -> int:
    await console.start_qemu()
    assert console.qemu is not None
    runner = web.AppRunner(console.app(), access_log=None)
    await runner.setup()
    # One bind, no retries: the backend chose the port and tries another on a clash.
    site = web.TCPSite(runner, "127.0.0.1", port, reuse_address=False)
    try:
        await site.start()
    except OSError as error:
        print(f"console server: address already in use? {error}", file=sys.stderr, flush=True)
        console.qemu.terminate()
        await console.qemu.wait()
        return 98
    sampler = asyncio.create_task(console.sample())
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    qemu_done = asyncio.create_task(console.qemu.wait())
    await asyncio.wait([qemu_done, asyncio.create_task(stop.wait())], return_when="FIRST_COMPLETED")
    if console.qemu.returncode is None:  # told to stop: the backend tried a shutdown first
        console.qemu.terminate()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(console.qemu.wait(), 5)
        if console.qemu.returncode is None:
            console.qemu.kill()
            await console.qemu.wait()
    sampler.cancel()
    await runner.cleanup()
    print(f"QEMU exited with code {console.qemu.returncode}", file=sys.stderr, flush=True)
    return 0 if stop.is_set() else console.qemu.returncode


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    console = Console(dict(os.environ))
    sys.exit(asyncio.run(serve(console, int(os.environ["CGU_VM_PORT"]))))


if __name__ == "__main__":
    main()

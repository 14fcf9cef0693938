"""The controller in the test's own process: the real app, a real SQLite store, no sockets.

`InProcess` builds the app with `create_app` on a data directory of its own and runs
its lifespan (migrations, the background loops) on an event loop in a helper thread
(an anyio blocking portal). Clients are the harness's own `Session` (an `httpx.Client`)
over `PortalTransport`, which hands each request to `httpx.ASGITransport` on that loop:
tests stay synchronous, read like the end-to-end ones, and every request goes through
the whole ASGI app (page headers, the notebook proxy's dispatch, FastAPI) as it does
behind uvicorn.

The backend is the local one with notebook servers left out (`FakeLocalBackend`): a
start "launches" nothing and returns at once, a stop stops nothing, a running notebook
is always seen alive. Tests that need a real JupyterLab give `InProcess` the real
`LocalBackend` and call `serve`, so that notebook servers reach the controller (a module
marked `notebook_servers` gets that as conftest's `site`; tests/test_gpus_and_culling.py
moves the clock under real kernels so). `harness.Controller`, a process, is left for
what only a process shows (conftest's `end_to_end` layer).

Nothing here waits for wall-clock time: `settle` waits for a notebook's current start or
stop to finish (the controller's own task), `sample_monitor` runs the monitor's next
pass now instead of in `monitor_interval` seconds, and the platform's clock is a
`FakeClock` (`clock`) that a test moves past an idle limit, an expiry or a cache's
freshness instead of sleeping through it.
"""

from __future__ import annotations

import contextlib
import contextvars
import http.server
import logging
import socket
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import httpx

from cgu_lab.backends.base import NotebookSpec, Observation, ProgressCallback
from cgu_lab.backends.local import LocalBackend
from cgu_lab.controller.accounts import directory as accounts
from cgu_lab.controller.app import create_app
from cgu_lab.controller.clock import FakeClock
from cgu_lab.controller.settings import Settings
from cgu_lab.core.roles import Principal, Role

from .harness import PASSWORD, Session, cli, free_port

log = logging.getLogger("tests.inprocess")

# The apps started and not yet stopped (a failed test shows their notebooks' logs: conftest).
RUNNING: list[InProcess] = []

# The address every in-process request comes from (loopback, as with a real controller).
CLIENT = ("127.0.0.1", 50000)


class FakeLocalBackend(LocalBackend):
    """The local backend, except that notebook servers are never started.

    Homes, files, GPUs and everything else are the local backend's own; `started` and
    `stopped` record the notebooks it was asked to run and stop, by "owner/name".
    """

    def __init__(self, settings) -> None:
        super().__init__(settings)
        self.started: list[str] = []
        self.stopped: list[str] = []

    async def start(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        await progress(50, "Starting JupyterLab (not really: tests/inprocess.py)")
        self.started.append(f"{spec.owner}/{spec.name}")
        return {"port": free_port(), "fake": True}

    async def stop(self, spec: NotebookSpec, state: Mapping[str, Any]) -> None:
        self.stopped.append(f"{spec.owner}/{spec.name}")

    async def observe(self, spec: NotebookSpec, state: Mapping[str, Any]) -> Observation:
        return Observation(alive=True, ready=True)

    async def sweep(self, keep: set[int]) -> list[int]:
        return []


def __getattr__(name: str):
    """`ClusterlessKube` (tests/clusterless.py), imported when a test first asks for it:
    the Kubernetes backend's imports are too dear for every module that imports this one."""
    if name == "ClusterlessKube":
        from .clusterless import ClusterlessKube

        return ClusterlessKube
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class LoopbackNotebook:
    """A notebook server's stand-in on loopback: answers every GET with 200 `{"ok": true}`
    (and `reply_headers`, for what the proxy passes back), but `.../cut-short` with a body
    that ends before its Content-Length, and keeps the path and the
    headers of each request (`paths`; `seen`, names lower-case), for what the proxy
    forwards. A context manager: serving inside the block."""

    def __init__(self, reply_headers: Sequence[tuple[str, str]] = ()) -> None:
        seen: list[dict[str, list[str]]] = []
        paths: list[str] = []
        self.seen, self.paths = seen, paths

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                paths.append(self.path)
                received: dict[str, list[str]] = {}
                for key, value in self.headers.items():
                    received.setdefault(key.lower(), []).append(value)
                seen.append(received)
                if self.path.endswith("/cut-short"):
                    # promises 1 MiB, sends 256 KiB and hangs up: a server stopped mid-answer
                    self.send_response(200)
                    self.send_header("Content-Length", str(1 << 20))
                    self.end_headers()
                    self.wfile.write(b"x" * (1 << 18))
                    self.close_connection = True
                    return
                body = b'{"ok": true}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in reply_headers:
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> LoopbackNotebook:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


# The answers of the app that ended without their last body message, in this request.
CUT_SHORT: contextvars.ContextVar[list[bool]] = contextvars.ContextVar("cut_short")


class PortalTransport(httpx.BaseTransport):
    """A synchronous httpx transport that runs the app's ASGI calls on the portal's loop."""

    def __init__(self, app, portal, client: tuple[str, int] = CLIENT) -> None:
        async def logged(scope, receive, send) -> None:
            started, ended = [], []

            async def sent(message) -> None:
                started.append(True)
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    ended.append(True)
                await send(message)

            try:
                await app(scope, receive, sent)
            except Exception:
                log.exception("exception in the app (answered with 500)")  # as uvicorn logs it
                raise
            if started and not ended:  # a server closes the connection: the answer is cut short
                CUT_SHORT.get().append(True)
                await send({"type": "http.response.body", "body": b""})

        # As a server would: an unforeseen error is the app's 500, not an exception here.
        self._asgi = httpx.ASGITransport(app=logged, raise_app_exceptions=False, client=client)
        self._portal = portal

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        # The client's read timeout bounds the whole answer, as a socket's would bound the
        # wait for each byte: a test whose request hangs fails with httpx's ReadTimeout
        # (and its module's logs), not with pytest-timeout's stacks of idle threads.
        seconds = (request.extensions.get("timeout") or {}).get("read")
        try:
            status, headers, body = self._portal.call(self._answer, request, seconds)
        except TimeoutError:
            raise httpx.ReadTimeout(
                f"no whole answer in {seconds} s: {request.method} {request.url.path}",
                request=request,
            ) from None
        return httpx.Response(status, headers=headers, content=body)

    async def _answer(self, request: httpx.Request, seconds: float | None) -> tuple:
        if seconds is None:
            return await self._send(request)
        with anyio.fail_after(seconds):
            return await self._send(request)

    async def _send(self, request: httpx.Request) -> tuple[int, list, bytes]:
        cut: list[bool] = []
        CUT_SHORT.set(cut)
        response = await self._asgi.handle_async_request(request)
        body = b"".join([chunk async for chunk in response.stream])
        if cut:  # what httpx says of a real server that hung up mid-answer
            raise httpx.RemoteProtocolError("the answer ended before its body did", request=request)
        return response.status_code, response.headers.raw, body


class InProcess:
    """A controller app in this process; the same surface as `harness.Controller`
    (`url`, `data_dir`, `create_user`, `cli`, `client`, `anonymous`) plus what only an app in
    this process can offer (`platform`, `clock`, `settle`, `sample_monitor`, `serve`)."""

    def __init__(self, data_dir: Path, backend=FakeLocalBackend, **settings: Any) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.settings = Settings(
            data_dir=data_dir, port=self.port, backend="local", start_timeout=60, **settings
        )
        self.url = self.settings.base_url
        self.backend = backend(self.settings)
        # The platform's one clock: real time until a test moves it (`clock.advance`).
        self.clock = FakeClock()
        self.app = create_app(self.settings, self.backend, self.clock)
        self.portal = None
        self._exit = contextlib.ExitStack()
        self._server = None
        self._serving = None

    @property
    def platform(self):
        return self.app.platform

    def start(self) -> InProcess:
        self.portal = self._exit.enter_context(anyio.from_thread.start_blocking_portal())
        lifespan = self.app.api.router.lifespan_context(self.app.api)
        self._exit.enter_context(self.portal.wrap_async_context_manager(lifespan))
        RUNNING.append(self)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._serving.result(30)
            self._server = None
        self._exit.close()
        self.portal = None
        if self in RUNNING:
            RUNNING.remove(self)

    def call(self, function, *args):
        """Run `await function(*args)` on the app's event loop and return its result."""
        return self.portal.call(function, *args)

    # -- accounts and clients ---------------------------------------------------------

    def create_user(
        self,
        name: str,
        role: str = "student",
        group: str | None = None,
        password: str = PASSWORD,
    ) -> None:
        """What `cgu-lab admin create-user` does (the harness's way), on this app's store."""

        async def create() -> None:
            system = Principal(id=0, name="cli", role=Role.ADMIN)
            async with self.platform.db.session() as session:
                await accounts.create_user(
                    session, system, name, Role(role), "", "", password, group
                )

        self.call(create)

    def cli(self, *args: str, stdin: str | None = None) -> str:
        """`cgu-lab <args>` on this app's data directory (`harness.cli`), beside it."""
        return cli(self.data_dir, *args, stdin=stdin)

    def transport(self, address: str = CLIENT[0]) -> PortalTransport:
        """Requests through the app's ASGI interface, as if from `address`."""
        return PortalTransport(self.app, self.portal, client=(address, CLIENT[1]))

    def client(self, name: str, password: str = PASSWORD) -> Session:
        """A client logged in through the login form (prefer conftest's `login`)."""
        return Session(self.url, name, password, transport=self.transport(), site=self)

    def anonymous(self, address: str = CLIENT[0], **kwargs: Any) -> httpx.Client:
        """A client that has not logged in (cookies and headers as given), from `address`
        (a loopback address: what the login throttle counts by)."""
        return httpx.Client(base_url=self.url, transport=self.transport(address), **kwargs)

    # -- what only an app in this process offers -----------------------------------------

    def settle(self, owner: str, name: str) -> None:
        """Wait until the notebook's current start or stop (if any) has finished."""

        async def settle() -> None:
            notebooks = self.platform.notebooks
            async with self.platform.db.session() as session:
                nb, _ = await notebooks.load(session, owner, name)
            await notebooks.lifecycle.wait(nb.id)

        self.call(settle)

    def sample_monitor(self) -> None:
        """The monitor's next pass, now (it runs every `monitor_interval` seconds)."""
        self.call(self.platform.monitor.sample)

    def cull(self) -> list:
        """The idle culler's next pass, now (it runs every `cull_interval` seconds); its
        decisions. Move `clock` first to let idle time pass."""
        return self.call(self.platform.culler.pass_once)

    def drain_queue(self) -> None:
        """Give queued notebooks their turn now and wait until each has begun its start, so
        that `settle` finds it: after a stop the controller gives that turn in a task of
        its own, which a test cannot otherwise wait for."""
        self.call(self.platform.notebooks.admission.drain_queue)

    def serve(self) -> str:
        """Serve the app over real HTTP as well, as `cgu-lab controller` does: on `url` (for
        a browser, websockets, notebook servers) and, with the local backend, on the
        controller's Unix socket, the only way to it from a notebook server in a network
        of its own (backends/local.py). Returns the URL."""
        if self._server is None:
            import uvicorn

            from cgu_lab.cli import _listen_unix

            listener = socket.socket()
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", self.port))
            listener.listen(128)
            listeners = [listener]
            if self.settings.backend == "local":
                listeners.append(_listen_unix(self.settings.controller_socket))
            # The controller's own settings (cli.py): clients' forwarding headers are not
            # believed, and websocket messages may be as large.
            config = uvicorn.Config(
                self.app,
                lifespan="off",
                log_level="warning",
                ws_max_size=1 << 30,
                proxy_headers=False,
            )
            self._server = uvicorn.Server(config)
            # Bound and listening already: connections wait in the backlog until it accepts.
            self._serving = self.portal.start_task_soon(self._server.serve, listeners)
        return self.url

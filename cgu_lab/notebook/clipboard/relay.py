"""The server's middle of the clipboard bridge: a unix socket for the kernels, the pages' channels.

Why a unix socket and not the server's REST API: a kernel holds no credential
the server would accept (the proxy's secret and the controller's token are
taken out of the environment so that kernels cannot read them), and it should
not need one. The socket is a file in a folder only the notebook's user can
enter, and a connection is accepted only from a process of that same user
(SO_PEERCRED), so the kernels and terminals of this notebook, and nobody
else, can ask. It works the same in a Kubernetes pod.

Kernels and terminals learn the socket from $CGU_CLIPBOARD_SOCKET (set here,
inherited by every process the server starts); `~/.cgu/clipboard/<pid>.json`
describes it for other processes. A socket path longer than a unix socket
allows goes in a private temporary folder instead.

They find the bridge's `xclip`/`xsel` first on PATH: the server writes them
into `~/.cgu/clipboard/<pid>.bin/`, run by its own Python, and puts that folder
first on the PATH its kernels and terminals inherit. An environment built by
the platform carries them in its own bin too, but one built before that, or an
image whose Python's bin comes after `/usr/bin`, would otherwise hand kernels
the host's `xclip`, which only says "Can't open display: :cgu-clipboard".

Several pages may be connected (two tabs, an editor's browser): a request
goes to the one that had the focus last, as that is where the person who ran
the cell is, and the only page whose browser will hand over its clipboard.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import itertools
import json
import os
import shutil
import socket
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tornado.iostream import IOStream, StreamClosedError
from tornado.netutil import bind_unix_socket
from tornado.tcpserver import TCPServer
from traitlets import Bool, Float, Int, Unicode, default
from traitlets.config import LoggingConfigurable

from ...core.environments import BRIDGE_COMMANDS, bridge_command
from .protocol import (
    DEFAULT_TIMEOUT,
    ENV_SOCKET,
    MARGIN,
    MESSAGES,
    OPS,
    ClipboardError,
    alive,
    canonical_type,
    directory,
    is_text,
)

# sun_path is 108 bytes on Linux, with its terminating NUL.
MAX_SOCKET_PATH = 100
# A request line: the size limit in base64, and some JSON around it.
REQUEST_SLACK = 4096
# The codes a page may answer with; anything else reads as a refusal.
PAGE_CODES = frozenset({"refused", "unsupported", "not_available", "timeout", "too_large"})


class Page(Protocol):
    """A connected page: the websocket handler."""

    def send_control(self, message: dict) -> None: ...


@dataclass
class PageState:
    """What the relay knows of one connected page."""

    user: str
    access: str
    connected: float = field(default_factory=time.monotonic)
    focused: bool = False
    last_focus: float = 0.0


def peer_uid(connection: socket.socket) -> int | None:
    """The uid of the process at the other end of a unix socket; None where not told."""
    try:
        raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    _pid, uid, _gid = struct.unpack("3i", raw)
    return uid


class _KernelSocket(TCPServer):
    def __init__(self, relay: ClipboardRelay, max_buffer_size: int) -> None:
        super().__init__(max_buffer_size=max_buffer_size)
        self.relay = relay

    async def handle_stream(self, stream: IOStream, address) -> None:
        await self.relay.serve_kernel(stream)


class ClipboardRelay(LoggingConfigurable):
    """Requests of this server's kernels, answered by one of its connected pages."""

    timeout_seconds = Float(
        DEFAULT_TIMEOUT,
        help="How long a request may wait for the browser at most (a command may ask for less).",
    ).tag(config=True)

    max_bytes = Int(
        5 * 2**20,
        help="The largest clipboard content carried either way, in bytes (text or image).",
    ).tag(config=True)

    kernel_display = Unicode(
        ":cgu-clipboard",
        help=(
            "DISPLAY given to kernels and terminals when the server has none, so that pandas "
            "and pyperclip (which look for xclip/xsel only when DISPLAY is set) find the "
            "bridge's commands. It names no X server, so X programs fail at once as without "
            "one. Empty: leave DISPLAY alone."
        ),
    ).tag(config=True)

    socket_directory = Unicode(help="Where the socket goes (default: ~/.cgu/clipboard).").tag(
        config=True
    )

    export_environment = Bool(
        True, help="Set $CGU_CLIPBOARD_SOCKET (and DISPLAY) for the processes the server starts."
    ).tag(config=True)

    @default("socket_directory")
    def _default_socket_directory(self) -> str:
        return str(directory())

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.pages: dict[Page, PageState] = {}
        self.pending: dict[int, tuple[asyncio.Future, Page]] = {}
        self._ids = itertools.count(1)
        self._server: _KernelSocket | None = None
        self._private: str | None = None  # a temporary folder holding the socket
        self.directory = Path(self.socket_directory)
        self.description = self.directory / f"{os.getpid()}.json"
        self.socket_path = ""
        self.commands = ""  # the folder of the bridge's commands, first on the kernels' PATH

    # -- the kernels' socket -------------------------------------------------------------

    def start(self) -> None:
        """Make the socket now, so that the first kernel finds it; accept once the loop runs."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            self.directory.chmod(0o700)
        self._remove_stale()
        path = str(self.directory / f"{os.getpid()}.sock")
        if len(path.encode()) > MAX_SOCKET_PATH:
            self._private = tempfile.mkdtemp(prefix="cgu-clipboard-")
            path = os.path.join(self._private, "socket")
        listener = bind_unix_socket(path, mode=0o600)
        self._server = _KernelSocket(self, 2 * self.max_bytes + REQUEST_SLACK)
        self._server.add_socket(listener)
        self.socket_path = path
        fd = os.open(self.description, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump({"socket": path, "pid": os.getpid()}, out)
        if self.export_environment:
            os.environ[ENV_SOCKET] = path
            if self.kernel_display and not os.environ.get("DISPLAY"):
                os.environ["DISPLAY"] = self.kernel_display
            self._put_commands_first()
        atexit.register(self.close)
        self.log.info("cgu-lab clipboard: kernels reach the browser's clipboard at %s", path)

    def _put_commands_first(self) -> None:
        """`xclip`/`xsel` of the bridge in a folder of this server's, first on PATH."""
        folder = self.directory / f"{os.getpid()}.bin"
        folder.mkdir(mode=0o700, exist_ok=True)
        for name in BRIDGE_COMMANDS:
            text = bridge_command(sys.executable, name, "notebook/clipboard/relay.py")
            fd = os.open(folder / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o700)
            with os.fdopen(fd, "w") as out:
                out.write(text)
        self.commands = str(folder)
        rest = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != self.commands]
        os.environ["PATH"] = os.pathsep.join([self.commands, *rest])

    def _remove_stale(self) -> None:
        """Descriptions, sockets and command folders of servers that are gone (a crash, a
        restart)."""
        for entry in [*self.directory.glob("*.json"), *self.directory.glob("*.sock")]:
            with contextlib.suppress(ValueError, OSError):
                pid = int(entry.stem)
                if pid != os.getpid() and not alive(pid):
                    entry.unlink()
        for entry in self.directory.glob("*.bin"):
            with contextlib.suppress(ValueError):
                pid = int(entry.stem)
                if pid != os.getpid() and not alive(pid):
                    shutil.rmtree(entry, ignore_errors=True)

    def close(self) -> None:
        if self._server is not None:
            with contextlib.suppress(Exception):  # at exit the loop may be closed already
                self._server.stop()
            self._server = None
        for future, _page in list(self.pending.values()):
            if not future.done():
                with contextlib.suppress(RuntimeError):
                    future.set_result(_problem("gone", "the notebook server is stopping"))
        for file in (self.socket_path, str(self.description)):
            with contextlib.suppress(OSError):
                if file:
                    os.unlink(file)
        if self._private:
            shutil.rmtree(self._private, ignore_errors=True)
            self._private = None
        if os.environ.get(ENV_SOCKET) == self.socket_path and self.socket_path:
            del os.environ[ENV_SOCKET]
        if self.commands:
            path = os.environ.get("PATH", "").split(os.pathsep)
            os.environ["PATH"] = os.pathsep.join(p for p in path if p != self.commands)
            shutil.rmtree(self.commands, ignore_errors=True)
            self.commands = ""

    async def serve_kernel(self, stream: IOStream) -> None:
        """One connection: one request line in, one answer line out."""
        uid = peer_uid(stream.socket)
        if uid is not None and uid != os.getuid():
            self.log.warning("cgu-lab clipboard: refused a request of uid %s", uid)
            stream.close()
            return
        try:
            line = await asyncio.wait_for(
                stream.read_until(b"\n", max_bytes=2 * self.max_bytes + REQUEST_SLACK), 30
            )
            try:
                request = json.loads(line)
                if not isinstance(request, dict):
                    raise ValueError("not an object")
            except ValueError:
                answer = _problem("bad_request")
            else:
                answer = await self.ask(request)
            await stream.write(json.dumps(answer).encode() + b"\n")
        except (StreamClosedError, asyncio.TimeoutError):
            pass
        finally:
            stream.close()

    # -- a request -----------------------------------------------------------------------

    async def ask(self, request: dict) -> dict:
        """The answer to a kernel's request, from the page that had the focus last."""
        op = request.get("op")
        if op not in OPS:
            return _problem("bad_request", f"{MESSAGES['bad_request']}: op {op!r}")
        try:
            mime = canonical_type(request.get("type"))
        except ClipboardError as error:
            return _problem(error.code, error.message)
        timeout = request.get("timeout")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
            timeout = self.timeout_seconds
        timeout = min(max(float(timeout), 2 * MARGIN), self.timeout_seconds)
        message: dict = {"type": "request", "op": op, "mime": mime}
        if op == "write":
            try:
                data = base64.b64decode(request.get("data") or "", validate=True)
            except (ValueError, TypeError):
                return _problem("bad_request", f"{MESSAGES['bad_request']}: data is not base64")
            if len(data) > self.max_bytes:
                return self._too_large(len(data))
            if is_text(mime):
                message["text"] = data.decode("utf-8", "replace")
            else:
                message["base64"] = base64.b64encode(data).decode()
        page = self.choose()
        if page is None:
            return _problem("no_page")
        request_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[request_id] = (future, page)
        message.update(id=request_id, deadline_ms=int((timeout - MARGIN) * 1000))
        state = self.pages[page]
        self.log.debug("cgu-lab clipboard: %s %s through %s's page", op, mime, state.user)
        page.send_control(message)
        try:
            answer = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            page.send_control({"type": "cancel", "id": request_id})
            return _problem("timeout")
        finally:
            self.pending.pop(request_id, None)
        return self._for_kernel(op, mime, answer)

    def _too_large(self, size: int) -> dict:
        return _problem(
            "too_large",
            f"{MESSAGES['too_large']}: {size} bytes, at most {self.max_bytes}",
        )

    def _for_kernel(self, op: str, mime: str, answer: dict) -> dict:
        """A page's answer, checked and turned into the kernel's."""
        if not answer.get("ok"):
            code = answer.get("code")
            code = code if code in PAGE_CODES or code == "gone" else "refused"
            message = answer.get("message")
            return _problem(code, message[:500] if isinstance(message, str) else None)
        if op == "write":
            return {"ok": True, "deferred": bool(answer.get("deferred"))}
        if op == "types":
            types = answer.get("types")
            types = [t for t in types if isinstance(t, str)] if isinstance(types, list) else []
            return {"ok": True, "types": types[:50]}
        if isinstance(answer.get("text"), str):
            data = answer["text"].encode()
        else:
            try:
                data = base64.b64decode(answer.get("base64") or "", validate=True)
            except (ValueError, TypeError):
                return _problem("bad_request", "the page's answer was not base64")
        if len(data) > self.max_bytes:
            return self._too_large(len(data))
        return {"ok": True, "type": mime, "data": base64.b64encode(data).decode()}

    # -- the pages -----------------------------------------------------------------------

    def attach(self, page: Page, user: str, access: str) -> None:
        self.pages[page] = PageState(user, access)
        page.send_control({"type": "ready", "max_bytes": self.max_bytes})

    def focus(self, page: Page, focused: bool) -> None:
        state = self.pages.get(page)
        if state is not None:
            state.focused = focused
            if focused:
                state.last_focus = time.monotonic()

    def answer(self, page: Page, message: dict) -> None:
        request_id = message.get("id")
        entry = self.pending.get(request_id) if isinstance(request_id, int) else None
        if entry is not None and entry[1] is page and not entry[0].done():
            entry[0].set_result(message)

    def detach(self, page: Page) -> None:
        self.pages.pop(page, None)
        for future, asked in list(self.pending.values()):
            if asked is page and not future.done():
                future.set_result(_problem("gone"))

    def choose(self) -> Page | None:
        """The page with the focus now, else the one that had it last, else the newest."""
        if not self.pages:
            return None

        def rank(page: Page) -> tuple:
            state = self.pages[page]
            return (state.focused, state.last_focus, state.connected)

        return max(self.pages, key=rank)

    def listing(self) -> dict:
        return {
            "pages": [
                {"user": s.user, "access": s.access, "focused": s.focused}
                for s in self.pages.values()
            ],
            "socket": self.socket_path,
            "max_bytes": self.max_bytes,
            "timeout_seconds": self.timeout_seconds,
        }


def _problem(code: str, message: str | None = None) -> dict:
    return {"ok": False, "code": code, "message": message or MESSAGES.get(code, code)}

    return True

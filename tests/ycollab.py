"""A collaboration room client as JupyterLab's is: a pycrdt document speaking the Yjs
protocol on a room's websocket (jupyter-collaboration's `/api/collaboration/room/<id>`).

Shared by the tests that go through the controller's proxy (test_sharing.py, where a
share's change must reach an open room connection) and by the latency benchmark
(benchmarks/collab_latency.py), which both open rooms with `websockets` against a real
controller; tests/test_collaboration.py keeps its own tornado client for the
in-process server.
"""

from __future__ import annotations

import asyncio
import json
import time

import websockets
from jupyter_ydoc import YNotebook
from pycrdt import Doc, create_sync_message, create_update_message, handle_sync_message

from cgu_lab.notebook.collaboration import protocol

NOTEBOOK_TYPE = {"format": "json", "type": "notebook"}


def session_path(prefix: str, path: str) -> str:
    """The session lookup (a PUT that reads) naming the room of `path`."""
    return f"{prefix}/api/collaboration/session/{path}"


def room_path(prefix: str, session: dict) -> str:
    """The room's websocket path as JupyterLab opens it (colons unescaped)."""
    return (
        f"{prefix}/api/collaboration/room/json:notebook:{session['fileId']}"
        f"?sessionId={session['sessionId']}"
    )


class YClient:
    """One browser's side of one room: its Y document, what it has been sent, and how
    its connection ended (`closed_code`, None while open)."""

    def __init__(self, socket) -> None:
        self.socket = socket
        self.doc = Doc()
        self.notebook = YNotebook(self.doc)
        self.raw: list[str] = []
        self.closed_code: int | None = None
        self._replies: set[asyncio.Task] = set()

    @classmethod
    async def connect(cls, url: str, headers: dict, synced: bool = True, **connect) -> YClient:
        """Open the room and (with `synced`) wait until the notebook arrived."""
        socket = await websockets.connect(
            url, additional_headers=headers, max_size=None, open_timeout=60, **connect
        )
        client = cls(socket)
        await client.send(create_sync_message(client.doc))
        if synced:
            await client.until(lambda: client.source() is not None, seconds=30)
        return client

    async def send(self, message: bytes) -> None:
        await self.socket.send(message)

    def source(self) -> str | None:
        cells = self.notebook.ycells
        return str(cells[0]["source"]) if len(cells) else None

    def update_for(self, text: str) -> bytes:
        """The update message of typing `text` at the end of the first cell (applied here)."""
        before = self.doc.get_state()
        source = self.notebook.ycells[0]["source"]
        source.insert(len(source), text)
        return create_update_message(self.doc.get_update(before))

    async def edit(self, text: str) -> None:
        await self.send(self.update_for(text))

    async def pump(self, seconds: float, first_only: bool = False) -> None:
        """Handle what arrives for `seconds` (or until the first message, or the close)."""
        deadline = time.monotonic() + seconds
        while self.closed_code is None and (left := deadline - time.monotonic()) > 0:
            try:
                message = await asyncio.wait_for(self.socket.recv(), left)
            except asyncio.TimeoutError:
                return
            except websockets.ConnectionClosed as closed:
                self.closed_code = closed.rcvd.code if closed.rcvd else 1006
                return
            self.handle(message if isinstance(message, bytes) else message.encode())
            if first_only:
                return

    async def until(self, check, seconds: float = 10) -> float:
        """Seconds until `check()` holds, handling messages meanwhile."""
        start = time.monotonic()
        while not check():
            if time.monotonic() - start > seconds or self.closed_code is not None:
                raise AssertionError(f"timed out (closed: {self.closed_code})")
            await self.pump(0.05, first_only=True)
        return time.monotonic() - start

    async def closed(self, seconds: float) -> int:
        """The close code once the server ends the connection (fails after `seconds`)."""
        deadline = time.monotonic() + seconds
        while self.closed_code is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"the connection is still open after {seconds} s")
            await self.pump(left)
        return self.closed_code

    def handle(self, message: bytes) -> None:
        kind, _ = protocol.kind(message)
        if kind == protocol.SYNC:
            reply = handle_sync_message(message[1:], self.doc)
            if reply is not None:
                task = asyncio.ensure_future(self.send(reply))
                self._replies.add(task)
                task.add_done_callback(self._replies.discard)
        elif kind == protocol.RAW:
            self.raw.append(protocol.raw_text(message))

    async def close(self) -> None:
        await self.socket.close()


def on_disk_source(text: str) -> str:
    """The first cell's source of a notebook file's JSON text."""
    source = json.loads(text)["cells"][0]["source"]
    return "".join(source) if isinstance(source, list) else source

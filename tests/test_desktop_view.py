"""The desktop in a real jupyter_server with jupyter-server-proxy and a real Xvnc.

An editor drives the desktop through jupyter-server-proxy's websocket
(`desktop/`): keys typed into its terminal run a command. A read-only viewer
cannot open that websocket (nor any other app), and on its own view-only
channel (`cgu-lab/apps/desktop/view`) the same keys change nothing, while the
picture still arrives, and what is copied inside the desktop reaches the
editor but never the viewer. The RFB client here is a scripted one (RFC 6143,
raw encoding, or noVNC's list of encodings as the filter cuts it down), the
same for both.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import struct
import sys
from pathlib import Path

import psutil
import pytest
from tornado.httpclient import HTTPClientError
from tornado.websocket import WebSocketClosedError

from cgu_lab.rfb.filter import EXTENDED_CLIPBOARD, KEY_EVENT, POINTER_EVENT

from .harness import extension_server_config
from .harness import proxy_headers as as_user

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not shutil.which("Xvnc"), reason="TigerVNC (scripts/deps.sh) is missing"),
]

RETURN = 0xFF0D
# noVNC's SetEncodings, in its order: Tight, H.264, Hextile... are cut by the filter.
NOVNC_ENCODINGS = (1, 50, 7, -260, 16, 21, 5, 2, 6, 0, -26, -254, -223, -224, -258, -261)
NOVNC_ENCODINGS += (-308, -309, -312, -313, -307, EXTENDED_CLIPBOARD, -316, 0x574D5664, -239)
WEB_APP = {
    "name": "hello",
    "title": "Hello web app",
    "command": [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "{port}"],
}


@pytest.fixture
def jp_server_config():
    config = extension_server_config(
        CguLabExtension={"apps": json.dumps(["desktop", WEB_APP])},
    )
    config["ServerApp"]["jpserver_extensions"]["jupyter_server_proxy"] = True
    return config


class Rfb:
    """A scripted VNC client on a websocket: handshake, raw framebuffer updates, keys."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.buffer = bytearray()
        self.width = self.height = 0
        self.cut_texts: list[bytes] = []  # the server's clipboard, as it arrived
        self.encodings_seen: set[int] = set()

    async def read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            message = await asyncio.wait_for(self.ws.read_message(), 20)
            if message is None:
                raise EOFError("the server closed the connection")
            self.buffer += message.encode() if isinstance(message, str) else message
        chunk = bytes(self.buffer[:size])
        del self.buffer[:size]
        return chunk

    async def send(self, data: bytes) -> None:
        await self.ws.write_message(data, binary=True)

    async def handshake(self, shared: bool = True, encodings: tuple[int, ...] = (0,)) -> str:
        assert await self.read(12) == b"RFB 003.008\n"
        await self.send(b"RFB 003.008\n")
        (count,) = await self.read(1)
        assert 1 in await self.read(count)
        await self.send(b"\x01")
        assert await self.read(4) == b"\x00\x00\x00\x00"
        await self.send(b"\x01" if shared else b"\x00")
        header = await self.read(24)
        self.width, self.height = struct.unpack(">HH", header[:4])
        (name_length,) = struct.unpack(">I", header[20:24])
        name = (await self.read(name_length)).decode()
        # 32 bits per pixel, true colour, raw encoding only: easy to parse.
        pixel_format = struct.pack(">BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
        await self.send(b"\x00\x00\x00\x00" + pixel_format)
        await self.send(struct.pack(f">BxH{len(encodings)}i", 2, len(encodings), *encodings))
        return name

    async def frame(self, x=0, y=0, w=None, h=None, incremental=False) -> int:
        """Ask for a region and read until an update arrives; the bytes of pixels got."""
        w, h = w or self.width, h or self.height
        await self.send(struct.pack(">BBHHHH", 3, int(incremental), x, y, w, h))
        while True:
            kind = (await self.read(1))[0]
            if kind == 0:
                (rects,) = struct.unpack(">xH", await self.read(3))
                size = 0
                for _ in range(rects):
                    _, _, rw, rh, encoding = struct.unpack(">HHHHi", await self.read(12))
                    self.encodings_seen.add(encoding)
                    if encoding == -224:  # LastRect
                        break
                    size += len(await self.read(await self._rect_size(encoding, rw, rh)))
                return size
            if kind == 2:  # bell
                continue
            if kind == 3:  # server cut text
                (length,) = struct.unpack(">xxxi", await self.read(7))
                self.cut_texts.append(await self.read(abs(length)))
                continue
            raise AssertionError(f"unexpected server message {kind}")

    async def _rect_size(self, encoding: int, w: int, h: int) -> int:
        """The bytes after a rectangle's header, those of pixels left to read."""
        if encoding == 0:
            return w * h * 4
        if encoding == 1:  # CopyRect
            await self.read(4)
        elif encoding in (16, -307):  # ZRLE, DesktopName: length-prefixed
            (length,) = struct.unpack(">I", await self.read(4))
            await self.read(length)
        elif encoding == -239:  # Cursor: pixels and a bitmask
            await self.read(w * h * 4 + (w + 7) // 8 * h)
        elif encoding == -308:  # ExtendedDesktopSize: the screens
            (screens,) = struct.unpack(">Bxxx", await self.read(4))
            await self.read(16 * screens)
        elif encoding != -223:  # DesktopSize has no body
            raise AssertionError(f"unexpected rectangle encoding {encoding}")
        return 0

    async def type(self, text: str, enter: bool = True) -> None:
        keys = [ord(c) for c in text] + ([RETURN] if enter else [])
        for key in keys:
            for down in (1, 0):
                await self.send(struct.pack(">BBxxI", KEY_EVENT, down, key))

    async def click(self, x: int, y: int) -> None:
        for mask in (1, 0):
            await self.send(struct.pack(">BBHH", POINTER_EVENT, mask, x, y))


async def typed_into_desktop(rfb: Rfb, command: str, marker: Path, seconds: float = 25) -> bool:
    """Type `command` into the desktop's terminal until `marker` appears (the terminal
    may still be starting when the first keys arrive)."""
    for _ in range(int(seconds / 2.5)):
        await rfb.click(100, 100)  # inside the terminal
        await rfb.type(command)
        for _ in range(10):
            if marker.exists():
                return True
            await asyncio.sleep(0.25)
    return marker.exists()


@pytest.fixture
def open_desktop(jp_ws_fetch):
    """Open the desktop: the interactive one (jupyter-server-proxy's) for the owner and
    editors, the view-only channel for `access="read"`."""
    sockets = []

    async def open_desktop(user: str = "alice", access: str | None = None, scope: str = ""):
        parts = ("cgu-lab", "apps", "desktop", "view") if access == "read" else ("desktop/",)
        ws = await jp_ws_fetch(*parts, headers=as_user(user, access, scope))
        sockets.append(ws)
        return Rfb(ws)

    yield open_desktop
    for ws in sockets:
        ws.close()


async def test_an_editor_types_into_the_desktop_terminal(open_desktop, tmp_path):
    rfb = await open_desktop("bob", "edit")
    assert await rfb.handshake() == "Linux desktop"
    assert await rfb.frame() == rfb.width * rfb.height * 4
    marker = tmp_path / "typed-by-editor"
    assert await typed_into_desktop(rfb, f"touch {marker}", marker)


async def test_a_viewer_watches_but_its_keys_never_arrive(open_desktop, tmp_path):
    editor = await open_desktop()
    assert await editor.handshake() == "Linux desktop"
    first = tmp_path / "typed-by-editor"
    assert await typed_into_desktop(editor, f"touch {first}", first)  # the terminal takes keys
    viewer = await open_desktop("ta", "read")
    # A non-shared ClientInit would push the editor off; the filter makes it shared.
    assert await viewer.handshake(shared=False) == "Linux desktop"
    assert await viewer.frame() == viewer.width * viewer.height * 4
    blocked = tmp_path / "typed-by-viewer"
    await viewer.click(100, 100)
    await viewer.type(f"touch {blocked}")
    await viewer.send(struct.pack(">BxxxI", 6, 5) + b"paste")  # ClientCutText
    # The server handles one connection's messages in order: this picture comes after
    # whatever of the above it was given.
    assert await viewer.frame(0, 0, 16, 16) == 16 * 16 * 4
    second = tmp_path / "typed-by-editor-again"
    assert await typed_into_desktop(editor, f"touch {second}", second)
    assert not blocked.exists()
    assert not viewer.ws.close_code


def desktop_display() -> dict[str, str]:
    """DISPLAY and XAUTHORITY of the desktop this test's server started (its openbox's)."""
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if process.name() == "openbox":
                environment = process.environ()
                return {name: environment[name] for name in ("DISPLAY", "XAUTHORITY")}
    raise AssertionError("no desktop runs")


async def test_the_desktops_clipboard_reaches_the_editor_but_never_a_viewer(open_desktop):
    editor = await open_desktop("bob", "edit")
    await editor.handshake()
    viewer = await open_desktop("ta", "read")
    await viewer.handshake(encodings=NOVNC_ENCODINGS)
    # As noVNC does: with ExtendedDesktopSize the first answer holds the screen layout,
    # the pixels come with the next, incremental, request.
    await viewer.frame()
    await viewer.frame(incremental=True)
    secret = b"copied inside the desktop"
    copy = await asyncio.create_subprocess_exec(
        *("/usr/bin/xclip", "-selection", "clipboard"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, **desktop_display()},
    )
    await asyncio.wait_for(copy.communicate(secret), 20)  # xclip stays, serving it
    for _ in range(40):
        await editor.frame(0, 0, 8, 8)
        if editor.cut_texts:
            break
        await asyncio.sleep(0.25)
    assert editor.cut_texts == [secret]
    # The server sent the viewer its copy as it sent the editor's: it comes before
    # the update the viewer asks for now.
    await viewer.frame(0, 0, 16, 16)
    assert viewer.cut_texts == []
    # The viewer's stream stayed in step: noVNC's encodings, cut down, all arrived whole.
    assert 16 in viewer.encodings_seen, viewer.encodings_seen
    assert viewer.encodings_seen <= {0, 1, 16, -223, -224, -239, -307, -308}
    assert not viewer.ws.close_code


async def test_a_viewer_sending_an_unknown_message_is_disconnected(open_desktop):
    await (await open_desktop()).handshake()
    viewer = await open_desktop("ta", "read")
    await viewer.handshake()
    await viewer.send(b"\x63" + b"\x00" * 15)
    with pytest.raises((EOFError, WebSocketClosedError)):
        for _ in range(50):
            await viewer.frame(0, 0, 8, 8)
    assert viewer.ws.close_code == 1008


async def test_a_read_only_viewer_reaches_no_interactive_app(jp_ws_fetch, jp_fetch):
    for parts in (("desktop/",), ("hello/",)):
        with pytest.raises(HTTPClientError) as refused:
            await jp_ws_fetch(*parts, headers=as_user("ta", "read"))
        assert refused.value.code == 403
        with pytest.raises(HTTPClientError) as refused:
            await jp_fetch(*parts, headers=as_user("ta", "read"))
        assert refused.value.code == 403
        assert json.loads(refused.value.response.body)["code"] == "read_only"
    # A single-file share gets no view of the desktop either.
    with pytest.raises(HTTPClientError) as refused:
        await jp_ws_fetch(
            "cgu-lab", "apps", "desktop", "view", headers=as_user("ta", "read", "a.ipynb")
        )
    assert refused.value.code == 403


async def test_a_caller_without_the_proxy_secret_reaches_nothing(jp_ws_fetch, jp_fetch):
    stranger = as_user("mallory", secret="guessed")
    for parts in (("desktop/",), ("hello/",), ("cgu-lab", "apps", "desktop", "view")):
        with pytest.raises(HTTPClientError) as refused:
            await jp_ws_fetch(*parts, headers=stranger)
        assert refused.value.code == 403
    with pytest.raises(HTTPClientError) as refused:
        await jp_fetch("hello/", headers=stranger)
    assert refused.value.code == 403


async def test_an_editor_uses_a_declared_web_app_without_the_proxy_secret(jp_fetch):
    response = await jp_fetch("hello/", headers=as_user("bob", "edit"), request_timeout=60)
    assert response.code == 200
    assert b"Directory listing" in response.body


async def test_the_launcher_lists_what_each_caller_may_open(jp_fetch):
    owner = json.loads((await jp_fetch("cgu-lab", "apps", headers=as_user("alice"))).body)
    assert [a["name"] for a in owner["apps"]] == ["desktop", "hello"]
    assert owner["interactive"] is True
    viewer = json.loads((await jp_fetch("cgu-lab", "apps", headers=as_user("ta", "read"))).body)
    assert [a["name"] for a in viewer["apps"]] == ["desktop"]
    assert viewer["apps"][0]["view_path"] == "cgu-lab/apps/desktop/view"
    assert viewer["interactive"] is False


async def test_a_viewer_is_told_when_no_desktop_runs(jp_ws_fetch):
    with pytest.raises(HTTPClientError) as refused:
        await jp_ws_fetch("cgu-lab", "apps", "desktop", "view", headers=as_user("ta", "read"))
    assert refused.value.code == 409
    assert json.loads(refused.value.response.body)["code"] == "not_running"

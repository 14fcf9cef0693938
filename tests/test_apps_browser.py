"""A web browser on the desktop opens the notebook's own app (a real Xvnc, a real Chromium).

The editor opens the desktop (jupyter-server-proxy starts Xvnc), the notebook's app
(a declared web app that paints its page green) runs, and `POST cgu-lab/apps/browser`
opens it in Chromium on that desktop: the picture the VNC stream then carries is
mostly the app's green, saved as artifacts/screenshots/browser-on-desktop.png. A
read-only viewer, who may watch the desktop, cannot open a browser on it, and an
address that is not http(s) is refused with words.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import struct
import sys
import time
import zlib
from pathlib import Path

import psutil
import pytest
from tornado.httpclient import HTTPClientError

from cgu_lab.notebook.apps import web_browser

from .harness import extension_server_config, free_port
from .harness import proxy_headers as as_user
from .test_desktop_view import Rfb

SCREENSHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
GREEN = (0, 160, 0)
PORT = free_port()
# An app of the notebook: a page painted GREEN. (No braces: they are placeholders.)
SERVE = (
    "import http.server, sys\n"
    "PAGE = b'<html><head><title>notebook app</title></head>'"
    " + b'<body style=\"margin:0;background:#00a000\"><h1>the notebook app</h1></body></html>'\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def do_GET(self):\n"
    "        self.send_response(200); self.send_header('Content-Type', 'text/html')\n"
    "        self.end_headers(); self.wfile.write(PAGE)\n"
    "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n"
)
APP = {"name": "site", "title": "Site", "command": [sys.executable, "-c", SERVE, "{port}"]}

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not shutil.which("Xvnc"), reason="TigerVNC (scripts/deps.sh) is missing"),
    pytest.mark.skipif(web_browser.program() is None, reason="Chromium is not installed"),
]


@pytest.fixture(autouse=True)
def _stop_the_app():
    """The app on a TCP port: jupyter-server-proxy stops it when a server process exits,
    which this test's server (in the test's process) never does; its folder-less command
    is not one the apps' close() recognises."""
    yield
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "the notebook app" in " ".join(process.cmdline()):
                process.terminate()


@pytest.fixture
def jp_server_config():
    app = {**APP, "port": PORT}
    config = extension_server_config(
        CguLabExtension={"apps": json.dumps(["desktop", "browser", app])}
    )
    config["ServerApp"]["jpserver_extensions"]["jupyter_server_proxy"] = True
    return config


class Screen(Rfb):
    """The scripted VNC client, keeping the pixels of raw updates (B, G, R, x each)."""

    async def screenshot(self) -> bytes:
        pixels = bytearray(self.width * self.height * 4)
        await self.send(struct.pack(">BBHHHH", 3, 0, 0, 0, self.width, self.height))
        while True:
            kind = (await self.read(1))[0]
            if kind == 0:
                break
            if kind == 2:
                continue
            (length,) = struct.unpack(">xxxi", await self.read(7))
            await self.read(abs(length))
        (rects,) = struct.unpack(">xH", await self.read(3))
        for _ in range(rects):
            x, y, w, h, encoding = struct.unpack(">HHHHi", await self.read(12))
            if encoding != 0:
                await self.read(await self._rect_size(encoding, w, h))
                continue
            data = await self.read(w * h * 4)
            for row in range(h):
                start = ((y + row) * self.width + x) * 4
                pixels[start : start + w * 4] = data[row * w * 4 : (row + 1) * w * 4]
        return bytes(pixels)

    def share(self, pixels: bytes, colour: tuple[int, int, int]) -> float:
        red, green, blue = colour
        hits = sum(
            1
            for i in range(0, len(pixels), 4 * 7)  # every 7th pixel is plenty
            if abs(pixels[i + 2] - red) < 30
            and abs(pixels[i + 1] - green) < 30
            and abs(pixels[i] - blue) < 30
        )
        return hits / (len(pixels) / (4 * 7))

    def png(self, pixels: bytes) -> bytes:
        rows = b"".join(
            b"\x00"
            + bytes(
                v
                for i in range(y * self.width * 4, (y + 1) * self.width * 4, 4)
                for v in (pixels[i + 2], pixels[i + 1], pixels[i])
            )
            for y in range(self.height)
        )

        def chunk(kind: bytes, body: bytes) -> bytes:
            return (
                struct.pack(">I", len(body))
                + kind
                + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
            )

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows, 6))
            + chunk(b"IEND", b"")
        )


def pss(*names: str) -> float:
    """MB of memory (proportional set size) of this test's processes named `names`."""
    total = 0
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if process.name().startswith(names):
                total += process.memory_full_info().pss
    return total / 2**20


async def post_browser(jp_fetch, headers: dict, url: str):
    return await jp_fetch(
        "cgu-lab",
        "apps",
        "browser",
        method="POST",
        body=json.dumps({"url": url}),
        # As JupyterLab sends a state change: the XSRF cookie and header.
        headers={**headers, "X-XSRFToken": "x", "Cookie": "_xsrf=x"},
    )


async def test_chromium_on_the_desktop_opens_the_notebooks_app(jp_fetch, jp_ws_fetch):
    editor = as_user("bob", "edit")
    listed = json.loads((await jp_fetch("cgu-lab", "apps", headers=editor)).body)
    assert [a["name"] for a in listed["apps"]] == ["desktop", "browser", "site"], listed
    screen = Screen(await jp_ws_fetch("desktop/", headers=editor))
    await screen.handshake()
    page = await jp_fetch("site/", headers=editor, request_timeout=60)
    assert b"the notebook app" in page.body
    url = f"http://127.0.0.1:{PORT}/"
    began = time.monotonic()
    for _ in range(40):  # the desktop's display is known once Xvnc has chosen it
        try:
            opened = await post_browser(jp_fetch, editor, url)
            break
        except HTTPClientError as error:
            assert error.code == 409, error.response.body
            await asyncio.sleep(0.25)
    assert opened.code == 202 and json.loads(opened.body)["url"] == url
    share, pixels = 0.0, b""
    while time.monotonic() - began < 60 and share < 0.3:
        await asyncio.sleep(1)
        pixels = await screen.screenshot()
        share = screen.share(pixels, GREEN)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    (SCREENSHOTS / "browser-on-desktop.png").write_bytes(screen.png(pixels))
    print(f"Chromium showed the app after {time.monotonic() - began:.1f} s ({share:.0%} green)")
    desktop = pss("Xvnc", "openbox", "xterm")
    print(f"memory at idle: Chromium {pss('chrom'):.0f} MB, the desktop {desktop:.0f} MB")
    assert share >= 0.3, f"the app's green covers {share:.0%} of the desktop"


async def test_a_viewer_cannot_open_a_browser_and_bad_addresses_are_refused(jp_fetch):
    with pytest.raises(HTTPClientError) as refused:
        await post_browser(jp_fetch, as_user("ta", "read"), "http://127.0.0.1:1/")
    assert refused.value.code == 403
    assert json.loads(refused.value.response.body)["code"] == "read_only"
    listed = json.loads((await jp_fetch("cgu-lab", "apps", headers=as_user("ta", "read"))).body)
    assert [a["name"] for a in listed["apps"]] == ["desktop"]
    with pytest.raises(HTTPClientError) as bad:
        await post_browser(jp_fetch, as_user("bob", "edit"), "file:///etc/passwd")
    body = json.loads(bad.value.response.body)
    assert bad.value.code == 400 and body["code"] == "invalid", body
    assert "http:// or https://" in body["message"]

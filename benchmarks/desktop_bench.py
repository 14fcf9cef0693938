"""The notebook's Linux desktop: how soon it is ready, and what the proxy costs a frame.

A notebook server with the cgu-lab extension and jupyter-server-proxy (no
controller: the controller's proxy is proxy_overhead.py's subject) offers the
desktop; a scripted VNC client (RFC 6143, raw encoding) measures:

- ready: from the first websocket to `desktop/` (jupyter-server-proxy starts
  Xvnc, openbox and xterm) to the server's first RFB bytes, against the same
  session started directly (`desktop_session` on a socket of our own) and
  connected to as soon as its socket accepts (the faster of a start before
  and one after, so that neither side pays alone for a cold disk cache);
- frame round trip: a non-incremental FramebufferUpdateRequest for a 64x64
  region until its pixels have arrived, ROUNDS times, on three paths: the
  editor's websocket (jupyter-server-proxy's raw socket proxy), a read-only
  viewer's websocket (the view-only filter), and the VNC unix socket
  directly (the peer). Median and p95, and each path's ratio to the direct one.

Run from the repository root: `.venv/bin/python benchmarks/desktop_bench.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import http.client
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets

SECRET = "bench-secret"
OWNER = {"X-Cgu-User": "bench", "X-Cgu-Access": "owner", "X-Cgu-Proxy-Secret": SECRET}
VIEWER = {"X-Cgu-User": "ta", "X-Cgu-Access": "read", "X-Cgu-Proxy-Secret": SECRET}
ROUNDS = 200
REGION = 64


class Rfb:
    """A VNC client over `receive()`/`send()` callables: handshake and raw frames."""

    def __init__(self, receive, send) -> None:
        self.receive, self.send = receive, send
        self.buffer = bytearray()

    async def read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            chunk = await self.receive()
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    async def handshake(self) -> None:
        await self.read(12)
        await self.send(b"RFB 003.008\n")
        (count,) = await self.read(1)
        await self.read(count)
        await self.send(b"\x01")
        await self.read(4)
        await self.send(b"\x01")
        header = await self.read(24)
        (length,) = struct.unpack(">I", header[20:24])
        await self.read(length)
        pixel_format = struct.pack(">BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0)
        await self.send(b"\x00\x00\x00\x00" + pixel_format)
        await self.send(struct.pack(">BxHi", 2, 1, 0))

    async def frame(self) -> float:
        start = time.perf_counter()
        await self.send(struct.pack(">BBHHHH", 3, 0, 0, 0, REGION, REGION))
        while True:
            kind = (await self.read(1))[0]
            if kind == 0:
                (rects,) = struct.unpack(">xH", await self.read(3))
                for _ in range(rects):
                    _, _, w, h, _ = struct.unpack(">HHHHi", await self.read(12))
                    await self.read(w * h * 4)
                return time.perf_counter() - start
            if kind == 3:
                (length,) = struct.unpack(">xxxi", await self.read(7))
                await self.read(abs(length))
            elif kind != 2:
                raise RuntimeError(f"server message {kind}")


async def over_websocket(url: str, headers: dict) -> tuple[Rfb, object]:
    ws = await websockets.connect(url, additional_headers=headers, max_size=None)

    async def receive() -> bytes:
        message = await ws.recv()
        return message if isinstance(message, bytes) else message.encode()

    return Rfb(receive, ws.send), ws


async def over_socket(path: str) -> tuple[Rfb, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_unix_connection(path)

    async def send(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    return Rfb(lambda: reader.read(65536), send), writer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def notebook_server(home: str):
    port = free_port()
    env = {
        **os.environ,
        "HOME": home,
        "TMPDIR": home,  # the apps' socket folder is made here
        "JUPYTER_CONFIG_DIR": str(Path(home) / ".jupyter"),
        "JUPYTER_RUNTIME_DIR": str(Path(home) / "runtime"),
        "CGU_PROXY_SECRET": SECRET,
        "CGU_NOTEBOOK_OWNER": "bench",
        "CGU_APPS": json.dumps(["desktop"]),
    }
    env.pop("XDG_RUNTIME_DIR", None)
    command = [
        *(sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1"),
        f"--ServerApp.port={port}",
        f"--ServerApp.root_dir={home}",
        "--ServerApp.allow_root=True",
        "--ServerApp.identity_provider_class=cgu_lab.notebook.identity.ProxyIdentityProvider",
        "--ServerApp.authorizer_class=cgu_lab.notebook.authorizer.ShareAuthorizer",
    ]
    log = open(Path(home) / "server.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=home)
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                connection.request("GET", "/cgu-lab/apps", headers=OWNER)
                if connection.getresponse().status == 200:
                    break
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError((Path(home) / "server.log").read_text()[-3000:])
            time.sleep(0.3)
        yield port
    finally:
        server.terminate()
        server.wait(20)
        log.close()


async def direct_ready(home: str) -> float:
    """The peer of `ready`: the session started by hand, connected to when it accepts."""
    folder = tempfile.mkdtemp(dir=home)
    path = os.path.join(folder, "vnc.sock")
    start = time.perf_counter()
    session = subprocess.Popen(
        [sys.executable, "-m", "cgu_lab.notebook.apps.desktop_session", path],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            with contextlib.suppress(OSError):
                rfb, writer = await over_socket(path)
                await rfb.read(12)
                writer.close()
                return time.perf_counter() - start
            await asyncio.sleep(0.02)
    finally:
        session.terminate()
        session.wait(10)


async def round_trips(rfb: Rfb) -> list[float]:
    for _ in range(10):  # warm up
        await rfb.frame()
    return [await rfb.frame() for _ in range(ROUNDS)]


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95)] * 1000


async def measure(home: str) -> None:
    cold = await direct_ready(home)  # the first start also warms the disk cache
    with notebook_server(home) as port:
        start = time.perf_counter()
        editor, editor_ws = await over_websocket(f"ws://127.0.0.1:{port}/desktop/", OWNER)
        await editor.read(12)
        ready = time.perf_counter() - start
        editor.buffer[:0] = b"RFB 003.008\n"  # handshake() reads the version again
        await editor.handshake()
        peer_ready = min(cold, await direct_ready(home))
        print(
            f"desktop ready: {ready:.2f} s through jupyter-server-proxy, "
            f"{peer_ready:.2f} s started directly (ratio {ready / peer_ready:.2f})"
        )
        sockets = glob.glob(os.path.join(home, "cgu-lab-*-apps-*", "desktop.sock"))
        viewer, viewer_ws = await over_websocket(
            f"ws://127.0.0.1:{port}/cgu-lab/apps/desktop/view", VIEWER
        )
        await viewer.handshake()
        direct, writer = await over_socket(sockets[0])
        await direct.handshake()
        results = {
            "direct unix socket": await round_trips(direct),
            "editor (jupyter-server-proxy)": await round_trips(editor),
            "viewer (view-only filter)": await round_trips(viewer),
        }
        base = summary(results["direct unix socket"])[0]
        print(f"frame round trip, {REGION}x{REGION} raw, {ROUNDS} rounds:")
        for name, times in results.items():
            median, p95 = summary(times)
            print(
                f"  {name:32s} median {median:6.2f} ms  p95 {p95:6.2f} ms  "
                f"ratio {median / base:5.2f}"
            )
        await editor_ws.close()
        await viewer_ws.close()
        writer.close()


def main() -> int:
    if not shutil.which("Xvnc"):
        print("skipped: TigerVNC's Xvnc is not installed (scripts/deps.sh)")
        return 0
    with tempfile.TemporaryDirectory(prefix="cgu-desktop-bench-") as home:
        asyncio.run(measure(home))
    return 0


if __name__ == "__main__":
    sys.exit(main())

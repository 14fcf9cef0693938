"""Web Serial bridge: round-trip latency and throughput, against the wire rate of a real port.

Three processes, as in use: a notebook server with the cgu-lab extension
(`jupyter server`, no controller: the proxy's own cost is proxy_overhead.py's
subject), a "browser" here (a websocket client that plays a device with a
loopback jumper, TX to RX: it echoes every byte and acknowledges it, keeping
to the server's flow-control window as the page does), and a "kernel"
(a subprocess with pyserial) on each of the two paths the notebook offers:

  pty      - `serial.Serial("~/.cgu/serial/ttyWEB0")`
  rfc2217  - `serial.serial_for_url("rfc2217://127.0.0.1:PORT")`

Round trip: the kernel writes a message and reads it back (kernel -> server ->
websocket peer -> server -> kernel), ROUNDS times; median and p95 are printed
next to how long the same message takes on a real wire with a loopback
jumper (out and back, 10 bits a byte for 8N1) at 115200 and 921600 baud.
Throughput: the kernel writes TOTAL random bytes while it reads the echo
back; bytes per second each way, against the wire's 11,520 and 92,160 B/s.

Run from the repository root: `.venv/bin/python benchmarks/bench_serial.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-secret"
HEADERS = {"X-Cgu-User": "bench", "X-Cgu-Access": "owner", "X-Cgu-Proxy-Secret": SECRET}
ROUNDS = 300
SIZES = (1, 64)
TOTAL = 2 * 1024 * 1024
WIRE_RATES = (115200, 921600)

# The kernel's side: pyserial on one path; prints its timings as JSON.
KERNEL = r"""
import json, os, sys, threading, time
import serial
path, rounds, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[4])
sizes = json.loads(sys.argv[3])
ser = serial.serial_for_url(path, timeout=10) if "://" in path else serial.Serial(path, timeout=10)
ser.reset_input_buffer()
result = {"latency": {}}
for size in sizes:
    message = bytes(i % 251 for i in range(size))
    times = []
    for index in range(rounds + 20):
        started = time.perf_counter()
        ser.write(message)
        echoed = ser.read(size)
        if echoed != message:
            raise SystemExit(f"echo differs: {echoed!r}")
        if index >= 20:  # the first rounds warm up
            times.append(time.perf_counter() - started)
    result["latency"][size] = times
payload = os.urandom(total)
writer = threading.Thread(target=ser.write, args=(payload,))
started = time.perf_counter()
writer.start()
echoed = bytearray()
while len(echoed) < total:
    chunk = ser.read(min(65536, total - len(echoed)))
    if not chunk:
        raise SystemExit(f"echo stalled after {len(echoed)} bytes")
    echoed += chunk
result["seconds"] = time.perf_counter() - started
writer.join()
if bytes(echoed) != payload:
    raise SystemExit("the echoed payload differs")
ser.close()
print(json.dumps(result))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def notebook_server():
    """A jupyter server with the extension, its HOME a temporary folder; yields its port."""
    with tempfile.TemporaryDirectory(prefix="cgu-serial-bench-") as home:
        port = free_port()
        env = {
            **os.environ,
            "HOME": home,
            "JUPYTER_CONFIG_DIR": str(Path(home) / ".jupyter"),
            "JUPYTER_RUNTIME_DIR": str(Path(home) / "runtime"),
            "CGU_PROXY_SECRET": SECRET,
            "CGU_NOTEBOOK_OWNER": "bench",
        }
        command = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={home}",
            "--ServerApp.allow_root=True",
            "--ServerApp.identity_provider_class=cgu_lab.notebook.identity.ProxyIdentityProvider",
            "--ServerApp.authorizer_class=cgu_lab.notebook.authorizer.ShareAuthorizer",
            "--ServerApp.contents_manager_class=cgu_lab.notebook.contents.ShareAwareContentsManager",
        ]
        log = open(Path(home) / "server.log", "wb")  # noqa: SIM115 - closed below
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=home)
        try:
            deadline = time.monotonic() + 60
            while True:
                with contextlib.suppress(OSError):
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                    connection.request("GET", "/cgu-lab/info", headers=HEADERS)
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


class LoopbackDevice:
    """The page, with a device whose TX is wired to its RX: every byte comes back."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.window = 16384
        self.unacked = 0
        self.credit = asyncio.Event()
        self.echo: asyncio.Queue[bytes] = asyncio.Queue()
        self.attached: asyncio.Future = asyncio.get_running_loop().create_future()

    async def receive(self) -> None:
        async for message in self.ws:
            if isinstance(message, bytes):
                await self.ws.send(json.dumps({"type": "ack", "bytes": len(message)}))
                self.echo.put_nowait(message)
                continue
            control = json.loads(message)
            if control["type"] == "attached":
                self.window = control["window"]
                self.attached.set_result(control)
            elif control["type"] == "ack":
                self.unacked -= control["bytes"]
                self.credit.set()

    async def send(self) -> None:
        while True:
            data = await self.echo.get()
            while self.unacked >= self.window:
                self.credit.clear()
                await self.credit.wait()
            self.unacked += len(data)
            await self.ws.send(data)


async def measure(port: int) -> dict[str, dict]:
    url = f"ws://127.0.0.1:{port}/cgu-lab/serial/channel"
    async with websockets.connect(url, additional_headers=HEADERS, max_size=None) as ws:
        device = LoopbackDevice(ws)
        tasks = [asyncio.create_task(device.receive()), asyncio.create_task(device.send())]
        await ws.send(json.dumps({"type": "hello", "settings": {"baudRate": 921600}}))
        attached = await asyncio.wait_for(device.attached, 10)
        results = {}
        for label, path in (("pty", attached["path"]), ("rfc2217", attached["rfc2217"])):
            kernel = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                KERNEL,
                path,
                str(ROUNDS),
                json.dumps(SIZES),
                str(TOTAL),
                stdout=asyncio.subprocess.PIPE,
            )
            output, _ = await kernel.communicate()
            if kernel.returncode != 0:
                raise RuntimeError(f"the kernel's side failed on {label}")
            results[label] = json.loads(output)
        await ws.send(json.dumps({"type": "close"}))
        for task in tasks:
            task.cancel()
        return results


def wire_seconds(size: int, baud: int) -> float:
    """Out and back through a loopback jumper: 10 bits a byte (8N1), both ways."""
    return 2 * size * 10 / baud


def report(results: dict[str, dict]) -> None:
    print(f"Round trip, kernel -> server -> websocket peer -> kernel ({ROUNDS} rounds):")
    for label, result in results.items():
        for size, times in result["latency"].items():
            times_ms = [t * 1000 for t in times]
            median = statistics.median(times_ms)
            p95 = statistics.quantiles(times_ms, n=100, method="inclusive")[94]
            wires = ", ".join(
                f"{wire_seconds(int(size), baud) * 1000:.3f} ms at {baud}" for baud in WIRE_RATES
            )
            print(
                f"  {label:8} {int(size):3d} B: median {median:.3f} ms, p95 {p95:.3f} ms"
                f"   (the wire itself: {wires})"
            )
    print(f"Throughput, {TOTAL // 1024} KiB written and echoed back at once (each way):")
    for label, result in results.items():
        rate = TOTAL / result["seconds"]
        against = ", ".join(f"{rate / (baud / 10):.0f}x {baud} baud" for baud in WIRE_RATES)
        print(f"  {label:8} {rate / 1024:9.0f} KiB/s   ({against})")


def main() -> None:
    with notebook_server() as port:
        results = asyncio.run(measure(port))
    report(results)


if __name__ == "__main__":
    main()

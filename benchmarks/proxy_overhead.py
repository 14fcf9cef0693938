"""Proxy overhead: our proxy vs direct to the notebook vs configurable-http-proxy.

HTTP: `wrk` requests GET <notebook>/api/status (an authenticated JupyterLab
API call) for a few seconds at a fixed concurrency, in three ways in the same
run against the same notebook server:
  direct  - to the server's port, sending the identity headers and secret a
            perfect proxy would add;
  ours    - through the controller with the user's session cookie (the proxy
            authenticates, authorises and adds the headers);
  chp     - through configurable-http-proxy (npm) to the same port, with the
            client sending the identity headers itself (CHP only forwards).
Websocket: 200 sequential `1+1` executions on one kernel, each ways.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import websockets
from platform_under_test import execute_request, median, now, percentile, platform, server_of

HERE = Path(__file__).resolve().parent
DURATION = 6
CONNECTIONS = 16
ROUNDS = 200


def ensure_chp() -> Path:
    binary = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
    if not binary.exists():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=HERE, check=True
        )
    return binary


def wrk(url: str, headers: dict[str, str]) -> float:
    command = ["wrk", "-t", "1", "-c", str(CONNECTIONS), "-d", f"{DURATION}s"]
    for key, value in headers.items():
        command += ["-H", f"{key}: {value}"]
    output = subprocess.run([*command, url], capture_output=True, text=True, check=True).stdout
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if non_2xx:
        raise RuntimeError(f"{url}: {non_2xx.group(1)} failed requests\n{output}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


async def round_trips(url: str, headers: dict[str, str], **connect) -> list[float]:
    times = []
    async with websockets.connect(url, additional_headers=headers, max_size=None, **connect) as ws:
        for index in range(ROUNDS + 10):
            msg_id, message = execute_request("1+1")
            started = now()
            await ws.send(message)
            while True:
                reply = json.loads(await ws.recv())
                if (
                    reply["parent_header"].get("msg_id") == msg_id
                    and reply["msg_type"] == "execute_reply"
                ):
                    break
            if index >= 10:  # the first rounds warm the kernel up
                times.append((now() - started) * 1000)
    return times


def main() -> None:
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install wrk")
    chp_binary = ensure_chp()
    with platform() as controller, controller.client("bench") as client:
        client.ok("POST", "/api/notebooks", 201, json={"name": "proxy", "cpu": 1, "memory": "2Gi"})
        client.ok("POST", "/api/notebooks/bench/proxy/start?wait=true", 202)
        port, secret = server_of("bench", "proxy")
        identity = {"X-Cgu-User": "bench", "X-Cgu-Proxy-Secret": secret, "X-Cgu-Via": "token"}
        # A browser on the notebook's own origin: its Host and the origin's cookie.
        session = client.notebook_headers("bench", "proxy")
        token = client.ok("POST", "/api/me/tokens", 201, json={"name": "bench"})["token"]
        chp_port = controller.port + 1000
        chp = subprocess.Popen(
            [
                str(chp_binary),
                "--ip",
                "127.0.0.1",
                "--port",
                str(chp_port),
                "--api-ip",
                "127.0.0.1",
                "--api-port",
                str(chp_port + 1),
                "--default-target",
                f"http://127.0.0.1:{port}",
                "--log-level",
                "error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            time.sleep(1.5)
            path = "/notebook/bench/proxy/api/status"
            targets = {
                "direct": (f"http://127.0.0.1:{port}{path}", identity),
                "ours": (f"{controller.url}{path}", session),
                "chp": (f"http://127.0.0.1:{chp_port}{path}", identity),
            }
            wrk(targets["direct"][0], identity)  # warm up
            rates = {name: wrk(url, headers) for name, (url, headers) in targets.items()}

            kernel = client.ok(
                "POST",
                "/notebook/bench/proxy/api/kernels",
                201,
                json={"name": "python3"},
                headers={"Authorization": f"Bearer {token}"},
            )
            channels = f"/notebook/bench/proxy/api/kernels/{kernel['id']}/channels"
            ours, ours_headers, ours_connect = client.notebook_socket(channels)
            ws_targets = {
                "direct": (f"ws://127.0.0.1:{port}{channels}", identity, {}),
                "ours": (ours, ours_headers, ours_connect),
                "chp": (f"ws://127.0.0.1:{chp_port}{channels}", identity, {}),
            }
            rtts = {
                name: asyncio.run(round_trips(url, headers, **connect))
                for name, (url, headers, connect) in ws_targets.items()
            }
        finally:
            chp.terminate()
            chp.wait()
    setup = f"wrk 1 thread, {CONNECTIONS} connections, {DURATION}s"
    print(f"== proxy overhead: HTTP GET api/status, {setup} ==")
    for name, rate in rates.items():
        print(f"{name:>7}: {rate:8.0f} requests/s  ({rate / rates['direct']:.2f} of direct)")
    print(f"ours vs chp: {rates['ours'] / rates['chp']:.2f}x the throughput")
    print(f"== kernel websocket: execute 1+1, {ROUNDS} sequential round trips ==")
    for name, values in rtts.items():
        print(
            f"{name:>7}: median {median(values):6.2f} ms  p95 {percentile(values, 0.95):6.2f} ms  "
            f"({median(values) / median(rtts['direct']):.2f} of direct)"
        )


if __name__ == "__main__":
    main()

"""Live collaboration through the proxy: keystroke-to-viewer latency and the notebook
server's cost per viewer (issue 26: a teacher typing to a class).

One controller process and one notebook server (local backend), as a class sees them:
the teacher (the owner) types into a notebook's first cell over jupyter-collaboration's
room websocket, and 1, then 30, then 60 read-only viewers (a student with a read-only
share, one connection each, all through the controller's proxy on the notebook's own
origin) follow the room. Every client is a pycrdt document speaking the Yjs protocol as
JupyterLab does (tests/ycollab.py), all in this one process.

Latency: from the writer sending a keystroke's update to each viewer's document holding
it (every viewer, every keystroke: median and p95 over all of them). Typing is
KEYSTROKES characters at one every INTERVAL seconds (a fast typist).
Cost: the notebook server's CPU while the class follows (percent of one core, per
keystroke, and per keystroke for each viewer beyond the first row's), its resident
memory against the writer alone (per viewer), and the controller's CPU (the proxy
relays every message to every viewer).

The clients share this process's CPU with the servers they measure: on a small machine
the figures include the viewers' own decoding, as a classroom's laptops would not.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time

import psutil
from platform_under_test import median, percentile, platform  # (puts the repository on the path)

from tests.harness import PASSWORD
from tests.ycollab import NOTEBOOK_TYPE, YClient, room_path, session_path

VIEWERS = (1, 30, 60)
KEYSTROKES = 40
INTERVAL = 0.1
PREFIX = "/notebook/bench/live"
NOTEBOOK = {
    "type": "notebook",
    "format": "json",
    "content": {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "metadata": {},
                "source": "",
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    },
}


def server_process(owner: str, name: str) -> psutil.Process:
    """The notebook's jupyter-lab process (its environment names it; read as root)."""
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            env = process.environ()
            if (
                env.get("CGU_NOTEBOOK_OWNER") == owner
                and env.get("CGU_NOTEBOOK_NAME") == name
                and "jupyter-lab" in " ".join(process.cmdline())
            ):
                return process
    raise RuntimeError(f"no server for {owner}/{name}")


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


class Follower:
    """A client whose arrivals are timed: keystroke k has arrived once the first cell
    holds `base + k + 1` characters (only the writer appends)."""

    def __init__(self, client: YClient) -> None:
        self.client = client
        self.arrived: dict[int, float] = {}
        self.base = 0
        self.task = asyncio.create_task(self._follow())

    async def _follow(self) -> None:
        with contextlib.suppress(Exception):
            async for message in self.client.socket:
                self.client.handle(message if isinstance(message, bytes) else message.encode())
                source = self.client.source() or ""
                got = len(source) - self.base
                if got > 0 and got - 1 not in self.arrived:
                    stamp = time.perf_counter()
                    for k in range(got):
                        self.arrived.setdefault(k, stamp)

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self.task
        with contextlib.suppress(Exception):
            await self.client.close()


async def measure(controller, owner_session, viewer_session) -> list[dict]:
    found = await asyncio.to_thread(
        owner_session.put, session_path(PREFIX, "live.ipynb"), json=NOTEBOOK_TYPE
    )
    room = room_path(PREFIX, found.json())
    url, headers, connect = owner_session.notebook_socket(room)
    writer = await YClient.connect(url, headers, **connect)
    writer_follow = Follower(writer)
    viewer_url, viewer_headers, viewer_connect = viewer_session.notebook_socket(room)
    server = server_process("bench", "live")
    proxy = psutil.Process(controller.process.pid)
    await asyncio.sleep(1)
    rss_alone = server.memory_info().rss
    viewers: list[Follower] = []
    results = []
    try:
        for count in VIEWERS:
            while len(viewers) < count:
                batch = min(10, count - len(viewers))
                clients = await asyncio.gather(
                    *(
                        YClient.connect(viewer_url, viewer_headers, **viewer_connect)
                        for _ in range(batch)
                    )
                )
                viewers += [Follower(c) for c in clients]
            await asyncio.sleep(2)  # the joins' syncs settle
            rss = server.memory_info().rss
            for viewer in viewers:
                viewer.arrived.clear()
                viewer.base = len(viewer.client.source() or "")
            base = len(writer.source() or "")
            assert all(v.base == base for v in viewers), "a viewer is behind before typing"
            sent: list[float] = []
            server_cpu, proxy_cpu, wall = cpu_seconds(server), cpu_seconds(proxy), time.monotonic()
            for k in range(KEYSTROKES):
                update = writer.update_for("abcdefghij"[k % 10])
                sent.append(time.perf_counter())
                await writer.send(update)
                await asyncio.sleep(INTERVAL)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(len(v.arrived) < KEYSTROKES for v in viewers):
                await asyncio.sleep(0.05)
            wall = time.monotonic() - wall
            server_cpu = cpu_seconds(server) - server_cpu
            proxy_cpu = cpu_seconds(proxy) - proxy_cpu
            latencies = [
                (v.arrived[k] - sent[k]) * 1000
                for v in viewers
                for k in range(KEYSTROKES)
                if k in v.arrived
            ]
            missing = count * KEYSTROKES - len(latencies)
            results.append(
                {
                    "viewers": count,
                    "median": median(latencies),
                    "p95": percentile(latencies, 0.95),
                    "max": max(latencies),
                    "missing": missing,
                    "server_cpu_percent": server_cpu / wall * 100,
                    "server_cpu_ms_per_key": server_cpu / KEYSTROKES * 1000,
                    "proxy_cpu_percent": proxy_cpu / wall * 100,
                    "rss_mib": rss / 2**20,
                    "rss_per_viewer_kib": (rss - rss_alone) / count / 1024,
                }
            )
    finally:
        for follower in [*viewers, writer_follow]:
            await follower.close()
    return results


def main() -> None:
    load_before = os.getloadavg()
    with platform() as controller, controller.client("bench-admin") as admin:
        admin.ok(
            "POST",
            "/api/users",
            201,
            json={"name": "bench-class", "role": "student", "password": PASSWORD},
        )
        with (
            controller.client("bench") as owner,
            controller.client("bench-class") as viewer,
        ):
            owner.ok(
                "POST", "/api/notebooks", 201, json={"name": "live", "cpu": 1, "memory": "2Gi"}
            )
            owner.ok("POST", "/api/notebooks/bench/live/start?wait=true", 202)
            token = owner.ok("POST", "/api/me/tokens", 201, json={"name": "bench"})["token"]
            response = owner.put(
                f"{PREFIX}/api/contents/live.ipynb",
                json=NOTEBOOK,
                headers={"Authorization": f"Bearer {token}"},
            )
            assert response.status_code in (200, 201), response.text
            owner.ok(
                "POST",
                "/api/notebooks/bench/live/shares",
                201,
                json={"grantee": "bench-class", "access": "read"},
            )
            results = asyncio.run(measure(controller, owner, viewer))
    load_after = os.getloadavg()
    print(
        f"== live collaboration through the proxy: {KEYSTROKES} keystrokes, one every "
        f"{INTERVAL * 1000:.0f} ms, to N read-only viewers (pycrdt clients) =="
    )
    print(
        f"{'viewers':>7}  {'median':>8}  {'p95':>8}  {'max':>8}  {'server CPU':>10}  "
        f"{'CPU/key':>8}  {'+/viewer':>8}  {'proxy CPU':>9}  {'server RSS':>10}  {'RSS/viewer':>10}"
    )
    first = results[0]
    for r in results:
        # The server's CPU per keystroke beyond the first row's, per viewer added: what
        # one more student costs the teacher's notebook.
        extra = r["viewers"] - first["viewers"]
        marginal = (
            f"{(r['server_cpu_ms_per_key'] - first['server_cpu_ms_per_key']) / extra * 1000:6.0f}us"
            if extra
            else f"{'-':>8}"
        )
        print(
            f"{r['viewers']:>7}  {r['median']:6.1f}ms  {r['p95']:6.1f}ms  {r['max']:6.1f}ms  "
            f"{r['server_cpu_percent']:9.1f}%  {r['server_cpu_ms_per_key']:6.2f}ms  "
            f"{marginal}  {r['proxy_cpu_percent']:8.1f}%  {r['rss_mib']:7.1f}MiB  "
            f"{r['rss_per_viewer_kib']:7.0f}KiB"
            + (f"  ({r['missing']} arrivals missing)" if r["missing"] else "")
        )
    print(
        f"machine: {os.cpu_count()} CPUs, load average {load_before[0]:.1f} before, "
        f"{load_after[0]:.1f} after; goal p95 <= 100 ms at 60 viewers: "
        + ("met" if results[-1]["p95"] <= 100 else "NOT met")
    )


if __name__ == "__main__":
    main()

"""Idle density: what an idle notebook (its server and one idle kernel) holds in memory.

The goal (issue 25): an idle notebook at most 120 MB RSS including its kernel. Measured
here, as root, from /proc/<pid>/smaps_rollup (what smem and psutil read): RSS, and PSS
(each page shared by k processes counted 1/k: what a notebook really adds to the host).

- cgu-lab: NOTEBOOKS notebooks started through a controller (the warm launcher forks
  each server), one idle kernel opened in each through the proxy, then left alone for
  SETTLE seconds; the server, its kernel and their sum, mean and largest. Then the same
  under an idle policy whose kernel limit (3 s here) lets each server shut its idle
  kernel down itself: the server alone, what an idle notebook holds after the limit;
- the peer beside: the same JupyterLab and kernel from this environment exec'd as
  JupyterHub's LocalProcessSpawner runs a single-user server (one `jupyter-lab` process
  per user, nothing shared but the files' pages), NOTEBOOKS of them, measured the same way;
- a kernel alone under variants of its environment (`ipykernel_launcher` with a
  connection file, as a server starts it): what a setting saves, before it is adopted.

Usage: density.py [--notebooks 3] [--settle 8] [--only cgu|peer|kernel]
The host's load (/proc/loadavg) is printed at the start and the end: PSS and RSS do
not depend on it, but a busy host settles later.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
from platform_under_test import platform

BIN = Path(sys.executable).parent
GOAL_MB = 120
KERNEL_VARIANTS = {
    "as started today": {},
    "MALLOC_ARENA_MAX=2": {"MALLOC_ARENA_MAX": "2"},
    "MALLOC_TRIM_THRESHOLD_=128K": {"MALLOC_TRIM_THRESHOLD_": "131072"},
}


def load() -> str:
    return " ".join(open("/proc/loadavg").read().split()[:3])


def rollup(pid: int) -> tuple[float, float]:
    """RSS and PSS of one process, MiB."""
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as source:
        for line in source:
            name, _, rest = line.partition(":")
            if name in ("Rss", "Pss"):
                values[name] = int(rest.split()[0]) / 1024
    return values["Rss"], values["Pss"]


def kernels_of(server: psutil.Process) -> list[psutil.Process]:
    return [
        child
        for child in server.children(recursive=True)
        if "ipykernel" in " ".join(child.cmdline())
    ]


def measure(server: psutil.Process) -> dict[str, tuple[float, float]]:
    """The server's and its (one) kernel's RSS and PSS."""
    (kernel,) = kernels_of(server)
    return {"server": rollup(server.pid), "kernel": rollup(kernel.pid)}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(check, seconds: float = 120, what: str = "it") -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.3)
    raise RuntimeError(f"timed out waiting for {what}")


# -- cgu-lab -------------------------------------------------------------------------


def server_process(owner: str, name: str) -> psutil.Process:
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            env = process.environ()
            mine = env.get("CGU_NOTEBOOK_OWNER") == owner and env.get("CGU_NOTEBOOK_NAME") == name
            if mine and "jupyter-lab" in " ".join(process.cmdline()):
                return process
    raise RuntimeError(f"no server for {owner}/{name}")


def cgu_lab(count: int, settle: float) -> tuple[list[dict], list[tuple[float, float]]]:
    """The notebooks with their idle kernel; then, started again under an idle policy
    that culls kernels after 3 s, each server alone once its own culler has acted."""
    with platform(quota_notebooks=count + 1) as controller, controller.client("bench") as user:
        names = [f"d{index}" for index in range(count)]
        for name in names:
            body = {"name": name, "cpu": 0.5, "memory": "1Gi"}
            user.ok("POST", "/api/notebooks", 201, json=body)
        figures = []
        for kernel_minutes in (None, 0.05):
            with controller.client("bench-admin") as admin:
                policy = {"idle_minutes": 60, "kernel_idle_minutes": kernel_minutes}
                admin.ok("PUT", "/api/culling/policy", json=policy)
            for name in names:
                user.ok("POST", f"/api/notebooks/bench/{name}/start?wait=true", 202)
                kernels = f"/notebook/bench/{name}/api/kernels"
                user.ok("POST", kernels, 201, json={"name": "python3"})
            servers = [server_process("bench", name) for name in names]
            for server in servers:
                wanted = 1 if kernel_minutes is None else 0
                wait_for(lambda s=server, n=wanted: len(kernels_of(s)) == n, what="the kernel")
            time.sleep(settle)
            if kernel_minutes is None:
                figures.append([measure(server) for server in servers])
            else:
                figures.append([rollup(server.pid) for server in servers])
            for name in names:
                user.ok("POST", f"/api/notebooks/bench/{name}/stop?wait=true", 202)
        return figures[0], figures[1]


# -- the peer: JupyterLab exec'd per user, as JupyterHub's LocalProcessSpawner does ----


def peer(count: int, settle: float) -> list[dict]:
    homes = [Path(tempfile.mkdtemp(prefix="density-peer-")) for _ in range(count)]
    processes = []
    try:
        for home in homes:
            port = free_port()
            env = {
                "PATH": f"{BIN}:/usr/bin:/bin",
                "HOME": str(home),
                "LANG": "C.UTF-8",
                "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
            }
            argv = [
                str(BIN / "jupyter-lab"),
                "--no-browser",
                "--allow-root",
                f"--port={port}",
                "--ServerApp.ip=127.0.0.1",
                "--IdentityProvider.token=density",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ]
            log = open(home / "server.log", "wb")  # noqa: SIM115 - closed with the process
            process = subprocess.Popen(argv, env=env, cwd=home, stdout=log, stderr=log)
            processes.append((process, port, log))
        headers = {"Authorization": "token density"}
        for _, port, _ in processes:
            base = f"http://127.0.0.1:{port}"
            wait_for(
                lambda base=base: httpx.get(f"{base}/api/status", headers=headers).is_success,
                what="the peer's server",
            )
            made = httpx.post(f"{base}/api/kernels", headers=headers, json={"name": "python3"})
            made.raise_for_status()
        servers = [psutil.Process(process.pid) for process, _, _ in processes]
        for server in servers:
            wait_for(lambda s=server: len(kernels_of(s)) == 1, what="the peer's kernel")
        time.sleep(settle)
        return [measure(server) for server in servers]
    finally:
        for process, _, log in processes:
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process(process.pid).children(recursive=True):
                    child.kill()
            process.kill()
            process.wait()
            log.close()
        for home in homes:
            shutil.rmtree(home, ignore_errors=True)


# -- a kernel alone, under variants -------------------------------------------------------


def kernel_alone(extra: dict[str, str], settle: float) -> tuple[float, float]:
    """One kernel started as jupyter-server starts it, idle for `settle` s: RSS, PSS."""
    folder = Path(tempfile.mkdtemp(prefix="density-kernel-"))
    connection = folder / "kernel.json"
    ports = {
        f"{channel}_port": free_port() for channel in ("shell", "iopub", "stdin", "control", "hb")
    }
    connection.write_text(
        json.dumps(
            {
                **ports,
                "ip": "127.0.0.1",
                "transport": "tcp",
                "signature_scheme": "hmac-sha256",
                "key": "density",
                "kernel_name": "python3",
            }
        )
    )
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8", **extra}
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", str(connection)]
    process = subprocess.Popen(argv, env=env, cwd=folder, stdout=subprocess.DEVNULL)
    try:
        wait_for(lambda: len(psutil.Process(process.pid).threads()) > 3, what="the kernel")
        time.sleep(settle)
        return rollup(process.pid)
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)


# -- the table -------------------------------------------------------------------------


def summary(label: str, figures: list[dict]) -> None:
    print(f"\n{label}: {len(figures)} idle notebooks, one idle kernel each (MiB)")
    print(f"{'':<18}{'RSS mean':>10}{'RSS max':>10}{'PSS mean':>10}{'PSS max':>10}")
    for part in ("server", "kernel", "server + kernel"):
        if part == "server + kernel":
            rss = [f["server"][0] + f["kernel"][0] for f in figures]
            pss = [f["server"][1] + f["kernel"][1] for f in figures]
        else:
            rss = [f[part][0] for f in figures]
            pss = [f[part][1] for f in figures]
        print(
            f"{part:<18}{statistics.mean(rss):>10.1f}{max(rss):>10.1f}"
            f"{statistics.mean(pss):>10.1f}{max(pss):>10.1f}"
        )
    worst = max(f["server"][0] + f["kernel"][0] for f in figures) * 2**20 / 1e6
    verdict = "within" if worst <= GOAL_MB else "over"
    print(f"goal: idle notebook <= {GOAL_MB} MB RSS with its kernel: {worst:.0f} MB, {verdict}")


def culled(figures: list[tuple[float, float]]) -> None:
    """The servers whose idle kernel their own culler shut down (an idle policy's
    kernel limit, core.culling.kernel_culling)."""
    rss = [f[0] for f in figures]
    pss = [f[1] for f in figures]
    print(
        f"{'server, kernel culled':<22}RSS mean {statistics.mean(rss):.1f} max {max(rss):.1f}"
        f"  PSS mean {statistics.mean(pss):.1f} max {max(pss):.1f} (MiB); "
        f"{max(rss) * 2**20 / 1e6:.0f} MB RSS at most"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notebooks", type=int, default=3)
    parser.add_argument("--settle", type=float, default=8)
    parser.add_argument("--only", choices=["cgu", "peer", "kernel"])
    args = parser.parse_args()
    print(f"load at start: {load()}; {os.cpu_count()} CPUs")
    if args.only in (None, "cgu"):
        with_kernel, without = cgu_lab(args.notebooks, args.settle)
        summary("cgu-lab (warm-forked servers)", with_kernel)
        culled(without)
    if args.only in (None, "peer"):
        summary("peer (jupyter-lab exec'd per user)", peer(args.notebooks, args.settle))
    if args.only in (None, "kernel"):
        print("\nan idle kernel alone (ipykernel_launcher), MiB")
        for label, extra in KERNEL_VARIANTS.items():
            rss, pss = kernel_alone(extra, args.settle)
            print(f"  {label:<28} RSS {rss:6.1f}  PSS {pss:6.1f}")
    print(f"\nload at end: {load()}")


if __name__ == "__main__":
    main()

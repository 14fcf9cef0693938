"""A throwaway platform for benchmarks: a controller, one user, one notebook."""

from __future__ import annotations

import contextlib
import shutil
import statistics
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.harness import Controller, execute_request, reachable_dir  # noqa: E402

median = statistics.median
__all__ = ["Controller", "execute_request", "median", "now", "percentile", "platform", "server_of"]


@contextlib.contextmanager
def platform(quota_notebooks: int = 10):
    base = reachable_dir()
    controller = Controller(base / "data")
    controller.create_user("bench-admin", "admin")
    controller.create_user("bench")
    controller.start()
    try:
        with controller.client("bench-admin") as admin:
            admin.ok(
                "PUT",
                "/api/users/bench/quota",
                json={"cpu": 16, "memory": "64Gi", "gpus": {}, "notebooks": quota_notebooks},
            )
        yield controller
    finally:
        controller.stop()
        controller.kill_notebooks()
        shutil.rmtree(base, ignore_errors=True)


def server_of(owner: str, name: str) -> tuple[int, str]:
    """Port and proxy secret of a running notebook server (read as root from /proc)."""
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            env = process.environ()
            if (
                env.get("CGU_NOTEBOOK_OWNER") == owner
                and env.get("CGU_NOTEBOOK_NAME") == name
                and "jupyter-lab" in " ".join(process.cmdline())
            ):
                ports = [
                    c.laddr.port for c in process.net_connections("tcp") if c.status == "LISTEN"
                ]
                return ports[0], env["CGU_PROXY_SECRET"]
    raise RuntimeError(f"no server for {owner}/{name}")


def percentile(values: list[float], fraction: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(fraction * 100) - 1]


def now() -> float:
    return time.perf_counter()

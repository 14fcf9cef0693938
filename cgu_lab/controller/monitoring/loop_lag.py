"""How late the controller's event loop runs what is due.

The proxy, the API, progress streams and every start's orchestration share one event
loop. A callback that holds it (a slow synchronous call, a large document serialized at
once) delays every student at the same moment, and no single request's timing says so.
JupyterHub keeps the same figure for its hub (`event_loop_interval_seconds`). Here a
task asks to wake every `interval` and records how much later than asked it woke, in a
Prometheus histogram on /metrics. The class benchmark reads it around a burst to tell a
busy loop (the controller's fault) from a starved notebook server (the host's share).

It reads the loop's own clock (`loop.time()`), not the platform's `Clock`: what is
measured is the real loop's scheduling, which a test's FakeClock must not move.
"""

from __future__ import annotations

import asyncio

from prometheus_client import Histogram

# From a healthy loop's few milliseconds to the stalls a class's burst used to cause.
LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class LoopLag:
    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.histogram = Histogram(
            "cgu_lab_event_loop_lag_seconds",
            "How much later than asked the controller's event loop woke a task due every "
            "interval: the wait every request and start shared at that moment",
            buckets=LAG_BUCKETS,
            registry=None,
        )

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.interval
            await asyncio.sleep(self.interval)
            late = max(0.0, loop.time() - due)
            self.histogram.observe(late)

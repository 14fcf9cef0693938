"""The controller's one clock: every reading of the time and every timed wait goes through it.

The platform makes one `Clock` (root.py's `Platform`) and gives it to each service that
needs the time: sessions and tokens expiring, shares running out, the idle culler's
countdown, reclaim, the queue's order, deadlines, competition phases, TTL caches and the
background loops' pauses. Nothing under `controller/` reads `datetime.now` or
`time.time` itself (tests/test_clock.py walks the modules and fails if one does), so a
test can hand the platform a `FakeClock` and move it: the culler's 30 idle minutes, a
share's expiry or a cache's freshness pass in one call instead of a real wait.

Three readings, for three uses:
- `now()`: the wall-clock instant, timezone-aware UTC, for what is stored or shown;
- `monotonic()`: seconds that never run backwards, for freshness and deadlines;
- `sleep(seconds)`: the pause of a background loop (the culler's, the monitor's, ...),
  which a `FakeClock` ends early when it is moved past it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from datetime import datetime, timedelta, timezone


class Clock:
    """The real time. Stateless; one instance serves the whole controller."""

    def now(self) -> datetime:
        """The current instant, timezone-aware UTC (what the database stores and compares)."""
        return datetime.now(timezone.utc)

    def monotonic(self) -> float:
        """Seconds from an arbitrary start that never go backwards (freshness, deadlines)."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """Pause the calling task for `seconds` of this clock's time."""
        await asyncio.sleep(seconds)


class FakeClock(Clock):
    """A clock a test moves: the real time plus an offset the test sets.

    It keeps running with real time (rows written one after another keep their order, and
    the timestamps of real processes a test starts, a JupyterLab's kernels', line up with
    it) and jumps when told: `advance(seconds=31)` makes every reading 31 s later at once
    and wakes the `sleep`s that end within the jump, so a background loop's next pass
    comes now instead of after its interval. `set(when)` puts `now()` at an instant
    (before or after); `monotonic()` only ever moves forward, so a cache's entry never
    looks fresh for longer than it would have.

    `advance` and `set` may be called from any thread (tests drive an app whose event loop
    runs in a helper thread).
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._lock = threading.Lock()
        self._offset = timedelta(0) if start is None else start - datetime.now(timezone.utc)
        self._ahead = 0.0  # seconds monotonic() runs ahead of the real one
        self._sleepers: set[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = set()

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + self._offset

    def monotonic(self) -> float:
        return time.monotonic() + self._ahead

    def advance(self, delta: timedelta | float = 0.0, **parts: float) -> datetime:
        """Move the clock forward by `delta` (seconds or a timedelta) plus `parts`
        (timedelta's keywords: `minutes=30`, `days=1`); returns the new `now()`."""
        step = delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
        step += timedelta(**parts)
        if step < timedelta(0):
            raise ValueError("a clock is moved forward; use set() to go back to an instant")
        with self._lock:
            self._offset += step
            self._ahead += step.total_seconds()
        self._wake()
        return self.now()

    def set(self, when: datetime) -> None:
        """Put `now()` at `when` (timezone-aware); `monotonic()` follows only forwards."""
        if when.tzinfo is None:
            raise ValueError("give the instant with its time zone")
        with self._lock:
            step = when - self.now()
            self._offset += step
            self._ahead += max(0.0, step.total_seconds())
        self._wake()

    async def sleep(self, seconds: float) -> None:
        """Ends after `seconds` of real time, or as soon as the clock is moved past it."""
        deadline = self.monotonic() + seconds
        loop = asyncio.get_running_loop()
        while (left := deadline - self.monotonic()) > 0:
            moved = loop.create_future()
            entry = (loop, moved)
            with self._lock:
                self._sleepers.add(entry)
            try:
                await asyncio.wait([moved], timeout=left)
            finally:
                with self._lock:
                    self._sleepers.discard(entry)

    def _wake(self) -> None:
        """Every sleeper looks at the clock again (each on its own event loop)."""
        with self._lock:
            sleepers = list(self._sleepers)
        for loop, moved in sleepers:
            # RuntimeError: that loop has closed; nothing sleeps there any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_resolve, moved)


def _resolve(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)

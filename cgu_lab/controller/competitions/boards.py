"""Leaderboards kept ranked between reads: recomputed when a score arrives, not per viewer.

Why: at the end of a lab, 200 students watch the board refresh. Ranking it on each
request (every scored entry read, the staff looked up, the board sorted) answered
72 requests/s with a p99 of 2 s and hundreds of timeouts on a 2-core host
(benchmarks/competition_bench.py). The board only changes when something it shows
changes, and the platform knows when that happens: a scored entry, a team made,
joined or left, the competition's settings changed or the competition deleted each
call `changed(competition_id)`. Between those, every viewer reads the same ranked rows;
what differs per viewer (which row is theirs, whether they may see the private board)
is decided per request, outside the cache.

What the platform does not announce (a course's staff changing, a display name) is
seen within `TTL` seconds. Viewers arriving while a board is being ranked wait for that
one ranking (one computation per change, however many viewers).

Viewers who keep the page open follow a stream (`leaderboard/events`) instead of asking
again and again: `next_change` wakes every follower of a competition once per announced
change, so 200 open pages cost one ranking and 200 writes per score, not 200 requests a
second.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

TTL = 10.0  # seconds a ranked board is served without an announced change


class Boards:
    """Ranked boards by (competition id, board), each valid until its competition changes."""

    def __init__(self, clock: Callable[[], float], ttl: float = TTL) -> None:
        """`clock`: seconds that only go forward (the platform's Clock.monotonic), by which
        a board ages."""
        self.ttl = ttl
        self.clock = clock
        self._versions: dict[int, int] = {}
        self._boards: dict[Hashable, tuple[int, float, Any]] = {}
        self._ranking: dict[Hashable, tuple[int, asyncio.Task]] = {}
        self._waiters: dict[int, asyncio.Event] = {}

    def changed(self, competition_id: int) -> None:
        """Something a board of this competition shows has changed: rank it again."""
        self._versions[competition_id] = self._versions.get(competition_id, 0) + 1
        for key in [k for k in self._boards if k[0] == competition_id]:
            del self._boards[key]
        waiting = self._waiters.pop(competition_id, None)
        if waiting is not None:
            waiting.set()

    def version(self, competition_id: int) -> int:
        """How many changes of this competition were announced (a follower's bookmark)."""
        return self._versions.get(competition_id, 0)

    async def next_change(self, competition_id: int, seen: int) -> int:
        """Wait until a change after version `seen` is announced; the newest version.

        Changes announced while a follower was busy are not lost (its `seen` is older)
        and several of them wake it once: it draws the board as it is now."""
        while self._versions.get(competition_id, 0) == seen:
            event = self._waiters.get(competition_id)
            if event is None:
                event = self._waiters[competition_id] = asyncio.Event()
            await event.wait()
        return self._versions[competition_id]

    async def get(self, competition_id: int, board: str, rank: Callable[[], Awaitable[Any]]) -> Any:
        """The ranked board, ranked by `rank()` only when it changed (or aged past TTL)."""
        key = (competition_id, board)
        version = self._versions.get(competition_id, 0)
        kept = self._boards.get(key)
        if kept is not None and kept[0] == version and self.clock() - kept[1] < self.ttl:
            return kept[2]
        running = self._ranking.get(key)
        if running is None or running[0] != version:
            running = (version, asyncio.ensure_future(rank()))
            self._ranking[key] = running
            running[1].add_done_callback(lambda _task, k=key, r=running: self._done(k, r))
        # A viewer who leaves does not cancel the ranking the others wait for.
        return await asyncio.shield(running[1])

    def _done(self, key: Hashable, running: tuple[int, asyncio.Task]) -> None:
        if self._ranking.get(key) is running:
            del self._ranking[key]
        version, task = running
        if task.cancelled() or task.exception() is not None:
            return
        if self._versions.get(key[0], 0) == version:  # no change arrived meanwhile
            self._boards[key] = (version, self.clock(), task.result())

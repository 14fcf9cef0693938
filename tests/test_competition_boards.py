"""The leaderboard kept ranked between reads (controller/competitions/boards.py).

Ranked once per change however many viewers ask, ranked again at once when a score
arrives, and never older than its TTL for what nobody announces. A fake clock; no timing.
"""

from __future__ import annotations

import asyncio
import contextlib

from cgu_lab.controller.competitions.boards import Boards


def test_viewers_share_one_ranking_until_a_change():
    async def scenario():
        now = [0.0]
        boards = Boards(lambda: now[0], ttl=10)
        ranked = []
        gate = asyncio.Event()

        async def rank():
            ranked.append(len(ranked))
            await gate.wait()
            return f"board {len(ranked)}"

        viewers = [asyncio.create_task(boards.get(1, "public", rank)) for _ in range(200)]
        for _ in range(3):
            await asyncio.sleep(0)
        gate.set()
        assert set(await asyncio.gather(*viewers)) == {"board 1"}
        assert len(ranked) == 1
        assert await boards.get(1, "public", rank) == "board 1"  # kept
        boards.changed(1)  # a new score
        assert await boards.get(1, "public", rank) == "board 2"
        assert await boards.get(2, "public", rank) == "board 3"  # another competition's
        boards.changed(2)
        assert await boards.get(1, "public", rank) == "board 2"  # not this one's change
        now[0] = 11  # past the TTL: what nobody announced (a display name) shows
        assert await boards.get(1, "public", rank) == "board 4"

    asyncio.run(scenario())


def test_a_change_during_a_ranking_is_not_lost():
    async def scenario():
        boards = Boards(lambda: 0.0, ttl=60)
        scores = ["old"]
        gate = asyncio.Event()

        async def rank():
            seen = scores[-1]
            await gate.wait()
            return seen

        first = asyncio.create_task(boards.get(1, "public", rank))
        for _ in range(3):  # the ranking has read the scores and waits
            await asyncio.sleep(0)
        scores.append("new")
        boards.changed(1)  # arrives while the old ranking runs
        gate.set()
        assert await first == "old"
        assert await boards.get(1, "public", rank) == "new"  # the old one was not kept

    asyncio.run(scenario())


def test_a_failed_ranking_is_not_kept():
    async def scenario():
        boards = Boards(lambda: 0.0)
        calls = []

        async def rank():
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("database busy")
            return "board"

        with contextlib.suppress(RuntimeError):
            await boards.get(1, "public", rank)
        assert await boards.get(1, "public", rank) == "board"

    asyncio.run(scenario())


def test_followers_wake_once_per_change_and_miss_none():
    async def scenario():
        boards = Boards(lambda: 0.0, ttl=60)
        seen = boards.version(1)
        followers = [asyncio.create_task(boards.next_change(1, seen)) for _ in range(200)]
        await asyncio.sleep(0)
        assert not any(f.done() for f in followers)  # nothing announced yet
        boards.changed(2)  # another competition's change wakes nobody here
        await asyncio.sleep(0)
        assert not any(f.done() for f in followers)
        boards.changed(1)
        assert set(await asyncio.gather(*followers)) == {seen + 1}
        # Changes announced while a follower was busy drawing are not lost: its bookmark is
        # older, so it returns at once, with the newest version (one redraw for both).
        boards.changed(1)
        boards.changed(1)
        assert await asyncio.wait_for(boards.next_change(1, seen + 1), 1) == seen + 3

    asyncio.run(scenario())

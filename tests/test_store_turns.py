"""SQLite's one writer at a time, queued in the controller's event loop (store/db.py):
transactions get their turn in the order they asked, however many ask at once, and a
turn that does not come within the busy timeout fails as "busy" (a 503 the API already
gives for a lock held by another process), never as a 500."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select, text

from cgu_lab.store.db import Database, unavailable


@pytest.fixture
def sqlite_db(tmp_path, jp_asyncio_loop):
    database = Database(f"sqlite:///{tmp_path / 'store.sqlite'}", busy_timeout=2.0)
    database.upgrade_sync()
    yield database
    jp_asyncio_loop.run_until_complete(database.close())


async def test_transactions_take_turns_in_the_order_they_asked(sqlite_db):
    """Sixty writers at once (a class pressing Start): each gets its turn, in order,
    and none fails; SQLite's own busy handler serves them in no order and, on a busy
    host, let some wait past the timeout."""
    async with sqlite_db.session() as session:
        await session.execute(text("CREATE TABLE turns (n INTEGER)"))
    served: list[int] = []

    async def write(n: int) -> None:
        async with sqlite_db.session() as session:
            served.append(n)
            await session.execute(text("INSERT INTO turns (n) VALUES (:n)"), {"n": n})
            await asyncio.sleep(0)  # another task runs while this one holds its turn

    await asyncio.gather(*(write(n) for n in range(60)))
    assert served == list(range(60))
    async with sqlite_db.session() as session:
        rows = (await session.execute(text("SELECT n FROM turns ORDER BY rowid"))).scalars()
        assert list(rows) == list(range(60))


async def test_a_turn_that_does_not_come_fails_as_busy_and_leaves_the_queue(tmp_path):
    database = Database(f"sqlite:///{tmp_path / 'store.sqlite'}", busy_timeout=0.3)
    database.upgrade_sync()
    try:
        release = asyncio.Event()
        holding = asyncio.Event()

        async def hold() -> None:
            async with database.session() as session:
                await session.execute(text("SELECT 1"))
                holding.set()
                await release.wait()

        holder = asyncio.create_task(hold())
        await holding.wait()
        with pytest.raises(Exception) as refused:
            async with database.session() as session:
                await session.execute(text("SELECT 1"))
        assert unavailable(refused.value) == "busy"
        release.set()
        await holder
        # the refused one left the queue: the next transaction goes through at once
        async with database.session() as session:
            assert (await session.execute(text("SELECT 1"))).scalar() == 1
        assert await database.ping() == "ok"
    finally:
        await database.close()


async def test_a_reading_transaction_does_not_wait_for_a_writers_turn(sqlite_db):
    """Who a cookie is, a user's groups, a notebook's shares: read on every request. They
    go through while a writer holds its turn and SQLite's write lock (a class's starts),
    reading what was last committed; one that changes a row is refused."""
    from cgu_lab.store.models import User

    async with sqlite_db.session() as session:
        session.add(User(name="ada", role="student", password_hash="x"))
    holding, release = asyncio.Event(), asyncio.Event()

    async def writer() -> None:
        async with sqlite_db.session() as session:
            await session.execute(text("UPDATE users SET role = 'teacher'"))
            holding.set()
            await release.wait()

    task = asyncio.create_task(writer())
    await holding.wait()
    async with sqlite_db.reading() as session:
        roles = (await session.execute(text("SELECT role FROM users"))).scalars().all()
    assert roles == ["student"]  # the last committed state, while the writer goes on
    release.set()
    await task
    with pytest.raises(RuntimeError, match="reading transaction changed rows"):
        async with sqlite_db.reading() as session:
            (await session.scalars(select(User))).one().role = "admin"
    async with sqlite_db.reading() as session:
        assert (await session.execute(text("SELECT role FROM users"))).scalar() == "teacher"

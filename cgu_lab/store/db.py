"""The database connection: one async engine, migrations and transactions.

`Database.session()` is the one way to talk to the database: a transaction
that commits when its block ends. On SQLite every transaction takes the write
lock up front (BEGIN IMMEDIATE), so transactions of this one controller
process queue instead of failing with "database is locked" when two of them
upgrade from reading to writing; they are short (milliseconds), so the queue
is too. They queue in the event loop, first come first served (`_turn`), not
in SQLite: SQLite's busy handler retries after growing sleeps and serves
whoever retries at the right moment, so with a class's thirty starts and their
pages all asking at once on a busy host some transaction waited past the busy
timeout and its start failed with "database is locked" (benchmarks/
class_burst.py, burst of 30, busy host).

`Database.reading()` is the way for a lookup that writes nothing (who a session's cookie
is, a user's groups, a notebook's shares): on SQLite a deferred transaction that never
takes the write lock and so never waits its turn behind writers (WAL lets it read the
last committed state meanwhile). Those lookups run on every request of every student, and
behind a class's thirty starts each waited for the writers' queue: a bystander's page took
seconds (class_burst, busy host). Changing anything in one is a programming error.
Readers have their own small pool of connections (`READERS`): sharing the writers' pool, a
class's reads held every connection while a writer that had its turn waited for one, and
the starts queued behind it failed with "no turn at the database" (class_burst, busy host).

On PostgreSQL transactions run concurrently and code that must not
interleave (the quota check of a start) takes row locks (`SELECT ... FOR
UPDATE`), so two concurrent starts cannot both pass a limit on either
database.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import weakref
from collections.abc import AsyncIterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import event, exc, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

MIGRATIONS = Path(__file__).parent / "migrations"
# Connections of the readers' own pool (Database.reading); readers beyond them wait for one.
READERS = 4
# The transaction open in the current task, which nested `session()` blocks join.
_current: contextvars.ContextVar[tuple[AsyncSession, asyncio.Task | None] | None] = (
    contextvars.ContextVar("cgu_lab_session", default=None)
)


def normalise_url(url: str) -> URL:
    """Accept plain `postgresql://` and `sqlite:///` URLs and pick our drivers."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg")
    raise ValueError(f"unsupported database URL '{url}': use sqlite:///path or postgresql://...")


def sync_url(url: URL) -> URL:
    """The same database through a blocking driver, for Alembic."""
    return url.set(
        drivername="sqlite" if url.get_backend_name() == "sqlite" else "postgresql+psycopg"
    )


def alembic_config(url: URL) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option(
        "sqlalchemy.url", sync_url(url).render_as_string(hide_password=False).replace("%", "%%")
    )
    return config


# How long a statement waits for a lock (SQLite's busy timeout, PostgreSQL's lock_timeout)
# or for a connection before the request gives up with "the database is busy".
BUSY_TIMEOUT = 30.0
# How long answers read from the database (who a session is, what a share allows) may be
# used after they went stale, and only while the database cannot answer: running notebooks
# stay usable through a lock or an outage, never with more access than was last known.
LAST_KNOWN_SECONDS = 600.0
# SQLite's messages for a lock it gave up waiting on.
_SQLITE_BUSY = ("database is locked", "database table is locked", "database is busy")
# PostgreSQL's SQLSTATEs: lock_not_available, query_canceled (a statement or lock
# timeout), deadlock_detected, too_many_connections, admin/crash shutdown, cannot connect
# now; and class 08, connection exceptions.
_PG_BUSY = frozenset({"55P03", "57014", "40P01", "53300"})
_PG_DOWN = frozenset({"57P01", "57P02", "57P03"})


def unavailable(error: BaseException) -> str | None:
    """ "busy" (a lock or the connection pool waited too long), "unreachable" (no
    connection), or None when `error` is not the database being out of reach (a bug or a
    constraint, which must stay a 500 or its own answer). Looks through SQLAlchemy's
    wrapper at the driver's error, for SQLite and PostgreSQL alike."""
    if isinstance(error, exc.TimeoutError):  # the pool: every connection in use too long
        return "busy"
    if isinstance(error, exc.DBAPIError) and error.connection_invalidated:
        return "unreachable"
    seen = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        state = getattr(current, "sqlstate", None)
        if isinstance(state, str):
            if state in _PG_BUSY:
                return "busy"
            if state in _PG_DOWN or state.startswith("08"):
                return "unreachable"
        name = type(current).__name__
        said = str(current).lower()
        if name == "OperationalError" and any(words in said for words in _SQLITE_BUSY):
            return "busy"
        psycopg = type(current).__module__.startswith("psycopg")
        if name == "OperationalError" and psycopg and state is None:
            return "unreachable"  # no server answered: refused, timed out, DNS
        current = getattr(current, "orig", None) or current.__cause__
    return None


def _configure_sqlite(engine: AsyncEngine, busy_timeout: float, begin: str) -> None:
    """WAL, foreign keys and the busy timeout on each connection; `begin` is how its
    transactions start: "BEGIN IMMEDIATE" for writers (the module's docstring), "BEGIN"
    for readers, which never take the write lock."""

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection, _record):
        # Let SQLAlchemy, not the driver, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql(begin)


class Database:
    def __init__(self, url: str, busy_timeout: float = BUSY_TIMEOUT) -> None:
        """`busy_timeout`: seconds a statement waits for a lock, or a request for a
        connection, before it fails as busy (see `unavailable`), so that a database held
        by someone else answers "busy, try again" instead of hanging every request."""
        self.url = normalise_url(url)
        self.is_sqlite = self.url.get_backend_name() == "sqlite"
        self.busy_timeout = busy_timeout
        kwargs: dict = {"pool_pre_ping": not self.is_sqlite, "pool_timeout": busy_timeout}
        if self.is_sqlite:
            kwargs["connect_args"] = {"timeout": busy_timeout}
        else:
            kwargs["connect_args"] = {
                "connect_timeout": max(1, round(busy_timeout)),
                "options": f"-c lock_timeout={int(busy_timeout * 1000)}",
            }
        self.engine = create_async_engine(self.url, **kwargs)
        # the readers' own pool (the module's docstring)
        self._reading_engine = create_async_engine(
            self.url, pool_size=READERS, max_overflow=0, **kwargs
        )
        if self.is_sqlite:
            _configure_sqlite(self.engine, busy_timeout, "BEGIN IMMEDIATE")
            _configure_sqlite(self._reading_engine, busy_timeout, "BEGIN")
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        self._readers = async_sessionmaker(
            self._reading_engine, expire_on_commit=False, autoflush=False
        )
        self._probe: asyncio.Task[str] | None = None
        # SQLite's one writer at a time, as a FIFO queue per event loop (an asyncio.Lock
        # belongs to the loop that first waits on it; tests run apps in several loops).
        self._turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def display_url(self) -> str:
        return self.url.render_as_string(hide_password=True)

    def upgrade_sync(self) -> None:
        """Bring the schema to the newest migration (blocking)."""
        if self.is_sqlite and self.url.database:
            Path(self.url.database).parent.mkdir(parents=True, exist_ok=True)
        command.upgrade(alembic_config(self.url), "head")

    async def upgrade(self) -> None:
        await asyncio.to_thread(self.upgrade_sync)

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A transaction that commits when the block ends without an exception.

        Inside another `session()` block of the same task this joins the outer
        transaction instead of opening a second one: on SQLite a second
        transaction would wait for the write lock the first one holds.
        """
        task = asyncio.current_task()
        outer = _current.get()
        if outer is not None and outer[1] is task:
            yield outer[0]
            return
        async with self._turn(), self._sessions() as session, session.begin():
            token = _current.set((session, task))
            try:
                yield session
            finally:
                _current.reset(token)

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[AsyncSession]:
        """A transaction that only reads (see the module's docstring): no turn, no write
        lock on SQLite; rolled back at the end. Inside a `session()` block of the same task
        it joins that transaction, as a nested `session()` does."""
        outer = _current.get()
        if outer is not None and outer[1] is asyncio.current_task():
            yield outer[0]
            return
        async with self._readers() as session:
            try:
                yield session
                if session.new or session.dirty or session.deleted:
                    raise RuntimeError("a reading transaction changed rows; use session()")
            finally:
                # What it loaded stays readable after the block, as a session()'s does
                # (expire_on_commit=False): a rollback would expire it all.
                session.expunge_all()
                await session.rollback()

    @contextlib.asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        """On SQLite, wait for this process's previous transactions to end, in the order
        they asked (see the module's docstring); a wait past the busy timeout fails as
        busy, as a lock held by another process does. Nothing on PostgreSQL."""
        if not self.is_sqlite:
            yield
            return
        loop = asyncio.get_running_loop()
        turn = self._turns.get(loop)
        if turn is None:
            turn = self._turns[loop] = asyncio.Lock()
        try:
            await asyncio.wait_for(turn.acquire(), self.busy_timeout)
        except TimeoutError:
            raise exc.TimeoutError(
                f"no turn at the database within {self.busy_timeout:g} s"
            ) from None
        try:
            yield
        finally:
            turn.release()

    async def ping(self) -> str:
        """ "ok", "busy" or "unreachable": whether a trivial transaction goes through as
        every request's does (on SQLite it takes the write lock), for the health check."""
        try:
            async with self.session() as session:
                await session.execute(text("SELECT 1"))
        except Exception as error:
            kind = unavailable(error)
            if kind is None:
                raise
            return kind
        return "ok"

    async def health(self, wait: float = 2.0) -> str:
        """`ping()`'s answer within `wait` seconds, "busy" when it takes longer. A slow probe
        goes on by itself and later checks wait for that one, so the checks of a load
        balancer never pile up on a locked database; "error" for anything else (logged)."""
        if self._probe is None or self._probe.done():
            self._probe = asyncio.ensure_future(self.ping())
        probe = self._probe
        done, _ = await asyncio.wait({probe}, timeout=wait)
        if not done:
            return "busy"
        try:
            return probe.result()
        except Exception:
            logging.getLogger("cgu_lab.store").exception("the database's health check failed")
            return "error"

    async def close(self) -> None:
        if self._probe is not None and not self._probe.done():
            self._probe.cancel()
            with contextlib.suppress(BaseException):
                await self._probe
        await self.engine.dispose()
        await self._reading_engine.dispose()

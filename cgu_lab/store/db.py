"""The database connection: one async engine, migrations and transactions.

`Database.session()` is the one way to talk to the database: a transaction
that commits when its block ends. On SQLite every transaction takes the write
lock up front (BEGIN IMMEDIATE), so transactions of this one controller
process queue instead of failing with "database is locked" when two of them
upgrade from reading to writing; they are short (milliseconds), so the queue
is too. On PostgreSQL transactions run concurrently and code that must not
interleave (the quota check of a start) takes row locks (`SELECT ... FOR
UPDATE`), so two concurrent starts cannot both pass a limit on either
database.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

MIGRATIONS = Path(__file__).parent / "migrations"
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


def _configure_sqlite(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection, _record):
        # Let SQLAlchemy, not the driver, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE")


class Database:
    def __init__(self, url: str) -> None:
        self.url = normalise_url(url)
        self.is_sqlite = self.url.get_backend_name() == "sqlite"
        kwargs: dict = {"pool_pre_ping": not self.is_sqlite}
        if self.is_sqlite:
            kwargs["connect_args"] = {"timeout": 30}
        self.engine = create_async_engine(self.url, **kwargs)
        if self.is_sqlite:
            _configure_sqlite(self.engine)
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)

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
        async with self._sessions() as session, session.begin():
            token = _current.set((session, task))
            try:
                yield session
            finally:
                _current.reset(token)

    async def close(self) -> None:
        await self.engine.dispose()

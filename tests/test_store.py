"""The store on SQLite and on a real PostgreSQL: migrations, constraints and the
row locking that keeps two concurrent starts from both passing a quota."""

import asyncio
import uuid

import psycopg
import pytest
from sqlalchemy import inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError

from cgu_lab.controller.quotas import service as quotas
from cgu_lab.core.errors import QuotaExceeded
from cgu_lab.store.db import Database
from cgu_lab.store.models import Notebook, Quota, User

from .conftest import postgres_url, requires_postgres


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=[requires_postgres, pytest.mark.postgres])]
)
def db(request, tmp_path, jp_asyncio_loop):
    """A migrated database; async tests run on pytest-jupyter's loop, as the engine does."""
    if request.param == "sqlite":
        database = Database(f"sqlite:///{tmp_path / 'store.sqlite'}")
        database.upgrade_sync()
        yield database
        jp_asyncio_loop.run_until_complete(database.close())
        return
    server = make_url(postgres_url())
    name = f"cgu_test_{uuid.uuid4().hex[:12]}"
    admin_dsn = server.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin_dsn, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    database = Database(server.set(database=name).render_as_string(hide_password=False))
    database.upgrade_sync()
    yield database
    jp_asyncio_loop.run_until_complete(database.close())
    with psycopg.connect(admin_dsn, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


async def test_migrations_create_every_table_and_are_idempotent(db):
    await db.upgrade()

    def tables(connection):
        return set(inspect(connection).get_table_names())

    async with db.engine.connect() as connection:
        names = await connection.run_sync(tables)
    assert {
        "users",
        "groups",
        "memberships",
        "quotas",
        "notebooks",
        "sessions",
        "api_tokens",
        "audit_events",
        "environments",
        "gpu_types",
        "alembic_version",
    } <= names


async def test_names_are_unique(db):
    async with db.session() as session:
        session.add(User(name="ada", role="student"))
    with pytest.raises(IntegrityError):
        async with db.session() as session:
            session.add(User(name="ada", role="student"))


async def _seed(db) -> int:
    async with db.session() as session:
        user = User(name="ada", role="student")
        session.add(user)
        await session.flush()
        session.add(
            Quota(scope="user", user_id=user.id, cpu_milli=None, memory=None, gpus={}, notebooks=1)
        )
        for name in ("one", "two"):
            session.add(
                Notebook(
                    owner_id=user.id,
                    name=name,
                    environment="default",
                    cpu_milli=500,
                    memory=2**29,
                    state="stopped",
                )
            )
        return user.id


async def _start(db, user_id: int, name: str, hold: float) -> str:
    """What a start decides in one transaction: quota check, then `starting`."""
    try:
        async with db.session() as session:
            owner = await session.get(User, user_id)
            nb = await session.scalar(
                select(Notebook).where(Notebook.owner_id == user_id, Notebook.name == name)
            )
            await quotas.enforce_start(session, nb, owner)
            await asyncio.sleep(hold)  # widen the window a race would need
            nb.state = "starting"
        return "started"
    except QuotaExceeded:
        return "refused"


async def test_concurrent_starts_cannot_both_pass_the_quota(db):
    user_id = await _seed(db)
    results = await asyncio.gather(_start(db, user_id, "one", 0.3), _start(db, user_id, "two", 0.3))
    assert sorted(results) == ["refused", "started"]
    async with db.session() as session:
        states = sorted((await session.scalars(select(Notebook.state))).all())
    assert states == ["starting", "stopped"]


async def test_usage_counts_holding_states_only(db):
    user_id = await _seed(db)
    async with db.session() as session:
        for nb in (await session.scalars(select(Notebook))).all():
            nb.state = "running" if nb.name == "one" else "stopped"
    async with db.session() as session:
        used = await quotas.usage(session, user_id=user_id)
    assert used.notebooks == 1 and used.cpu_milli == 500

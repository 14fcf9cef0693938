"""The environments' operations for the API, each one transaction of its own.

catalog.py and apps.py hold the work inside a caller's transaction (notebook
starts, the GPU pages and the builds reuse it); these open one per operation so
that the router only speaks HTTP. Builds, rebuilds and deletions are
`EnvironmentBuilds`' (builds.py), which runs its own transactions already.
"""

from __future__ import annotations

from typing import Any

from ...core import roles
from ...store.db import Database
from ...store.models import Environment
from . import apps, catalog


async def listed(db: Database) -> list[Environment]:
    async with db.session() as session:
        return await catalog.list_environments(session)


async def one(db: Database, name: str) -> Environment:
    async with db.session() as session:
        return await catalog.get_environment(session, name)


async def save(db: Database, actor: roles.Principal, name: str, **fields: Any) -> Environment:
    """Declare or change an environment by hand (admins; catalog checks)."""
    async with db.session() as session:
        return await catalog.save_environment(session, actor, name, **fields)


async def choose_apps(
    db: Database, actor: roles.Principal, name: str, chosen: list[dict[str, Any]] | None
) -> Environment:
    """The apps an environment's notebooks offer (None: the built-ins; admins)."""
    async with db.session() as session:
        return await apps.set_apps(session, actor, name, chosen)

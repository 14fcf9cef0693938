"""Seeding: copying a template's or a submission's files into a new notebook's home.

It exists apart from the lifecycle because it is the one step of a start that
reads the store's archives rather than the backend's servers; the lifecycle
runs it as the start's first step so its progress shows on the start page.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from ...backends.base import Backend
from ...store.db import Database
from ...store.models import Notebook
from ..archives import seed_archive
from ..environments import catalog

Progress = Callable[[int, str], Awaitable[None]]


async def copy_seed(
    db: Database, backend: Backend, settings, nb: Notebook, owner: str, progress: Progress
) -> None:
    """Copy a template's (or a submission's) files into the new home, never overwriting."""
    async with db.session() as session:
        source, label, count = await seed_archive(session, Path(settings.store), nb.seed)
        image = nb.image or (await catalog.get_environment(session, nb.environment)).image
    await progress(8, f"Copying {count} file{'s' if count != 1 else ''} into your home")

    async def copied(done: int) -> None:
        await progress(8 + min(14, 14 * done // max(1, count)), f"Copied {done} of {count} files")

    report = await backend.unpack(owner, nb.name, source, "", label, copied, image=image)
    notice = ""
    if report["conflicts"]:
        count = len(report["conflicts"])
        notice = (
            f"{count} file{'s' if count != 1 else ''} already existed; the new copies were "
            f"saved beside them with '({label})' in their names."
        )
    async with db.session() as session:
        current = await session.get(Notebook, nb.id)
        current.seed = None
        current.message = notice
    nb.seed = None
    await progress(22, f"Copied {report['copied']} files" + (f"; {notice}" if notice else ""))

"""Notebooks that die on their own are marked stopped within seconds, not left "running".

A server can exit without the controller asking (a crash, the kernel's memory
limit killing it, an admin's `kill`, a node lost on Kubernetes). Until this
watch, only a controller restart noticed, so a dead notebook stayed "running"
and held its GPUs. Every few seconds the watch asks the backend about each
running notebook that no start, stop or resize is busy with; one the backend
reports as gone (not merely slow to answer) is stopped with the reason, its
GPUs are freed and the queue moves on. The owner sees the reason on the
notebook's start page and in the list.
"""

from __future__ import annotations

import logging

from sqlalchemy import select

from ...core.lifecycle import State
from ...store.models import Notebook, User
from .. import audit
from ..clock import Clock
from .routes import SYSTEM
from .service import NotebookService

log = logging.getLogger("cgu_lab.liveness")

INTERVAL = 5.0


async def check(notebooks: NotebookService) -> list[str]:
    """One pass: the notebooks found dead and stopped, as owner/name."""
    async with notebooks.db.session() as session:
        rows = (
            await session.execute(
                select(Notebook, User.name)
                .join(User, User.id == Notebook.owner_id)
                .where(Notebook.state == State.RUNNING.value, Notebook.backend_state.is_not(None))
            )
        ).all()
        work = [
            (nb, owner, await notebooks.spec(session, nb, owner))
            for nb, owner in rows
            if not notebooks.lifecycle.busy(nb.id)
        ]
    dead = []
    for nb, owner, spec in work:
        observed = await notebooks.backend.observe(spec, nb.backend_state)
        if observed.alive or notebooks.lifecycle.busy(nb.id):
            continue
        reason = f"it stopped by itself: {observed.detail or 'its server is gone'}"
        await notebooks.backend.stop(spec, nb.backend_state)  # its cgroup, its leftovers
        await notebooks.lifecycle.finish_stopped(nb.id, owner, nb.name, reason)
        async with notebooks.db.session() as session:
            audit.record(
                session, SYSTEM, "notebook.died", f"notebook:{owner}/{nb.name}", reason=reason
            )
        dead.append(f"{owner}/{nb.name}")
    return dead


async def watch(notebooks: NotebookService, clock: Clock, interval: float = INTERVAL) -> None:
    """Check every `interval` seconds of `clock` (the platform's: a test moves it)."""
    while True:
        await clock.sleep(interval)
        try:
            dead = await check(notebooks)
        except Exception:  # one failed pass must not end the watch
            log.exception("checking whether notebooks are alive failed")
            continue
        if dead:
            log.info("notebooks that stopped by themselves: %s", ", ".join(dead))

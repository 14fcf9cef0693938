"""What a start or a stop writes in the transaction that decides it.

The lifecycle (notebook_lifecycle.py) decides a start or a stop in one
transaction and carries it out in a background task. These functions are the
first half: the notebook's new state, the audit event and the stop record,
written with the caller's session so that they commit (or vanish) together
with the decision. They start nothing and publish nothing.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from ...core.lifecycle import State
from ...store.models import Notebook, StopRecord, User
from .. import audit
from ..environments import catalog
from .admission import Admission


async def grant_start(
    session: AsyncSession, nb: Notebook, owner: str, admission: Admission, who: str, now: datetime
) -> None:
    """The start may go ahead (`now`): devices, a fresh proxy secret, earlier stops answered."""
    nb.devices = list(admission.devices) or None
    nb.state = State.STARTING.value
    nb.queued_at = None
    nb.message = ""
    nb.warned_at = None
    nb.kept_at = None
    nb.proxy_secret = secrets.token_urlsafe(32)
    await session.execute(
        update(StopRecord)
        .where(StopRecord.notebook_id == nb.id, StopRecord.restarted_at.is_(None))
        .values(restarted_at=now)
    )
    audit.record(
        session, who, "notebook.started", f"notebook:{owner}/{nb.name}", devices=nb.devices
    )


async def enqueue(
    session: AsyncSession,
    nb: Notebook,
    owner: str,
    state: State,
    admission: Admission,
    who: str,
    now: datetime,
) -> list[tuple[int, str, str]]:
    """The start waits (from `now`): queue the notebook and mark the idle ones to reclaim
    as stopping.

    Returns the notebooks to stop (id, owner, name) once the transaction is committed.
    """
    if state is not State.QUEUED:
        nb.state = State.QUEUED.value
        nb.queued_at = now
        audit.record(
            session,
            who,
            "notebook.queued",
            f"notebook:{owner}/{nb.name}",
            gpu_type=nb.gpu_type,
            position=admission.position,
        )
    nb.message = admission.message
    victims = []
    for victim_id in admission.victims:
        victim = await session.get(Notebook, victim_id)
        victim_owner = (await session.get(User, victim.owner_id)).name
        await mark_stopping(
            session,
            victim,
            victim_owner,
            "reclaim",
            f"reclaimed for a waiting '{nb.gpu_type}' request",
            audit.SYSTEM,
            now,
        )
        victims.append((victim.id, victim_owner, victim.name))
    return victims


async def mark_stopping(
    session: AsyncSession,
    nb: Notebook,
    owner: str,
    cause: str,
    reason: str,
    who: str,
    now: datetime,
) -> None:
    """The part of a stop that happens in the caller's transaction: state, audit, record
    (stamped `now`, the platform's clock, as the start it ends was)."""
    weight = 0.0
    if nb.devices and nb.gpu_type:
        gpu_type = await catalog.get_gpu_type(session, nb.gpu_type)
        weight = nb.gpus / max(1, gpu_type.share)
    nb.state = State.STOPPING.value
    nb.message = ""
    session.add(
        StopRecord(
            notebook_id=nb.id,
            owner=owner,
            notebook=nb.name,
            cause=cause,
            reason=reason,
            gpus=weight,
            stopped_at=now,
        )
    )
    audit.record(
        session,
        who,
        "notebook.stopped",
        f"notebook:{owner}/{nb.name}",
        reason=reason,
        cause=cause,
    )

"""The audit log: every state change, written in the same transaction as the change."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ..store.models import AuditEvent


def record(session: AsyncSession, actor: str, action: str, target: str, **details: Any) -> None:
    """Add an event to the caller's transaction: it commits, or vanishes, with the change."""
    session.add(AuditEvent(actor=actor, action=action, target=target, details=details or None))


async def query(
    session: AsyncSession,
    *,
    actor: str | None = None,
    action: str | None = None,
    target: str | None = None,
    before_id: int | None = None,
    since: datetime | None = None,
    limit: int = 100,
) -> list[AuditEvent]:
    statement = select(AuditEvent).order_by(AuditEvent.id.desc()).limit(limit)
    if actor:
        statement = statement.where(AuditEvent.actor == actor)
    if action:
        statement = statement.where(AuditEvent.action.startswith(action))
    if target:
        statement = statement.where(AuditEvent.target.contains(target))
    if before_id:
        statement = statement.where(AuditEvent.id < before_id)
    if since:
        statement = statement.where(AuditEvent.at >= since)
    return list((await session.scalars(statement)).all())

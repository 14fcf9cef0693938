"""The audit log: every state change, written in the same transaction as the change.

Reading it is paged by cursor (`before`: events older than an id), newest
first, so a page stays the same while new events arrive and a deep page costs
no more than the first. Filters: who acted, an action prefix, part of the
target, a user (by or about them) and a time range. The CSV export walks the
same query in batches, one short transaction each, so a long export never
holds the database.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ..store.db import Database
from ..store.models import AuditEvent

# The actor recorded for what the controller does on its own (a pass, a start, a score).
SYSTEM = "system"
CSV_COLUMNS = ("id", "at", "actor", "action", "target", "details")
EXPORT_BATCH = 1000


def record(session: AsyncSession, actor: str, action: str, target: str, **details: Any) -> None:
    """Add an event to the caller's transaction: it commits, or vanishes, with the change."""
    session.add(AuditEvent(actor=actor, action=action, target=target, details=details or None))


@dataclass(frozen=True)
class Filters:
    """What to read: every field optional; they combine (and)."""

    actor: str | None = None
    action: str | None = None  # a prefix: "notebook." or "quota.set"
    target: str | None = None  # part of the target: "user:alice"
    user: str | None = None  # by the user, or about them (their account, their notebooks)
    since: datetime | None = None
    until: datetime | None = None

    def apply(self, statement: Select) -> Select:
        if self.actor:
            statement = statement.where(AuditEvent.actor == self.actor)
        if self.action:
            statement = statement.where(
                AuditEvent.action.like(_prefix_pattern(self.action), escape="\\")
            )
        if self.target:
            statement = statement.where(
                AuditEvent.target.like(contains_pattern(self.target), escape="\\")
            )
        if self.user:
            statement = statement.where(
                or_(
                    AuditEvent.actor == self.user,
                    AuditEvent.target == f"user:{self.user}",
                    AuditEvent.target.like(_prefix_pattern(f"notebook:{self.user}/"), escape="\\"),
                )
            )
        if self.since:
            statement = statement.where(AuditEvent.at >= self.since)
        if self.until:
            statement = statement.where(AuditEvent.at < self.until)
        return statement

    def as_dict(self) -> dict[str, str]:
        """The filters given, as JSON for an audit event's details (an open document)."""
        return {
            key: value.isoformat() if isinstance(value, datetime) else value
            for key, value in self.__dict__.items()
            if value
        }


def _escaped(text: str) -> str:
    """`text` for a LIKE pattern with `escape="\\"`: its own % and _ taken literally."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _prefix_pattern(text: str) -> str:
    return f"{_escaped(text)}%"


def contains_pattern(text: str) -> str:
    return f"%{_escaped(text)}%"


async def query(
    session: AsyncSession,
    *,
    actor: str | None = None,
    action: str | None = None,
    target: str | None = None,
    before_id: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    user: str | None = None,
    limit: int = 100,
) -> list[AuditEvent]:
    """Events newest first, older than `before_id` when given (the next page's cursor)."""
    filters = Filters(actor, action, target, user, since, until)
    statement = filters.apply(select(AuditEvent)).order_by(AuditEvent.id.desc()).limit(limit)
    if before_id:
        statement = statement.where(AuditEvent.id < before_id)
    return list((await session.scalars(statement)).all())


async def page(
    db: Database, filters: Filters, before_id: int | None, limit: int
) -> list[AuditEvent]:
    """One page of the log for the admin API, in a transaction of its own."""
    async with db.session() as session:
        return await query(
            session,
            actor=filters.actor,
            action=filters.action,
            target=filters.target,
            user=filters.user,
            since=filters.since,
            until=filters.until,
            before_id=before_id,
            limit=limit,
        )


async def record_export(db: Database, actor: str, filters: Filters) -> None:
    """Note that `actor` exported the log with `filters`, committed before the first row is
    sent, so an export never goes unrecorded."""
    async with db.session() as session:
        record(session, actor, "audit.exported", "audit", filters=filters.as_dict())


def _safe_cell(value: str) -> str:
    """A cell a spreadsheet shows as text: one starting with = + - @ (or a tab or
    carriage return) would otherwise be run as a formula when the file is opened."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def csv_row(event: AuditEvent) -> str:
    buffer = io.StringIO()
    details = json.dumps(event.details, sort_keys=True, default=str) if event.details else ""
    csv.writer(buffer).writerow(
        [
            event.id,
            event.at.isoformat(),
            _safe_cell(event.actor),
            _safe_cell(event.action),
            _safe_cell(event.target),
            _safe_cell(details),
        ]
    )
    return buffer.getvalue()


async def export_csv(db: Database, filters: Filters) -> AsyncIterator[str]:
    """The filtered log as CSV, newest first, read in batches (one transaction each)."""
    yield ",".join(CSV_COLUMNS) + "\r\n"
    before: int | None = None
    while True:
        async with db.session() as session:
            statement = filters.apply(select(AuditEvent))
            if before is not None:
                statement = statement.where(AuditEvent.id < before)
            batch = list(
                (
                    await session.scalars(
                        statement.order_by(AuditEvent.id.desc()).limit(EXPORT_BATCH)
                    )
                ).all()
            )
        if not batch:
            return
        yield "".join(csv_row(event) for event in batch)
        if len(batch) < EXPORT_BATCH:
            return
        before = batch[-1].id

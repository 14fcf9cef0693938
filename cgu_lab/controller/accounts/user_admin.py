"""What the admin's Users pages show and do beyond the accounts themselves.

Kept apart from `accounts` (creating and changing accounts and groups): this
module reads how each account uses the platform (notebooks held, last
activity) and lets an administrator act on a user's notebooks: stop them all,
or open one to help.

Opening someone else's notebook never borrows their identity. The
administrator gets a share of their own (`core.sharing`: time-limited, to the
administrator as a user, noted "administrator access"), so the proxy decides
their requests exactly as for anyone a notebook is shared with, the notebook
server sees the administrator's name, the owner sees the grant in their share
list, and the audit log records who opened what, why, and until when.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from urllib.parse import quote, urlencode

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import roles, sharing
from ...core.errors import Invalid
from ...core.lifecycle import HOLDING, State
from ...store.models import Notebook, User
from .. import audit
from .directory import get_user

ADMIN_NOTE = "administrator access"
# How long an administrator's access lasts unless they ask otherwise, and at most.
ADMIN_MINUTES = 60.0
MAX_ADMIN_MINUTES = 24 * 60.0


@dataclass
class Activity:
    """How one account uses the platform now."""

    notebooks: int = 0
    running: int = 0  # starting, running or stopping: holding resources
    queued: int = 0
    last_activity: datetime | None = None


def _latest(*moments: datetime | None) -> datetime | None:
    known = [m for m in moments if m is not None]
    return max(known) if known else None


async def activity_of(session: AsyncSession, users: list[User]) -> dict[int, Activity]:
    """Each user's notebook counts and last activity, in one query for the whole list.

    The last activity is the later of the user's own (a page or API call, a login)
    and their notebooks' (kernels and terminals, as the culler last read them).
    """
    found = {user.id: Activity(last_activity=user.last_activity) for user in users}
    if not found:
        return found
    rows = await session.execute(
        select(Notebook.owner_id, Notebook.state, func.count(), func.max(Notebook.last_activity))
        .where(Notebook.owner_id.in_(list(found)))
        .group_by(Notebook.owner_id, Notebook.state)
    )
    holding = {s.value for s in HOLDING}
    for owner_id, state, count, latest in rows.all():
        activity = found[owner_id]
        activity.notebooks += count
        if state in holding:
            activity.running += count
        elif state == State.QUEUED.value:
            activity.queued += count
        if isinstance(latest, str):  # SQLite hands an aggregate back as text
            latest = datetime.fromisoformat(latest)
        if latest is not None and latest.tzinfo is None:
            latest = latest.replace(tzinfo=timezone.utc)
        activity.last_activity = _latest(activity.last_activity, latest)
    return found


async def stop_all(platform, actor: roles.Principal, name: str) -> list[str]:
    """Stop (or take out of the queue) every notebook of a user; each stop is audited."""
    roles.require_admin(actor, "stop another user's notebooks")
    async with platform.db.session() as session:
        user = await get_user(session, name)
        names = (
            await session.scalars(
                select(Notebook.name)
                .where(
                    Notebook.owner_id == user.id,
                    Notebook.state.in_(
                        [State.QUEUED.value, State.STARTING.value, State.RUNNING.value]
                    ),
                )
                .order_by(Notebook.name)
            )
        ).all()
    for notebook in names:
        await platform.notebooks.lifecycle.stop(
            actor, name, notebook, reason=f"stopped by {actor.name}"
        )
    return list(names)


@dataclass
class AdminAccess:
    url: str
    access: str
    expires_at: datetime
    state: str
    # Where the admin's page goes next: the notebook itself when it runs, else its start
    # page, which starts a stopped one at once and shows the start's progress.
    open_url: str


async def open_as_admin(
    platform,
    actor: roles.Principal,
    owner: str,
    name: str,
    access: str = "edit",
    minutes: float | None = None,
    reason: str = "",
) -> AdminAccess:
    """Give an administrator time-limited access of their own to a user's notebook."""
    roles.require_admin(actor, "open other users' notebooks")
    sharing.check_access(access)
    minutes = ADMIN_MINUTES if minutes is None else minutes
    if not 1 <= minutes <= MAX_ADMIN_MINUTES:
        raise Invalid(
            f"administrator access lasts from 1 minute to {MAX_ADMIN_MINUTES / 60:g} hours"
        )
    if owner == actor.name:
        raise Invalid("this is your own notebook; open it from My notebooks")
    reason = reason.strip()
    if not reason:
        # The owner and other admins read it in the audit log: access without a
        # stated reason is what the log exists to rule out.
        raise Invalid(
            f"say why you open {owner}/{name} (for example 'help request in class'): "
            "the reason is recorded in the audit log"
        )
    if len(reason) > 200:
        raise Invalid("say why in at most 200 characters")
    now = platform.clock.now()
    async with platform.db.session() as session:
        nb, _ = await platform.notebooks.load(session, owner, name)
        state = nb.state
    # One administrator grant at a time: the new one replaces the last (expired or not,
    # the share service keeps one grant per grantee and scope), so repeated help never
    # piles up shares on the student's notebook.
    created = await platform.shares.create(
        actor, owner, name, actor.name, "user", access, "", minutes, note=ADMIN_NOTE
    )
    expires_at = created.expires_at or now + timedelta(minutes=minutes)
    async with platform.db.session() as session:
        audit.record(
            session,
            actor.name,
            "notebook.admin_opened",
            f"notebook:{owner}/{name}",
            access=access,
            until=expires_at.isoformat(timespec="seconds"),
            reason=reason or None,
            share=created.id,
        )
    if state == State.RUNNING.value:
        open_url = created.url
    else:
        where = f"{quote(owner)}/{quote(name)}"
        query = {"next": created.url, **({"start": "1"} if state == "stopped" else {})}
        open_url = f"/notebook/auto-start/{where}?{urlencode(query)}"
    return AdminAccess(created.url, access, expires_at, state, open_url)

"""Quotas in the database: limits per user, per group and the platform default.

The check that matters locks the owner's row (and the charged group's), sums
what their notebooks hold and refuses with a sentence naming the limit. Two
concurrent starts therefore cannot both pass a limit that only one of them
fits (see `store.db` for how SQLite and PostgreSQL serialise them).

Disk is stored and bounded here like the other limits, but not summed: homes
are not measured on the controller's side. The owner's allowance travels with
each notebook's spec (`QuotaSpec`) and the notebook server enforces it.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import quota as rules
from ...core import roles
from ...core.errors import Forbidden, Invalid, QuotaExceeded
from ...core.lifecycle import HOLDING
from ...core.quota import Limits
from ...core.resources import Resources
from ...store.db import Database
from ...store.models import Group, Membership, Notebook, Quota, User
from .. import audit
from ..accounts.directory import get_group, get_user, require_manages_account, require_manages_user
from ..api.schemas import LimitsOut, QuotaOut, UsageOut

DEFAULT_LIMITS = Limits(cpu_milli=4000, memory=8 * 2**30, gpus={}, notebooks=2)


def limits_of(row: Quota | None) -> Limits:
    if row is None:
        return Limits()
    return Limits(
        cpu_milli=row.cpu_milli,
        memory=row.memory,
        gpus=dict(row.gpus) if row.gpus is not None else None,
        notebooks=row.notebooks,
        disk=row.disk,
    )


def notebook_resources(nb: Notebook) -> Resources:
    return Resources.for_notebook(nb.cpu_milli, nb.memory, nb.gpu_type, nb.gpus)


async def _row(session: AsyncSession, scope: str, subject_id: int | None) -> Quota | None:
    statement = select(Quota).where(Quota.scope == scope)
    if scope == "user":
        statement = statement.where(Quota.user_id == subject_id)
    elif scope == "group":
        statement = statement.where(Quota.group_id == subject_id)
    return await session.scalar(statement)


async def default_limits(session: AsyncSession) -> Limits:
    return limits_of(await _row(session, "default", None))


async def user_limits(session: AsyncSession, user_id: int) -> tuple[Limits, str]:
    """A user's own quota, or the platform default; with where it came from."""
    row = await _row(session, "user", user_id)
    if row is not None:
        return limits_of(row), "user"
    return await default_limits(session), "default"


async def group_limits(session: AsyncSession, group_id: int) -> Limits | None:
    row = await _row(session, "group", group_id)
    return limits_of(row) if row is not None else None


async def usage(
    session: AsyncSession,
    *,
    user_id: int | None = None,
    group_id: int | None = None,
    exclude: int | None = None,
) -> Resources:
    statement = select(Notebook).where(Notebook.state.in_([s.value for s in HOLDING]))
    if user_id is not None:
        statement = statement.where(Notebook.owner_id == user_id)
    if group_id is not None:
        statement = statement.where(Notebook.group_id == group_id)
    if exclude is not None:
        statement = statement.where(Notebook.id != exclude)
    notebooks = (await session.scalars(statement)).all()
    return Resources.total([notebook_resources(nb) for nb in notebooks])


async def enforce_start(session: AsyncSession, nb: Notebook, owner: User) -> None:
    """Refuse unless the notebook fits what its owner (and group) still have free.

    Runs in the caller's transaction; the row locks make PostgreSQL serialise
    concurrent starts of one owner or group the way SQLite does.
    """
    await session.execute(select(User.id).where(User.id == owner.id).with_for_update())
    asked = notebook_resources(nb)
    limits, _ = await user_limits(session, owner.id)
    checks = [
        rules.check(
            rules.USER, limits, await usage(session, user_id=owner.id, exclude=nb.id), asked
        )
    ]
    if nb.group_id is not None:
        group = await session.scalar(select(Group).where(Group.id == nb.group_id).with_for_update())
        budget = await group_limits(session, nb.group_id)
        if group is not None and budget is not None:
            used = await usage(session, group_id=nb.group_id, exclude=nb.id)
            checks.append(rules.check(rules.group_subject(group.name), budget, used, asked))
    rules.enforce(*checks)


async def enforce_fits(
    session: AsyncSession, owner_id: int, group_id: int | None, asked: Resources
) -> None:
    """Refuse a notebook that could never start, whatever else is running."""
    limits, _ = await user_limits(session, owner_id)
    checks = [rules.check(rules.USER, limits, Resources(), asked)]
    if group_id is not None:
        budget = await group_limits(session, group_id)
        group = await session.get(Group, group_id)
        if budget is not None and group is not None:
            checks.append(rules.check(rules.group_subject(group.name), budget, Resources(), asked))
    rules.enforce(*checks)


# -- reading and setting quotas ----------------------------------------------


def limits_out(limits: Limits | None) -> LimitsOut | None:
    """Limits as the API shows them (and, dumped, as the audit log records them)."""
    if limits is None:
        return None
    return LimitsOut(
        cpu_milli=limits.cpu_milli,
        memory=limits.memory,
        gpus=dict(limits.gpus) if limits.gpus is not None else None,
        notebooks=limits.notebooks,
        disk=limits.disk,
    )


def usage_out(used: Resources) -> UsageOut:
    return UsageOut(
        cpu_milli=used.cpu_milli,
        memory=used.memory,
        gpus=dict(used.gpus),
        notebooks=used.notebooks,
    )


def _audited(limits: Limits | None) -> dict | None:
    """Limits as an audit record's details hold them: JSON, in the API's shape."""
    out = limits_out(limits)
    return out.model_dump() if out is not None else None


async def _describe_user(session: AsyncSession, actor: roles.Principal, name: str) -> QuotaOut:
    user = await get_user(session, name)
    if user.id != actor.id:
        await require_manages_user(session, actor, user)
    limits, source = await user_limits(session, user.id)
    return QuotaOut(
        subject=f"user:{user.name}",
        source=source,
        limits=limits_out(limits),
        usage=usage_out(await usage(session, user_id=user.id)),
    )


async def _describe_group(session: AsyncSession, actor: roles.Principal, name: str) -> QuotaOut:
    group = await get_group(session, name)
    if not (roles.can_manage_group(actor, group.id) or group.id in actor.groups):
        raise Forbidden(f"you are not in group '{name}'")
    budget = await group_limits(session, group.id)
    return QuotaOut(
        subject=f"group:{group.name}",
        source="group" if budget is not None else "none",
        limits=limits_out(budget),
        usage=usage_out(await usage(session, group_id=group.id)),
    )


async def _describe_default(session: AsyncSession) -> QuotaOut:
    return QuotaOut(
        subject="default", source="default", limits=limits_out(await default_limits(session))
    )


async def _store(
    session: AsyncSession,
    actor: roles.Principal,
    scope: str,
    subject: str,
    limits: Limits | None,
    user_id: int | None = None,
    group_id: int | None = None,
) -> None:
    row = await _row(session, scope, user_id if scope == "user" else group_id)
    before = _audited(limits_of(row)) if row is not None else None
    if limits is None:
        if row is not None:
            await session.delete(row)
    else:
        limits.validate()
        if row is None:
            row = Quota(scope=scope, user_id=user_id, group_id=group_id)
            session.add(row)
        row.cpu_milli = limits.cpu_milli
        row.memory = limits.memory
        row.gpus = dict(limits.gpus) if limits.gpus is not None else None
        row.notebooks = limits.notebooks
        row.disk = limits.disk
        row.updated_by = actor.name
    audit.record(
        session,
        actor.name,
        "quota.removed" if limits is None else "quota.set",
        subject,
        before=before,
        after=_audited(limits),
    )


async def _set_default(session: AsyncSession, actor: roles.Principal, limits: Limits) -> None:
    roles.require_admin(actor, "change the default quota")
    await _store(session, actor, "default", "default", limits)


async def _set_group(
    session: AsyncSession, actor: roles.Principal, name: str, limits: Limits | None
) -> None:
    roles.require_admin(actor, "set a group's budget")
    group = await get_group(session, name)
    await _store(session, actor, "group", f"group:{group.name}", limits, group_id=group.id)


async def _set_user(
    session: AsyncSession, actor: roles.Principal, name: str, limits: Limits | None
) -> None:
    """Admins set any user's quota; a group manager sets a student's within a group budget.

    Only a student all of whose groups the manager manages (`roles.manages_account`):
    a quota is part of the account, and a staff member's is the admins' to set.
    """
    user = await get_user(session, name)
    if not actor.is_admin:
        if user.id == actor.id:
            raise Forbidden("you cannot set your own quota")
        await require_manages_account(session, actor, user, "set the quota")
        if limits is None:
            raise Invalid("only administrators may remove a quota; set the limits instead")
        managed = (
            await session.scalars(
                select(Membership.group_id).where(
                    Membership.user_id == user.id,
                    Membership.group_id.in_(actor.managed_groups),
                )
            )
        ).all()
        # The member's quota must fit the budget of at least one group the actor
        # manages; a group without a budget is capped by the platform default.
        problems: list[QuotaExceeded] = []
        for group_id in managed:
            group = await session.get(Group, group_id)
            budget = await group_limits(session, group_id)
            try:
                if budget is None:
                    rules.within_budget(limits, await default_limits(session), group.name, True)
                else:
                    rules.within_budget(limits, budget, group.name)
                break
            except QuotaExceeded as error:
                problems.append(error)
        else:
            raise problems[0]
    await _store(session, actor, "user", f"user:{user.name}", limits, user_id=user.id)


async def _set_course_students(
    session: AsyncSession, actor: roles.Principal, name: str, limits: Limits
) -> list[str]:
    """Give every student of a course the same quota at once; the names, sorted.

    A class is usually given one quota, and one student at a time is forty dialogs.
    All or nothing: the quota must fit the course's budget (the platform default
    where it has none), as one student's does (`set_user`), and the actor must be
    allowed to set the quota of every student; otherwise nothing changes and the
    refusal names who is in the way. The course's staff (managers, teachers) are
    left out: their quotas are the admins' to set.
    """
    group = await get_group(session, name)
    if not roles.can_manage_group(actor, group.id):
        raise Forbidden(f"you do not manage '{group.name}', so you may not set its quotas")
    limits.validate()
    students = (
        await session.scalars(
            select(User)
            .join(Membership, Membership.user_id == User.id)
            .where(
                Membership.group_id == group.id,
                Membership.manager.is_(False),
                User.role == roles.Role.STUDENT.value,
            )
            .order_by(User.name)
        )
    ).all()
    if not students:
        raise Invalid(f"'{group.name}' has no students yet; enrol them first")
    if not actor.is_admin:
        budget = await group_limits(session, group.id)
        if budget is None:
            rules.within_budget(limits, await default_limits(session), group.name, default=True)
        else:
            rules.within_budget(limits, budget, group.name)
        # `roles.manages_account`, for the whole class in one query: a student who is
        # also in a group the actor does not manage answers to that group's staff too.
        others = (
            await session.scalars(
                select(User.name)
                .join(Membership, Membership.user_id == User.id)
                .where(
                    User.id.in_([student.id for student in students]),
                    Membership.group_id.not_in(actor.managed_groups),
                )
                .distinct()
                .order_by(User.name)
            )
        ).all()
        if others:
            raise Forbidden(
                f"nothing was changed: {', '.join(others)} "
                f"{'is' if len(others) == 1 else 'are'} also in courses you do not manage, "
                "so only an administrator may set their quota; ask one, or set the others' "
                "one at a time"
            )
    for student in students:
        await _store(session, actor, "user", f"user:{student.name}", limits, user_id=student.id)
    return [student.name for student in students]


# How long a request for more budget may be: a few sentences, not a document.
MAX_REQUEST_CHARS = 1000


async def _request_budget(
    session: AsyncSession, actor: roles.Principal, name: str, message: str
) -> None:
    """Ask the administrators for more budget for a course the actor manages.

    Recorded as a `quota.requested` event in the audit log (with the budget and
    use at the time), which is where administrators read what happened and who
    asked: no new inbox to build or to watch. The budget itself stays the
    admins' to change.
    """
    group = await get_group(session, name)
    if not roles.can_manage_group(actor, group.id):
        raise Forbidden(f"you do not manage '{group.name}', so you may not ask for its budget")
    text = message.strip()
    if not text:
        raise Invalid("say what the course needs, e.g. '40 students, 1 standard GPU each'")
    if len(text) > MAX_REQUEST_CHARS:
        raise Invalid(
            f"a request can be at most {MAX_REQUEST_CHARS} characters; it has {len(text)}"
        )
    audit.record(
        session,
        actor.name,
        "quota.requested",
        f"group:{group.name}",
        message=text,
        budget=_audited(await group_limits(session, group.id)),
        usage=usage_out(await usage(session, group_id=group.id)).model_dump(),
    )


# -- operations for the API: each one transaction of its own ---------------------------


async def default_quota(db: Database) -> QuotaOut:
    async with db.session() as session:
        return await _describe_default(session)


async def set_default(db: Database, actor: roles.Principal, limits: Limits) -> QuotaOut:
    """Change the default quota (admins); the new default, read in the same transaction."""
    async with db.session() as session:
        await _set_default(session, actor, limits)
        return await _describe_default(session)


async def user_quota(db: Database, actor: roles.Principal, name: str) -> QuotaOut:
    async with db.session() as session:
        return await _describe_user(session, actor, name)


async def set_user(db: Database, actor: roles.Principal, name: str, limits: Limits | None) -> None:
    """Set a user's quota, or remove it with `limits` None (see `_set_user` for who may)."""
    async with db.session() as session:
        await _set_user(session, actor, name, limits)


async def group_quota(db: Database, actor: roles.Principal, name: str) -> QuotaOut:
    async with db.session() as session:
        return await _describe_group(session, actor, name)


async def set_group(db: Database, actor: roles.Principal, name: str, limits: Limits | None) -> None:
    """Set a group's budget, or remove it with `limits` None (admins)."""
    async with db.session() as session:
        await _set_group(session, actor, name, limits)


async def set_course_students(
    db: Database, actor: roles.Principal, name: str, limits: Limits
) -> list[str]:
    """The students of course `name` whose quota became `limits` (see `_set_course_students`)."""
    async with db.session() as session:
        return await _set_course_students(session, actor, name, limits)


async def request_budget(db: Database, actor: roles.Principal, name: str, message: str) -> None:
    """Ask the administrators for more budget (see `_request_budget`)."""
    async with db.session() as session:
        await _request_budget(session, actor, name, message)

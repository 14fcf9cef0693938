"""Accounts, groups, API tokens and invitations as the API uses them: one transaction each.

Each operation opens its own unit of work (`Database.session`), does the checks and
changes of `directory`, `invitations`, `roster_import` and `teaching.staff` with their
audit events inside it, and hands back what the API shows, so the routers only parse,
call and answer. The authenticator's caches (`auth.forget_user`, `forget_memberships`)
and a disabled or reset account's sessions are dropped here too, after the commit, so a
request served at once afterwards already sees the change.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, Field
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.local_accounts import UnixClash
from ...core.errors import NotFound
from ...core.roles import Principal, Role, can_manage_group
from ...store.db import Database
from ...store.models import ApiToken, Group, User
from .. import audit
from ..api.schemas import (
    GroupOut,
    GroupRef,
    MemberOut,
    TokenCreated,
    TokenOut,
    UserCreated,
    UserOut,
)
from ..clock import Clock
from ..teaching import staff as course_staff
from . import directory, invitations, roster_import, user_admin
from .schemas import ImportOut

# -- what the API answers ------------------------------------------------------------


class UserActivityOut(UserOut):
    last_activity: datetime | None = Field(
        None, description="Latest page or API call, login, or notebook activity"
    )
    notebooks: int = Field(0, description="Notebooks the user has")
    running: int = Field(0, description="Notebooks holding resources (starting, running, stopping)")
    queued: int = Field(0, description="Notebooks waiting for a GPU")


class InvitationSent(BaseModel):
    message: str
    code: str = "invited"
    group: str
    user: str
    manager: bool


class TaAdded(BaseModel):
    message: str
    member: MemberOut
    created: bool = Field(description="A new TA account was made")
    invited: bool = Field(description="An existing staff account was invited (joins on accepting)")
    one_time_password: str | None = Field(
        description="The new account's password, shown this once; it must be changed at login"
    )


class InvitationOut(BaseModel):
    group: str
    display_name: str
    manager: bool
    invited_by: str
    created_at: datetime


class GroupInvitationOut(BaseModel):
    user: str
    display_name: str
    manager: bool
    invited_by: str
    created_at: datetime


async def user_out(session: AsyncSession, user: User) -> UserOut:
    groups = await directory.user_groups(session, user.id)
    return UserOut(
        name=user.name,
        display_name=user.display_name,
        email=user.email,
        role=user.role,
        active=user.active,
        must_change_password=user.must_change_password,
        created_at=user.created_at,
        last_login=user.last_login,
        groups=[GroupRef(name=g.name, manager=m) for g, m in groups],
    )


def with_activity(out: UserOut, activity: user_admin.Activity) -> UserActivityOut:
    return UserActivityOut(
        **out.model_dump(),
        last_activity=activity.last_activity,
        notebooks=activity.notebooks,
        running=activity.running,
        queued=activity.queued,
    )


def token_out(token: ApiToken) -> TokenOut:
    return TokenOut(
        id=token.id,
        name=token.name,
        prefix=token.prefix,
        created_at=token.created_at,
        expires_at=token.expires_at,
        last_used=token.last_used,
    )


def group_out(group: Group, members: int, actor: Principal) -> GroupOut:
    return GroupOut(
        name=group.name,
        display_name=group.display_name,
        description=group.description,
        kind=group.kind,
        members=members,
        managed=can_manage_group(actor, group.id),
    )


def member_out(user: User, manager: bool) -> MemberOut:
    return MemberOut(
        name=user.name, display_name=user.display_name, role=user.role, manager=manager
    )


# -- me and my API tokens ----------------------------------------------------------


async def me(db: Database, user_id: int) -> UserOut:
    async with db.session() as session:
        return await user_out(session, await session.get(User, user_id))


async def tokens(db: Database, actor: Principal) -> list[TokenOut]:
    """The caller's own API tokens (a notebook's tokens are the platform's, not listed)."""
    async with db.session() as session:
        rows = await session.scalars(
            select(ApiToken)
            .where(ApiToken.user_id == actor.id, ApiToken.notebook_id.is_(None))
            .order_by(ApiToken.id)
        )
        return [token_out(t) for t in rows.all()]


async def create_token(
    db: Database, auth, clock: Clock, actor: Principal, name: str, expires_in_days: int | None
) -> TokenCreated:
    """A new API token (its secret shown this once), stored and audited together; it
    expires `expires_in_days` from now, or never."""
    expires_at = clock.now() + timedelta(days=expires_in_days) if expires_in_days else None
    async with db.session() as session:
        raw, row = await auth.create_token(actor.id, name, expires_at=expires_at)
        audit.record(session, actor.name, "token.created", f"user:{actor.name}", name=name)
        await session.flush()  # the token's id, for the answer
        return TokenCreated(token=raw, info=token_out(row))


async def revoke_token(db: Database, auth, actor: Principal, token_id: int) -> None:
    async with db.session() as session:
        result = await session.execute(
            delete(ApiToken).where(
                ApiToken.id == token_id,
                ApiToken.user_id == actor.id,
                ApiToken.notebook_id.is_(None),
            )
        )
        if not result.rowcount:
            raise NotFound(f"you have no token {token_id}")
        audit.record(session, actor.name, "token.revoked", f"user:{actor.name}", id=token_id)
    auth.forget_user(actor.id)


# -- users -------------------------------------------------------------------------


async def list_users(
    db: Database, actor: Principal, query: str, role: str | None, group: str | None
) -> list[UserActivityOut]:
    async with db.session() as session:
        users = await directory.list_users(session, actor, query, role, group)
        activity = await user_admin.activity_of(session, users)
        return [with_activity(await user_out(session, u), activity[u.id]) for u in users]


async def account(db: Database, actor: Principal, name: str) -> UserActivityOut:
    """One account with its activity, for whoever manages it (or its owner)."""
    async with db.session() as session:
        user = await directory.get_user(session, name)
        await directory.require_manages_user(session, actor, user)
        activity = await user_admin.activity_of(session, [user])
        return with_activity(await user_out(session, user), activity[user.id])


async def create_user(
    db: Database,
    auth,
    actor: Principal,
    name: str,
    role: Role,
    display_name: str,
    email: str,
    password: str | None,
    group: str | None,
    unix_clash: UnixClash | None,
) -> UserCreated:
    async with db.session() as session:
        created = await directory.create_user(
            session, actor, name, role, display_name, email, password, group, unix_clash
        )
        out = await user_out(session, created.user)
    auth.forget_user(actor.id)
    return UserCreated(user=out, one_time_password=created.one_time_password)


async def import_roster(
    db: Database,
    auth,
    actor: Principal,
    text: str,
    group: str | None,
    unix_clash: UnixClash | None,
) -> ImportOut:
    """A class list's accounts, made and (with `group`) enrolled or invited; all or nothing."""
    async with db.session() as session:
        imported = await roster_import.import_roster(session, actor, text, group, unix_clash)
    if group is not None:
        auth.forget_memberships()
    return imported


async def update_user(
    db: Database,
    auth,
    actor: Principal,
    name: str,
    display_name: str | None,
    email: str | None,
    role: Role | None,
    active: bool | None,
) -> UserOut:
    """The changed account; a disabled one's sessions end at once."""
    async with db.session() as session:
        user = await directory.update_user(session, actor, name, display_name, email, role, active)
        out = await user_out(session, user)
    if active is False:
        await auth.end_sessions(user.id)
    auth.forget_user(user.id)
    return out


async def reset_password(db: Database, auth, actor: Principal, name: str) -> str:
    """A new one-time password for `name`; their sessions end."""
    async with db.session() as session:
        password = await directory.reset_password(session, actor, name)
        user = await directory.get_user(session, name)
    await auth.end_sessions(user.id)
    return password


async def delete_user(db: Database, auth, actor: Principal, name: str) -> None:
    async with db.session() as session:
        user = await directory.delete_user(session, actor, name)
    auth.forget_user(user.id)


# -- groups ------------------------------------------------------------------------


async def list_groups(db: Database, actor: Principal) -> list[GroupOut]:
    async with db.session() as session:
        return [group_out(g, n, actor) for g, n in await directory.list_groups(session, actor)]


async def create_group(
    db: Database,
    auth,
    actor: Principal,
    name: str,
    display_name: str,
    description: str,
    kind: str,
) -> GroupOut:
    """The new group; a non-admin creator is its first member and manager."""
    async with db.session() as session:
        group = await directory.create_group(session, actor, name, display_name, description, kind)
    auth.forget_user(actor.id)
    return GroupOut(
        name=group.name,
        display_name=group.display_name,
        description=group.description,
        kind=group.kind,
        members=0 if actor.is_admin else 1,
        managed=True,
    )


async def update_group(
    db: Database, actor: Principal, name: str, display_name: str | None, description: str | None
) -> GroupOut:
    async with db.session() as session:
        group = await directory.update_group(session, actor, name, display_name, description)
        members = len(await directory.members(session, actor, name))
    return group_out(group, members, actor)


async def delete_group(db: Database, auth, actor: Principal, name: str) -> None:
    async with db.session() as session:
        await directory.delete_group(session, actor, name)
    auth.forget_memberships()


async def members(db: Database, actor: Principal, name: str) -> list[MemberOut]:
    async with db.session() as session:
        rows = await directory.members(session, actor, name)
    return [member_out(u, m) for u, m in rows]


async def set_member(
    db: Database, auth, actor: Principal, name: str, user_name: str, manager: bool
) -> MemberOut | InvitationSent:
    """The member as they now are, or the invitation sent where the caller may not add
    them outright (see `directory.set_member`)."""
    async with db.session() as session:
        result = await directory.set_member(session, actor, name, user_name, manager)
    member = result.user
    if result.invited:
        return InvitationSent(
            message=(
                f"'{member.name}' was invited to group '{name}'"
                f"{' as a manager' if manager else ''}; they join when they accept"
            ),
            group=name,
            user=member.name,
            manager=manager,
        )
    auth.forget_user(member.id)
    return member_out(member, manager)


async def add_ta(
    db: Database,
    auth,
    actor: Principal,
    name: str,
    user_name: str,
    display_name: str,
    email: str,
    unix_clash: UnixClash | None,
) -> TaAdded:
    async with db.session() as session:
        added = await course_staff.add_ta(
            session, actor, name, user_name, display_name, email, unix_clash
        )
    auth.forget_user(added.user.id)
    return TaAdded(
        message=added.message,
        member=member_out(added.user, not added.invited),
        created=added.created,
        invited=added.invited,
        one_time_password=added.one_time_password,
    )


async def remove_member(db: Database, auth, actor: Principal, name: str, user_name: str) -> None:
    async with db.session() as session:
        member = await directory.remove_member(session, actor, name, user_name)
    auth.forget_user(member.id)


# -- invitations -------------------------------------------------------------------


async def my_invitations(db: Database, actor: Principal) -> list[InvitationOut]:
    async with db.session() as session:
        rows = await invitations.pending(session, actor)
    return [
        InvitationOut(
            group=group.name,
            display_name=group.display_name,
            manager=invitation.manager,
            invited_by=invitation.invited_by,
            created_at=invitation.created_at,
        )
        for invitation, group in rows
    ]


async def answer_invitation(db: Database, auth, actor: Principal, group: str, accept: bool) -> None:
    async with db.session() as session:
        await invitations.answer(session, actor, group, accept=accept)
    if accept:
        auth.forget_user(actor.id)


async def group_invitations(db: Database, actor: Principal, name: str) -> list[GroupInvitationOut]:
    async with db.session() as session:
        rows = await invitations.for_group(session, actor, await directory.get_group(session, name))
    return [
        GroupInvitationOut(
            user=user.name,
            display_name=user.display_name or user.name,
            manager=invitation.manager,
            invited_by=invitation.invited_by,
            created_at=invitation.created_at,
        )
        for invitation, user in rows
    ]


async def withdraw_invitation(db: Database, actor: Principal, name: str, user_name: str) -> None:
    async with db.session() as session:
        target = await directory.get_group(session, name)
        await invitations.withdraw(
            session, actor, target, await directory.get_user(session, user_name)
        )

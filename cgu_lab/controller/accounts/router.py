"""Accounts, groups and the caller's own account (/api/me, /api/users, /api/groups).

Putting an existing account into a group answers 200 when it took effect and
202 when it became an invitation that the account's owner answers at
/api/me/invitations (see `controller.invitations` for why).
"""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy import delete, select

from ...core.errors import NotFound
from ...core.roles import Role, can_manage_group
from ...store.models import ApiToken, User
from .. import audit
from ..api.deps import ActorDep, IdentityDep, PlatformDep, require_scope
from ..api.schema_types import (
    DisplayName,
    Email,
    Id,
    LabelPath,
    LabelQuery,
    RoleName,
    SearchQuery,
    UserName,
    UserNamePath,
)
from ..api.schemas import (
    GroupCreate,
    GroupOut,
    GroupPatch,
    GroupRef,
    ImportResult,
    MemberOut,
    MemberPut,
    Message,
    PasswordChange,
    PasswordOut,
    RosterIn,
    Strict,
    TokenCreate,
    TokenCreated,
    TokenOut,
    UserCreate,
    UserCreated,
    UserOut,
    UserPatch,
)
from ..root import Platform
from ..teaching import staff as course_staff
from . import directory as service
from . import roster_import, user_admin
from .admin_router import UserActivityOut, with_activity

router = APIRouter(dependencies=[require_scope("accounts")])


class ImportOut(ImportResult):
    invited: list[str] = []


class InvitationSent(BaseModel):
    message: str
    code: str = "invited"
    group: str
    user: str
    manager: bool


class TaCreate(Strict):
    name: UserName = Field(description="The TA's user name: a new account, or an existing one")
    display_name: DisplayName = Field("", description="For a new account")
    email: Email = Field("", description="For a new account")


class TaAdded(BaseModel):
    message: str
    member: MemberOut
    created: bool = Field(description="A new TA account was made")
    invited: bool = Field(description="An existing staff account was invited (joins on accepting)")
    one_time_password: str | None = Field(
        description="The new account's password, shown this once; it must be changed at login"
    )


def unix_clash(platform: Platform):
    """The host's check of a new user's system account name (local backend), if any."""
    accounts = getattr(platform.backend, "accounts", None)
    return getattr(accounts, "clash", None)


async def user_out(session, user: User) -> UserOut:
    groups = await service.user_groups(session, user.id)
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


def token_out(token: ApiToken) -> TokenOut:
    return TokenOut(
        id=token.id,
        name=token.name,
        prefix=token.prefix,
        created_at=token.created_at,
        expires_at=token.expires_at,
        last_used=token.last_used,
    )


# -- me ----------------------------------------------------------------------


@router.get("/me", response_model=UserOut, tags=["me"], summary="Who am I")
async def me(platform: PlatformDep, who: IdentityDep) -> UserOut:
    async with platform.db.session() as session:
        return await user_out(session, await session.get(User, who.user_id))


@router.put("/me/password", response_model=Message, tags=["me"], summary="Change my password")
async def change_password(body: PasswordChange, platform: PlatformDep, who: IdentityDep) -> Message:
    await platform.auth.change_password(who, body.current, body.new)
    return Message(message="your password was changed")


@router.get("/me/tokens", response_model=list[TokenOut], tags=["me"], summary="My API tokens")
async def list_tokens(platform: PlatformDep, actor: ActorDep) -> list[TokenOut]:
    async with platform.db.session() as session:
        rows = await session.scalars(
            select(ApiToken)
            .where(ApiToken.user_id == actor.id, ApiToken.notebook_id.is_(None))
            .order_by(ApiToken.id)
        )
        return [token_out(t) for t in rows.all()]


@router.post(
    "/me/tokens",
    response_model=TokenCreated,
    status_code=201,
    tags=["me"],
    summary="Create an API token",
)
async def create_token(body: TokenCreate, platform: PlatformDep, actor: ActorDep) -> TokenCreated:
    expires = (
        platform.clock.now() + timedelta(days=body.expires_in_days)
        if body.expires_in_days
        else None
    )
    raw, row = await platform.auth.create_token(actor.id, body.name, expires_at=expires)
    async with platform.db.session() as session:
        audit.record(session, actor.name, "token.created", f"user:{actor.name}", name=body.name)
    return TokenCreated(token=raw, info=token_out(row))


@router.delete(
    "/me/tokens/{token_id}", response_model=Message, tags=["me"], summary="Revoke an API token"
)
async def revoke_token(token_id: Id, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
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
    platform.auth.forget_user(actor.id)
    return Message(message="the token was revoked")


# -- users ---------------------------------------------------------------------


@router.get(
    "/users",
    response_model=list[UserActivityOut],
    tags=["users"],
    summary="List accounts, with their last login, last activity and notebooks",
)
async def list_users(
    platform: PlatformDep,
    actor: ActorDep,
    q: SearchQuery = "",
    role: RoleName | None = None,
    group: LabelQuery = None,
) -> list[UserActivityOut]:
    async with platform.db.session() as session:
        users = await service.list_users(session, actor, q, role, group)
        activity = await user_admin.activity_of(session, users)
        return [with_activity(await user_out(session, u), activity[u.id]) for u in users]


@router.post(
    "/users",
    response_model=UserCreated,
    status_code=201,
    tags=["users"],
    summary="Create an account",
)
async def create_user(body: UserCreate, platform: PlatformDep, actor: ActorDep) -> UserCreated:
    async with platform.db.session() as session:
        created = await service.create_user(
            session,
            actor,
            body.name,
            Role(body.role),
            body.display_name,
            body.email,
            body.password,
            body.group,
            unix_clash(platform),
        )
        out = await user_out(session, created.user)
    platform.auth.forget_user(actor.id)
    return UserCreated(user=out, one_time_password=created.one_time_password)


@router.post(
    "/users/import",
    response_model=ImportOut,
    tags=["users"],
    summary="Create accounts from a CSV class list (all or nothing)",
)
async def import_users(body: RosterIn, platform: PlatformDep, actor: ActorDep) -> ImportOut:
    async with platform.db.session() as session:
        result = await roster_import.import_roster(
            session, actor, body.csv, None, unix_clash(platform)
        )
    return ImportOut(**result)


@router.get(
    "/users/{name}",
    response_model=UserActivityOut,
    tags=["users"],
    summary="One account, with its last activity and notebooks",
)
async def get_user(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> UserActivityOut:
    async with platform.db.session() as session:
        user = await service.get_user(session, name)
        await service.require_manages_user(session, actor, user)
        activity = await user_admin.activity_of(session, [user])
        return with_activity(await user_out(session, user), activity[user.id])


@router.patch("/users/{name}", response_model=UserOut, tags=["users"], summary="Change an account")
async def update_user(
    name: UserNamePath, body: UserPatch, platform: PlatformDep, actor: ActorDep
) -> UserOut:
    async with platform.db.session() as session:
        user = await service.update_user(
            session,
            actor,
            name,
            body.display_name,
            body.email,
            Role(body.role) if body.role else None,
            body.active,
        )
        out = await user_out(session, user)
    if body.active is False:
        await platform.auth.end_sessions(user.id)
    platform.auth.forget_user(user.id)
    return out


@router.post(
    "/users/{name}/password",
    response_model=PasswordOut,
    tags=["users"],
    summary="Reset a password to a new one-time password",
)
async def reset_password(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> PasswordOut:
    async with platform.db.session() as session:
        password = await service.reset_password(session, actor, name)
        user = await service.get_user(session, name)
    await platform.auth.end_sessions(user.id)
    return PasswordOut(one_time_password=password)


@router.delete("/users/{name}", response_model=Message, tags=["users"], summary="Delete an account")
async def delete_user(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
        user = await service.delete_user(session, actor, name)
    platform.auth.forget_user(user.id)
    return Message(message=f"user '{name}' was deleted")


# -- groups --------------------------------------------------------------------


def group_out(group, members: int, actor) -> GroupOut:
    return GroupOut(
        name=group.name,
        display_name=group.display_name,
        description=group.description,
        kind=group.kind,
        members=members,
        managed=can_manage_group(actor, group.id),
    )


@router.get(
    "/groups",
    response_model=list[GroupOut],
    tags=["groups"],
    summary="Groups I belong to (admins: all)",
)
async def list_groups(platform: PlatformDep, actor: ActorDep) -> list[GroupOut]:
    async with platform.db.session() as session:
        return [group_out(g, n, actor) for g, n in await service.list_groups(session, actor)]


@router.post(
    "/groups",
    response_model=GroupOut,
    status_code=201,
    tags=["groups"],
    summary="Create a group or course",
)
async def create_group(body: GroupCreate, platform: PlatformDep, actor: ActorDep) -> GroupOut:
    async with platform.db.session() as session:
        group = await service.create_group(
            session, actor, body.name, body.display_name, body.description, body.kind
        )
    platform.auth.forget_user(actor.id)
    return GroupOut(
        name=group.name,
        display_name=group.display_name,
        description=group.description,
        kind=group.kind,
        members=0 if actor.is_admin else 1,
        managed=True,
    )


@router.patch("/groups/{name}", response_model=GroupOut, tags=["groups"], summary="Change a group")
async def update_group(
    name: LabelPath, body: GroupPatch, platform: PlatformDep, actor: ActorDep
) -> GroupOut:
    async with platform.db.session() as session:
        group = await service.update_group(
            session, actor, name, body.display_name, body.description
        )
        members = len(await service.members(session, actor, name))
    return group_out(group, members, actor)


@router.delete("/groups/{name}", response_model=Message, tags=["groups"], summary="Delete a group")
async def delete_group(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
        await service.delete_group(session, actor, name)
    platform.auth.forget_memberships()
    return Message(message=f"group '{name}' was deleted")


@router.get(
    "/groups/{name}/members",
    response_model=list[MemberOut],
    tags=["groups"],
    summary="Members of a group",
)
async def list_members(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> list[MemberOut]:
    async with platform.db.session() as session:
        rows = await service.members(session, actor, name)
    return [
        MemberOut(name=u.name, display_name=u.display_name, role=u.role, manager=m) for u, m in rows
    ]


@router.put(
    "/groups/{name}/members/{user}",
    response_model=MemberOut,
    tags=["groups"],
    summary="Add a member or change whether they manage the group",
    description=(
        "Admins, and managers putting a student they fully manage, change the group at "
        "once (200). Anyone else is invited (202) and joins by accepting at "
        "/api/me/invitations."
    ),
    responses={202: {"model": InvitationSent, "description": "The account was invited"}},
)
async def put_member(
    name: LabelPath, user: UserNamePath, body: MemberPut, platform: PlatformDep, actor: ActorDep
):
    async with platform.db.session() as session:
        result = await service.set_member(session, actor, name, user, body.manager)
    member = result.user
    if result.invited:
        sent = InvitationSent(
            message=(
                f"'{member.name}' was invited to group '{name}'"
                f"{' as a manager' if body.manager else ''}; they join when they accept"
            ),
            group=name,
            user=member.name,
            manager=body.manager,
        )
        return JSONResponse(sent.model_dump(), status_code=202)
    platform.auth.forget_user(member.id)
    return MemberOut(
        name=member.name, display_name=member.display_name, role=member.role, manager=body.manager
    )


@router.post(
    "/groups/{name}/tas",
    response_model=TaAdded,
    status_code=201,
    tags=["groups"],
    summary="Add a TA to a course in one step, creating the account (its teacher, admins)",
    description=(
        "A new name becomes a TA account with a one-time password (shown once) that "
        "manages the course at once. A student the caller fully manages becomes a TA; "
        "a staff account is added as `PUT .../members/{user}` with manager does (an "
        "invitation for teachers); another course's student is refused (403)."
    ),
)
async def add_ta(
    name: LabelPath, body: TaCreate, platform: PlatformDep, actor: ActorDep
) -> TaAdded:
    async with platform.db.session() as session:
        added = await course_staff.add_ta(
            session, actor, name, body.name, body.display_name, body.email, unix_clash(platform)
        )
    user = added.user
    platform.auth.forget_user(user.id)
    return TaAdded(
        message=added.message,
        member=MemberOut(
            name=user.name,
            display_name=user.display_name,
            role=user.role,
            manager=not added.invited,
        ),
        created=added.created,
        invited=added.invited,
        one_time_password=added.one_time_password,
    )


@router.delete(
    "/groups/{name}/members/{user}",
    response_model=Message,
    tags=["groups"],
    summary="Remove a member",
)
async def remove_member(
    name: LabelPath, user: UserNamePath, platform: PlatformDep, actor: ActorDep
) -> Message:
    async with platform.db.session() as session:
        member = await service.remove_member(session, actor, name, user)
    platform.auth.forget_user(member.id)
    return Message(message=f"'{user}' left group '{name}'")


@router.post(
    "/groups/{name}/import",
    response_model=ImportOut,
    tags=["groups"],
    summary="Enrol a class from CSV, creating missing accounts (all or nothing)",
    description=(
        "New accounts join at once; existing accounts the caller does not fully manage "
        "are invited (listed under `invited`). A class list with any wrong line is refused "
        "whole (400, code `invalid_roster`) and creates nothing; `details.errors` lists "
        "every problem as `{line, reason}` (`line` null for the whole file)."
    ),
)
async def import_group(
    name: LabelPath, body: RosterIn, platform: PlatformDep, actor: ActorDep
) -> ImportOut:
    async with platform.db.session() as session:
        result = await roster_import.import_roster(
            session, actor, body.csv, name, unix_clash(platform)
        )
    platform.auth.forget_memberships()
    return ImportOut(**result)

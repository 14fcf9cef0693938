"""Accounts, groups and the caller's own account (/api/me, /api/users, /api/groups).

Putting an existing account into a group answers 200 when it took effect and
202 when it became an invitation that the account's owner answers at
/api/me/invitations (see `controller.invitations` for why).
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import Field

from ...core.roles import Role
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
from . import service
from .schemas import ImportOut
from .service import InvitationSent, TaAdded, UserActivityOut

router = APIRouter(dependencies=[require_scope("accounts")])


class TaCreate(Strict):
    name: UserName = Field(description="The TA's user name: a new account, or an existing one")
    display_name: DisplayName = Field("", description="For a new account")
    email: Email = Field("", description="For a new account")


def unix_clash(platform: Platform):
    """The host's check of a new user's system account name (local backend), if any."""
    accounts = getattr(platform.backend, "accounts", None)
    return getattr(accounts, "clash", None)


# -- me ----------------------------------------------------------------------


@router.get("/me", response_model=UserOut, tags=["me"], summary="Who am I")
async def me(platform: PlatformDep, who: IdentityDep) -> UserOut:
    return await service.me(platform.db, who.user_id)


@router.put("/me/password", response_model=Message, tags=["me"], summary="Change my password")
async def change_password(body: PasswordChange, platform: PlatformDep, who: IdentityDep) -> Message:
    await platform.auth.change_password(who, body.current, body.new)
    return Message(message="your password was changed")


@router.get("/me/tokens", response_model=list[TokenOut], tags=["me"], summary="My API tokens")
async def list_tokens(platform: PlatformDep, actor: ActorDep) -> list[TokenOut]:
    return await service.tokens(platform.db, actor)


@router.post(
    "/me/tokens",
    response_model=TokenCreated,
    status_code=201,
    tags=["me"],
    summary="Create an API token",
)
async def create_token(body: TokenCreate, platform: PlatformDep, actor: ActorDep) -> TokenCreated:
    return await service.create_token(
        platform.db, platform.auth, platform.clock, actor, body.name, body.expires_in_days
    )


@router.delete(
    "/me/tokens/{token_id}", response_model=Message, tags=["me"], summary="Revoke an API token"
)
async def revoke_token(token_id: Id, platform: PlatformDep, actor: ActorDep) -> Message:
    await service.revoke_token(platform.db, platform.auth, actor, token_id)
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
    return await service.list_users(platform.db, actor, q, role, group)


@router.post(
    "/users",
    response_model=UserCreated,
    status_code=201,
    tags=["users"],
    summary="Create an account",
)
async def create_user(body: UserCreate, platform: PlatformDep, actor: ActorDep) -> UserCreated:
    return await service.create_user(
        platform.db,
        platform.auth,
        actor,
        body.name,
        Role(body.role),
        body.display_name,
        body.email,
        body.password,
        body.group,
        unix_clash(platform),
    )


@router.post(
    "/users/import",
    response_model=ImportOut,
    tags=["users"],
    summary="Create accounts from a CSV class list (all or nothing)",
)
async def import_users(body: RosterIn, platform: PlatformDep, actor: ActorDep) -> ImportOut:
    return await service.import_roster(
        platform.db, platform.auth, actor, body.csv, None, unix_clash(platform)
    )


@router.get(
    "/users/{name}",
    response_model=UserActivityOut,
    tags=["users"],
    summary="One account, with its last activity and notebooks",
)
async def get_user(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> UserActivityOut:
    return await service.account(platform.db, actor, name)


@router.patch("/users/{name}", response_model=UserOut, tags=["users"], summary="Change an account")
async def update_user(
    name: UserNamePath, body: UserPatch, platform: PlatformDep, actor: ActorDep
) -> UserOut:
    return await service.update_user(
        platform.db,
        platform.auth,
        actor,
        name,
        body.display_name,
        body.email,
        Role(body.role) if body.role else None,
        body.active,
    )


@router.post(
    "/users/{name}/password",
    response_model=PasswordOut,
    tags=["users"],
    summary="Reset a password to a new one-time password",
)
async def reset_password(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> PasswordOut:
    password = await service.reset_password(platform.db, platform.auth, actor, name)
    return PasswordOut(one_time_password=password)


@router.delete("/users/{name}", response_model=Message, tags=["users"], summary="Delete an account")
async def delete_user(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> Message:
    await service.delete_user(platform.db, platform.auth, actor, name)
    return Message(message=f"user '{name}' was deleted")


# -- groups --------------------------------------------------------------------


@router.get(
    "/groups",
    response_model=list[GroupOut],
    tags=["groups"],
    summary="Groups I belong to (admins: all)",
)
async def list_groups(platform: PlatformDep, actor: ActorDep) -> list[GroupOut]:
    return await service.list_groups(platform.db, actor)


@router.post(
    "/groups",
    response_model=GroupOut,
    status_code=201,
    tags=["groups"],
    summary="Create a group or course",
)
async def create_group(body: GroupCreate, platform: PlatformDep, actor: ActorDep) -> GroupOut:
    return await service.create_group(
        platform.db, platform.auth, actor, body.name, body.display_name, body.description, body.kind
    )


@router.patch("/groups/{name}", response_model=GroupOut, tags=["groups"], summary="Change a group")
async def update_group(
    name: LabelPath, body: GroupPatch, platform: PlatformDep, actor: ActorDep
) -> GroupOut:
    return await service.update_group(platform.db, actor, name, body.display_name, body.description)


@router.delete("/groups/{name}", response_model=Message, tags=["groups"], summary="Delete a group")
async def delete_group(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    await service.delete_group(platform.db, platform.auth, actor, name)
    return Message(message=f"group '{name}' was deleted")


@router.get(
    "/groups/{name}/members",
    response_model=list[MemberOut],
    tags=["groups"],
    summary="Members of a group",
)
async def list_members(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> list[MemberOut]:
    return await service.members(platform.db, actor, name)


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
    result = await service.set_member(platform.db, platform.auth, actor, name, user, body.manager)
    if isinstance(result, InvitationSent):
        return JSONResponse(result.model_dump(), status_code=202)
    return result


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
    return await service.add_ta(
        platform.db,
        platform.auth,
        actor,
        name,
        body.name,
        body.display_name,
        body.email,
        unix_clash(platform),
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
    await service.remove_member(platform.db, platform.auth, actor, name, user)
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
    return await service.import_roster(
        platform.db, platform.auth, actor, body.csv, name, unix_clash(platform)
    )

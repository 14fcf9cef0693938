"""Invitations to a group: the account's owner answers, the group's managers see and withdraw.

An existing account the caller does not fully manage is invited rather than added
(see cgu_lab/controller/accounts/invitations.py); these routes are both sides of that.
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter
from pydantic import BaseModel

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import LabelPath, UserNamePath
from ..api.schemas import Message
from . import invitations
from .directory import get_group, get_user

router = APIRouter(dependencies=[require_scope("accounts")])


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


@router.get(
    "/me/invitations",
    response_model=list[InvitationOut],
    tags=["me"],
    summary="Groups that invited me",
)
async def list_invitations(platform: PlatformDep, actor: ActorDep) -> list[InvitationOut]:
    async with platform.db.session() as session:
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


@router.post(
    "/me/invitations/{group}",
    response_model=Message,
    tags=["me"],
    summary="Accept an invitation: join the group",
)
async def accept_invitation(group: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
        await invitations.answer(session, actor, group, accept=True)
    platform.auth.forget_user(actor.id)
    return Message(message=f"you joined group '{group}'")


@router.delete(
    "/me/invitations/{group}",
    response_model=Message,
    tags=["me"],
    summary="Decline an invitation",
)
async def decline_invitation(group: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
        await invitations.answer(session, actor, group, accept=False)
    return Message(message=f"you declined the invitation to group '{group}'")


@router.get(
    "/groups/{name}/invitations",
    response_model=list[GroupInvitationOut],
    tags=["groups"],
    summary="A group's pending invitations (its managers)",
)
async def group_invitations(
    name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> list[GroupInvitationOut]:
    async with platform.db.session() as session:
        rows = await invitations.for_group(session, actor, await get_group(session, name))
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


@router.delete(
    "/groups/{name}/invitations/{user}",
    response_model=Message,
    tags=["groups"],
    summary="Withdraw a pending invitation (never a membership)",
)
async def withdraw_invitation(
    name: LabelPath, user: UserNamePath, platform: PlatformDep, actor: ActorDep
) -> Message:
    async with platform.db.session() as session:
        target = await get_group(session, name)
        await invitations.withdraw(session, actor, target, await get_user(session, user))
    return Message(message=f"the invitation of '{user}' to group '{name}' was withdrawn")

"""Invitations to a group: the account's owner answers, the group's managers see and withdraw.

An existing account the caller does not fully manage is invited rather than added
(see cgu_lab/controller/accounts/invitations.py); these routes are both sides of that.
"""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import LabelPath, UserNamePath
from ..api.schemas import Message
from . import service
from .service import GroupInvitationOut, InvitationOut

router = APIRouter(dependencies=[require_scope("accounts")])


@router.get(
    "/me/invitations",
    response_model=list[InvitationOut],
    tags=["me"],
    summary="Groups that invited me",
)
async def list_invitations(platform: PlatformDep, actor: ActorDep) -> list[InvitationOut]:
    return await service.my_invitations(platform.db, actor)


@router.post(
    "/me/invitations/{group}",
    response_model=Message,
    tags=["me"],
    summary="Accept an invitation: join the group",
)
async def accept_invitation(group: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    await service.answer_invitation(platform.db, platform.auth, actor, group, accept=True)
    return Message(message=f"you joined group '{group}'")


@router.delete(
    "/me/invitations/{group}",
    response_model=Message,
    tags=["me"],
    summary="Decline an invitation",
)
async def decline_invitation(group: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    await service.answer_invitation(platform.db, platform.auth, actor, group, accept=False)
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
    return await service.group_invitations(platform.db, actor, name)


@router.delete(
    "/groups/{name}/invitations/{user}",
    response_model=Message,
    tags=["groups"],
    summary="Withdraw a pending invitation (never a membership)",
)
async def withdraw_invitation(
    name: LabelPath, user: UserNamePath, platform: PlatformDep, actor: ActorDep
) -> Message:
    await service.withdraw_invitation(platform.db, actor, name, user)
    return Message(message=f"the invitation of '{user}' to group '{name}' was withdrawn")

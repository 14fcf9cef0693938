"""Shares of a notebook, what is shared with me, and whom I can share with."""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import Id, LabelPath, SearchQuery, UserNamePath
from ..api.schemas import Directory, Message, ShareCreate, SharedWithMe, ShareOut

router = APIRouter(tags=["shares"], dependencies=[require_scope("shares")])


@router.get(
    "/notebooks/{owner}/{name}/shares",
    response_model=list[ShareOut],
    summary="Active shares of a notebook (owner)",
)
async def list_shares(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> list[ShareOut]:
    return await platform.shares.list_for(actor, owner, name)


@router.post(
    "/notebooks/{owner}/{name}/shares",
    response_model=ShareOut,
    status_code=201,
    summary="Share a notebook or one of its files with a user or a group",
)
async def create_share(
    owner: UserNamePath, name: LabelPath, body: ShareCreate, platform: PlatformDep, actor: ActorDep
) -> ShareOut:
    return await platform.shares.create(
        actor,
        owner,
        name,
        body.grantee,
        body.kind,
        body.access,
        body.path,
        body.expires_in_minutes,
        body.note,
    )


@router.delete(
    "/notebooks/{owner}/{name}/shares/{share_id}",
    response_model=Message,
    summary="Revoke a share (the owner), or give it up (its grantee)",
)
async def revoke_share(
    owner: UserNamePath, name: LabelPath, share_id: Id, platform: PlatformDep, actor: ActorDep
) -> Message:
    await platform.shares.revoke(actor, owner, name, share_id)
    return Message(message="the share was revoked")


@router.get(
    "/shared-with-me",
    response_model=list[SharedWithMe],
    tags=["shares"],
    summary="Notebooks and files others shared with me",
)
async def shared_with_me(platform: PlatformDep, actor: ActorDep) -> list[SharedWithMe]:
    return await platform.shares.shared_with(actor)


@router.get("/directory", response_model=Directory, summary="Find people and groups to share with")
async def directory(
    platform: PlatformDep,
    actor: ActorDep,
    q: SearchQuery,
) -> Directory:
    return await platform.shares.directory(actor, q)

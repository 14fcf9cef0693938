"""Shares of a notebook, what is shared with me, and whom I can share with."""

from __future__ import annotations

from fastapi import APIRouter, Query

from ...core.errors import NotFound
from ..accounts import get_user
from .deps import ActorDep, PlatformDep
from .schemas import AccessOut, Directory, Message, ShareCreate, SharedWithMe, ShareOut

router = APIRouter(tags=["shares"])


@router.get(
    "/notebooks/{owner}/{name}/shares",
    response_model=list[ShareOut],
    summary="Active shares of a notebook (owner)",
)
async def list_shares(
    owner: str, name: str, platform: PlatformDep, actor: ActorDep
) -> list[ShareOut]:
    return [ShareOut(**s) for s in await platform.shares.list_for(actor, owner, name)]


@router.post(
    "/notebooks/{owner}/{name}/shares",
    response_model=ShareOut,
    status_code=201,
    summary="Share a notebook or one of its files with a user or a group",
)
async def create_share(
    owner: str, name: str, body: ShareCreate, platform: PlatformDep, actor: ActorDep
) -> ShareOut:
    created = await platform.shares.create(
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
    return ShareOut(**created)


@router.delete(
    "/notebooks/{owner}/{name}/shares/{share_id}",
    response_model=Message,
    summary="Revoke a share (the owner), or give it up (its grantee)",
)
async def revoke_share(
    owner: str, name: str, share_id: int, platform: PlatformDep, actor: ActorDep
) -> Message:
    await platform.shares.revoke(actor, owner, name, share_id)
    return Message(message="the share was revoked")


@router.get(
    "/notebooks/{owner}/{name}/access",
    response_model=AccessOut,
    summary="What a user may do in this notebook (for its own server, with its token)",
)
async def user_access(
    owner: str,
    name: str,
    platform: PlatformDep,
    actor: ActorDep,
    user: str = Query(description="The user the notebook server is asking about"),
) -> AccessOut:
    route = await platform.notebooks.route(owner, name)
    if route is None or route.owner_id != actor.id:
        raise NotFound(f"{owner} has no notebook '{name}'")
    if user == owner:
        return AccessOut(access="owner", scope=[])
    async with platform.db.session() as session:
        grantee = await get_user(session, user)
    principal = await platform.auth.principal_of(grantee.id)
    access = await platform.shares.access(principal, route.notebook_id)
    return AccessOut(
        access=access.level if access else None, scope=list(access.scope) if access else []
    )


@router.get(
    "/shared-with-me",
    response_model=list[SharedWithMe],
    tags=["shares"],
    summary="Notebooks and files others shared with me",
)
async def shared_with_me(platform: PlatformDep, actor: ActorDep) -> list[SharedWithMe]:
    return [SharedWithMe(**s) for s in await platform.shares.shared_with(actor)]


@router.get("/directory", response_model=Directory, summary="Find people and groups to share with")
async def directory(
    platform: PlatformDep,
    actor: ActorDep,
    q: str = Query(description="At least 2 letters of a name"),
) -> Directory:
    return Directory(**await platform.shares.directory(actor, q))

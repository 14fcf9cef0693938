"""What a user may do in a notebook: asked by that notebook's own server.

On Kubernetes behind an ingress that names the user, the notebook server asks
the controller with its own token (the only thing that token may do).
"""

from __future__ import annotations

from fastapi import APIRouter

from ...core.errors import NotFound
from ..accounts import get_user
from .deps import ActorDep, PlatformDep, require_scope
from .schema_types import LabelPath, UserNamePath, user_query
from .schemas import AccessOut

router = APIRouter(tags=["shares"], dependencies=[require_scope("notebook:access")])


@router.get(
    "/notebooks/{owner}/{name}/access",
    response_model=AccessOut,
    summary="What a user may do in this notebook (for its own server, with its token)",
)
async def user_access(
    owner: UserNamePath,
    name: LabelPath,
    platform: PlatformDep,
    actor: ActorDep,
    user: user_query("The user the notebook server is asking about"),
) -> AccessOut:
    route = await platform.notebooks.routes.lookup(owner, name)
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

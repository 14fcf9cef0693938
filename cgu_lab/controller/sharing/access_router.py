"""What a user may do in a notebook: asked by that notebook's own server.

On Kubernetes behind an ingress that names the user, the notebook server asks
the controller with its own token (the only thing that token may do). Kubeflow's
ingress names users by e-mail address (`kubeflow-userid`), so the user asked
about may be a platform name or the e-mail address of exactly one active user;
the answer says which platform user that is.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from ...core import names
from ...core.errors import NotFound
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import LabelPath, UserNamePath
from ..api.schemas import AccessOut

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
    user: Annotated[
        str,
        Query(
            min_length=1,
            max_length=names.MAX_EMAIL,
            pattern=r"^[^\x00-\x20\x7f]+$",
            description="The user the notebook server is asking about: a user name, or "
            "the e-mail address an ingress names them by (Kubeflow's kubeflow-userid)",
        ),
    ],
) -> AccessOut:
    route = await platform.notebooks.routes.lookup(owner, name)
    if route is None or route.owner_id != actor.id:
        raise NotFound(f"{owner} has no notebook '{name}'")
    grantee = await platform.shares.named_user(user)
    if grantee is None:
        return AccessOut(access=None, scope=[], user=None)
    if grantee.name == owner:
        return AccessOut(access="owner", scope=[], user=grantee.name)
    principal = await platform.auth.principal_of(grantee.id)
    access = await platform.shares.access(principal, route.notebook_id)
    if access is not None and access.level == "visit":
        # A demo's visitor: behind an ingress nothing limits them to the published app's
        # path before the server, so they get nothing here (demos go through the proxy).
        access = None
    return AccessOut(
        access=access.level if access else None,
        scope=list(access.scope) if access else [],
        user=grantee.name,
    )

"""What a notebook's own server asks about its published demos, with its token.

A server shows notebooks as pages with Voilà from a list in its home
(notebook/apps/voila_demos.py); at each start it asks which of its apps are published
and drops the pages that are not, so that a page unpublished while the notebook was
stopped does not run again. A notebook's token (readable by its kernels) asks about
its own notebook only; the answer names app paths, which every visitor of a demo
sees in its address anyway.
"""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, IdentityDep, PlatformDep, require_scope
from ..api.schema_types import LabelPath, UserNamePath
from .schemas import PublishedApps

router = APIRouter(tags=["demos"], dependencies=[require_scope("notebook:access")])


@router.get(
    "/notebooks/{owner}/{name}/published",
    response_model=PublishedApps,
    summary="The app paths a notebook publishes (for its own server, with its token)",
)
async def published(
    owner: UserNamePath,
    name: LabelPath,
    platform: PlatformDep,
    actor: ActorDep,
    identity: IdentityDep,
) -> PublishedApps:
    apps = await platform.publishing.published_apps(actor, owner, name, identity.notebook_id)
    return PublishedApps(apps=apps)

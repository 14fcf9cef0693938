"""JupyterLab's side of publishing, on the notebook's origin (`cgu-lab/demos`, the proxy's
lab routes): the Publish command's dialog asks what it may offer, then publishes an app
of *this* notebook with the same service as the portal's My notebooks page. Always the
browser user's own identity, and only the notebook's owner (`lab:own`)."""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import LabelPath, UserNamePath
from . import router as portal
from .schemas import PublishOptionsOut

router = APIRouter(
    prefix="/lab/{owner}/{name}",
    include_in_schema=False,
    dependencies=[require_scope("lab:read")],
)
OWN = [require_scope("lab:own")]


@router.get("/demos", dependencies=OWN)
async def options(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> PublishOptionsOut:
    return await platform.publishing.lab_options(actor, owner, name)


# The portal's own handler: the same body, service and answer (201 new, 200 changed).
router.post("/demos", status_code=201, dependencies=OWN)(portal.publish)

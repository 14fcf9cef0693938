"""JupyterLab's side of the help queue, on the notebook's origin (`cgu-lab/help...`, the
proxy's lab routes): the Ask-for-help button asks about *this* notebook; the panel shows
the caller's queues and own requests. Always the browser user's own identity."""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import Id
from .schemas import HelpPanelOut, HelpRequestOut, LabHelpAsk

router = APIRouter(
    prefix="/lab/{owner}/{name}",
    include_in_schema=False,
    dependencies=[require_scope("lab:read")],
)
OWN = [require_scope("lab:own")]


@router.get("/help", dependencies=OWN)
async def panel(platform: PlatformDep, actor: ActorDep) -> HelpPanelOut:
    return await platform.help_queue.mine(actor)


@router.post("/help", status_code=201, dependencies=OWN)
async def ask(
    name: str, body: LabHelpAsk, platform: PlatformDep, actor: ActorDep
) -> HelpRequestOut:
    return await platform.help_queue.ask(actor, body.group, name, body.question, body.access)


@router.post("/help/{group}/{request_id}/take", dependencies=OWN)
async def take(
    group: str, request_id: Id, platform: PlatformDep, actor: ActorDep
) -> HelpRequestOut:
    return await platform.help_queue.take(actor, group, request_id)


@router.post("/help/{group}/{request_id}/end", dependencies=OWN)
async def end(group: str, request_id: Id, platform: PlatformDep, actor: ActorDep) -> HelpRequestOut:
    return await platform.help_queue.end(actor, group, request_id)

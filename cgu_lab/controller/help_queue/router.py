"""The help queue's REST API: a course's queue, raising a hand, taking and ending."""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import Id, LabelPath
from .schemas import HelpAsk, HelpQueueOut, HelpRequestOut

router = APIRouter(tags=["help"], dependencies=[require_scope("teaching")])


@router.get(
    "/groups/{group}/help",
    response_model=HelpQueueOut,
    summary="A course's help queue (its staff), or my own raised hand (a student)",
)
async def queue(group: LabelPath, platform: PlatformDep, actor: ActorDep) -> HelpQueueOut:
    return await platform.help_queue.queue(actor, group)


@router.post(
    "/groups/{group}/help",
    response_model=HelpRequestOut,
    status_code=201,
    summary="Raise my hand in a course about one of my notebooks",
)
async def ask(
    group: LabelPath, body: HelpAsk, platform: PlatformDep, actor: ActorDep
) -> HelpRequestOut:
    return await platform.help_queue.ask(actor, group, body.notebook, body.question, body.access)


@router.post(
    "/groups/{group}/help/{request_id}/take",
    response_model=HelpRequestOut,
    summary="Take a request: the student's notebook is shared with me until it ends",
)
async def take(
    group: LabelPath, request_id: Id, platform: PlatformDep, actor: ActorDep
) -> HelpRequestOut:
    return await platform.help_queue.take(actor, group, request_id)


@router.post(
    "/groups/{group}/help/{request_id}/end",
    response_model=HelpRequestOut,
    summary="Done (the helper), Thanks or lower my hand (the student): the share is revoked",
)
async def end(
    group: LabelPath, request_id: Id, platform: PlatformDep, actor: ActorDep
) -> HelpRequestOut:
    return await platform.help_queue.end(actor, group, request_id)

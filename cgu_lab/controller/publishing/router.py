"""Published demos: a notebook's owner publishes, lists and unpublishes its apps; a
course's members list the course's demos."""

from __future__ import annotations

from fastapi import APIRouter, Response

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import Id, LabelPath, UserNamePath
from ..api.schemas import Message
from .schemas import DemoOut, PublicBody, PublishBody

router = APIRouter(tags=["demos"], dependencies=[require_scope("shares")])


@router.get(
    "/notebooks/{owner}/{name}/demos",
    response_model=list[DemoOut],
    summary="A notebook's published apps, with their visitor counts (its owner)",
)
async def list_demos(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> list[DemoOut]:
    return await platform.publishing.list_for(actor, owner, name)


@router.post(
    "/notebooks/{owner}/{name}/demos",
    response_model=DemoOut,
    status_code=201,
    summary="Publish one of a notebook's apps to a course or every logged-in user "
    "(again: change its audience)",
)
async def publish(
    owner: UserNamePath,
    name: LabelPath,
    body: PublishBody,
    platform: PlatformDep,
    actor: ActorDep,
    response: Response,
) -> DemoOut:
    demo, created = await platform.publishing.publish(
        actor, owner, name, body.app, body.course, body.title
    )
    if not created:
        response.status_code = 200
    return demo


@router.delete(
    "/notebooks/{owner}/{name}/demos/{demo_id}",
    response_model=Message,
    summary="Unpublish: its visitors lose the app at once",
)
async def unpublish(
    owner: UserNamePath, name: LabelPath, demo_id: Id, platform: PlatformDep, actor: ActorDep
) -> Message:
    await platform.publishing.unpublish(actor, owner, name, demo_id)
    return Message(message="the demo was unpublished")


@router.put(
    "/notebooks/{owner}/{name}/demos/{demo_id}/public",
    response_model=DemoOut,
    summary="Let a published demo be used without a log-in, or no longer (administrators)",
)
async def set_public(
    owner: UserNamePath,
    name: LabelPath,
    demo_id: Id,
    body: PublicBody,
    platform: PlatformDep,
    actor: ActorDep,
) -> DemoOut:
    return await platform.publishing.set_public(actor, owner, name, demo_id, body.public)


@router.get(
    "/groups/{group}/demos",
    response_model=list[DemoOut],
    summary="The demos published to a course (its members)",
)
async def course_demos(group: LabelPath, platform: PlatformDep, actor: ActorDep) -> list[DemoOut]:
    return await platform.publishing.course_demos(actor, group)


@router.get(
    "/me/demos",
    response_model=list[DemoOut],
    summary="Demos I may use: my courses' and those published to everyone logged in",
)
async def my_demos(platform: PlatformDep, actor: ActorDep) -> list[DemoOut]:
    return await platform.publishing.visible_to(actor)

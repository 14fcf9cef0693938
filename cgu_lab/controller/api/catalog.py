"""Environments users choose from when creating notebooks."""

from __future__ import annotations

from fastapi import APIRouter

from .. import catalog as service
from .deps import ActorDep, PlatformDep, require_scope
from .schema_types import LabelPath
from .schemas import EnvironmentIn, EnvironmentOut, Message

router = APIRouter(tags=["catalog"], dependencies=[require_scope("catalog")])


def environment_out(env) -> EnvironmentOut:
    return EnvironmentOut(
        name=env.name,
        display_name=env.display_name,
        description=env.description,
        image=env.image,
        local_prefix=env.local_prefix,
        is_default=env.is_default,
    )


@router.get("/environments", response_model=list[EnvironmentOut], summary="Software environments")
async def list_environments(platform: PlatformDep, actor: ActorDep) -> list[EnvironmentOut]:
    async with platform.db.session() as session:
        return [environment_out(e) for e in await service.list_environments(session)]


@router.put(
    "/environments/{name}",
    response_model=EnvironmentOut,
    summary="Define or change an environment (admins)",
)
async def put_environment(
    name: LabelPath, body: EnvironmentIn, platform: PlatformDep, actor: ActorDep
) -> EnvironmentOut:
    async with platform.db.session() as session:
        env = await service.save_environment(session, actor, name, **body.model_dump())
        return environment_out(env)


@router.delete(
    "/environments/{name}", response_model=Message, summary="Delete an unused environment (admins)"
)
async def delete_environment(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
        await service.delete_environment(session, actor, name)
    return Message(message=f"environment '{name}' was deleted")

"""Environments and GPU types users choose from when creating notebooks."""

from __future__ import annotations

from fastapi import APIRouter

from ...core.gpus import capacity
from .. import catalog as service
from .deps import ActorDep, PlatformDep
from .schemas import EnvironmentIn, EnvironmentOut, GpuTypeOut, Message

router = APIRouter(tags=["catalog"])


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
    name: str, body: EnvironmentIn, platform: PlatformDep, actor: ActorDep
) -> EnvironmentOut:
    async with platform.db.session() as session:
        env = await service.save_environment(session, actor, name, **body.model_dump())
        return environment_out(env)


@router.delete(
    "/environments/{name}", response_model=Message, summary="Delete an unused environment (admins)"
)
async def delete_environment(name: str, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
        await service.delete_environment(session, actor, name)
    return Message(message=f"environment '{name}' was deleted")


@router.get("/gpu-types", response_model=list[GpuTypeOut], summary="GPU types on offer")
async def list_gpu_types(platform: PlatformDep, actor: ActorDep) -> list[GpuTypeOut]:
    devices = platform.notebooks.devices
    async with platform.db.session() as session:
        return [
            GpuTypeOut(
                name=t.name,
                display_name=t.display_name,
                description=t.description,
                resource_name=t.resource_name,
                share=t.share,
                fraction=t.fraction,
                mig_profile=t.mig_profile,
                models=list((t.models or {}).get("include", [])),
                node_selector=dict(t.node_selector or {}),
                capacity=capacity(devices, service.offer_of(t)),
            )
            for t in await service.list_gpu_types(session)
        ]

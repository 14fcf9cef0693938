"""GPU types (admin-defined offers) and the GPU devices they are placed on.

A GPU type's Kubernetes resource must match what it hands out (`core.gpus`):
left out, it follows from the type (whole, shared, MIG profile); given, a
mismatch (a MIG profile on `nvidia.com/gpu`) is refused with the right name.
A GPU declared without a node is on this machine (local backend).
"""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import DeviceIdPath, LabelPath
from ..api.schemas import GpuDeviceIn, GpuDeviceOut, GpuTypeIn, GpuTypeOut, Message
from . import service
from .schemas import GpuFleetOut

router = APIRouter(tags=["gpus"], dependencies=[require_scope("gpus")])


@router.get("/gpu-types", response_model=list[GpuTypeOut], summary="GPU types on offer")
async def list_gpu_types(platform: PlatformDep, actor: ActorDep) -> list[GpuTypeOut]:
    return await service.gpu_types(platform.db, platform.notebooks.gpus.devices)


@router.put(
    "/gpu-types/{name}", response_model=GpuTypeOut, summary="Define or change a GPU type (admins)"
)
async def put_gpu_type(
    name: LabelPath, body: GpuTypeIn, platform: PlatformDep, actor: ActorDep
) -> GpuTypeOut:
    out = await service.save_gpu_type(
        platform.db, platform.notebooks.gpus.devices, actor, name, body
    )
    platform.quota_mirror.poke()  # its resource name may have changed
    return out


@router.delete(
    "/gpu-types/{name}",
    response_model=Message,
    summary="Delete a GPU type nobody uses (admins); refused with the list of its users",
)
async def delete_gpu_type(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    await service.delete_gpu_type(platform.db, actor, name)
    return Message(message=f"GPU type '{name}' was deleted")


@router.get(
    "/gpus", response_model=list[GpuDeviceOut], summary="GPU devices: found and declared (admins)"
)
async def list_gpus(platform: PlatformDep, actor: ActorDep) -> list[GpuDeviceOut]:
    return await service.inventory(platform.db, platform.notebooks.gpus, platform.notebooks, actor)


@router.post(
    "/gpus", response_model=Message, status_code=201, summary="Declare a GPU by hand (admins)"
)
async def declare_gpu(body: GpuDeviceIn, platform: PlatformDep, actor: ActorDep) -> Message:
    node = await service.declare(platform.db, platform.notebooks.gpus, actor, body)
    return Message(message=f"GPU '{body.device_id}' was declared on node {node}")


@router.delete(
    "/gpus/{device_id}", response_model=Message, summary="Remove a declared GPU (admins)"
)
async def remove_gpu(device_id: DeviceIdPath, platform: PlatformDep, actor: ActorDep) -> Message:
    await service.remove(platform.db, platform.notebooks.gpus, actor, device_id)
    return Message(message=f"GPU '{device_id}' was removed")


@router.get(
    "/gpus/fleet",
    response_model=GpuFleetOut,
    summary="The cluster's GPU products, counts and slices, and the types each could back "
    "(admins; kubernetes backend)",
)
async def gpu_fleet(platform: PlatformDep, actor: ActorDep) -> GpuFleetOut:
    return await service.fleet(platform.db, platform.backend, actor)

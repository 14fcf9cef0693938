"""GPU types (admin-defined offers) and the GPU devices they are placed on.

A GPU type's Kubernetes resource must match what it hands out (`core.gpus`):
left out, it follows from the type (whole, shared, MIG profile); given, a
mismatch (a MIG profile on `nvidia.com/gpu`) is refused with the right name.
A GPU declared without a node is on this machine (local backend).
"""

from __future__ import annotations

from fastapi import APIRouter

from ...core.gpu_fleet import PRODUCT, Product, products_matching
from ...core.gpus import (
    capacity,
    check_gpu_type_resource,
    check_mig_profile,
    expected_resources,
    run_entry_id,
)
from ...core.resources import parse_memory
from ...core.roles import require_admin
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import DeviceIdPath, LabelPath
from ..api.schemas import GpuDeviceIn, GpuDeviceOut, GpuTypeIn, GpuTypeOut, Message
from ..environments import catalog
from .schemas import GpuFleetOut, GpuProductOut, GpuProposalOut

router = APIRouter(tags=["gpus"], dependencies=[require_scope("gpus")])


def gpu_type_out(gpu_type, devices) -> GpuTypeOut:
    return GpuTypeOut(
        name=gpu_type.name,
        display_name=gpu_type.display_name,
        description=gpu_type.description,
        resource_name=gpu_type.resource_name,
        share=gpu_type.share,
        fraction=gpu_type.fraction,
        mig_profile=gpu_type.mig_profile,
        models=list((gpu_type.models or {}).get("include", [])),
        node_selector=dict(gpu_type.node_selector or {}),
        capacity=capacity(devices, catalog.offer_of(gpu_type)),
    )


def _holder(names: dict[int, str], holding_id: int) -> str:
    """A notebook's 'owner/name', or the competition entry whose run holds the GPU."""
    entry = run_entry_id(holding_id)
    return f"competition entry {entry}" if entry is not None else names.get(holding_id, "?")


@router.get("/gpu-types", response_model=list[GpuTypeOut], summary="GPU types on offer")
async def list_gpu_types(platform: PlatformDep, actor: ActorDep) -> list[GpuTypeOut]:
    devices = platform.notebooks.gpus.devices
    async with platform.db.session() as session:
        return [gpu_type_out(t, devices) for t in await catalog.list_gpu_types(session)]


@router.put(
    "/gpu-types/{name}", response_model=GpuTypeOut, summary="Define or change a GPU type (admins)"
)
async def put_gpu_type(
    name: LabelPath, body: GpuTypeIn, platform: PlatformDep, actor: ActorDep
) -> GpuTypeOut:
    require_admin(actor, "define GPU types")
    fields = body.model_dump()
    fields["mig_profile"] = check_mig_profile(body.mig_profile)
    if "resource_name" not in body.model_fields_set:
        fields["resource_name"] = expected_resources(body.share, fields["mig_profile"])[0]
    fields["resource_name"] = check_gpu_type_resource(
        fields["resource_name"], body.share, fields["mig_profile"]
    )
    async with platform.db.session() as session:
        gpu_type = await catalog.save_gpu_type(session, actor, name, **fields)
        out = gpu_type_out(gpu_type, platform.notebooks.gpus.devices)
    platform.quota_mirror.poke()  # its resource name may have changed
    return out


@router.delete(
    "/gpu-types/{name}",
    response_model=Message,
    summary="Delete a GPU type nobody uses (admins); refused with the list of its users",
)
async def delete_gpu_type(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
        await catalog.delete_gpu_type(session, actor, name)
    return Message(message=f"GPU type '{name}' was deleted")


@router.get(
    "/gpus", response_model=list[GpuDeviceOut], summary="GPU devices: found and declared (admins)"
)
async def list_gpus(platform: PlatformDep, actor: ActorDep) -> list[GpuDeviceOut]:
    require_admin(actor, "see the GPU inventory")
    pool = platform.notebooks.gpus
    declared = {d.id for d in pool.declared}
    async with platform.db.session() as session:
        holdings = await pool.holdings(session)
        names = await platform.notebooks.names(session, [h.notebook_id for h in holdings])
    holders: dict[str, list[str]] = {}
    for holding in holdings:
        for device in holding.devices:
            holders.setdefault(device, []).append(_holder(names, holding.notebook_id))
    return [
        GpuDeviceOut(
            device_id=d.id,
            node=d.node,
            model=d.model,
            memory=d.memory,
            mig_profile=d.mig_profile,
            index=d.index,
            declared=d.id in declared,
            holders=sorted(holders.get(d.id, [])),
        )
        for d in pool.devices
    ]


@router.post(
    "/gpus", response_model=Message, status_code=201, summary="Declare a GPU by hand (admins)"
)
async def declare_gpu(body: GpuDeviceIn, platform: PlatformDep, actor: ActorDep) -> Message:
    require_admin(actor, "declare GPUs")
    pool = platform.notebooks.gpus
    node = pool.node_for_declaration(body.node)
    async with platform.db.session() as session:
        await catalog.declare_device(
            session,
            actor,
            body.device_id,
            node,
            body.model,
            parse_memory(body.memory) if body.memory else 0,
            check_mig_profile(body.mig_profile),
            body.index,
        )
        await pool.refresh(session)
    return Message(message=f"GPU '{body.device_id}' was declared on node {node}")


@router.delete(
    "/gpus/{device_id}", response_model=Message, summary="Remove a declared GPU (admins)"
)
async def remove_gpu(device_id: DeviceIdPath, platform: PlatformDep, actor: ActorDep) -> Message:
    async with platform.db.session() as session:
        await catalog.remove_device(session, actor, device_id)
        await platform.notebooks.gpus.refresh(session)
    return Message(message=f"GPU '{device_id}' was removed")


def product_out(product: Product, gpu_types) -> GpuProductOut:
    """A product with the types it could back and those already selecting it (by the
    product label, or by models that match it), so the page does not offer it twice."""
    existing = sorted(
        t.name
        for t in gpu_types
        if (t.node_selector or {}).get(PRODUCT) == product.product
        or products_matching([product.product], (t.models or {}).get("include", []))
    )
    return GpuProductOut(
        product=product.product,
        memory_mib=product.memory_mib,
        archs=sorted(product.archs),
        nodes=product.nodes,
        unschedulable=product.unschedulable,
        gpus=product.gpus,
        whole=product.whole,
        replicas=product.replicas,
        slices=product.slices,
        slice_resource=product.slice_resource,
        mig_strategy=product.mig_strategy,
        mig=product.mig,
        notes=product.notes,
        proposals=[
            GpuProposalOut(
                name=p.name,
                display_name=p.display_name,
                resource_name=p.resource_name,
                share=p.share,
                mig_profile=p.mig_profile,
                models=list(p.models),
                node_selector=dict(p.node_selector),
                capacity=p.capacity,
            )
            for p in product.proposals()
        ],
        existing_types=existing,
    )


@router.get(
    "/gpus/fleet",
    response_model=GpuFleetOut,
    summary="The cluster's GPU products, counts and slices, and the types each could back "
    "(admins; kubernetes backend)",
)
async def gpu_fleet(platform: PlatformDep, actor: ActorDep) -> GpuFleetOut:
    require_admin(actor, "see the cluster's GPU products")
    products = await platform.backend.fleet()
    async with platform.db.session() as session:
        gpu_types = await catalog.list_gpu_types(session)
    return GpuFleetOut(
        backend=platform.backend.name,
        products=[product_out(product, gpu_types) for product in products],
    )

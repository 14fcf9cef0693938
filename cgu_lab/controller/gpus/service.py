"""GPU types and GPU devices: each operation one transaction, handing back what the API shows.

The router only parses and answers; the checks of a GPU type's fields (`core.gpus`), the
catalog's writes with their audit events and the pool's refresh after a device changes
happen here, together, so a refused request changes nothing.
"""

from __future__ import annotations

from ...core.gpu_fleet import PRODUCT, WHOLE, Product, products_matching, sliced_product
from ...core.gpus import (
    Device,
    capacity,
    check_gpu_type_resource,
    check_mig_profile,
    expected_resources,
    run_entry_id,
)
from ...core.resources import parse_memory
from ...core.roles import Principal, require_admin
from ...store.db import Database
from ..api.schemas import GpuDeviceIn, GpuDeviceOut, GpuTypeIn, GpuTypeOut
from ..environments import catalog
from .pool import GpuPool
from .schemas import GpuFleetOut, GpuProductOut, GpuProposalOut


def gpu_type_out(gpu_type, devices: list[Device]) -> GpuTypeOut:
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


async def gpu_types(db: Database, devices: list[Device]) -> list[GpuTypeOut]:
    """Every GPU type with how many notebooks the `devices` could hold of it."""
    async with db.session() as session:
        return [gpu_type_out(t, devices) for t in await catalog.list_gpu_types(session)]


async def save_gpu_type(
    db: Database, devices: list[Device], actor: Principal, name: str, body: GpuTypeIn
) -> GpuTypeOut:
    """Define or change a GPU type: its resource name follows from its sharing when left out,
    and must match it when given."""
    require_admin(actor, "define GPU types")
    fields = body.model_dump()
    fields["mig_profile"] = check_mig_profile(body.mig_profile)
    sliced = sliced_product((body.node_selector or {}).get(PRODUCT, ""))
    if "resource_name" not in body.model_fields_set:
        fitting = expected_resources(body.share, fields["mig_profile"], sliced)
        fields["resource_name"] = fitting[0] if fitting else WHOLE
    fields["resource_name"] = check_gpu_type_resource(
        fields["resource_name"], body.share, fields["mig_profile"], sliced
    )
    async with db.session() as session:
        gpu_type = await catalog.save_gpu_type(session, actor, name, **fields)
        return gpu_type_out(gpu_type, devices)


async def delete_gpu_type(db: Database, actor: Principal, name: str) -> None:
    async with db.session() as session:
        await catalog.delete_gpu_type(session, actor, name)


async def inventory(db: Database, pool: GpuPool, notebooks, actor: Principal) -> list[GpuDeviceOut]:
    """Every device found or declared, with who holds it (`notebooks` names the holders)."""
    require_admin(actor, "see the GPU inventory")
    declared = {d.id for d in pool.declared}
    async with db.session() as session:
        holdings = await pool.holdings(session)
        names = await notebooks.names(session, [h.notebook_id for h in holdings])
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


async def declare(db: Database, pool: GpuPool, actor: Principal, body: GpuDeviceIn) -> str:
    """Declare a GPU by hand and refresh the pool in the same transaction; the node it is on."""
    require_admin(actor, "declare GPUs")
    node = pool.node_for_declaration(body.node)
    async with db.session() as session:
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
    return node


async def remove(db: Database, pool: GpuPool, actor: Principal, device_id: str) -> None:
    async with db.session() as session:
        await catalog.remove_device(session, actor, device_id)
        await pool.refresh(session)


def _selects(gpu_type, product: str) -> bool:
    """Whether a type's notebooks land on the product: the one its node selector pins
    (the allocator holds to it too), or else those its models match."""
    pinned = (gpu_type.node_selector or {}).get(PRODUCT)
    if pinned:
        return pinned == product
    return bool(products_matching([product], (gpu_type.models or {}).get("include", [])))


def product_out(product: Product, gpu_types) -> GpuProductOut:
    """A product with the types it could back and those already selecting it (by the
    product label, or by models that match it), so the page does not offer it twice."""
    existing = sorted(t.name for t in gpu_types if _selects(t, product.product))
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


async def fleet(db: Database, backend, actor: Principal) -> GpuFleetOut:
    """The cluster's GPU products (NotSupported off Kubernetes) and the types each could back."""
    require_admin(actor, "see the cluster's GPU products")
    products = await backend.fleet()
    async with db.session() as session:
        types = await catalog.list_gpu_types(session)
    return GpuFleetOut(
        backend=backend.name, products=[product_out(product, types) for product in products]
    )

"""What notebooks can be made of: environments and GPU types (admin-defined).

Environments are declared by hand here (an image, a Python prefix) or built
from a recipe by `environment_builds`; either way a notebook may use one only
when it is ready and has what the running backend needs (`require_runnable`),
so an environment with only an image is refused on the local backend instead
of silently running the platform's own Python.
"""

from __future__ import annotations

import sys

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import environments as recipes
from ...core import roles
from ...core.errors import Conflict, Invalid, NotFound
from ...core.gpu_fleet import PRODUCT
from ...core.gpus import Offer
from ...core.lifecycle import HOLDING
from ...core.names import check_label
from ...store.competition_models import Competition
from ...store.models import Environment, GpuDevice, GpuType, Notebook, User
from .. import audit

DEFAULT_ENVIRONMENT = "default"


async def ensure_defaults(session: AsyncSession) -> None:
    """On a new installation: the platform's own Python as the default environment.

    At every start, a build that was under way when the controller stopped is
    over: its row says so (a rebuild with an earlier build keeps serving that).
    """
    interrupted = await session.scalars(
        select(Environment).where(Environment.state == recipes.BUILDING)
    )
    for environment in interrupted.all():
        kept = bool(environment.local_prefix)  # a rebuild: the earlier build still serves
        environment.state = recipes.READY if kept else recipes.FAILED
        environment.message = (
            "the controller stopped during a rebuild; the earlier build is kept"
            if kept
            else "the controller stopped during the build; rebuild it"
        )
        audit.record(
            session,
            "system",
            "environment.build_interrupted",
            f"environment:{environment.name}",
            kept_earlier_build=kept,
        )
    if await session.scalar(select(func.count()).select_from(Environment)):
        return
    session.add(
        Environment(
            name=DEFAULT_ENVIRONMENT,
            display_name="Python 3 (platform default)",
            description="JupyterLab with the packages installed beside the platform.",
            image="cgu-lab/notebook-pytorch:latest",
            local_prefix=sys.prefix,
            is_default=True,
        )
    )


async def list_environments(session: AsyncSession) -> list[Environment]:
    return list((await session.scalars(select(Environment).order_by(Environment.name))).all())


async def get_environment(session: AsyncSession, name: str | None) -> Environment:
    if not name:
        environment = await session.scalar(select(Environment).where(Environment.is_default))
        if environment is None:
            raise NotFound("no default environment is defined; ask an administrator")
        return environment
    environment = await session.scalar(select(Environment).where(Environment.name == name))
    if environment is None:
        raise NotFound(f"there is no environment '{name}'")
    return environment


def require_runnable(environment: Environment, backend: str, image: str = "") -> None:
    """Refuse a notebook in an environment that is not ready, or that `backend` cannot run.

    `image` is the notebook's own image (Kubernetes), which stands in for the
    environment's.
    """
    name = environment.name
    if environment.state == recipes.BUILDING:
        raise Conflict(
            f"environment '{name}' is being built; try again when it is ready "
            "(an administrator sees its progress on the System page)"
        )
    if environment.state == recipes.FAILED:
        raise Conflict(
            f"environment '{name}' failed to build; choose another environment "
            "or ask an administrator to rebuild it"
        )
    if backend == "local" and not environment.local_prefix:
        raise Invalid(
            f"environment '{name}' has only a container image, for the kubernetes backend; "
            "this platform runs the local backend, which needs a Python environment on this "
            "machine. Choose another environment, or ask an administrator to build one "
            "on the System page"
        )
    if backend == "kubernetes" and not (image or environment.image):
        raise Invalid(
            f"environment '{name}' exists only on the machine it was built on (local backend) "
            "and has no container image; this platform runs the kubernetes backend. Choose "
            "another environment or give this one an image"
        )


async def save_environment(
    session: AsyncSession,
    actor: roles.Principal,
    name: str,
    display_name: str = "",
    description: str = "",
    image: str = "",
    local_prefix: str = "",
    is_default: bool = False,
    arch: str = "any",
) -> Environment:
    """Declare or change an environment by hand.

    One the platform built keeps its prefix (an empty `local_prefix` keeps it;
    another one is refused: rebuild it instead), and only a ready environment
    may become the default.
    """
    roles.require_admin(actor, "define environments")
    name = check_label(name, "environment")
    environment = await session.scalar(select(Environment).where(Environment.name == name))
    built = environment is not None and environment.recipe is not None
    if built:
        if local_prefix and local_prefix != environment.local_prefix:
            raise Conflict(
                f"environment '{name}' is built by the platform; rebuild it instead of "
                "pointing it at another prefix"
            )
        local_prefix = environment.local_prefix
    elif not image and not local_prefix:
        raise Invalid("an environment needs an image (Kubernetes) or a local Python prefix")
    if is_default and environment is not None and environment.state != recipes.READY:
        raise Conflict(f"environment '{name}' is not ready; make it the default once it is built")
    action = "environment.updated"
    if environment is None:
        environment = Environment(name=name, state=recipes.READY)
        session.add(environment)
        action = "environment.created"
    environment.display_name = display_name or name
    environment.description = description
    environment.image = image
    environment.local_prefix = local_prefix
    environment.arch = arch
    if is_default:
        await make_default(session, environment)
    environment.is_default = bool(is_default or environment.is_default)
    audit.record(
        session,
        actor.name,
        action,
        f"environment:{name}",
        image=image,
        local_prefix=local_prefix,
        arch=arch,
    )
    return environment


async def make_default(session: AsyncSession, environment: Environment) -> None:
    """`environment` becomes the one new notebooks get when they name none."""
    for other in await list_environments(session):
        other.is_default = other is environment
    environment.is_default = True


async def delete_environment(session: AsyncSession, actor: roles.Principal, name: str) -> None:
    """Delete an environment no notebook uses; never the default.

    The default is refused first, whatever else holds: new notebooks that name no
    environment get it, so the platform must always have one.
    """
    roles.require_admin(actor, "delete environments")
    environment = await get_environment(session, name)
    if environment.is_default:
        raise Conflict(
            f"environment '{name}' is the default environment and cannot be deleted: "
            "make another environment the default first"
        )
    users = (
        await session.scalars(
            select(User.name)
            .join(Notebook, Notebook.owner_id == User.id)
            .where(Notebook.environment == name)
            .distinct()
        )
    ).all()
    if users:
        raise Conflict(
            f"environment '{name}' is used by notebooks of {', '.join(sorted(users))}",
            users=sorted(users),
        )
    if environment.state == recipes.BUILDING:
        raise Conflict(f"environment '{name}' is being built; delete it once the build is over")
    await session.delete(environment)
    audit.record(session, actor.name, "environment.deleted", f"environment:{name}")


# -- GPU types -------------------------------------------------------------


def offer_of(gpu_type: GpuType) -> Offer:
    return Offer(
        name=gpu_type.name,
        share=max(1, gpu_type.share),
        models=frozenset((gpu_type.models or {}).get("include", [])),
        mig_profile=gpu_type.mig_profile,
        product=str((gpu_type.node_selector or {}).get(PRODUCT, "")),
    )


async def list_gpu_types(session: AsyncSession) -> list[GpuType]:
    return list((await session.scalars(select(GpuType).order_by(GpuType.name))).all())


async def gpu_resources(session: AsyncSession) -> dict[str, str]:
    """Each GPU type's Kubernetes resource name, for quotas mirrored into a cluster."""
    return {t.name: t.resource_name for t in await list_gpu_types(session)}


async def get_gpu_type(session: AsyncSession, name: str) -> GpuType:
    gpu_type = await session.scalar(select(GpuType).where(GpuType.name == name))
    if gpu_type is None:
        known = ", ".join(t.name for t in await list_gpu_types(session)) or "none are defined"
        raise NotFound(f"there is no GPU type '{name}' (known: {known})")
    return gpu_type


async def users_of_gpu_type(session: AsyncSession, name: str) -> list[str]:
    return sorted(
        (
            await session.scalars(
                select(User.name)
                .join(Notebook, Notebook.owner_id == User.id)
                .where(Notebook.gpu_type == name)
                .distinct()
            )
        ).all()
    )


async def save_gpu_type(
    session: AsyncSession,
    actor: roles.Principal,
    name: str,
    display_name: str = "",
    description: str = "",
    resource_name: str = "nvidia.com/gpu",
    share: int = 1,
    fraction: float = 1.0,
    mig_profile: str = "",
    models: list[str] | None = None,
    node_selector: dict[str, str] | None = None,
) -> GpuType:
    """Define or change a GPU offer: `share` notebooks per device, each given `fraction` of it."""
    roles.require_admin(actor, "define GPU types")
    name = check_label(name, "GPU type")
    if share < 1 or share > 64:
        raise Invalid("a GPU may be shared by 1 to 64 notebooks")
    if not 0 < fraction <= 1:
        raise Invalid("a notebook's fraction of a GPU must be above 0 and at most 1")
    if fraction < 1 and share == 1:
        raise Invalid(
            "a fractional GPU type (MPS) must let several notebooks share a GPU (share > 1)"
        )
    if not resource_name or "/" not in resource_name:
        raise Invalid(
            "the Kubernetes resource name looks like nvidia.com/gpu or nvidia.com/mig-1g.10gb"
        )
    gpu_type = await session.scalar(select(GpuType).where(GpuType.name == name))
    action = "gpu_type.updated"
    if gpu_type is None:
        gpu_type = GpuType(name=name)
        session.add(gpu_type)
        action = "gpu_type.created"
    gpu_type.display_name = display_name or name
    gpu_type.description = description
    gpu_type.resource_name = resource_name
    gpu_type.share = share
    gpu_type.fraction = fraction
    gpu_type.mig_profile = mig_profile.strip().lower()
    gpu_type.models = {"include": [m.strip() for m in models or [] if m.strip()]}
    gpu_type.node_selector = dict(node_selector or {})
    audit.record(
        session,
        actor.name,
        action,
        f"gpu_type:{name}",
        resource_name=resource_name,
        share=share,
        fraction=fraction,
        mig_profile=mig_profile or None,
    )
    return gpu_type


async def delete_gpu_type(session: AsyncSession, actor: roles.Principal, name: str) -> None:
    roles.require_admin(actor, "delete GPU types")
    gpu_type = await get_gpu_type(session, name)
    users = await users_of_gpu_type(session, name)
    if users:
        raise Conflict(
            f"GPU type '{name}' is used by notebooks of {', '.join(users)}; "
            "resize or delete those notebooks first",
            users=users,
        )
    asking = sorted(
        await session.scalars(select(Competition.name).where(Competition.gpu_type == name))
    )
    if asking:
        raise Conflict(
            f"GPU type '{name}' is what the competitions {', '.join(asking)} run on; "
            "give them another GPU type (or none) first",
            competitions=asking,
        )
    await session.delete(gpu_type)
    audit.record(session, actor.name, "gpu_type.deleted", f"gpu_type:{name}")


async def declare_device(
    session: AsyncSession,
    actor: roles.Principal,
    device_id: str,
    node: str = "local",
    model: str = "",
    memory: int = 0,
    mig_profile: str = "",
    index: int = 0,
) -> GpuDevice:
    roles.require_admin(actor, "declare GPUs")
    device_id = device_id.strip()
    if not device_id or len(device_id) > 100:
        raise Invalid(
            "a GPU needs an id (its UUID, or a name of your choice) of at most 100 characters"
        )
    if await session.scalar(select(GpuDevice.id).where(GpuDevice.device_id == device_id)):
        raise Conflict(f"GPU '{device_id}' is already declared")
    device = GpuDevice(
        device_id=device_id,
        node=node or "local",
        model=model,
        memory=memory,
        mig_profile=mig_profile.strip().lower(),
        index=index,
    )
    session.add(device)
    audit.record(session, actor.name, "gpu.declared", f"gpu:{device_id}", node=node, model=model)
    return device


async def remove_device(session: AsyncSession, actor: roles.Principal, device_id: str) -> None:
    roles.require_admin(actor, "remove declared GPUs")
    device = await session.scalar(select(GpuDevice).where(GpuDevice.device_id == device_id))
    if device is None:
        raise NotFound(f"no GPU '{device_id}' was declared")
    holding = await session.scalars(
        select(Notebook).where(
            Notebook.state.in_([s.value for s in HOLDING]), Notebook.devices.is_not(None)
        )
    )
    in_use = sorted(nb.name for nb in holding.all() if device_id in (nb.devices or []))
    if in_use:
        raise Conflict(f"GPU '{device_id}' is in use by notebook(s) {', '.join(in_use)}")
    await session.delete(device)
    audit.record(session, actor.name, "gpu.removed", f"gpu:{device_id}")

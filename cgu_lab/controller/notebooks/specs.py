"""What the parts of the notebook service all read: a notebook by its owner and name, the
resources a request may ask for, and the spec a backend is given to run one.

Apart from service.py so that its pieces (admission, lifecycle) are given these instead
of the whole service: the data flows one way, service -> lifecycle -> specs.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.base import EnvironmentSpec, NotebookSpec, QuotaSpec
from ...core import environments as environment_rules
from ...core.errors import Invalid, NotFound
from ...core.gpu_fleet import PRODUCT, products_matching
from ...core.pod_defaults import pod_labels
from ...core.resources import parse_cpu, parse_memory
from ...core.roles import Principal
from ...store.models import Notebook, User
from ..accounts.directory import get_user
from ..environments import apps as environment_apps
from ..environments import catalog
from ..gpus.pool import GpuPool
from ..quotas import service as quotas
from ..storage import service as storage
from .cull_policies import kernel_culling
from .routes import base_path

MAX_GPUS_PER_NOTEBOOK = 8


async def load_notebook(
    session: AsyncSession, owner: str, name: str, lock: bool = False
) -> tuple[Notebook, User]:
    """The notebook `owner/name` and its owner (locked for update when asked), or NotFound."""
    user = await get_user(session, owner)
    statement = select(Notebook).where(Notebook.owner_id == user.id, Notebook.name == name)
    if lock:
        statement = statement.with_for_update()
    nb = await session.scalar(statement)
    if nb is None:
        raise NotFound(f"{owner} has no notebook '{name}'")
    return nb, user


async def load_owned(
    session: AsyncSession, actor: Principal, owner: str, name: str, action: str
) -> Notebook:
    """The notebook `owner/name` when `actor` owns it or is an admin, for an owner's act
    (`action`: "share", "publish"); NotFound otherwise, as if it did not exist."""
    nb, _ = await load_notebook(session, owner, name)
    if nb.owner_id != actor.id and not actor.is_admin:
        raise NotFound(f"{owner} has no notebook '{name}' that you may {action}")
    return nb


async def validated_resources(
    session: AsyncSession, cpu, memory, gpu_type: str | None, gpus: int
) -> tuple[int, int, str | None, int]:
    """CPU (millicores), memory (bytes), GPU type and count, checked; the type must exist."""
    cpu_milli = parse_cpu(cpu)
    memory_bytes = parse_memory(memory)
    if memory_bytes < 256 * 2**20:
        raise Invalid("a notebook needs at least 256 MiB of memory for JupyterLab itself")
    if not isinstance(gpus, int) or gpus < 0 or gpus > MAX_GPUS_PER_NOTEBOOK:
        raise Invalid(f"GPUs must be a whole number from 0 to {MAX_GPUS_PER_NOTEBOOK}")
    if gpus and not gpu_type:
        raise Invalid("choose a GPU type for the GPUs you ask for")
    if gpu_type:
        await catalog.get_gpu_type(session, gpu_type)
    return cpu_milli, memory_bytes, (gpu_type if gpus else None), gpus


class NotebookSpecs:
    """Builds the NotebookSpec of a notebook: given the settings (where notebooks reach the
    controller) and the GPU pool (each device's memory, for a fraction's limits)."""

    def __init__(self, settings, gpus: GpuPool) -> None:
        self.settings = settings
        self.gpus = gpus

    def _product_affinity(self, gpu_type, node_selector) -> dict[str, tuple[str, ...]]:
        """The GPU products (GFD's product label) a type's models match among the devices
        found on the cluster, so its notebooks land only where the allocator placed them;
        nothing when the type already selects a product, has no models, or none match."""
        models = (gpu_type.models or {}).get("include", [])
        if PRODUCT in node_selector or not models:
            return {}
        found = products_matching({device.model for device in self.gpus.found}, models)
        return {PRODUCT: tuple(found)} if found else {}

    async def spec(
        self, session: AsyncSession, nb: Notebook, owner: str, api_token: str = ""
    ) -> NotebookSpec:
        """What the backend needs to run (or find, or stop) the notebook."""
        env = await catalog.get_environment(session, nb.environment)
        device_env: dict[str, str] = {}
        if nb.gpu_type and nb.devices:
            gpu_type = await catalog.get_gpu_type(session, nb.gpu_type)
            if gpu_type.fraction < 1.0:
                device_env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(
                    max(1, round(gpu_type.fraction * 100))
                )
                limits = []
                for index, device_id in enumerate(nb.devices):
                    device = self.gpus.device(device_id)
                    if device is not None and device.memory:
                        limits.append(f"{index}={int(device.memory * gpu_type.fraction) // 2**20}M")
                if limits:
                    device_env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = ",".join(limits)
        gpu_resource, node_selector = "nvidia.com/gpu", {}
        node_affinity: dict[str, tuple[str, ...]] = {}
        if nb.gpu_type:
            gpu_type = await catalog.get_gpu_type(session, nb.gpu_type)
            gpu_resource, node_selector = gpu_type.resource_name, dict(gpu_type.node_selector or {})
            node_affinity = self._product_affinity(gpu_type, node_selector)
        limits, _ = await quotas.user_limits(session, nb.owner_id)
        return NotebookSpec(
            id=nb.id,
            owner=owner,
            name=nb.name,
            base_path=base_path(owner, nb.name),
            environment=EnvironmentSpec(
                env.name,
                nb.image or env.image,
                env.local_prefix,
                environment_apps.notebook_setting(env),
                environment_rules.node_arch(env.arch),
            ),
            cpu_milli=nb.cpu_milli,
            memory=nb.memory,
            gpu_type=nb.gpu_type,
            gpus=nb.gpus,
            proxy_secret=nb.proxy_secret,
            controller_url=self.settings.internal_url,
            public_url=self.settings.base_url,
            devices=tuple(nb.devices or ()),
            device_env=device_env,
            api_token=api_token,
            kind=nb.kind,
            gpu_resource=gpu_resource,
            node_selector=node_selector,
            node_affinity=node_affinity,
            pod_labels=pod_labels(nb.pod_defaults) if nb.kind == "jupyter" else {},
            quota=QuotaSpec(limits, await catalog.gpu_resources(session)),
            courses=await storage.course_mounts(session, nb.owner_id),
            kernel_culling=await kernel_culling(session, nb.group_id),
        )

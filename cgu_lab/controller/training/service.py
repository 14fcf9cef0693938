"""Multi-node training jobs (Kubeflow PyTorchJob): quota-checked, queued while GPUs are short.

A job asks for one master and `workers` workers, each with the same CPU,
memory and GPUs. Its total must fit the owner's quota; when the platform has
fewer free GPUs of the type than the job needs, it waits in the queue and is
submitted by the culler's pass once they are free. State and logs come from
the backend.

On Kubernetes with Kueue the cluster queues instead: every course's GPU budget
(its group quota) becomes a ClusterQueue before each pass (`sync_budgets`),
jobs are handed over at once, and a job over its course's budget waits in the
cluster, where the backend reads its place in line and Kueue's reason.

On the local backend a job runs with torchrun on this machine
(backends/local_training.py), in an environment built here: the job's
`image` names that environment (no migration: the column holds what each
backend runs, an image there, an environment here). The controller places
its GPUs itself, as for notebooks, counting the GPUs of the local jobs
running now as taken.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.base import BackendError, TrainingBudget, TrainingSpec
from ...core import environments as recipes
from ...core import gpus as gpu_rules
from ...core import quota as rules
from ...core.errors import Conflict, Forbidden, Invalid, NotFound, NotSupported
from ...core.names import check_label
from ...core.resources import Resources, parse_cpu, parse_memory
from ...core.roles import Principal
from ...store.db import Database
from ...store.models import GpuType, Group, Membership, Quota, TrainingJob, User
from .. import audit
from ..api.schemas import ImagesOut, TrainingOut
from ..clock import Clock
from ..environments import catalog
from ..quotas import service as quotas

log = logging.getLogger("cgu_lab.training")

MAX_WORKERS = 64
# The node label a GPU type's node selector names its product by (GPU Feature Discovery's).
PRODUCT_LABEL = "nvidia.com/gpu.product"


def job_resources(job: TrainingJob) -> Resources:
    replicas = job.workers + 1
    return Resources(
        cpu_milli=job.cpu_milli * replicas,
        memory=job.memory * replicas,
        gpus={job.gpu_type: job.gpus * replicas} if job.gpu_type and job.gpus else {},
    )


def training_out(
    job: TrainingJob, owner: str, phase: str, message: str, replicas: dict
) -> TrainingOut:
    return TrainingOut(
        owner=owner,
        name=job.name,
        image=job.image,
        command=list(job.command),
        workers=job.workers,
        cpu_milli=job.cpu_milli,
        memory=job.memory,
        gpu_type=job.gpu_type,
        gpus=job.gpus,
        state=job.state,
        phase=phase,
        message=message,
        replicas=replicas,
        created_at=job.created_at,
        submitted_at=job.submitted_at,
    )


@dataclass(frozen=True)
class _LocalRun:
    """What a job needs on the local backend beyond its row (TrainingSpec's local fields),
    or why it cannot run there (`refused`: its environment went away while it waited)."""

    local_prefix: str = ""
    devices: tuple[str, ...] = ()
    device_env: Mapping[str, str] = field(default_factory=dict)
    refused: str | None = None


class TrainingService:
    def __init__(self, db: Database, backend, gpus, clock: Clock) -> None:
        """`clock`: when a job was handed to the backend."""
        self.db = db
        self.clock = clock
        self.backend = backend
        self.gpus = gpus
        # Whether the cluster queues jobs (Kueue): None until the first pass asked.
        self.cluster_queues: bool | None = None
        # One dispatch pass at a time: a submission's pass and the periodic one both read
        # the queued jobs before either writes what it did, so both handed one job over and
        # the second, refused as 'already exists', marked a running job failed.
        self._dispatching = asyncio.Lock()

    async def images(self, actor: Principal) -> ImagesOut:
        """The images the custom-image choice offers: the environments' and those the
        backend saw `actor` use (none where the backend cannot tell)."""
        async with self.db.session() as session:
            environments = sorted(
                {e.image for e in await catalog.list_environments(session) if e.image}
            )
        try:
            used = await self.backend.images(actor.name)
        except NotSupported:
            used = []
        return ImagesOut(environments=environments, used=sorted(set(used)))

    def _checked_request(
        self,
        name: str,
        image: str,
        command: str | list[str],
        workers: int,
        gpu_type: str | None,
        gpus: int,
    ) -> tuple[str, list[str]]:
        """The job's name and argv, once the request's own fields are right (no database)."""
        name = check_label(name.strip().lower(), "training job")
        try:
            argv = shlex.split(command) if isinstance(command, str) else list(command)
        except ValueError as exc:  # shlex: "No closing quotation", "No escaped character"
            raise Invalid(
                f"the command cannot be read as a shell line ({str(exc).lower()}); "
                "close every quote, e.g. python train.py --name 'run 1'"
            ) from exc
        if not argv:
            raise Invalid("give the command each replica runs, e.g. python train.py --epochs 10")
        if self.backend.name == "local" and not image.strip():
            raise Invalid("choose the environment the job runs in, e.g. pytorch")
        if not image.strip() or any(c.isspace() for c in image.strip()):
            raise Invalid(
                "give the image the job runs, e.g. registry.example.edu/course/pytorch:2027"
            )
        if not 0 <= workers <= MAX_WORKERS:
            raise Invalid(f"a job may have 0 to {MAX_WORKERS} workers besides its master")
        if gpus < 0 or gpus > 8:
            raise Invalid("each replica may have 0 to 8 GPUs")
        if gpus and not gpu_type:
            raise Invalid("choose a GPU type for the GPUs you ask for")
        return name, argv

    @staticmethod
    async def _group_id(session: AsyncSession, actor: Principal, group: str | None) -> int | None:
        """The job's group, which must be one of its owner's."""
        if not group:
            return None
        target = await session.scalar(select(Group).where(Group.name == group))
        if target is None or await session.get(Membership, (target.id, actor.id)) is None:
            raise Forbidden(f"you are not in group '{group}'")
        return target.id

    @staticmethod
    async def _check_name_free(session: AsyncSession, actor: Principal, name: str) -> None:
        if await session.scalar(
            select(TrainingJob.id).where(TrainingJob.owner_id == actor.id, TrainingJob.name == name)
        ):
            raise Conflict(
                f"you already have a training job named '{name}'; delete it or choose another"
            )

    async def submit(
        self,
        actor: Principal,
        name: str,
        image: str,
        command: str | list[str],
        workers: int,
        cpu,
        memory,
        gpu_type: str | None,
        gpus: int,
        group: str | None,
    ) -> TrainingJob:
        if not self.backend.describe().get("training_jobs"):
            raise self.backend.unsupported("Training jobs")
        name, argv = self._checked_request(name, image, command, workers, gpu_type, gpus)
        async with self.db.session() as session:
            if gpu_type:
                await catalog.get_gpu_type(session, gpu_type)
            if self.backend.name == "local":
                await self._check_environment(session, image.strip())
            group_id = await self._group_id(session, actor, group)
            await self._check_name_free(session, actor, name)
            job = TrainingJob(
                owner_id=actor.id,
                name=name,
                image=image.strip(),
                command=argv,
                workers=workers,
                cpu_milli=parse_cpu(cpu),
                memory=parse_memory(memory),
                gpu_type=gpu_type if gpus else None,
                gpus=gpus,
                group_id=group_id,
            )
            limits, _ = await quotas.user_limits(session, actor.id)
            rules.enforce(rules.check(rules.USER, limits, Resources(), job_resources(job)))
            session.add(job)
            await session.flush()
            audit.record(
                session,
                actor.name,
                "training.created",
                f"training:{actor.name}/{name}",
                workers=workers,
                gpus_per_replica=gpus,
                gpu_type=job.gpu_type,
                image=job.image,
            )
        await self.dispatch()
        return job

    @staticmethod
    async def _check_environment(session, name: str):
        """The local environment a job runs in: ready, built on this machine, with torch."""
        environment = await catalog.get_environment(session, name)
        catalog.require_runnable(environment, "local")
        packages = {recipes.normalise(p.get("name", "")) for p in environment.packages or []}
        if environment.recipe is not None and "torch" not in packages:
            raise Invalid(
                f"environment '{name}' has no PyTorch, which runs training jobs (torchrun); "
                "choose an environment built from the PyTorch recipe"
            )
        return environment

    async def _place(self, session, job: TrainingJob) -> tuple[str, ...] | None:
        """GPUs for the whole job (None while too few are free): the local backend's own
        devices; on Kubernetes only a count, since the cluster places the pods."""
        if not job.gpus or self.cluster_queues:
            return ()  # nothing to place, or the cluster's queues decide
        gpu_type = await catalog.get_gpu_type(session, job.gpu_type)
        allocator = await self.gpus.allocator(session)  # notebooks and local jobs
        offer = catalog.offer_of(gpu_type)
        needed = job.gpus * (job.workers + 1)
        if self.backend.name == "local":
            return allocator.place(offer, needed)
        free = sum(gpu_rules.free_slots(d, offer, allocator.used) for d in self.gpus.devices)
        return () if free >= needed else None

    async def _local_spec(self, session, job: TrainingJob, devices: tuple[str, ...]) -> _LocalRun:
        """What the local backend needs beyond the job: its environment's prefix and GPUs."""
        if self.backend.name != "local":
            return _LocalRun()
        environment = await self._check_environment(session, job.image)
        device_env = {}
        if job.gpu_type and devices:
            gpu_type = await catalog.get_gpu_type(session, job.gpu_type)
            if gpu_type.fraction < 1.0:
                percent = max(1, round(gpu_type.fraction * 100))
                device_env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(percent)
        return _LocalRun(
            local_prefix=environment.local_prefix, devices=devices, device_env=device_env
        )

    async def budgets(self) -> list[TrainingBudget]:
        """Every course's GPU budget as the cluster's queues hold it: per GPU type of its
        group quota, that type's resource on that type's product (any product where the
        type names none). A budget without GPU figures holds none of its own."""
        async with self.db.session() as session:
            types = {t.name: t for t in await catalog.list_gpu_types(session)}
            rows = (
                await session.execute(
                    select(Group.name, Quota)
                    .join(Quota, Quota.group_id == Group.id)
                    .where(Quota.scope == "group")
                    .order_by(Group.name)
                )
            ).all()
        budgets = []
        for course, row in rows:
            limits = quotas.limits_of(row)
            gpus: dict[tuple[str, str], int] = {}
            for type_name, count in (limits.gpus or {}).items():
                gpu_type = types.get(type_name)
                if gpu_type is None or not count:
                    continue
                product = str((gpu_type.node_selector or {}).get(PRODUCT_LABEL, ""))
                key = (gpu_type.resource_name, product)
                gpus[key] = gpus.get(key, 0) + int(count)
            budgets.append(TrainingBudget(course, gpus, limits.cpu_milli, limits.memory))
        return budgets

    async def sync_budgets(self) -> None:
        """Send the courses' budgets to the cluster's queues; learn whether there are any."""
        if self.cluster_queues is False:
            return
        try:
            await self.backend.sync_training_budgets(await self.budgets())
        except NotSupported:
            self.cluster_queues = False
            return
        except BackendError as error:  # the next pass tries again; jobs still queue there
            log.warning("the courses' budgets did not reach the cluster's queues: %s", error)
            return
        self.cluster_queues = True

    async def dispatch(self) -> None:
        """Submit queued jobs, oldest first, while their GPUs fit (one pass at a time)."""
        async with self._dispatching:
            await self._dispatch_pass()

    async def _dispatch_pass(self) -> None:
        await self.sync_budgets()
        async with self.db.session() as session:
            queued = (
                await session.execute(
                    select(TrainingJob, User.name, Group.name)
                    .join(User, User.id == TrainingJob.owner_id)
                    .outerjoin(Group, Group.id == TrainingJob.group_id)
                    .where(TrainingJob.state == "queued")
                    .order_by(TrainingJob.created_at, TrainingJob.id)
                )
            ).all()
        for job, owner, group in queued:
            await self._dispatch_one(job, owner, group)

    async def _dispatch_one(self, job: TrainingJob, owner: str, group: str | None) -> None:
        """Submit one queued job if its GPUs are free, else say in its message what it awaits."""
        async with self.db.session() as session:
            devices = await self._place(session, job)
            if devices is None:
                current = await session.get(TrainingJob, job.id)
                needed = job.gpus * (job.workers + 1)
                current.message = f"waiting for {needed} free GPUs of type '{job.gpu_type}'"
                return
            gpu_type = await catalog.get_gpu_type(session, job.gpu_type) if job.gpu_type else None
            try:
                local = await self._local_spec(session, job, devices)
            except (Invalid, Conflict, NotFound) as error:
                local = _LocalRun(refused=error.message)
        spec = self._training_spec(job, owner, group, gpu_type, local)
        state, message = await self._hand_over(spec, local)
        async with self.db.session() as session:
            current = await session.get(TrainingJob, job.id)
            current.state, current.message = state, message
            current.submitted_at = self.clock.now()
            audit.record(
                session,
                audit.SYSTEM,
                f"training.{state}",
                f"training:{owner}/{job.name}",
                reason=message or None,
            )

    @staticmethod
    def _training_spec(
        job: TrainingJob,
        owner: str,
        group: str | None,
        gpu_type: GpuType | None,
        local: _LocalRun,
    ) -> TrainingSpec:
        return TrainingSpec(
            owner=owner,
            name=job.name,
            image=job.image,
            command=tuple(job.command),
            workers=job.workers,
            cpu_milli=job.cpu_milli,
            memory=job.memory,
            gpus=job.gpus,
            gpu_resource=gpu_type.resource_name if gpu_type else "nvidia.com/gpu",
            node_selector=dict(gpu_type.node_selector or {}) if gpu_type else {},
            group=group,
            local_prefix=local.local_prefix,
            devices=local.devices,
            device_env=local.device_env,
        )

    async def _hand_over(self, spec: TrainingSpec, local: _LocalRun) -> tuple[str, str]:
        """The job's new state and message: a refusal by the backend is the user's answer."""
        try:
            if local.refused is not None:  # its environment went away while it waited
                raise Invalid(local.refused)
            await self.backend.submit_training(spec)
            return "submitted", ""
        except NotSupported:
            raise
        except Exception as error:
            return "failed", f"the job could not be submitted: {error}"

    async def _mine(
        self, session, actor: Principal, owner: str, name: str
    ) -> tuple[TrainingJob, str | None]:
        row = (
            await session.execute(
                select(TrainingJob, Group.name)
                .join(User, User.id == TrainingJob.owner_id)
                .outerjoin(Group, Group.id == TrainingJob.group_id)
                .where(User.name == owner, TrainingJob.name == name)
            )
        ).first()
        if row is None or (row[0].owner_id != actor.id and not actor.is_admin):
            raise NotFound(f"{owner} has no training job '{name}'")
        return row[0], row[1]

    async def listing(self, actor: Principal) -> list[TrainingOut]:
        """The caller's jobs (an admin's: everyone's), newest first, as stored; the backend's
        live phase of a job is `status`'s to ask."""
        async with self.db.session() as session:
            statement = select(TrainingJob, User.name).join(User, User.id == TrainingJob.owner_id)
            if not actor.is_admin:
                statement = statement.where(TrainingJob.owner_id == actor.id)
            rows = await session.execute(statement.order_by(TrainingJob.created_at.desc()))
            return [
                training_out(job, owner, job.state, job.message, {}) for job, owner in rows.all()
            ]

    async def status(self, actor: Principal, owner: str, name: str) -> TrainingOut:
        """The job with where it stands: the backend's phase once it was submitted."""
        async with self.db.session() as session:
            job, group = await self._mine(session, actor, owner, name)
        if job.state != "submitted":
            return training_out(job, owner, job.state, job.message, {})
        status = await self.backend.training_status(owner, name, group)
        out = training_out(job, owner, status.phase, status.message, dict(status.replicas))
        out.queue, out.queue_position = status.queue, status.queue_position
        return out

    async def logs(self, actor: Principal, owner: str, name: str, replica: str, index: int) -> str:
        async with self.db.session() as session:
            job, group = await self._mine(session, actor, owner, name)
        if job.state != "submitted":
            return ""
        return await self.backend.training_logs(owner, name, group, replica, index)

    async def delete(self, actor: Principal, owner: str, name: str) -> None:
        async with self.db.session() as session:
            job, group = await self._mine(session, actor, owner, name)
        if job.state == "submitted":
            await self.backend.delete_training(owner, name, group)
        async with self.db.session() as session:
            current = await session.get(TrainingJob, job.id)
            await session.delete(current)
            audit.record(session, actor.name, "training.deleted", f"training:{owner}/{name}")
        await self.dispatch()

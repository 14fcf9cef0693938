"""Notebooks: creating them, and moving them through their lifecycle.

The database holds what each notebook should be; the backend makes it so.
A start is decided in one transaction (permission, quota, GPU
placement, state `starting`) and then carried out by a background task that
streams progress to the page. Nothing half-done survives a failure: the task
stops whatever it launched and the notebook returns to `stopped` with the
reason in its message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from ..backends.base import Backend, BackendError, EnvironmentSpec, NotebookSpec, QuotaSpec
from ..core import culling, roles
from ..core import gpus as gpu_rules
from ..core import reclaim as reclaim_rules
from ..core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound, Unavailable
from ..core.lifecycle import HOLDING, State, require_move
from ..core.names import check_label
from ..core.resources import Resources, parse_cpu, parse_memory
from ..store.db import Database
from ..store.models import Group, Membership, Notebook, StopRecord, User
from . import audit, catalog, quotas
from .accounts import get_user
from .archives import seed_archive
from .gpu_pool import GpuPool
from .progress import ProgressBroker, ProgressEvent

log = logging.getLogger("cgu_lab.notebooks")

MAX_GPUS_PER_NOTEBOOK = 8
RECLAIM_NOTE = (
    "Stopped: the platform needed this GPU for a waiting notebook, and this one had been idle."
)
SYSTEM = "system"
# A resize usually comes from the notebook's own server (the lab's Resize
# dialog); its answer must leave the server before the server is stopped.
# New requests already see the notebook as stopping, so this only lets the
# ones in flight finish.
RESTART_GRACE_SECONDS = 1.0


def _now() -> datetime:
    return datetime.now(timezone.utc)


def base_path(owner: str, name: str) -> str:
    return f"/notebook/{owner}/{name}/"


@dataclass(frozen=True)
class Route:
    """What the proxy needs to forward a request: kept in memory, updated on every change."""

    notebook_id: int
    owner_id: int
    owner: str
    name: str
    state: State
    target: str | None
    secret: str


@dataclass(frozen=True)
class Admission:
    """The outcome of asking for GPUs: devices now, or victims to stop first, or a queue place."""

    devices: tuple[str, ...] | None = None
    victims: tuple[int, ...] = ()
    position: int = 0
    message: str = ""


@dataclass
class Changes:
    """Requested resource changes of a resize; None leaves a value as it is."""

    cpu: str | float | None = None
    memory: str | int | None = None
    gpu_type: str | None = None
    gpus: int | None = None


class NotebookService:
    def __init__(
        self, db: Database, backend: Backend, broker: ProgressBroker, auth, settings, templates
    ) -> None:
        self.db = db
        self.backend = backend
        self.broker = broker
        self.auth = auth
        self.settings = settings
        self.templates = templates
        self.routes: dict[tuple[str, str], Route] = {}
        self._tasks: dict[int, asyncio.Task] = {}
        self.gpus = GpuPool(backend)
        # The culler's latest reading of each running notebook (reclaim picks from it).
        self.activity: dict[int, culling.Activity] = {}
        self._draining = asyncio.Lock()
        self._drain_again = False
        self._background: set[asyncio.Task] = set()

    # -- reading -------------------------------------------------------------

    async def load(
        self, session: AsyncSession, owner: str, name: str, lock: bool = False
    ) -> tuple[Notebook, User]:
        user = await get_user(session, owner)
        statement = select(Notebook).where(Notebook.owner_id == user.id, Notebook.name == name)
        if lock:
            statement = statement.with_for_update()
        nb = await session.scalar(statement)
        if nb is None:
            raise NotFound(f"{owner} has no notebook '{name}'")
        return nb, user

    async def visible(
        self, session: AsyncSession, actor: roles.Principal, owner: str, name: str
    ) -> tuple[Notebook, User]:
        nb, user = await self.load(session, owner, name)
        if not roles.may_manage_notebook(actor, nb.owner_id):
            # Someone else's notebook does not exist, as far as this caller can tell.
            raise NotFound(f"{owner} has no notebook '{name}'")
        return nb, user

    async def list_notebooks(
        self,
        session: AsyncSession,
        actor: roles.Principal,
        owner: str | None = None,
        state: str | None = None,
        query: str = "",
        limit: int = 500,
    ) -> list[tuple[Notebook, str]]:
        statement = select(Notebook, User.name).join(User, User.id == Notebook.owner_id)
        if owner:
            if owner != actor.name and not actor.is_admin:
                raise Forbidden("you may list only your own notebooks")
            statement = statement.where(User.name == owner)
        elif not actor.is_admin:
            statement = statement.where(Notebook.owner_id == actor.id)
        if state:
            statement = statement.where(Notebook.state == State(state).value)
        if query:
            like = f"%{query.lower()}%"
            statement = statement.where(
                func.lower(Notebook.name).like(like) | func.lower(Notebook.display_name).like(like)
            )
        statement = statement.order_by(User.name, Notebook.name).limit(limit)
        return [(nb, owner_name) for nb, owner_name in (await session.execute(statement)).all()]

    async def names(self, session: AsyncSession, ids: list[int]) -> dict[int, str]:
        """'owner/name' of notebooks by id."""
        if not ids:
            return {}
        rows = await session.execute(
            select(Notebook.id, User.name, Notebook.name)
            .join(User, User.id == Notebook.owner_id)
            .where(Notebook.id.in_(ids))
        )
        return {nb_id: f"{owner}/{name}" for nb_id, owner, name in rows.all()}

    # -- creating, changing, deleting ------------------------------------------

    async def _validated_resources(
        self, session: AsyncSession, cpu, memory, gpu_type: str | None, gpus: int
    ) -> tuple[int, int, str | None, int]:
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

    async def create(
        self,
        actor: roles.Principal,
        name: str,
        owner: str | None = None,
        display_name: str = "",
        environment: str | None = None,
        cpu: str | float | None = None,
        memory: str | int | None = None,
        gpu_type: str | None = None,
        gpus: int = 0,
        group: str | None = None,
        persistent: bool = False,
        template: str | None = None,
        template_version: int | None = None,
        seed: dict | None = None,
        kind: str = "jupyter",
        image: str = "",
        starting: bool = False,
    ) -> tuple[Notebook, str]:
        """Create a stopped notebook; from a template, its resources and files come with it.

        `seed` names files to copy into the home before the first start (a
        template version or a submission); the copy happens as the start's
        first step, so its progress shows on the start page.

        `starting` is "create and start": the start's own refusals (quota in use
        now, a deactivated owner) are checked in this transaction, so a refused
        request leaves nothing behind.
        """
        async with self.db.session() as session:
            owner_user = await get_user(session, owner or actor.name)
            if owner_user.id != actor.id:
                roles.require_admin(actor, "create notebooks for other users")
            if persistent:
                roles.require_admin(actor, "mark notebooks persistent")
            if template:
                chosen, version = await self.templates.version(
                    session, actor, template, template_version
                )
                environment = environment or version.environment
                cpu = cpu if cpu is not None else f"{version.cpu_milli}m"
                memory = memory if memory is not None else version.memory
                if gpu_type is None and not gpus:
                    gpu_type, gpus = version.gpu_type, version.gpus
                seed = {"kind": "template", "id": version.id} if version.files else None
                name = name or await self.free_name(session, owner_user.id, chosen.name)
            name = check_label((name or "").strip().lower(), "notebook")
            self._check_kind(kind, image)
            env = await catalog.get_environment(session, environment)
            catalog.require_runnable(env, self.backend.name, image.strip())
            cpu_milli, memory_bytes, gpu_type, gpus = await self._validated_resources(
                session,
                cpu if cpu is not None else self.settings.default_cpu,
                memory if memory is not None else self.settings.default_memory,
                gpu_type,
                gpus,
            )
            group_id = None
            if group:
                target = await session.scalar(select(Group).where(Group.name == group))
                if target is None:
                    raise NotFound(f"there is no group '{group}'")
                member = await session.get(Membership, (target.id, owner_user.id))
                if member is None:
                    raise Forbidden(f"{owner_user.name} is not a member of group '{group}'")
                group_id = target.id
            if await session.scalar(
                select(Notebook.id).where(Notebook.owner_id == owner_user.id, Notebook.name == name)
            ):
                raise Conflict(f"{owner_user.name} already has a notebook named '{name}'")
            await quotas.enforce_fits(
                session,
                owner_user.id,
                group_id,
                Resources.for_notebook(cpu_milli, memory_bytes, gpu_type, gpus),
            )
            nb = Notebook(
                owner_id=owner_user.id,
                name=name,
                display_name=display_name.strip() or name,
                environment=env.name,
                cpu_milli=cpu_milli,
                memory=memory_bytes,
                gpu_type=gpu_type,
                gpus=gpus,
                group_id=group_id,
                persistent=persistent,
                state=State.STOPPED.value,
                seed=seed,
                kind=kind,
                image=image.strip(),
            )
            session.add(nb)
            await session.flush()
            if starting:
                if not owner_user.active:
                    raise Forbidden(f"the account '{owner_user.name}' is deactivated")
                await quotas.enforce_start(session, nb, owner_user)
            audit.record(
                session,
                actor.name,
                "notebook.created",
                f"notebook:{owner_user.name}/{name}",
                environment=env.name,
                cpu_milli=cpu_milli,
                memory=memory_bytes,
                gpu_type=gpu_type,
                gpus=gpus,
                group=group,
                persistent=persistent,
                seed=seed,
            )
        return nb, owner_user.name

    def _check_kind(self, kind: str, image: str) -> None:
        """VM notebooks and custom images exist only where the backend offers them."""
        offers = self.backend.describe()
        if kind not in ("jupyter", "vm"):
            raise Invalid(
                f"a notebook is 'jupyter' (JupyterLab) or 'vm' (a virtual machine), not '{kind}'"
            )
        if kind == "vm" and not offers.get("vm_notebooks"):
            raise self.backend.unsupported("VM notebooks")
        if image.strip() and not offers.get("custom_images"):
            raise self.backend.unsupported("Custom images")
        if len(image) > 500 or any(c.isspace() for c in image.strip()):
            raise Invalid("an image looks like registry.example.edu/course/notebook:2027")

    async def free_name(self, session: AsyncSession, owner_id: int, base: str) -> str:
        """`base`, or `base-2`, `base-3`... whichever the owner does not use yet."""
        taken = set(
            (
                await session.scalars(select(Notebook.name).where(Notebook.owner_id == owner_id))
            ).all()
        )
        name, number = base[:60], 2
        while name in taken:
            name = f"{base[:56]}-{number}"
            number += 1
        return name

    async def update(
        self,
        actor: roles.Principal,
        owner: str,
        name: str,
        display_name: str | None = None,
        persistent: bool | None = None,
    ) -> Notebook:
        async with self.db.session() as session:
            nb, _ = await self.visible(session, actor, owner, name)
            changes: dict[str, Any] = {}
            if persistent is not None and persistent != nb.persistent:
                roles.require_admin(actor, "mark notebooks persistent")
                changes["persistent"] = persistent
                nb.persistent = persistent
            if display_name is not None:
                changes["display_name"] = display_name.strip() or nb.name
                nb.display_name = display_name.strip() or nb.name
            if changes:
                audit.record(
                    session, actor.name, "notebook.updated", f"notebook:{owner}/{name}", **changes
                )
        return nb

    async def delete(self, actor: roles.Principal, owner: str, name: str) -> None:
        async with self.db.session() as session:
            nb, _ = await self.visible(session, actor, owner, name)
            if State(nb.state) is not State.STOPPED:
                raise Conflict(f"notebook '{name}' is {nb.state}; stop it before deleting it")
            await session.delete(nb)
            audit.record(session, actor.name, "notebook.deleted", f"notebook:{owner}/{name}")
        self.routes.pop((owner, name), None)
        await self.backend.remove_storage(owner, name)

    # -- GPU placement, reclaim and the queue --------------------------------------

    async def _admit(self, session: AsyncSession, nb: Notebook, reclaim: bool = True) -> Admission:
        """Where a start can go now: devices, idle notebooks to stop first, or a queue place."""
        if not nb.gpus or not nb.gpu_type:
            return Admission(devices=())
        gpu_type = await catalog.get_gpu_type(session, nb.gpu_type)
        offer = catalog.offer_of(gpu_type)
        ahead = await session.scalar(
            select(func.count())
            .select_from(Notebook)
            .where(
                Notebook.state == State.QUEUED.value,
                Notebook.gpu_type == nb.gpu_type,
                Notebook.id != nb.id,
                Notebook.queued_at < (nb.queued_at or _now()),
            )
        )
        if not ahead:
            allocator = await self.gpus.allocator(session, exclude=nb.id)
            placed = allocator.place(offer, nb.gpus)
            if placed is not None:
                return Admission(devices=placed)
            if reclaim:
                victims = reclaim_rules.choose_victims(
                    allocator,
                    offer,
                    nb.gpus,
                    await self._candidates(session),
                    self.settings.reclaim_idle_minutes * 60,
                )
                if victims:
                    plural = "s" if len(victims) != 1 else ""
                    return Admission(
                        victims=victims,
                        message=(
                            f"Freeing a '{nb.gpu_type}' GPU: stopping {len(victims)} idle "
                            f"notebook{plural}; your notebook starts right after."
                        ),
                    )
            if not gpu_rules.capacity(self.gpus.devices, offer):
                raise Unavailable(
                    f"this platform has no GPU of type '{nb.gpu_type}'; choose another type"
                )
        if not reclaim:
            raise Unavailable(f"no GPU of type '{nb.gpu_type}' is free right now; try again later")
        position = ahead + 1
        return Admission(
            position=position, message=reclaim_rules.queue_message(position, nb.gpu_type)
        )

    async def _candidates(self, session: AsyncSession) -> list[reclaim_rules.Candidate]:
        """Running GPU notebooks as reclaim sees them, idle time from the culler's last pass."""
        now = _now()
        rows = await session.scalars(
            select(Notebook).where(
                Notebook.state == State.RUNNING.value, Notebook.devices.is_not(None)
            )
        )
        candidates = []
        for nb in rows.all():
            seen = self.activity.get(nb.id)
            idle = None
            if seen is not None and seen.last_activity is not None and not seen.busy:
                since = max(
                    t for t in (seen.last_activity, nb.kept_at, nb.started_at) if t is not None
                )
                idle = (now - since).total_seconds()
            candidates.append(
                reclaim_rules.Candidate(nb.id, idle, nb.persistent, seen is not None and seen.busy)
            )
        return candidates

    def queue_drain(self) -> None:
        """Give queued notebooks their turn (after a stop freed something)."""
        if self._draining.locked():
            self._drain_again = True
            return
        task = asyncio.create_task(self.drain_queue())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain_queue(self) -> None:
        async with self._draining:
            while True:
                self._drain_again = False
                async with self.db.session() as session:
                    waiting = (
                        await session.execute(
                            select(Notebook.id, User.name, Notebook.name)
                            .join(User, User.id == Notebook.owner_id)
                            .where(Notebook.state == State.QUEUED.value)
                            .order_by(Notebook.queued_at, Notebook.id)
                        )
                    ).all()
                for _, owner, name in waiting:
                    try:
                        await self.start(None, owner, name, from_queue=True)
                    except DomainError as error:
                        await self._leave_queue(owner, name, error.message)
                if not self._drain_again:
                    return

    async def _leave_queue(self, owner: str, name: str, message: str) -> None:
        async with self.db.session() as session:
            nb, _ = await self.load(session, owner, name, lock=True)
            if nb.state != State.QUEUED.value:
                return
            nb.state = State.STOPPED.value
            nb.queued_at = None
            nb.message = message
            audit.record(
                session, SYSTEM, "notebook.dequeued", f"notebook:{owner}/{name}", reason=message
            )
        self._after_change(nb, owner)
        self._publish(nb.id, "start", 100, message, State.STOPPED, done=True, ok=False)

    # -- start -------------------------------------------------------------

    def _publish(
        self,
        nb_id: int,
        operation: str,
        percent: int,
        message: str,
        state: State,
        done: bool = False,
        ok: bool | None = None,
        url: str | None = None,
        begin: bool = False,
    ) -> None:
        event = ProgressEvent(operation, percent, message, state.value, done, ok, url)
        (self.broker.begin if begin else self.broker.publish)(nb_id, event)

    async def start(
        self, actor: roles.Principal | None, owner: str, name: str, from_queue: bool = False
    ) -> Notebook:
        """Decide the start (quota, GPUs) and hand it to a background task.

        Without a free GPU the notebook joins the queue for its GPU type (after
        idle notebooks are stopped to make room, when some can be); the queue
        is served first come, first served whenever something stops.
        """
        victims: list[tuple[int, str, str]] = []
        async with self.db.session() as session:
            nb, owner_user = await self.load(session, owner, name, lock=True)
            if actor is not None and not roles.may_manage_notebook(actor, nb.owner_id):
                raise NotFound(f"{owner} has no notebook '{name}'")
            if not owner_user.active:
                raise Forbidden(f"the account '{owner}' is deactivated")
            state = State(nb.state)
            if state in (State.STARTING, State.RUNNING) or (
                state is State.QUEUED and not from_queue
            ):
                return nb
            if from_queue and state is not State.QUEUED:
                return nb
            require_move(state, State.STARTING, name)
            env = await catalog.get_environment(session, nb.environment)
            catalog.require_runnable(env, self.backend.name, nb.image)
            await quotas.enforce_start(session, nb, owner_user)
            admission = await self._admit(session, nb)
            who = actor.name if actor else SYSTEM
            if admission.devices is not None:
                nb.devices = list(admission.devices) or None
                nb.state = State.STARTING.value
                nb.queued_at = None
                nb.message = ""
                nb.warned_at = None
                nb.kept_at = None
                nb.proxy_secret = secrets.token_urlsafe(32)
                await session.execute(
                    update(StopRecord)
                    .where(StopRecord.notebook_id == nb.id, StopRecord.restarted_at.is_(None))
                    .values(restarted_at=_now())
                )
                audit.record(
                    session, who, "notebook.started", f"notebook:{owner}/{name}", devices=nb.devices
                )
            else:
                if state is not State.QUEUED:
                    nb.state = State.QUEUED.value
                    nb.queued_at = _now()
                    audit.record(
                        session,
                        who,
                        "notebook.queued",
                        f"notebook:{owner}/{name}",
                        gpu_type=nb.gpu_type,
                        position=admission.position,
                    )
                nb.message = admission.message
                for victim_id in admission.victims:
                    victim = await session.get(Notebook, victim_id)
                    victim_owner = (await session.get(User, victim.owner_id)).name
                    await self._mark_stopping(
                        session,
                        victim,
                        victim_owner,
                        "reclaim",
                        f"reclaimed for a waiting '{nb.gpu_type}' request",
                        SYSTEM,
                    )
                    victims.append((victim.id, victim_owner, victim.name))
        self._after_change(nb, owner)
        if nb.state == State.STARTING.value:
            self._publish(nb.id, "start", 5, "Start requested", State.STARTING, begin=True)
            self._spawn(nb.id, self._run_start(nb.id))
        else:
            self._publish(
                nb.id, "start", 3, nb.message, State.QUEUED, begin=state is not State.QUEUED
            )
        for victim_id, victim_owner, victim_name in victims:
            self._begin_stop(victim_id, victim_owner, victim_name, RECLAIM_NOTE)
        return nb

    def _spawn(self, nb_id: int, work) -> None:
        task = asyncio.create_task(work)
        self._tasks[nb_id] = task
        task.add_done_callback(
            lambda done: self._tasks.pop(nb_id, None) if self._tasks.get(nb_id) is done else None
        )

    async def _spec(
        self, session: AsyncSession, nb: Notebook, owner: str, api_token: str = ""
    ) -> NotebookSpec:
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
        if nb.gpu_type:
            gpu_type = await catalog.get_gpu_type(session, nb.gpu_type)
            gpu_resource, node_selector = gpu_type.resource_name, dict(gpu_type.node_selector or {})
        limits, _ = await quotas.user_limits(session, nb.owner_id)
        return NotebookSpec(
            id=nb.id,
            owner=owner,
            name=nb.name,
            base_path=base_path(owner, nb.name),
            environment=EnvironmentSpec(env.name, nb.image or env.image, env.local_prefix),
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
            quota=QuotaSpec(limits, await catalog.gpu_resources(session)),
        )

    async def _run_start(self, nb_id: int) -> None:
        async with self.db.session() as session:
            nb = await session.get(Notebook, nb_id)
            owner = (await session.get(User, nb.owner_id)).name
        token, _ = await self.auth.create_token(
            nb.owner_id, f"notebook {nb.name}", notebook_id=nb.id
        )
        async with self.db.session() as session:
            spec = await self._spec(session, nb, owner, token)

        async def progress(percent: int, message: str) -> None:
            self._publish(nb_id, "start", percent, message, State.STARTING)

        backend_state: dict | None = None
        try:
            if nb.seed:
                await self._copy_seed(nb, owner, progress)
            launch = self.backend.start_vm if nb.kind == "vm" else self.backend.start
            backend_state = await launch(spec, progress)
            async with self.db.session() as session:
                current = await session.get(Notebook, nb_id)
                abandoned = current.state != State.STARTING.value
                if not abandoned:
                    current.state = State.RUNNING.value
                    current.backend_state = backend_state
                    current.started_at = _now()
                    current.last_activity = _now()
        except asyncio.CancelledError:
            await self._abandon_start(
                spec, backend_state, owner, "the start was cancelled", ok=True
            )
            raise
        except BackendError as error:
            await self._abandon_start(spec, backend_state, owner, str(error), ok=False)
            return
        except Exception as error:
            log.exception("starting notebook %s/%s failed", owner, nb.name)
            await self._abandon_start(
                spec, backend_state, owner, f"the start failed: {error}", ok=False
            )
            return
        if abandoned:  # stopped while it started
            await self._abandon_start(spec, backend_state, owner, "Stopped", ok=True)
            return
        self._after_change(current, owner)
        self._publish(
            nb_id,
            "start",
            100,
            "Your notebook is ready",
            State.RUNNING,
            done=True,
            ok=True,
            url=spec.base_path + "lab",
        )

    async def _copy_seed(self, nb: Notebook, owner: str, progress) -> None:
        """Copy a template's (or a submission's) files into the new home, never overwriting."""
        async with self.db.session() as session:
            source, label, count = await seed_archive(session, Path(self.settings.store), nb.seed)
        await progress(8, f"Copying {count} file{'s' if count != 1 else ''} into your home")

        async def copied(done: int) -> None:
            await progress(
                8 + min(14, 14 * done // max(1, count)), f"Copied {done} of {count} files"
            )

        report = await self.backend.unpack(owner, nb.name, source, "", label, copied)
        notice = ""
        if report["conflicts"]:
            count = len(report["conflicts"])
            notice = (
                f"{count} file{'s' if count != 1 else ''} already existed; the new copies were "
                f"saved beside them with '({label})' in their names."
            )
        async with self.db.session() as session:
            current = await session.get(Notebook, nb.id)
            current.seed = None
            current.message = notice
        nb.seed = None
        await progress(22, f"Copied {report['copied']} files" + (f"; {notice}" if notice else ""))

    async def _abandon_start(
        self, spec: NotebookSpec, backend_state: dict | None, owner: str, message: str, ok: bool
    ) -> None:
        if backend_state:
            await self.backend.stop(spec, backend_state)
        await self._finish_stopped(spec.id, owner, spec.name, "start", message, ok=ok)

    async def _finish_stopped(
        self,
        nb_id: int,
        owner: str,
        name: str,
        operation: str,
        message: str,
        ok: bool | None = True,
    ) -> None:
        await self.auth.revoke_notebook_tokens(nb_id)
        async with self.db.session() as session:
            nb = await session.get(Notebook, nb_id)
            if nb is None:
                return
            nb.state = State.STOPPED.value
            nb.backend_state = None
            nb.devices = None
            nb.stopped_at = _now()
            # Failures and stops the owner did not ask for (ok None) stay explained.
            nb.message = "" if ok else message
            if ok is False:
                audit.record(
                    session,
                    SYSTEM,
                    f"notebook.{operation}_failed",
                    f"notebook:{owner}/{name}",
                    reason=message,
                )
        self._after_change(nb, owner)
        self._publish(nb_id, operation, 100, message, State.STOPPED, done=True, ok=ok)
        self.queue_drain()

    # -- stop --------------------------------------------------------------

    async def stop(
        self,
        actor: roles.Principal | None,
        owner: str,
        name: str,
        reason: str = "requested",
        cause: str | None = None,
    ) -> Notebook:
        """Stop a notebook; `cause` (user, admin, idle, lifetime, reclaim) feeds the records."""
        async with self.db.session() as session:
            nb, _ = await self.load(session, owner, name, lock=True)
            if actor is not None and not roles.may_manage_notebook(actor, nb.owner_id):
                raise NotFound(f"{owner} has no notebook '{name}'")
            state = State(nb.state)
            if state in (State.STOPPED, State.STOPPING):
                return nb
            if cause is None:
                cause = "user" if actor is not None and actor.id == nb.owner_id else "admin"
            if state is State.QUEUED:
                nb.state = State.STOPPED.value
                nb.queued_at = None
                nb.message = ""
                audit.record(
                    session,
                    actor.name if actor else SYSTEM,
                    "notebook.dequeued",
                    f"notebook:{owner}/{name}",
                    reason=reason,
                )
            else:
                await self._mark_stopping(
                    session, nb, owner, cause, reason, actor.name if actor else SYSTEM
                )
        self._after_change(nb, owner)
        if state is State.QUEUED:
            self._publish(
                nb.id, "stop", 100, "Left the queue", State.STOPPED, begin=True, done=True, ok=True
            )
            return nb
        starting = self._tasks.get(nb.id)
        if state is State.STARTING and starting is not None:
            self._publish(nb.id, "stop", 10, "Stopping", State.STOPPING, begin=True)
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await starting
            return nb
        note = f"Stopped by the idle culler: {reason}." if cause in ("idle", "lifetime") else ""
        self._begin_stop(nb.id, owner, nb.name, note)
        return nb

    async def _mark_stopping(
        self, session: AsyncSession, nb: Notebook, owner: str, cause: str, reason: str, who: str
    ) -> None:
        """The part of a stop that happens in the caller's transaction: state, audit, record."""
        weight = 0.0
        if nb.devices and nb.gpu_type:
            gpu_type = await catalog.get_gpu_type(session, nb.gpu_type)
            weight = nb.gpus / max(1, gpu_type.share)
        nb.state = State.STOPPING.value
        nb.message = ""
        session.add(
            StopRecord(
                notebook_id=nb.id,
                owner=owner,
                notebook=nb.name,
                cause=cause,
                reason=reason,
                gpus=weight,
            )
        )
        audit.record(
            session,
            who,
            "notebook.stopped",
            f"notebook:{owner}/{nb.name}",
            reason=reason,
            cause=cause,
        )

    def _begin_stop(self, nb_id: int, owner: str, name: str, note: str = "") -> None:
        """Stop in the background; a `note` explains a stop the owner did not ask for."""
        self._publish(nb_id, "stop", 10, "Stopping", State.STOPPING, begin=True)
        self._spawn(nb_id, self._run_stop(nb_id, owner, name, note))

    async def _backend_stop(self, nb_id: int, owner: str) -> None:
        async with self.db.session() as session:
            nb = await session.get(Notebook, nb_id)
            spec = await self._spec(session, nb, owner)
            state = dict(nb.backend_state or {})
        if state:
            await self.backend.stop(spec, state)

    async def _run_stop(self, nb_id: int, owner: str, name: str, note: str = "") -> None:
        try:
            await self._backend_stop(nb_id, owner)
        except Exception as error:
            log.exception("stopping notebook %s/%s failed", owner, name)
            self._publish(
                nb_id, "stop", 100, f"stopping failed: {error}", State.STOPPING, done=True, ok=False
            )
            return
        await self._finish_stopped(
            nb_id, owner, name, "stop", note or "Stopped", ok=None if note else True
        )

    async def wait(self, nb_id: int) -> None:
        """Wait for the notebook's current operation (for API clients that ask to)."""
        task = self._tasks.get(nb_id)
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)

    # -- resize --------------------------------------------------------------

    async def resize(
        self, actor: roles.Principal, owner: str, name: str, changes: Changes
    ) -> Notebook:
        """Change resources; a running notebook restarts with them, checked against quota first."""
        async with self.db.session() as session:
            nb, owner_user = await self.load(session, owner, name, lock=True)
            if not roles.may_manage_notebook(actor, nb.owner_id):
                raise NotFound(f"{owner} has no notebook '{name}'")
            state = State(nb.state)
            if state in (State.STARTING, State.STOPPING):
                raise Conflict(f"notebook '{name}' is {state.value}; resize it once that is done")
            gpus = changes.gpus if changes.gpus is not None else nb.gpus
            gpu_type = changes.gpu_type if changes.gpu_type is not None else nb.gpu_type
            cpu_milli, memory, gpu_type, gpus = await self._validated_resources(
                session,
                changes.cpu if changes.cpu is not None else f"{nb.cpu_milli}m",
                changes.memory if changes.memory is not None else nb.memory,
                gpu_type or None,
                gpus,
            )
            before = {
                "cpu_milli": nb.cpu_milli,
                "memory": nb.memory,
                "gpu_type": nb.gpu_type,
                "gpus": nb.gpus,
            }
            after = {"cpu_milli": cpu_milli, "memory": memory, "gpu_type": gpu_type, "gpus": gpus}
            if before == after:
                return nb
            nb.cpu_milli, nb.memory, nb.gpu_type, nb.gpus = cpu_milli, memory, gpu_type, gpus
            if state is State.RUNNING:
                await quotas.enforce_start(session, nb, owner_user)
                nb.state = State.STOPPING.value
            else:
                await quotas.enforce_fits(
                    session, nb.owner_id, nb.group_id, quotas.notebook_resources(nb)
                )
            audit.record(
                session,
                actor.name,
                "notebook.resized",
                f"notebook:{owner}/{name}",
                before=before,
                after=after,
                restart=state is State.RUNNING,
            )
        if state is State.RUNNING:
            self._after_change(nb, owner)
            self._publish(
                nb.id,
                "resize",
                5,
                "Stopping to apply the new resources",
                State.STOPPING,
                begin=True,
            )
            self._spawn(nb.id, self._run_restart(nb.id, owner, name))
        return nb

    async def _run_restart(self, nb_id: int, owner: str, name: str) -> None:
        await asyncio.sleep(RESTART_GRACE_SECONDS)
        try:
            await self._backend_stop(nb_id, owner)
        except Exception as error:
            log.exception("stopping %s/%s for a resize failed", owner, name)
            self._publish(
                nb_id,
                "resize",
                100,
                f"stopping failed: {error}",
                State.STOPPING,
                done=True,
                ok=False,
            )
            return
        await self.auth.revoke_notebook_tokens(nb_id)
        try:
            async with self.db.session() as session:
                nb = await session.get(Notebook, nb_id)
                nb.backend_state = None
                nb.devices = None
                admission = await self._admit(session, nb, reclaim=False)
                nb.devices = list(admission.devices) or None
                nb.state = State.STARTING.value
                nb.proxy_secret = secrets.token_urlsafe(32)
        except DomainError as error:
            await self._finish_stopped(nb_id, owner, name, "resize", error.message, ok=False)
            return
        self._after_change(nb, owner)
        self._publish(
            nb_id, "start", 30, "Starting with the new resources", State.STARTING, begin=True
        )
        await self._run_start(nb_id)

    # -- routes for the proxy ----------------------------------------------------

    def _after_change(self, nb: Notebook, owner: str) -> None:
        state = State(nb.state)
        target = (
            self.backend.endpoint(nb.backend_state)
            if state is State.RUNNING and nb.backend_state
            else None
        )
        self.routes[(owner, nb.name)] = Route(
            nb.id, nb.owner_id, owner, nb.name, state, target, nb.proxy_secret
        )

    async def route(self, owner: str, name: str) -> Route | None:
        route = self.routes.get((owner, name))
        if route is not None:
            return route
        async with self.db.session() as session:
            row = await session.execute(
                select(Notebook)
                .join(User, User.id == Notebook.owner_id)
                .where(User.name == owner, Notebook.name == name)
            )
            nb = row.scalar_one_or_none()
        if nb is None:
            return None
        self._after_change(nb, owner)
        return self.routes[(owner, name)]

    # -- controller start: adopt or clean up ---------------------------------------

    # -- for the liveness watch (liveness.py) -----------------------------------------

    def busy(self, nb_id: int) -> bool:
        """A start, stop or resize of this notebook is under way."""
        return nb_id in self._tasks

    async def spec_of(self, session: AsyncSession, nb: Notebook, owner: str) -> NotebookSpec:
        return await self._spec(session, nb, owner)

    async def finish_stopped(self, nb_id: int, owner: str, name: str, reason: str) -> None:
        """A stop nobody asked for: the notebook is stopped and the reason kept for its owner."""
        await self._finish_stopped(nb_id, owner, name, "stop", reason, ok=None)

    async def reconcile(self) -> dict[str, list[str]]:
        """Find running notebooks again after a controller restart; stop what cannot be adopted."""
        adopted, stopped = [], []
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(Notebook, User.name)
                    .join(User, User.id == Notebook.owner_id)
                    .where(Notebook.state.in_([s.value for s in HOLDING]))
                )
            ).all()
            work = [(nb, owner, await self._spec(session, nb, owner)) for nb, owner in rows]
        keep: set[int] = set()
        for nb, owner, spec in work:
            state = State(nb.state)
            observed = None
            if nb.backend_state and state in (State.RUNNING, State.STARTING):
                observed = await self.backend.observe(spec, nb.backend_state)
            if observed is not None and observed.ready:
                keep.add(nb.id)
                async with self.db.session() as session:
                    current = await session.get(Notebook, nb.id)
                    current.state = State.RUNNING.value
                self._after_change(current, owner)
                adopted.append(f"{owner}/{nb.name}")
                continue
            if nb.backend_state:
                await self.backend.stop(spec, nb.backend_state)
            reason = (
                observed.detail
                if observed
                else "it was being stopped or started when the controller stopped"
            )
            await self._finish_stopped(
                nb.id, owner, nb.name, "stop", f"stopped at controller start: {reason}", ok=None
            )
            stopped.append(f"{owner}/{nb.name}")
        swept = await self.backend.sweep(keep)
        if adopted or stopped or swept:
            async with self.db.session() as session:
                audit.record(
                    session,
                    SYSTEM,
                    "controller.reconciled",
                    "notebooks",
                    adopted=adopted,
                    stopped=stopped,
                    orphans_killed=swept,
                )
        return {"adopted": adopted, "stopped": stopped}

    async def shutdown(self) -> None:
        """Controller exit: finish nothing half-way; notebooks themselves keep running."""
        for task in list(self._tasks.values()):
            task.cancel()
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

"""Admission: whether a notebook's start may have GPUs now, and the queue when not.

It exists apart from the lifecycle because deciding *where* a start can go
(free devices, idle notebooks to reclaim, a place in the per-type queue) is
policy over the whole platform's GPUs, while the lifecycle only carries out one
notebook's start or stop. The lifecycle asks `admit` inside its transaction and
calls `queue_drain` whenever a stop frees something; the GPU pool calls it when
the cluster's GPUs change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import culling
from ...core import gpus as gpu_rules
from ...core import reclaim as reclaim_rules
from ...core.errors import DomainError, Unavailable
from ...core.lifecycle import State
from ...store.db import Database
from ...store.models import Notebook, User
from .. import audit
from ..clock import Clock
from ..environments import catalog
from ..gpus.pool import GpuPool
from ..progress import ProgressBroker, ProgressEvent
from .routes import RouteTable
from .specs import load_notebook

RECLAIM_NOTE = (
    "Stopped: the platform needed this GPU for a waiting notebook, and this one had been idle."
)


@dataclass(frozen=True)
class Admission:
    """The outcome of asking for GPUs: devices now, or victims to stop first, or a queue place."""

    devices: tuple[str, ...] | None = None
    victims: tuple[int, ...] = ()
    position: int = 0
    message: str = ""


class NotebookAdmission:
    """Given the database, the settings, the GPU pool, the route table (a notebook leaving
    the queue is routed as stopped), the progress broker, and how to start a queued one."""

    def __init__(
        self,
        db: Database,
        settings,
        gpus: GpuPool,
        routes: RouteTable,
        broker: ProgressBroker,
        start_queued: Callable[[str, str], Awaitable[object]],
        clock: Clock,
    ) -> None:
        self.db = db
        self.clock = clock
        self.settings = settings
        self.gpus = gpus
        self.routes = routes
        self.broker = broker
        self._start_queued = start_queued
        # The culler's latest reading of each running notebook (reclaim picks from it).
        self.activity: dict[int, culling.Activity] = {}
        self._draining = asyncio.Lock()
        self._drain_again = False
        self._background: set[asyncio.Task] = set()
        # Capacity that class sessions hold for their courses (controller/class_sessions/,
        # set by the platform): it refuses a start that would take a booked window's seats,
        # and names the class's notebooks that this start may not reclaim.
        self.held: Callable[[AsyncSession, Notebook], Awaitable[frozenset[int]]] | None = None
        # GPUs that appear (a node joins, is uncordoned, its device plugin offers more)
        # are given to the queue at once, as GPUs a stop frees are.
        gpus.follow(self.queue_drain)

    async def admit(self, session: AsyncSession, nb: Notebook, reclaim: bool = True) -> Admission:
        """Where a start can go now: devices, idle notebooks to stop first, or a queue place."""
        kept = await self.held(session, nb) if self.held is not None else frozenset()
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
                Notebook.queued_at < (nb.queued_at or self.clock.now()),
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
                    [c for c in await self._candidates(session) if c.notebook_id not in kept],
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
        current = self.clock.now()
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
                idle = (current - since).total_seconds()
            candidates.append(
                reclaim_rules.Candidate(nb.id, idle, nb.persistent, seen is not None and seen.busy)
            )
        return candidates

    # -- the queue -------------------------------------------------------------

    def queue_drain(self) -> None:
        """Give queued notebooks their turn (after a stop freed something, or the cluster's
        GPUs changed)."""
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
                        await self._start_queued(owner, name)
                    except DomainError as error:
                        await self._leave_queue(owner, name, error.message)
                if not self._drain_again:
                    return

    async def _leave_queue(self, owner: str, name: str, message: str) -> None:
        async with self.db.session() as session:
            nb, _ = await load_notebook(session, owner, name, lock=True)
            if nb.state != State.QUEUED.value:
                return
            nb.state = State.STOPPED.value
            nb.queued_at = None
            nb.message = message
            audit.record(
                session,
                audit.SYSTEM,
                "notebook.dequeued",
                f"notebook:{owner}/{name}",
                reason=message,
            )
        self.routes.update(nb, owner)
        event = ProgressEvent("start", 100, message, State.STOPPED.value, True, False, None)
        self.broker.publish(nb.id, event)

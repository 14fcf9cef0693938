"""The platform's GPUs: the devices found by the backend plus those an admin declared,
and who holds which. Placement rules live in `core.gpus`; this module feeds them.

On the local backend every GPU is on this machine, so a declared GPU's node is the
host's name (what NVML-found GPUs carry too); declarations written before that
rule said "local", and are read as this host. A multi-GPU request stays on one
node, so a found and a declared GPU of the same machine must agree on its name.
"""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core.errors import Invalid
from ...core.gpus import Allocator, Device, Holding, run_holding_id
from ...core.lifecycle import HOLDING
from ...store.competition_models import CompetitionEntry
from ...store.models import GpuDevice, Notebook, TrainingJob, User
from .schemas import NodeCount

LEGACY_LOCAL_NODE = "local"


class GpuPool:
    def __init__(self, backend) -> None:
        self.backend = backend
        self.found: list[Device] = []
        self.declared: list[Device] = []
        self._followers: list[Callable[[], None]] = []
        # A cluster's GPUs change while the controller runs: a node added later is
        # offered at once, one cordoned or deleted no longer is.
        backend.follow_inventory(self._found_changed)

    def follow(self, changed: Callable[[], None]) -> None:
        """Have `changed` called (on the event loop) each time the backend's devices change
        while the controller runs, once the pool holds them: the GPU queue is re-checked the
        moment a node joins, not at its next drain (when something else stops)."""
        self._followers.append(changed)

    def _found_changed(self, devices: list[Device]) -> None:
        self.found = list(devices)
        for follower in self._followers:
            follower()

    @property
    def is_local(self) -> bool:
        return getattr(self.backend, "name", "") == "local"

    @property
    def default_node(self) -> str | None:
        """The node a GPU declared without one is on: this host locally, none on a cluster."""
        return socket.gethostname() if self.is_local else None

    def node_for_declaration(self, node: str | None) -> str:
        """The node to store for a declared GPU; a cluster needs it named."""
        node = (node or "").strip()
        if node and not (self.is_local and node == LEGACY_LOCAL_NODE):
            return node
        default = self.default_node
        if default is None:
            raise Invalid(
                "name the node this GPU is on (a Kubernetes node name, as kubectl get nodes "
                "lists it)"
            )
        return default

    @property
    def devices(self) -> list[Device]:
        known = {d.id for d in self.found}
        return self.found + [d for d in self.declared if d.id not in known]

    def nodes(self) -> list[NodeCount]:
        """Per node: GPUs detected (NVML, the cluster) and declared by hand, and in all.

        A declared GPU that was also detected (same id) counts once in `total`.
        """
        detected = Counter(d.node for d in self.found)
        found_ids = {d.id for d in self.found}
        declared = Counter(d.node for d in self.declared)
        both = Counter(d.node for d in self.declared if d.id in found_ids)
        total = Counter(d.node for d in self.devices)
        return [
            NodeCount(
                node=node,
                detected=detected[node],
                declared=declared[node],
                declared_and_detected=both[node],
                total=total[node],
            )
            for node in sorted(set(detected) | set(declared))
        ]

    async def refresh(self, session: AsyncSession) -> None:
        """Ask the backend what exists and read what admins declared."""
        self.found = await self.backend.inventory()
        rows = (
            await session.scalars(select(GpuDevice).order_by(GpuDevice.node, GpuDevice.index))
        ).all()
        local = self.default_node if self.is_local else None
        self.declared = [
            Device(
                id=r.device_id,
                node=local if local and r.node == LEGACY_LOCAL_NODE else r.node,
                model=r.model,
                memory=r.memory,
                mig_profile=r.mig_profile,
                index=r.index,
            )
            for r in rows
        ]

    async def holdings(self, session: AsyncSession, exclude: int | None = None) -> list[Holding]:
        """Who holds which GPUs now. Every start's admission reads this (in the writers'
        turn, one start after another), so only the three columns a holding needs are
        read, not whole notebooks: with 600 GPU notebooks running (SQLite, load 9 on two
        cores) 13 ms a read instead of 37 ms as ORM objects."""
        rows = await session.execute(
            select(Notebook.id, Notebook.gpu_type, Notebook.devices).where(
                Notebook.state.in_([s.value for s in HOLDING]), Notebook.devices.is_not(None)
            )
        )
        held = [
            Holding(nb_id, gpu_type or "", tuple(devices))
            for nb_id, gpu_type, devices in rows.all()
            if nb_id != exclude and devices
        ]
        return held + await self._training_holdings(session) + await self._run_holdings(session)

    @staticmethod
    async def _run_holdings(session: AsyncSession) -> list[Holding]:
        """GPUs that code competitions' runs hold now (controller/competitions/gpus.py)."""
        rows = await session.execute(
            select(CompetitionEntry.id, CompetitionEntry.gpu_type, CompetitionEntry.devices).where(
                CompetitionEntry.devices.is_not(None)
            )
        )
        return [
            Holding(run_holding_id(entry_id), gpu_type or "", tuple(devices))
            for entry_id, gpu_type, devices in rows.all()
            if devices
        ]

    async def _training_holdings(self, session: AsyncSession) -> list[Holding]:
        """GPUs that running local training jobs hold (negative ids keep them apart from
        notebooks'). On Kubernetes the cluster's scheduler counts the jobs' pods instead.
        The backend, not a column, says which: a job that ended holds nothing."""
        if not self.is_local:
            return []
        rows = (
            await session.execute(
                select(TrainingJob, User.name)
                .join(User, User.id == TrainingJob.owner_id)
                .where(TrainingJob.state == "submitted", TrainingJob.gpus > 0)
            )
        ).all()
        held = []
        for job, owner in rows:
            status = await self.backend.training_status(owner, job.name)
            if status.devices:
                held.append(Holding(-job.id, job.gpu_type or "", tuple(status.devices)))
        return held

    async def allocator(self, session: AsyncSession, exclude: int | None = None) -> Allocator:
        return Allocator(self.devices, await self.holdings(session, exclude))

    def device(self, device_id: str) -> Device | None:
        return next((d for d in self.devices if d.id == device_id), None)

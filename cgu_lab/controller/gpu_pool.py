"""The platform's GPUs: the devices found by the backend plus those an admin declared,
and who holds which. Placement rules live in `core.gpus`; this module feeds them."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ..core.gpus import Allocator, Device, Holding
from ..core.lifecycle import HOLDING
from ..store.models import GpuDevice, Notebook


class GpuPool:
    def __init__(self, backend) -> None:
        self.backend = backend
        self.found: list[Device] = []
        self.declared: list[Device] = []

    @property
    def devices(self) -> list[Device]:
        known = {d.id for d in self.found}
        return self.found + [d for d in self.declared if d.id not in known]

    async def refresh(self, session: AsyncSession) -> None:
        """Ask the backend what exists and read what admins declared."""
        self.found = await self.backend.inventory()
        rows = (
            await session.scalars(select(GpuDevice).order_by(GpuDevice.node, GpuDevice.index))
        ).all()
        self.declared = [
            Device(
                id=r.device_id,
                node=r.node,
                model=r.model,
                memory=r.memory,
                mig_profile=r.mig_profile,
                index=r.index,
            )
            for r in rows
        ]

    async def holdings(self, session: AsyncSession, exclude: int | None = None) -> list[Holding]:
        rows = await session.scalars(
            select(Notebook).where(
                Notebook.state.in_([s.value for s in HOLDING]), Notebook.devices.is_not(None)
            )
        )
        return [
            Holding(nb.id, nb.gpu_type or "", tuple(nb.devices or ()))
            for nb in rows.all()
            if nb.id != exclude and nb.devices
        ]

    async def allocator(self, session: AsyncSession, exclude: int | None = None) -> Allocator:
        return Allocator(self.devices, await self.holdings(session, exclude))

    def device(self, device_id: str) -> Device | None:
        return next((d for d in self.devices if d.id == device_id), None)

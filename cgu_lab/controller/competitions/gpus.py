"""GPUs for code competitions' runs: a competition may name a GPU type, and each run
of its entries then takes one device of that type from the platform's GPU pool.

A run takes its device exactly as a notebook start would: the pool's allocator
places one device of the type's offer, counting what notebooks, local training
jobs and other runs hold. The device is written on the entry (`devices`) while
the run holds it, which is how the pool counts it (`GpuPool._run_holdings`), and
the run sees it as notebooks do: `CUDA_VISIBLE_DEVICES=<device id>` (and, for a
fraction of an MPS-shared GPU, the same thread percentage a notebook gets).

No free device is no failure: the entry stays queued with the message "waiting
for a GPU (<type>)", which its student reads in their history, and the scoring
queue offers it again a moment later (competition_entries.py). Whatever ends
the run, the device is given back, and queued notebooks get their turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from ...core.errors import Invalid, NotFound, NotSupported
from ...store.competition_models import CompetitionEntry
from ...store.db import Database
from ..environments import catalog
from ..gpus.pool import GpuPool


@dataclass(frozen=True)
class RunGpu:
    """What a run was given: its device (none without a GPU type) and its environment."""

    devices: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


NO_GPU = RunGpu()


def waiting_message(gpu_type: str) -> str:
    return f"waiting for a GPU ({gpu_type}); your notebook runs as soon as one is free"


def gone_message(gpu_type: str) -> str:
    return (
        f"this competition's GPU type '{gpu_type}' no longer exists, so your notebook "
        "could not run; it does not count toward your limits, and your teacher can choose "
        "another type"
    )


def run_env(devices: tuple[str, ...], fraction: float) -> dict[str, str]:
    """The run's GPU variables, as a notebook on the same devices gets them."""
    env = {"CUDA_VISIBLE_DEVICES": ",".join(devices)}
    if fraction < 1.0:
        env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(max(1, round(fraction * 100)))
    return env


async def check_gpu_type(session: AsyncSession, name: str | None, backend: str) -> str | None:
    """A competition's GPU type: none, or one that exists (a 400 naming it otherwise).

    Runs happen on the controller's machine, so only the local backend, whose GPUs are
    that machine's, can give them one; a cluster's GPUs are its nodes'."""
    name = (name or "").strip()
    if not name:
        return None
    if backend != "local":
        raise NotSupported(
            f"code competitions' runs take GPUs on the local backend only (this platform "
            f"runs {backend}); leave gpu_type out"
        )
    try:
        await catalog.get_gpu_type(session, name)
    except NotFound as missing:
        raise Invalid(missing.message, gpu_type=name) from None
    return name


class RunGpus:
    """Taking and giving back the devices of competition runs."""

    def __init__(
        self, db: Database, pool: GpuPool | None, on_release: Callable[[], None] | None = None
    ) -> None:
        self.db = db
        self.pool = pool
        self.on_release = on_release
        # Two scoring workers may look for a device at once; one places at a time.
        self._placing = asyncio.Lock()

    async def forget_all(self) -> None:
        """No run is in progress when the controller starts: devices left on entries by a
        controller that stopped mid-run are free."""
        async with self.db.session() as session:
            await session.execute(
                update(CompetitionEntry)
                .where(CompetitionEntry.devices.is_not(None))
                .values(devices=None)
            )

    async def take(self, entry_id: int, gpu_type: str) -> RunGpu | None:
        """One device of `gpu_type` for the entry's run, or None (the entry waits)."""
        async with self._placing, self.db.session() as session:
            entry = await session.get(CompetitionEntry, entry_id)
            if entry is None:  # deleted with its competition meanwhile
                return None
            try:
                placed, fraction = await self._place(session, gpu_type)
            except NotFound:  # the administrator removed the type: no device will come
                entry.state, entry.message = "failed", gone_message(gpu_type)
                return None
            if placed is None:
                entry.state, entry.message = "queued", waiting_message(gpu_type)
                return None
            entry.state, entry.message = "scoring", ""
            entry.gpu_type, entry.devices = gpu_type, list(placed)
        return RunGpu(placed, run_env(placed, fraction))

    async def _place(self, session: AsyncSession, gpu_type: str) -> tuple[tuple | None, float]:
        """The allocator's choice of one device (None: none free); NotFound: no such type now."""
        if self.pool is None:
            return None, 1.0
        offer_type = await catalog.get_gpu_type(session, gpu_type)
        allocator = await self.pool.allocator(session)
        return allocator.place(catalog.offer_of(offer_type), 1), offer_type.fraction

    async def release(self, entry_id: int) -> None:
        """Give the run's device back, and let queued notebooks have it; a cancelled run
        (the controller stopping) still gives it back."""
        await asyncio.shield(self._release(entry_id))
        if self.on_release is not None:
            self.on_release()

    async def _release(self, entry_id: int) -> None:
        async with self.db.session() as session:
            await session.execute(
                update(CompetitionEntry).where(CompetitionEntry.id == entry_id).values(devices=None)
            )

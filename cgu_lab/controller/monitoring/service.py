"""Live monitoring: what each node, user and notebook uses, kept for charts and Prometheus.

A loop samples every `monitor_interval` seconds: this machine's CPU, memory
and GPUs, and each running notebook's own figures (its server extension's
`cgu-lab/resources`). The last hour is kept in memory for the monitoring
page; `/metrics` exposes the latest sample in Prometheus' format through a
collector that reads the snapshot (no global gauges to clean up when a
notebook goes away). Savings from culling come from the stop records.

GPUs are counted two ways, per node: those detected (NVML on this machine, the
cluster's nodes) and those an admin declared by hand. A platform planned with
declared GPUs but without a driver detects none, and the page says exactly
that rather than "0 GPUs" (`GpuPool.nodes`). On a cluster every node is listed,
CPU-only and cordoned ones too, with its GPU product, whole GPUs and slices as
the cluster offers them (`Backend.cluster_nodes`).
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta

import psutil
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import CollectorRegistry
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from ... import gpu_probe
from ...backends.base import BackendError
from ...core.gpus import capacity
from ...core.lifecycle import State
from ...store.db import Database
from ...store.models import GpuType, Notebook, StopRecord, User
from ..clock import Clock
from ..environments.catalog import offer_of
from ..notebooks.reader import NotebookReader
from ..notebooks.service import NotebookService
from .schemas import (
    Allocation,
    GpuInventory,
    GpuUsage,
    HistoryPoint,
    MonitoringReport,
    NodeGpus,
    NodeLoad,
    NotebookUsage,
    UserLoad,
    UserUsage,
)

log = logging.getLogger("cgu_lab.monitoring")

HISTORY = 360  # samples kept for the charts (an hour at 10 s)
RECLAIM_CAP = timedelta(hours=24)  # a culled GPU counts as reclaimed for at most a day


@dataclass
class Snapshot:
    at: float = 0.0
    node: NodeLoad | None = None  # None until the first sample
    gpus: list[GpuUsage] = field(default_factory=list)
    notebooks: list[NotebookUsage] = field(default_factory=list)
    states: dict[str, int] = field(default_factory=dict)
    allocation: list[Allocation] = field(default_factory=list)
    stops: dict[str, int] = field(default_factory=dict)
    reclaimed_gpu_hours: float = 0.0
    energy_saved_kwh: float = 0.0
    # Per node: GPUs detected, declared, in all, and held by notebooks now.
    inventory: list[NodeGpus] = field(default_factory=list)
    # A cluster's every node, CPU-only ones too, as its backend reads it (cluster_nodes).
    cluster: list[dict] = field(default_factory=list)

    def nodes(self) -> list[dict]:
        """Every node with GPUs, of the cluster or with a sample: its load (this machine),
        its GPU counts, and under `cluster` what the cluster says of it (product, slices,
        cordoned or not ready). Open rows: which keys a row has depends on which of these
        know the node (MonitoringReport)."""
        empty = {"detected": 0, "declared": 0, "declared_and_detected": 0, "total": 0, "held": 0}
        rows = {row.node: {"node": row.node, **empty, **row.model_dump()} for row in self.inventory}
        for found in self.cluster:
            rows.setdefault(found["node"], {"node": found["node"], **empty})["cluster"] = found
        here = self.node.node if self.node is not None else None
        if self.node is not None:
            rows[here] = {**empty, **rows.get(here, {}), **self.node.model_dump()}
        for row in rows.values():
            row["gpus_live"] = sum(1 for g in self.gpus if g.node == row["node"])
        return sorted(rows.values(), key=lambda r: (r["node"] != here, r["node"]))

    def users(self) -> list[UserUsage]:
        """Each user's running notebooks added up, those holding the most GPUs, then CPU,
        first."""
        by_user: dict[str, list[NotebookUsage]] = {}
        for nb in self.notebooks:
            by_user.setdefault(nb.owner, []).append(nb)
        totals = [
            UserUsage(
                user=user,
                notebooks=len(notebooks),
                cpu_cores=sum((nb.cpu_cores for nb in notebooks), 0.0),
                memory_bytes=sum(nb.memory_bytes for nb in notebooks),
                gpus=sum(nb.gpus for nb in notebooks),
            )
            for user, notebooks in by_user.items()
        ]
        return sorted(totals, key=lambda u: (-u.gpus, -u.cpu_cores, u.user))

    def gpu_inventory(self) -> GpuInventory:
        """Every node's GPU counts added up."""
        return GpuInventory(
            detected=sum(n.detected for n in self.inventory),
            declared=sum(n.declared for n in self.inventory),
            total=sum(n.total for n in self.inventory),
            held=sum(n.held for n in self.inventory),
        )


class Monitor:
    def __init__(
        self,
        db: Database,
        notebooks: NotebookService,
        reader: NotebookReader,
        settings,
        clock: Clock,
    ) -> None:
        """`clock`: the samples' times and the pause between samples follow it."""
        self.db = db
        self.clock = clock
        self.notebooks = notebooks
        self.reader = reader
        self.settings = settings
        self.node = socket.gethostname()
        self.latest = Snapshot()
        self.history: deque[HistoryPoint] = deque(maxlen=HISTORY)
        self._settled_hours = 0.0  # reclaimed GPU-hours of stops older than a day
        self._settled_id = 0
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(_Collector(self))
        psutil.cpu_percent(None)  # the first reading only starts the measurement

    def report(self) -> MonitoringReport:
        """The latest sample with the last hour, for the monitoring page."""
        snap = self.latest
        return MonitoringReport(
            at=snap.at,
            interval=self.settings.monitor_interval,
            node=snap.node,
            nodes=snap.nodes(),
            gpu_inventory=snap.gpu_inventory(),
            gpus=snap.gpus,
            notebooks=snap.notebooks,
            users=snap.users(),
            states=snap.states,
            allocation=snap.allocation,
            stops=snap.stops,
            reclaimed_gpu_hours=snap.reclaimed_gpu_hours,
            energy_saved_kwh=snap.energy_saved_kwh,
            history=list(self.history),
        )

    async def run(self) -> None:
        while True:
            try:
                await self.sample()
            except Exception:  # the next sample tries again
                log.exception("monitoring sample failed")
            await self.clock.sleep(self.settings.monitor_interval)

    async def sample(self) -> Snapshot:
        """Take a sample: this machine, the running notebooks, and the store's counts (read
        outside the writers' turn: a sample every few seconds held it behind a class's
        starts, and them behind it, for seconds on a busy host)."""
        node = self._node_load()
        gpus = await self._gpu_usage()
        try:
            cluster = await self.notebooks.backend.cluster_nodes()
        except BackendError as error:  # the API server away: the rest is still worth showing
            log.warning("the cluster's nodes could not be read: %s", error)
            cluster = []
        async with self.db.reading() as session:
            running = (
                await session.execute(
                    select(Notebook, User.name)
                    .join(User, User.id == Notebook.owner_id)
                    .where(Notebook.state == State.RUNNING.value)
                )
            ).all()
            states = await _counts(session, Notebook.state)
            gpu_types = (await session.scalars(select(GpuType))).all()
            stops = await _counts(session, StopRecord.cause)
            reclaimed = await self._reclaimed(session)
            holdings = await self.notebooks.gpus.holdings(session)
        notebooks = await asyncio.gather(*(self._notebook(nb, owner) for nb, owner in running))
        allocation = self._allocation(running, gpu_types)
        inventory = self._inventory(holdings)
        watts = self.settings.gpu_held_idle_watts - self.settings.gpu_parked_watts
        snapshot = Snapshot(
            self.clock.now().timestamp(),
            node,
            gpus,
            list(notebooks),
            {s: int(n) for s, n in states.items()},
            allocation,
            {c: int(n) for c, n in stops.items()},
            reclaimed,
            reclaimed * max(0.0, watts) / 1000,
            inventory,
            cluster,
        )
        self.latest = snapshot
        self.history.append(_history_point(snapshot, states.get(State.RUNNING.value, 0)))
        return snapshot

    def _node_load(self) -> NodeLoad:
        """This machine's CPU (since the previous reading) and memory in use."""
        memory = psutil.virtual_memory()
        return NodeLoad(
            node=self.node,
            cpu_percent=psutil.cpu_percent(None),
            cpus=psutil.cpu_count(),
            memory_used=memory.total - memory.available,
            memory_total=memory.total,
        )

    async def _gpu_usage(self) -> list[GpuUsage]:
        """This machine's GPUs as NVML reads them, off the event loop."""
        return [
            GpuUsage(
                node=self.node,
                uuid=g.uuid,
                model=g.model,
                utilization=g.utilization,
                memory_used=g.memory_used,
                memory_total=g.memory_total,
            )
            for g in await asyncio.to_thread(gpu_probe.usage)
        ]

    def _allocation(
        self, running: Sequence[tuple[Notebook, str]], gpu_types: Sequence[GpuType]
    ) -> list[Allocation]:
        """Per GPU type: GPUs the running notebooks hold, and how many notebooks it can serve."""
        allocated: dict[str, int] = {}
        for nb, _ in running:
            if nb.gpu_type and nb.devices:
                allocated[nb.gpu_type] = allocated.get(nb.gpu_type, 0) + nb.gpus
        return [
            Allocation(
                gpu_type=gpu_type.name,
                allocated=allocated.get(gpu_type.name, 0),
                capacity=capacity(self.notebooks.gpus.devices, offer_of(gpu_type)),
            )
            for gpu_type in gpu_types
        ]

    def _inventory(self, holdings) -> list[NodeGpus]:
        """GPU counts per node, with how many of its devices notebooks hold now."""
        pool = self.notebooks.gpus
        held = {device for holding in holdings for device in holding.devices}
        return [
            NodeGpus(
                **asdict(row),
                held=sum(1 for d in pool.devices if d.node == row.node and d.id in held),
            )
            for row in pool.nodes()
        ]

    async def _notebook(self, nb: Notebook, owner: str) -> NotebookUsage:
        route = await self.notebooks.routes.lookup(owner, nb.name)
        reading = await self.reader.get(route, "cgu-lab/resources") if route else None
        cpu = (reading or {}).get("cpu", {})
        memory = (reading or {}).get("memory", {})
        devices = (reading or {}).get("gpus", {}).get("devices", [])
        return NotebookUsage(
            owner=owner,
            notebook=nb.name,
            cpu_cores=cpu.get("used_cores") or 0.0,
            cpu_limit=nb.cpu_milli / 1000,
            memory_bytes=memory.get("used_bytes") or 0,
            memory_limit=nb.memory,
            gpu_type=nb.gpu_type,
            gpus=nb.gpus if nb.devices else 0,
            gpu_utilization=_mean([d.get("utilization") for d in devices]),
            gpu_memory_bytes=sum(d.get("memory_used") or 0 for d in devices),
            persistent=nb.persistent,
            readable=reading is not None,
        )

    async def _reclaimed(self, session) -> float:
        """GPU-hours not held by idle notebooks thanks to the culler and reclaim.

        Each such stop counts the GPUs it freed (a shared GPU as its share)
        for the time until the notebook started again, at most a day. A stop
        older than a day can no longer change, so its share is added once to
        a running total and never read again: each sample reads a day's stops.
        """
        now = self.clock.now()
        settled = now - RECLAIM_CAP
        relevant = (StopRecord.cause.in_(["idle", "lifetime", "reclaim"]), StopRecord.gpus > 0)
        newly_settled = (
            await session.scalars(
                select(StopRecord).where(
                    *relevant, StopRecord.stopped_at < settled, StopRecord.id > self._settled_id
                )
            )
        ).all()
        for row in newly_settled:
            self._settled_hours += _gpu_hours(row, now)
            self._settled_id = max(self._settled_id, row.id)
        recent = (
            await session.scalars(
                select(StopRecord).where(*relevant, StopRecord.stopped_at >= settled)
            )
        ).all()
        return self._settled_hours + sum(_gpu_hours(row, now) for row in recent)


async def _counts(session: AsyncSession, column: InstrumentedAttribute) -> dict:
    """Rows per value of `column`, as the database counts them (a mapping by value)."""
    return dict((await session.execute(select(column, func.count()).group_by(column))).all())


def _history_point(snapshot: Snapshot, running: int) -> HistoryPoint:
    """The few figures of a sample that the monitoring page charts over the last hour."""
    return HistoryPoint(
        at=snapshot.at,
        cpu_percent=snapshot.node.cpu_percent,
        memory_used=snapshot.node.memory_used,
        gpu_utilization=_mean([g.utilization for g in snapshot.gpus]),
        notebooks=running,
        users={
            u.user: UserLoad(cpu_cores=u.cpu_cores, memory_bytes=u.memory_bytes)
            for u in snapshot.users()
        },
    )


def _gpu_hours(row: StopRecord, now: datetime) -> float:
    span = min((row.restarted_at or now) - row.stopped_at, RECLAIM_CAP)
    return row.gpus * max(0.0, span.total_seconds()) / 3600


def _mean(values) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


class _Collector:
    """Prometheus families built from the monitor's latest snapshot at scrape time."""

    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor

    def describe(self):
        return []

    def collect(self):
        snap = self.monitor.latest
        yield from self._node_families(snap)
        yield from self._gpu_families(snap)
        yield from self._notebook_families(snap)
        yield from self._user_families(snap)
        yield from self._allocation_families(snap)
        yield from self._saving_families(snap)

    def _node_families(self, snap: Snapshot) -> Iterator[Metric]:
        """This machine's CPU and memory; empty until the first sample."""
        node = snap.node.node if snap.node is not None else self.monitor.node
        cpu = GaugeMetricFamily(
            "cgu_lab_node_cpu_percent", "CPU use of the node, percent", labels=["node"]
        )
        memory = GaugeMetricFamily(
            "cgu_lab_node_memory_used_bytes", "Memory in use on the node", labels=["node"]
        )
        memory_total = GaugeMetricFamily(
            "cgu_lab_node_memory_total_bytes", "Memory of the node", labels=["node"]
        )
        if snap.node is not None:
            cpu.add_metric([node], snap.node.cpu_percent)
            memory.add_metric([node], snap.node.memory_used)
            memory_total.add_metric([node], snap.node.memory_total)
        yield from (cpu, memory, memory_total)

    @staticmethod
    def _gpu_families(snap: Snapshot) -> Iterator[Metric]:
        """Each GPU's use, then each node's GPUs detected and declared."""
        gpu_util = GaugeMetricFamily(
            "cgu_lab_gpu_utilization_percent", "GPU utilisation", labels=["node", "gpu", "model"]
        )
        gpu_mem = GaugeMetricFamily(
            "cgu_lab_gpu_memory_used_bytes", "GPU memory in use", labels=["node", "gpu"]
        )
        gpu_total = GaugeMetricFamily(
            "cgu_lab_gpu_memory_total_bytes", "GPU memory", labels=["node", "gpu"]
        )
        for gpu in snap.gpus:
            if gpu.utilization is not None:
                gpu_util.add_metric([gpu.node, gpu.uuid, gpu.model], gpu.utilization)
            gpu_mem.add_metric([gpu.node, gpu.uuid], gpu.memory_used)
            gpu_total.add_metric([gpu.node, gpu.uuid], gpu.memory_total)
        yield from (gpu_util, gpu_mem, gpu_total)
        node_gpus = GaugeMetricFamily(
            "cgu_lab_node_gpus",
            "GPUs of a node: detected by the driver, or declared by an admin",
            labels=["node", "source"],
        )
        for row in snap.inventory:
            node_gpus.add_metric([row.node, "detected"], row.detected)
            node_gpus.add_metric([row.node, "declared"], row.declared)
        yield node_gpus

    @staticmethod
    def _notebook_families(snap: Snapshot) -> Iterator[Metric]:
        """What each running notebook uses, beside what it may use."""
        labels = ["owner", "notebook"]
        nb_cpu = GaugeMetricFamily(
            "cgu_lab_notebook_cpu_cores", "CPU cores a notebook uses", labels=labels
        )
        nb_cpu_limit = GaugeMetricFamily(
            "cgu_lab_notebook_cpu_limit_cores", "CPU cores a notebook may use", labels=labels
        )
        nb_mem = GaugeMetricFamily(
            "cgu_lab_notebook_memory_bytes", "Memory a notebook uses", labels=labels
        )
        nb_mem_limit = GaugeMetricFamily(
            "cgu_lab_notebook_memory_limit_bytes", "Memory a notebook may use", labels=labels
        )
        nb_gpu = GaugeMetricFamily(
            "cgu_lab_notebook_gpu_utilization_percent", "GPU use of a notebook", labels=labels
        )
        nb_gpu_mem = GaugeMetricFamily(
            "cgu_lab_notebook_gpu_memory_bytes", "GPU memory of a notebook", labels=labels
        )
        for nb in snap.notebooks:
            key = [nb.owner, nb.notebook]
            nb_cpu.add_metric(key, nb.cpu_cores)
            nb_cpu_limit.add_metric(key, nb.cpu_limit)
            nb_mem.add_metric(key, nb.memory_bytes)
            nb_mem_limit.add_metric(key, nb.memory_limit)
            nb_gpu_mem.add_metric(key, nb.gpu_memory_bytes)
            if nb.gpu_utilization is not None:
                nb_gpu.add_metric(key, nb.gpu_utilization)
        yield from (nb_cpu, nb_cpu_limit, nb_mem, nb_mem_limit, nb_gpu, nb_gpu_mem)

    @staticmethod
    def _user_families(snap: Snapshot) -> Iterator[Metric]:
        """Each user's running notebooks together."""
        user_cpu = GaugeMetricFamily(
            "cgu_lab_user_cpu_cores", "CPU cores a user's notebooks use", labels=["user"]
        )
        user_mem = GaugeMetricFamily(
            "cgu_lab_user_memory_bytes", "Memory a user's notebooks use", labels=["user"]
        )
        user_gpus = GaugeMetricFamily(
            "cgu_lab_user_gpus", "GPUs a user's notebooks hold", labels=["user"]
        )
        for user in snap.users():
            user_cpu.add_metric([user.user], user.cpu_cores)
            user_mem.add_metric([user.user], user.memory_bytes)
            user_gpus.add_metric([user.user], user.gpus)
        yield from (user_cpu, user_mem, user_gpus)

    @staticmethod
    def _allocation_families(snap: Snapshot) -> Iterator[Metric]:
        """Notebooks by state (every state, zero included) and GPUs held per GPU type."""
        states = GaugeMetricFamily("cgu_lab_notebooks", "Notebooks by state", labels=["state"])
        for state in State:
            states.add_metric([state.value], snap.states.get(state.value, 0))
        yield states
        allocated = GaugeMetricFamily(
            "cgu_lab_gpus_allocated", "GPUs held, by GPU type", labels=["gpu_type"]
        )
        capacity = GaugeMetricFamily(
            "cgu_lab_gpu_type_capacity", "Notebooks a GPU type can serve", labels=["gpu_type"]
        )
        for row in snap.allocation:
            allocated.add_metric([row.gpu_type], row.allocated)
            capacity.add_metric([row.gpu_type], row.capacity)
        yield from (allocated, capacity)

    @staticmethod
    def _saving_families(snap: Snapshot) -> Iterator[Metric]:
        """Stops by cause, and what culling and reclaim saved."""
        stops = CounterMetricFamily(
            "cgu_lab_notebook_stops",
            "Notebook stops by cause (user, admin, idle, lifetime, reclaim)",
            labels=["cause"],
        )
        for cause, count in sorted(snap.stops.items()):
            stops.add_metric([cause], count)
        yield stops
        yield CounterMetricFamily(
            "cgu_lab_reclaimed_gpu_hours",
            "GPU-hours freed from idle notebooks by culling and reclaim",
            value=snap.reclaimed_gpu_hours,
        )
        yield CounterMetricFamily(
            "cgu_lab_energy_saved_kwh",
            "Estimated energy saved by culling and reclaim (kWh)",
            value=snap.energy_saved_kwh,
        )

"""What the monitor samples and what the monitoring page reads.

Each sample is a few of these (this machine's load, its GPUs, each running notebook's
use); the page's answer (`MonitoringReport`) gathers the latest sample with the last
hour's `HistoryPoint`s. Two parts stay open mappings on purpose: a node's row
(`MonitoringReport.nodes`) merges what different sources know of a node, and a
cluster's node is what its backend reads (`Backend.cluster_nodes`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_serializer
from typing_extensions import TypedDict


class _Figures(BaseModel):
    # Made once per sample and shared by every answer until the next: never changed.
    model_config = ConfigDict(frozen=True)


class NodeLoad(_Figures):
    """This machine's CPU (percent since the previous sample) and memory."""

    node: str
    cpu_percent: float
    cpus: int | None  # None where psutil cannot count them
    memory_used: int
    memory_total: int


class GpuUsage(_Figures):
    """One GPU of this machine as NVML reads it."""

    node: str
    uuid: str
    model: str
    utilization: float | None  # percent; None where NVML cannot tell (MIG instances)
    memory_used: int
    memory_total: int


class NodeGpus(_Figures):
    """A node's GPUs: detected, declared by an admin, both, in all, and held by notebooks."""

    node: str
    detected: int
    declared: int
    declared_and_detected: int
    total: int
    held: int


class NotebookUsage(_Figures):
    """What one running notebook uses (its server's own figures) beside what it may use;
    `readable` is False where its server did not answer (its use then reads 0)."""

    owner: str
    notebook: str
    cpu_cores: float
    cpu_limit: float
    memory_bytes: int
    memory_limit: int
    gpu_type: str | None
    gpus: int
    gpu_utilization: float | None
    gpu_memory_bytes: int
    persistent: bool
    readable: bool


class UserUsage(_Figures):
    """A user's running notebooks together."""

    user: str
    notebooks: int
    cpu_cores: float
    memory_bytes: int
    gpus: int


class Allocation(_Figures):
    """A GPU type: the GPUs running notebooks hold, and how many notebooks it can serve."""

    gpu_type: str
    allocated: int
    capacity: int


class UserLoad(TypedDict):
    """A user's CPU and memory in one point of the history.

    A typed dict rather than a model: an hour's history holds one per user per sample
    (72,000 for 200 users), and the page's answer serializes dicts in a third of the
    time it takes for as many models."""

    cpu_cores: float
    memory_bytes: int


class HistoryPoint(_Figures):
    """The few figures of a sample that the page charts over the last hour."""

    at: float
    cpu_percent: float
    memory_used: int
    gpu_utilization: float | None
    notebooks: int
    users: dict[str, UserLoad]  # by user name


class GpuInventory(_Figures):
    """Every node's GPU counts added up."""

    detected: int
    declared: int
    total: int
    held: int


class MonitoringReport(_Figures):
    """The monitoring page's answer: the latest sample and the last hour.

    `node` is None until the first sample and is sent as an empty object then, as the
    page has always read it. `nodes` rows are open mappings: each merges the node's GPU
    counts (`NodeGpus`), under `cluster` what the cluster says of it where it is one of a
    cluster's, and this machine's load (`NodeLoad`) where it is this machine, with
    `gpus_live` (its GPUs NVML reads). `states` and `stops` count notebooks by state and
    stops by cause.
    """

    at: float
    interval: float
    node: NodeLoad | None
    nodes: list[dict[str, Any]]
    gpu_inventory: GpuInventory
    gpus: list[GpuUsage]
    notebooks: list[NotebookUsage]
    users: list[UserUsage]
    states: dict[str, int]
    allocation: list[Allocation]
    stops: dict[str, int]
    reclaimed_gpu_hours: float
    energy_saved_kwh: float
    history: list[HistoryPoint]

    @field_serializer("node")
    def _node(self, node: NodeLoad | None) -> dict[str, Any]:
        return node.model_dump() if node is not None else {}

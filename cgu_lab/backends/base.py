"""The interface between the controller and the place notebooks run."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.culling import KernelCulling
from ..core.errors import NotSupported
from ..core.gpu_fleet import Product
from ..core.gpus import Device
from ..core.quota import Limits

if TYPE_CHECKING:
    from ..store.db import Database

# The classes every notebook server runs with, whichever backend starts it: they make
# the identity the controller's proxy (or the ingress) vouches for, and the shares it
# grants, binding in the server. Set on the command line, which a config file in the
# owner's home cannot override.
IDENTITY_PROVIDER = "cgu_lab.notebook.identity.ProxyIdentityProvider"
AUTHORIZER = "cgu_lab.notebook.authorizer.ShareAuthorizer"
CONTENTS_MANAGER = "cgu_lab.notebook.contents.ShareAwareContentsManager"


def kernel_culling_args(culling: KernelCulling | None) -> list[str]:
    """The server's own kernel culler, as the idle policy sets it (core.culling), on its
    command line with the classes above: both backends launch servers with these."""
    if culling is None:
        return []
    return [
        f"--MappingKernelManager.cull_idle_timeout={culling.idle_seconds}",
        f"--MappingKernelManager.cull_interval={culling.interval_seconds}",
        f"--MappingKernelManager.cull_connected={culling.connected}",
        "--MappingKernelManager.cull_busy=False",
    ]


@dataclass(frozen=True)
class EnvironmentSpec:
    name: str
    image: str = ""
    local_prefix: str = ""
    # The apps its notebooks offer, as JSON for $CGU_APPS ("": the built-ins).
    apps: str = ""
    # The CPU architecture its image runs on (amd64, arm64; "": any), which the
    # Kubernetes backend turns into node affinity on `kubernetes.io/arch`.
    arch: str = ""


@dataclass(frozen=True)
class QuotaSpec:
    """A user's or group's platform limits, for backends that mirror them (ResourceQuota).

    Limits count GPUs per GPU type; `gpu_resources` names each type's
    Kubernetes resource ("premium" -> "nvidia.com/gpu"), so that types sharing
    a resource add up in the mirror.
    """

    limits: Limits
    gpu_resources: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NotebookSpec:
    """Everything a backend needs to run one notebook server."""

    id: int
    owner: str
    name: str
    base_path: str  # "/notebook/<owner>/<name>/", the server's base_url
    environment: EnvironmentSpec
    cpu_milli: int
    memory: int
    gpu_type: str | None
    gpus: int
    proxy_secret: str  # the notebook server accepts identity only with this secret
    controller_url: str
    # Where browsers reach the controller's pages (the lab's "Control Panel" link).
    public_url: str = ""
    # Device placement made by the controller (local backend): GPU UUIDs or
    # indices, plus type-specific settings such as MPS limits.
    devices: tuple[str, ...] = ()
    device_env: Mapping[str, str] = field(default_factory=dict)
    api_token: str = ""
    # Kubernetes backend (the local one ignores these): "jupyter" (a JupyterLab
    # pod) or "vm" (a KubeVirt VM, started with `start_vm`); the GPU type's
    # resource name and node labels; the owner's quota, mirrored at each start.
    kind: str = "jupyter"
    gpu_resource: str = "nvidia.com/gpu"
    node_selector: Mapping[str, str] = field(default_factory=dict)
    # Node label -> the values one of which the node must carry (required node affinity):
    # the GPU products a type's models match, read from the fleet.
    node_affinity: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Labels on the notebook (Kubeflow copies them onto its pod): the selector labels of
    # the PodDefaults its owner chose, as Kubeflow's web app sets them.
    pod_labels: Mapping[str, str] = field(default_factory=dict)
    quota: QuotaSpec | None = None
    # Course storages the owner's notebook mounts at ~/courses/<course>/shared: (course,
    # writable) pairs; their personal storage (~/storage) is always mounted.
    courses: tuple[tuple[str, bool], ...] = ()
    # The server shuts its idle kernels down itself (kernel_culling_args); None: never.
    kernel_culling: KernelCulling | None = None


@dataclass(frozen=True)
class TrainingSpec:
    """A multi-node training job (a Kubeflow PyTorchJob on Kubernetes; on the local
    backend `torchrun` with one process per replica, see local_training).

    Resources are per replica: one master plus `workers` workers. The local
    backend runs in the environment whose prefix is `local_prefix` (the job's
    `image` names that environment there) on the GPUs the controller placed.
    """

    owner: str
    name: str
    image: str
    command: tuple[str, ...]
    workers: int = 0
    cpu_milli: int = 1000
    memory: int = 2 * 2**30
    gpus: int = 0
    gpu_resource: str = "nvidia.com/gpu"
    node_selector: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    group: str | None = None  # run in the group's namespace, against its quota
    clean_pod_policy: str = "Running"  # Kubeflow's runPolicy: None, Running or All
    local_prefix: str = ""
    devices: tuple[str, ...] = ()  # GPU UUIDs for CUDA_VISIBLE_DEVICES (local)
    device_env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainingStatus:
    """Where a training job stands: Created, Running, Restarting, Succeeded or Failed."""

    phase: str
    message: str = ""
    # replica type -> {"active": n, "succeeded": n, "failed": n}
    replicas: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # GPUs the job holds while it runs (local backend: the controller counts them as taken).
    devices: tuple[str, ...] = ()
    # Where a job queued by the cluster (Kueue) stands: its queue, and while it waits its
    # place in line (1 = next); "" and None where the backend does not queue jobs.
    queue: str = ""
    queue_position: int | None = None


@dataclass(frozen=True)
class TrainingBudget:
    """The GPUs one course's training jobs may hold (its group quota), for backends that
    queue jobs in the cluster (Kubernetes with Kueue).

    `gpus` maps (GPU resource name, product or "" for any product) to a count of
    that resource; cpu_milli and memory are None where the platform sets no limit.
    """

    course: str
    gpus: Mapping[tuple[str, str], int] = field(default_factory=dict)
    cpu_milli: int | None = None
    memory: int | None = None


@dataclass(frozen=True)
class Observation:
    """What a backend sees of a notebook it was asked about."""

    alive: bool
    ready: bool = False
    detail: str = ""
    # What the owner of a notebook that keeps running should know of where it runs (its
    # node cordoned: nothing new lands there, and its next start goes elsewhere); the
    # liveness watch shows it as the notebook's message while it lasts.
    notice: str = ""


ProgressCallback = Callable[[int, str], Awaitable[None]]


class BackendError(Exception):
    """A backend could not do what was asked; the message is shown to the user."""


class Backend(abc.ABC):
    """One implementation per place notebooks run; the controller holds exactly one."""

    name: str = "abstract"

    def share_database(self, db: Database) -> None:  # noqa: B027 - optional hook
        """The platform's database, for a backend that keeps records of its own there (the
        local backend's map of system accounts): one engine, so on SQLite its transactions
        take their turn with the platform's instead of contending for the write lock."""

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Prepare long-lived resources (clients, directories)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what `open` took; running notebooks keep running."""

    @abc.abstractmethod
    async def start(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        """Start the server and return once it answers; the result is its backend_state.

        Raises BackendError with a readable message when it cannot start; in
        that case nothing of the attempt is left running.
        """

    @abc.abstractmethod
    async def stop(self, spec: NotebookSpec, state: Mapping[str, Any]) -> None:
        """Stop the server and everything it started (kernels, terminals)."""

    @abc.abstractmethod
    async def observe(self, spec: NotebookSpec, state: Mapping[str, Any]) -> Observation:
        """Whether a notebook recorded as running is still there and answering."""

    @abc.abstractmethod
    def endpoint(self, state: Mapping[str, Any]) -> str:
        """The base URL (scheme://host:port) the proxy forwards this notebook's requests to."""

    @abc.abstractmethod
    async def sweep(self, keep: set[int]) -> list[int]:
        """Stop servers of this installation that are not in `keep`; return their ids.

        Called once at controller start so that a crash never leaves orphans.
        """

    @abc.abstractmethod
    async def remove_storage(self, owner: str, name: str) -> None:
        """Delete (or move aside) the files of a deleted notebook."""

    async def inventory(self) -> list[Device]:
        """The GPU devices notebooks can be given; none by default."""
        return []

    def follow_inventory(self, changed: Callable[[list[Device]], None]) -> None:
        """Have `changed` called with the devices whenever they change while the backend
        runs (a cluster's nodes joining, draining or leaving). A machine's GPUs change
        only with a restart, so by default it is never called."""
        return None

    async def fleet(self) -> list[Product]:
        """The cluster's GPU products, counts and slices read from its nodes (core.gpu_fleet),
        for the GPUs page's "make a GPU type of this"; only a cluster has nodes to read."""
        raise self.unsupported("GPU products read from the cluster's nodes")

    async def cluster_nodes(self) -> list[dict[str, Any]]:
        """Every node of a cluster, with or without GPUs, for the monitoring page: name,
        schedulable, ready, arch, cpu_cores, memory_bytes, product ("" without GPUs),
        gpus, whole, replicas, slices, mig. None here: a machine's own figures are the
        monitor's sample of it."""
        return []

    async def pod_defaults(self, owner: str) -> list[dict[str, Any]]:
        """Kubeflow's PodDefaults ("configurations") in the owner's namespace, each
        {name, desc, labels}: what the notebook form offers in Kubeflow mode."""
        raise self.unsupported("Kubeflow PodDefaults (configurations)")

    def describe(self) -> dict[str, Any]:
        """Facts for the admin page: how limits are enforced, what is supported."""
        return {"name": self.name}

    def notebook_path(self, owner: str, name: str) -> str | None:
        """The path a notebook's server answers at where it is not the controller's
        `/notebook/<owner>/<name>/` (Kubeflow's `/notebook/<namespace>/<name>/`), else None.
        The server's pages link under its own path, so the proxy routes both to the
        notebook and forwards under the server's."""
        return None

    @property
    def ingress_header(self) -> str:
        """The request header, lower-case, in which notebook servers trust an ingress to
        name the user (Kubeflow's `kubeflow-userid`); "" where they trust only the proxy's
        secret. The controller's proxy removes every copy a client sends and sets it from
        the identity it authenticated itself, so it must know the name the servers read:
        a typed property here, because each backend keeps its settings its own way."""
        return ""

    # -- files in homes (templates, submissions, lab files for a class) -------

    async def pack(
        self,
        owner: str,
        area: str,
        paths: list[str],
        excluded: list[str],
        max_bytes: int,
        max_files: int,
        into: Path,
        base: str = "",
        image: str = "",
    ) -> dict[str, Any]:
        """Archive files of a home as its owner; `area` is a notebook name or "courses".
        `image` is the notebook's, for backends that copy in a container (Kubernetes).

        Returns the manifest: every file with its SHA-256, the total size, a
        hash of the whole selection, and what was left out and why.
        """
        raise self._no_file_copies()

    async def unpack(
        self,
        owner: str,
        area: str,
        source: Path,
        destination: str,
        label: str,
        on_progress: Callable[[int], Awaitable[None]] | None = None,
        image: str = "",
    ) -> dict[str, Any]:
        """Copy an archive below `destination` of a home as its owner, never overwriting:
        returns how many files were copied, skipped (identical) and kept with a suffix."""
        raise self._no_file_copies()

    async def store_once(self, source: Path) -> Any | None:
        """Keep an archive's files once for many members' copies of it (a class's lab
        files), where this backend can share one copy among them: what `unpack_stored`
        takes, to be given back to `drop_stored`. None: every member gets a copy (unpack)."""
        return None

    async def unpack_stored(
        self, owner: str, area: str, stored: Any, destination: str, label: str
    ) -> dict[str, Any]:
        """`unpack` of what `store_once` kept, sharing its files (same report)."""
        raise self._no_file_copies()

    async def drop_stored(self, stored: Any) -> None:  # noqa: B027 (nothing kept by default)
        """Give back what `store_once` kept; the members' copies stay."""

    def _no_file_copies(self) -> NotSupported:
        return NotSupported(
            "copying files of notebooks (templates, submissions, lab files) is not available "
            f"on the {self.name} backend yet"
        )

    # -- features only some backends offer -----------------------------------
    # Each default refuses with a sentence naming this backend, so that a
    # feature missing here is never silently nothing.

    def unsupported(self, feature: str) -> NotSupported:
        return NotSupported(
            f"{feature} need the kubernetes backend; this platform runs the {self.name} backend"
        )

    async def start_vm(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        """Start a VM notebook (spec.kind "vm"); `stop`, `observe` and `endpoint` then serve it."""
        raise self.unsupported("VM notebooks")

    async def pending_reason(self, spec: NotebookSpec, state: Mapping[str, Any]) -> str:
        """Why a notebook is not running yet ("Waiting for a node: ..."); "" when it is."""
        raise self.unsupported("Scheduling reasons")

    async def sync_quota(self, owner: str, quota: QuotaSpec, group: bool = False) -> None:
        """Mirror a user's (or, with group=True, a group's) platform quota into the cluster."""
        raise self.unsupported("Cluster quotas")

    async def images(self, owner: str) -> list[str]:
        """Every image the owner's notebooks use, for the custom-image choice."""
        raise self.unsupported("Image lists")

    async def last_activity(self, spec: NotebookSpec, state: Mapping[str, Any]) -> datetime | None:
        """The notebook's recorded last activity (Kubeflow's annotation), if any."""
        raise self.unsupported("Activity annotations")

    async def record_activity(
        self, spec: NotebookSpec, state: Mapping[str, Any], when: datetime
    ) -> None:
        """Record the notebook's last activity where other tools (Kubeflow's culler) read it."""
        raise self.unsupported("Activity annotations")

    async def submit_training(self, job: TrainingSpec) -> dict[str, Any]:
        """Submit a multi-node training job; return where it runs."""
        raise self.unsupported("Training jobs")

    async def training_status(
        self, owner: str, name: str, group: str | None = None
    ) -> TrainingStatus:
        raise self.unsupported("Training jobs")

    async def training_logs(
        self,
        owner: str,
        name: str,
        group: str | None = None,
        replica: str = "master",
        index: int = 0,
        tail_lines: int = 200,
    ) -> str:
        """The last lines one replica of a training job printed."""
        raise self.unsupported("Training jobs")

    async def delete_training(self, owner: str, name: str, group: str | None = None) -> None:
        """Delete a training job and its pods; a job already gone is not an error."""
        raise self.unsupported("Training jobs")

    async def sync_training_budgets(self, budgets: Sequence[TrainingBudget]) -> None:
        """Make the cluster's queues hold these courses' budgets (every course with one):
        jobs then wait in the cluster, not in the controller."""
        raise self.unsupported("Training queues")

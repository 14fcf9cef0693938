"""Training jobs queued by Kueue: its objects, built by pure functions, and where a job waits.

Kueue (kueue.x-k8s.io) admits a suspended job when its ClusterQueue has quota
for all of it, so a job over its course's budget waits in the cluster, with
Kueue's reason, instead of in the controller; multi-node jobs are admitted
whole or not at all. The platform maps its own words onto Kueue's:

- a ResourceFlavor per GPU product (the node label nvidia.com/gpu.product that
  NVIDIA's GPU Feature Discovery writes), whose nodeLabels Kueue adds to the
  admitted pods, and one flavor without labels for CPU and memory;
- a ClusterQueue per course with a GPU budget (the group's quota, kept by
  controller/quotas), its budget as nominal quota; and one more, the pool, for
  personal jobs, holding the GPUs of the fleet that no course's budget claims.
  All are in one cohort: a queue borrows what the others leave idle, and a
  course reclaims its budget from borrowers by preemption (reclaimWithinCohort);
- a LocalQueue in each namespace that runs jobs, pointing at its course's
  ClusterQueue (a group's namespace) or the pool (a user's).

Every ClusterQueue lists every (flavor, resource) pair of the cohort, with 0
where it has no budget of its own: a queue may borrow only what it lists.
The objects' names carry the installation, since ClusterQueues and flavors
are cluster-wide and one cluster may serve several installations.

A job's place is computed from the Workloads as Kueue orders them (priority,
then the time it entered the queue: its creation or its last eviction): Kueue's
own answer, its visibility API, is an aggregated API server that a cluster
may not expose, while Workloads are ordinary objects the controller may list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import kube_names as names
from . import kube_parts as parts
from .base import TrainingBudget as Budget
from .kube_api import KubeError
from .kube_connection import Connection
from .kube_settings import KubeSettings

Obj = dict[str, Any]

API_VERSION = "kueue.x-k8s.io/v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
LOCAL_QUEUE = "cgu-lab-training"  # the one LocalQueue of a namespace that runs jobs
PRODUCT_LABEL = "nvidia.com/gpu.product"
GPU_PREFIX = "nvidia.com/"
# Kueue needs a number where the platform has none (no CPU or memory limit): more than
# any school's cluster holds, so that only the GPUs, which a budget names, ever wait.
UNLIMITED_CPU = "100000"
UNLIMITED_MEMORY = "1000Ti"
POOL = ""  # the pool's name in a Budget: personal jobs, and the GPUs no course claims


def prefix(settings: KubeSettings) -> str:
    """The start of this installation's cluster-wide Kueue names."""
    return f"cgu-lab-{names.slug(settings.installation, 20)}"


def flavor_name(product: str, settings: KubeSettings) -> str:
    """A product's flavor ("" is any product; "cpu" the flavor of CPU and memory)."""
    return f"{prefix(settings)}-{names.slug((product or 'any-gpu').lower(), 40)}"


def cpu_flavor_name(settings: KubeSettings) -> str:
    return f"{prefix(settings)}-cpu"


def cluster_queue_name(course: str | None, settings: KubeSettings) -> str:
    """A course's ClusterQueue; the pool's for POOL or None (a personal job)."""
    if not course:
        return f"{prefix(settings)}-pool"
    return f"{prefix(settings)}-course-{names.slug(course, 40)}"


def cohort_name(settings: KubeSettings) -> str:
    return f"{prefix(settings)}-training"


def resource_flavor(product: str, settings: KubeSettings) -> Obj:
    """Kueue puts nodeLabels into an admitted pod's nodeSelector: the product's nodes."""
    spec: Obj = {"nodeLabels": {PRODUCT_LABEL: product}} if product else {}
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": parts.object_meta(
            flavor_name(product, settings),
            None,
            parts.platform_labels(settings, "training"),
            annotations={"cgu-lab.io/gpu-product": product or "any"},
        ),
        "spec": spec,
    }


def cpu_flavor(settings: KubeSettings) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": parts.object_meta(
            cpu_flavor_name(settings), None, parts.platform_labels(settings, "training")
        ),
        "spec": {},
    }


def fleet_gpus(nodes: Iterable[Obj]) -> dict[tuple[str, str], int]:
    """Allocatable GPU resources of the schedulable nodes, per (resource, product)."""
    found: dict[tuple[str, str], int] = {}
    for node in nodes:
        if node.get("spec", {}).get("unschedulable"):
            continue
        product = (node.get("metadata", {}).get("labels") or {}).get(PRODUCT_LABEL, "")
        for resource, amount in (node.get("status", {}).get("allocatable") or {}).items():
            if not resource.startswith(GPU_PREFIX):
                continue
            try:
                count = int(str(amount))
            except ValueError:
                continue
            if count > 0:
                key = (resource, product)
                found[key] = found.get(key, 0) + count
    return found


def pool_budget(courses: Sequence[Budget], fleet: Mapping[tuple[str, str], int]) -> Budget:
    """What the fleet holds beyond the courses' budgets (never below 0)."""
    claimed: dict[tuple[str, str], int] = {}
    for budget in courses:
        for key, count in budget.gpus.items():
            claimed[key] = claimed.get(key, 0) + count
    left = {key: max(0, count - claimed.get(key, 0)) for key, count in fleet.items()}
    return Budget(POOL, {key: count for key, count in left.items() if count})


def _sorted_unique(values: Iterable[str]) -> list[str]:
    return sorted(set(values))


def cluster_queue(
    budget: Budget,
    resources: Sequence[str],
    products: Sequence[str],
    settings: KubeSettings,
    namespace_selector: Obj,
) -> Obj:
    """One queue of the cohort: `resources` x `products` are every GPU pair any queue
    of the cohort holds (0 where this one holds none, so that it may borrow them)."""
    cpu = parts.cpu_quantity(budget.cpu_milli) if budget.cpu_milli is not None else UNLIMITED_CPU
    memory = parts.memory_quantity(budget.memory) if budget.memory is not None else UNLIMITED_MEMORY
    groups: list[Obj] = [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": cpu_flavor_name(settings),
                    "resources": [
                        {"name": "cpu", "nominalQuota": cpu},
                        {"name": "memory", "nominalQuota": memory},
                    ],
                }
            ],
        }
    ]
    if resources and products:
        groups.append(
            {
                "coveredResources": list(resources),
                "flavors": [
                    {
                        "name": flavor_name(product, settings),
                        "resources": [
                            {
                                "name": resource,
                                "nominalQuota": str(budget.gpus.get((resource, product), 0)),
                            }
                            for resource in resources
                        ],
                    }
                    for product in products
                ],
            }
        )
    labels = parts.platform_labels(settings, "training")
    annotations = {"cgu-lab.io/course": budget.course} if budget.course else {}
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterQueue",
        "metadata": parts.object_meta(
            cluster_queue_name(budget.course, settings), None, labels, annotations=annotations
        ),
        "spec": {
            "cohortName": cohort_name(settings),
            "namespaceSelector": namespace_selector,
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": groups,
            # A course takes back its own budget from jobs that borrowed it; nobody
            # preempts for anything else.
            "preemption": {
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "Never"},
                "withinClusterQueue": "Never",
            },
        },
    }


def course_selector(course: str, settings: KubeSettings) -> Obj:
    """The course's namespace only (its LocalQueue is the one that may use its budget)."""
    labels = parts.platform_labels(settings)
    labels[names.GROUP] = names.slug(course, 63)
    return {"matchLabels": labels}


def pool_selector(settings: KubeSettings) -> Obj:
    """Users' namespaces of this installation."""
    return {
        "matchLabels": parts.platform_labels(settings),
        "matchExpressions": [{"key": names.USER, "operator": "Exists"}],
    }


def cluster_queues(
    courses: Sequence[Budget], fleet: Mapping[tuple[str, str], int], settings: KubeSettings
) -> list[Obj]:
    """The flavors, then the ClusterQueues (the pool's first), for these budgets and fleet."""
    pool = pool_budget(courses, fleet)
    everything = [pool, *courses]
    pairs = {key for budget in everything for key in budget.gpus} | set(fleet)
    resources = _sorted_unique(resource for resource, _ in pairs)
    products = _sorted_unique(product for _, product in pairs)
    built = [cpu_flavor(settings), *(resource_flavor(p, settings) for p in products)]
    built.append(cluster_queue(pool, resources, products, settings, pool_selector(settings)))
    for budget in courses:
        built.append(
            cluster_queue(
                budget, resources, products, settings, course_selector(budget.course, settings)
            )
        )
    return built


def local_queue(namespace: str, course: str | None, settings: KubeSettings) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "LocalQueue",
        "metadata": parts.object_meta(
            LOCAL_QUEUE, namespace, parts.platform_labels(settings, "training")
        ),
        "spec": {"clusterQueue": cluster_queue_name(course or POOL, settings)},
    }


def queued(job: Obj) -> Obj:
    """A PyTorchJob handed to Kueue: labelled with its LocalQueue and created suspended
    (Kueue unsuspends it once admitted; its webhook would suspend it too, where one runs)."""
    job["metadata"].setdefault("labels", {})[QUEUE_LABEL] = LOCAL_QUEUE
    job["spec"]["runPolicy"]["suspend"] = True
    return job


# -- where a job waits -------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """A job's standing with Kueue: admitted, or its place in line and Kueue's reason."""

    admitted: bool
    cluster_queue: str
    position: int | None = None  # 1 = next; None when admitted or not known
    waiting: int = 0  # how many wait in that ClusterQueue
    reason: str = ""


def _condition(workload: Obj, kind: str) -> Obj | None:
    for condition in (workload.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return None


def _true(workload: Obj, kind: str) -> bool:
    return (_condition(workload, kind) or {}).get("status") == "True"


def pending(workload: Obj) -> bool:
    """Waiting for quota: neither holding it, nor finished."""
    return not _true(workload, "QuotaReserved") and not _true(workload, "Finished")


def queue_order(workload: Obj) -> tuple[int, str, str]:
    """Kueue's order: higher priority first, then earlier entry into the queue (its last
    eviction when it was evicted, else its creation)."""
    evicted = _condition(workload, "Evicted") or {}
    entered = (
        evicted.get("lastTransitionTime")
        if evicted.get("status") == "True"
        else workload.get("metadata", {}).get("creationTimestamp", "")
    )
    priority = int((workload.get("spec") or {}).get("priority") or 0)
    return (-priority, entered or "", workload.get("metadata", {}).get("name", ""))


def owned_by(workload: Obj, job: Obj) -> bool:
    uid = job.get("metadata", {}).get("uid")
    return any(ref.get("uid") == uid for ref in workload["metadata"].get("ownerReferences") or [])


def place(
    job: Obj,
    workloads: Iterable[Obj],
    local_queues: Mapping[tuple[str, str], str],
) -> Place | None:
    """The job's place among the Workloads of its ClusterQueue; None without a Workload
    (Kueue has not seen the job yet). `local_queues` maps (namespace, LocalQueue) to
    its ClusterQueue."""
    listed = list(workloads)
    mine = next((w for w in listed if owned_by(w, job)), None)
    if mine is None:
        return None
    namespace = mine["metadata"].get("namespace", "")
    queue = local_queues.get((namespace, (mine.get("spec") or {}).get("queueName", "")), "")
    if not pending(mine):
        admitted = ((mine.get("status") or {}).get("admission") or {}).get("clusterQueue", queue)
        return Place(True, admitted)
    line = sorted(
        (
            w
            for w in listed
            if pending(w)
            and local_queues.get(
                (w["metadata"].get("namespace", ""), (w.get("spec") or {}).get("queueName", ""))
            )
            == queue
        ),
        key=queue_order,
    )
    position = next(
        (i for i, w in enumerate(line, 1) if w["metadata"]["uid"] == mine["metadata"]["uid"]),
        None,
    )
    reserved = _condition(mine, "QuotaReserved") or {}
    reason = reserved.get("message") or "Kueue has not considered it yet"
    return Place(False, queue, position, len(line), reason)


def describe(place: Place) -> str:
    """The sentence a student reads about a waiting job."""
    if place.admitted:
        return f"admitted by Kueue (queue {place.cluster_queue})"
    where = (
        f"number {place.position} of {place.waiting} waiting"
        if place.position is not None
        else "waiting"
    )
    return f"{where} in queue {place.cluster_queue}: {place.reason}"


def local_queue_map(local_queues: Iterable[Obj]) -> dict[tuple[str, str], str]:
    return {
        (q["metadata"].get("namespace", ""), q["metadata"]["name"]): (q.get("spec") or {}).get(
            "clusterQueue", ""
        )
        for q in local_queues
    }


# -- the I/O: sending the queues, asking where a job stands -----------------------------


class Queues:
    """The backend's Kueue objects: given the connection and the settings, never the backend.

    Whether Kueue queues jobs is asked once (settings.training_queues "auto": whether
    the cluster serves the ClusterQueue API). Objects are sent by server-side apply,
    each only when it differs from what this controller sent last.
    """

    def __init__(self, cluster: Connection, settings: KubeSettings) -> None:
        self.cluster = cluster
        self.settings = settings
        self._enabled: bool | None = (
            None if settings.training_queues == "auto" else (settings.training_queues == "kueue")
        )
        self._sent: dict[tuple[str, str, str], Obj] = {}

    async def enabled(self) -> bool:
        if self._enabled is None:
            try:
                await self.cluster.api.get("ClusterQueue", cluster_queue_name(POOL, self.settings))
                self._enabled = True
            except KubeError as error:
                if error.status != 404:
                    raise  # not an answer: ask again next time
                self._enabled = False
        return self._enabled

    async def _apply(self, obj: Obj) -> None:
        meta = obj["metadata"]
        key = (obj["kind"], meta.get("namespace", ""), meta["name"])
        if self._sent.get(key) == obj:
            return
        await self.cluster.api.apply(obj)
        self._sent[key] = obj

    async def sync(self, courses: Sequence[Budget], nodes: Iterable[Obj]) -> None:
        """Flavors first (a ClusterQueue naming a missing flavor is inactive until it exists)."""
        for obj in cluster_queues(courses, fleet_gpus(nodes), self.settings):
            await self._apply(obj)

    async def ensure_local(self, namespace: str, course: str | None) -> None:
        await self._apply(local_queue(namespace, course, self.settings))

    async def place(self, job: Obj) -> Place | None:
        api = self.cluster.api
        workloads, _ = await api.list("Workload")
        selector = names.selector(parts.platform_labels(self.settings, "training"))
        local, _ = await api.list("LocalQueue", label_selector=selector)
        return place(job, workloads, local_queue_map(local))

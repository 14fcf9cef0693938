"""The kubernetes backend: notebooks as Kubeflow Notebooks in per-user namespaces.

The controller keeps its role: it authenticates users and reverse-proxies
`/notebook/<owner>/<name>/` to the notebook's Service, exactly as locally; the
cluster supplies what one machine could not (nodes, GPUs by resource name,
storage). What the objects are is decided in kube_objects, what differs between
a JupyterLab pod and a VM in kube_workloads; this module decides when to send
them, and learns what happened from watches (kube_watch), never from polling
loops. Every API call is a coroutine of kube_api (the official client's asyncio
flavour), whose permission table is the RBAC the deployment grants.

A start creates, in the owner's namespace: the Notebook held stopped, its
Secret (owned by it) and home volume, then lets it run (and, without Kubeflow's
notebook-controller, applies the StatefulSet and Service that controller would
make). It then follows the pod: "Waiting for a node: ...", "Pulling image
...", until the pod is Ready, or fails with the reason, leaving the Notebook
stopped and its Secret deleted. Stopping is Kubeflow's annotation (and zero
replicas), never a deletion: the home volume stays until `remove_storage`.
A start records the uid of the pod it made: a pod deleted, evicted or replaced
behind the controller's back is a server gone (its kernels with it) even while
the StatefulSet makes a new one, so `observe` says so and the controller's
liveness watch shows the notebook stopped, with the reason, within seconds.
A VM notebook is the same story told with a KubeVirt VirtualMachine.

It stays one module because start, stop and observe are one sequence best read
together; what stands alone lives beside it, and is given what it needs, never
this backend: the connection (kube_connection: the API client and the watch
cache, filled by `open`), the settings and the naming go to the kinds of server
(kube_workloads), the namespaces made ready (kube_namespaces), the tool pods
(kube_pod_tool), the home files (kube_files) and the storage page
(kube_storage_files); the last two are also given the one `Namespaces` and the
one `PodTool`. None of them imports this module.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..core import gpu_fleet
from ..core.errors import Conflict, NotFound, NotSupported
from ..core.gpu_fleet import Product
from ..core.gpus import Device
from . import kube_files as files
from . import kube_names as names
from . import kube_objects as objects
from . import kube_parts as parts
from . import kube_pod_tool as tool
from . import kube_queues as queues
from . import kube_status as status
from . import kube_storage as storage
from . import kube_training as training
from .base import (
    Backend,
    BackendError,
    NotebookSpec,
    Observation,
    ProgressCallback,
    QuotaSpec,
    TrainingBudget,
    TrainingSpec,
    TrainingStatus,
)
from .kube_api import KubeApi, KubeError, load_client, together
from .kube_connection import Connection
from .kube_namespaces import Namespaces
from .kube_nodes import (
    gpu_devices,
    node_gpus,
    node_summaries,
    not_ready,
    pod_default_choices,
)
from .kube_settings import KubeSettings
from .kube_storage_files import KubeStorage
from .kube_watch import Source, WatchCache
from .kube_workloads import Jupyter, Vm, Workload
from .reachable import takes_connections

log = logging.getLogger("cgu_lab.kubernetes")


Obj = dict[str, Any]
# What a start reads events about. Events carry no labels, so they are watched
# cluster-wide and only those about these kinds in our namespaces are kept.
EVENT_KINDS = frozenset(
    {"Pod", "StatefulSet", "Notebook", "VirtualMachine", "VirtualMachineInstance"}
)
# Watches without which the backend cannot follow notebooks at all.
REQUIRED_WATCHES = ("Pod", "Event", "Notebook")


class KubernetesBackend(Backend):
    name = "kubernetes"

    def __init__(self, kube: KubeSettings | None = None) -> None:
        self.kube = kube or KubeSettings.from_env()
        self.naming = names.Naming(
            self.kube.user_prefix,
            self.kube.group_prefix,
            kubeflow=self.kube.namespace_naming == "kubeflow",
        )
        # The pieces are given what they use, never this object: the connection (the API
        # client and the watch cache, filled by open()), the settings, the naming, and
        # the pieces they share (the namespaces made ready, the tool pods).
        self.cluster = Connection()
        kube, naming, cluster = self.kube, self.naming, self.cluster
        self._workloads: dict[str, Workload] = {
            workload.name: workload for workload in (Jupyter(cluster, kube), Vm(cluster, kube))
        }
        self._namespaces = Namespaces(cluster, kube)
        self._tools = tool.PodTool(cluster, kube, naming)
        self._files = files.HomeFiles(cluster, kube, naming, self._namespaces, self._tools)
        # the storage page's file access
        self.storage = KubeStorage(cluster, kube, naming, self._namespaces, self._tools)
        self._queues = queues.Queues(cluster, kube)  # Kueue, where it queues training jobs
        self._starting: dict[names.ObjectRef, float] = {}  # ref -> when its start began
        self._inventory_followers: list[Callable[[list[Device]], None]] = []
        self._devices: list[Device] | None = None  # from the Node watch, once it listed
        self._node_devices: dict[str, list[Device]] = {}  # the same, node by node

    # -- lifecycle of the backend itself ---------------------------------------------

    async def open(self) -> None:
        if self.kube.endpoint == "pod-ip" and not self.kube.controller_cidrs:
            log.warning(
                "the controller reaches pods by address (CGU_LAB_KUBE_ENDPOINT=pod-ip) but "
                "CGU_LAB_KUBE_CONTROLLER_CIDRS is empty: where the cluster enforces "
                "NetworkPolicies, notebooks admit only the controller's pods, not this one"
            )
        api_client = await load_client(self.kube.kubeconfig)
        self.cluster.client = KubeApi(api_client, self.naming.managed)
        cache = self.cluster.watch = WatchCache(self._sources(), self.kube.watch_timeout)
        try:
            await cache.start()
            for source in REQUIRED_WATCHES:
                if cache.error(source):
                    raise BackendError(
                        f"the controller cannot watch {source} objects "
                        f"({cache.error(source)}); check its RBAC "
                        "(deploy/kubernetes/base/rbac.yaml) and that the Notebook CRD is installed"
                    )
            await self._tools.sweep()
        except (BackendError, TimeoutError) as error:
            await self.close()
            raise BackendError(f"cannot follow the cluster: {error}") from error

    async def close(self) -> None:
        api, cache = self.cluster.client, self.cluster.watch
        if api is not None and cache is not None:
            await self._tools.close()
        if cache is not None:
            await cache.stop()
        if api is not None:
            await api.close()

    def _sources(self) -> list[Source]:
        api = self._api
        selector = names.selector(parts.platform_labels(self.kube))

        def labelled(kind: str) -> Source:
            return Source(
                kind,
                list=lambda: api.list(kind, label_selector=selector),
                watch=lambda version, timeout: api.watch(kind, version, timeout, selector),
            )

        def event_matters(event: Obj) -> bool:
            involved = event.get("involvedObject", {})
            return (
                self.naming.managed(event.get("metadata", {}).get("namespace", ""))
                and involved.get("kind") in EVENT_KINDS
            )

        events = Source(
            "Event",
            list=lambda: api.list("Event"),
            watch=lambda version, timeout: api.watch("Event", version, timeout),
            keep=event_matters,
        )
        # Every node, cluster-wide: the GPU inventory follows nodes that join, change or
        # leave, and a notebook whose node left or is drained is told why it is gone.
        nodes = Source(
            "Node",
            list=lambda: api.list("Node"),
            watch=lambda version, timeout: api.watch("Node", version, timeout),
            changed=self._nodes_changed,
        )
        return [
            labelled("Pod"),
            events,
            labelled("Notebook"),
            labelled("VirtualMachine"),
            nodes,
        ]

    @property
    def _api(self) -> KubeApi:
        return self.cluster.api

    @property
    def _cache(self) -> WatchCache:
        return self.cluster.cache

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "notebook_controller": self.kube.notebook_controller,
            "namespaces": f"{self.kube.user_prefix}<user>, {self.kube.group_prefix}<group>",
            "cpu_limit": "Kubernetes CPU limit (requests = limits)",
            "memory_limit": "Kubernetes memory limit (the pod's cgroup)",
            "identity": (
                f"ingress header {self.kube.ingress_header}"
                if self.kube.ingress_header
                else "controller proxy secret"
            ),
            "vm_notebooks": (
                self.cluster.watch is not None
                and self.cluster.watch.error("VirtualMachine") is None
            ),
            "custom_images": True,
            "training_jobs": "Kubeflow PyTorchJob (needs the training operator)",
        }

    def notebook_path(self, owner: str, name: str) -> str | None:
        """CGU_LAB_KUBE_NOTEBOOK_PATHS=kubeflow: the server answers at Kubeflow's path."""
        return objects.kubeflow_path(owner, name, self.kube)

    @property
    def ingress_header(self) -> str:
        """CGU_LAB_KUBE_INGRESS_HEADER: the header notebook pods trust (kube_objects passes
        it to their identity provider), so the proxy sets exactly that one."""
        return self.kube.ingress_header.strip().lower()

    async def _nodes(self) -> list[Obj]:
        """The cluster's nodes: the watch's copy, or a list where it cannot watch them."""
        if self._nodes_followed():
            return self._cache.objects("Node")
        nodes, _ = await self._api.list("Node")
        return nodes

    def _nodes_followed(self) -> bool:
        cache = self.cluster.watch
        return cache is not None and self._devices is not None and not cache.error("Node")

    async def inventory(self) -> list[Device]:
        return gpu_devices(await self._nodes())

    async def fleet(self) -> list[Product]:
        """The GPU products of the cluster's nodes (core.gpu_fleet reads them)."""
        return gpu_fleet.inventory(node_gpus(await self._nodes()))

    async def cluster_nodes(self) -> list[dict[str, Any]]:
        """Every node of the cluster, CPU-only ones too, with its GPUs (kube_nodes)."""
        return node_summaries(await self._nodes())

    def follow_inventory(self, changed: Callable[[list[Device]], None]) -> None:
        """`changed` gets the devices each time a node joining, changing (cordoned,
        relabelled, its device plugin's count) or leaving changes them."""
        self._inventory_followers.append(changed)

    def _nodes_changed(self, node: dict[str, Any] | None) -> None:
        """Node heartbeats change status every few seconds on a large fleet; only a change
        of the devices themselves is passed on. One node's change reads that node alone
        (a relist, `node` None, reads them all): read whole on each of a 100-node fleet's
        heartbeats, the fleet was 9% of the controller's samples in a class's burst
        (fleet_burst, py-spy), more than any other work of its own."""
        if node is None or self._devices is None:
            by_node: dict[str, list[Device]] = {}
            for each in self._cache.objects("Node"):
                by_node.setdefault(each["metadata"]["name"], []).extend(gpu_devices([each]))
        else:
            name = node["metadata"]["name"]
            current = self._cache.get("Node", "", name)
            found = gpu_devices([current]) if current is not None else []
            if found == self._node_devices.get(name, []):
                return
            by_node = dict(self._node_devices)
            if current is None:
                by_node.pop(name, None)
            else:
                by_node[name] = found
        self._node_devices = by_node
        devices = [device for found in by_node.values() for device in found]
        if devices == self._devices:
            return
        first, self._devices = self._devices is None, devices
        if first:
            return  # the listing at open: the controller's refresh reads it
        log.info("the cluster's GPUs changed: %d devices on its nodes", len(devices))
        for follower in self._inventory_followers:
            follower(devices)

    async def pod_defaults(self, owner: str) -> list[dict[str, Any]]:
        """The PodDefaults of the owner's namespace as Kubeflow's web app offers them:
        name, `spec.desc` and the selector labels a notebook carries to receive it.

        A namespace not made yet holds none (and is not made for a look at the form); one
        that exists is made ready first, which lets the controller read it: a Kubeflow
        profile is bound to the controller at its owner's first use, this or a start. A
        cluster that does not serve PodDefaults (no Kubeflow) has none to offer."""
        namespace = self.naming.user_namespace(owner)
        if await self._api.get("Namespace", namespace) is None:
            return []
        await self._namespaces.ensure(namespace, owner)
        try:
            listed, _ = await self._api.list("PodDefault", namespace)
        except KubeError as error:
            if error.status == 404:  # the API itself is missing: a namespace's list is never
                return []
            raise
        return pod_default_choices(listed)

    # -- start ---------------------------------------------------------------------

    async def start(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        if spec.kind == "vm":
            return await self.start_vm(spec, progress)
        return await self._start(self._workloads["jupyter"], spec, progress)

    async def start_vm(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        return await self._start(
            self._workloads["vm"], dataclasses.replace(spec, kind="vm"), progress
        )

    async def _start(
        self, workload: Workload, spec: NotebookSpec, progress: ProgressCallback
    ) -> dict[str, Any]:
        if not spec.environment.image:
            raise BackendError(
                f"environment '{spec.environment.name}' has no container image; ask an "
                "administrator to give it one (the kubernetes backend runs images, not folders)"
            )
        ref = self.naming.notebook(spec.owner, spec.name)
        began = self._starting[ref] = time.monotonic()
        try:
            await progress(5, f"Preparing the namespace {ref.namespace}")
            await self._namespaces.ensure(ref.namespace, spec.owner, quota=spec.quota)
            await self._tools.release(ref.namespace)  # the Storage page's warm pod
            await progress(10, "Creating the notebook's objects")
            held = await self._api.apply(workload.build(ref, spec, running=False))
            claims = [objects.home_claim(ref, spec, self.kube)]
            if workload.name == "jupyter":  # ~/courses and ~/storage; a VM has its home disk
                claims.append(files.courses_claim(ref.namespace, spec.owner, self.kube))
                claims.append(storage.storage_claim(ref.namespace, spec.owner, self.kube))
            await together(
                self._api.apply(objects.notebook_secret(ref, spec, self.kube, owner=held)),
                *(self._api.create(claim, True) for claim in claims),
            )
            running = await self._api.apply(workload.build(ref, spec, running=True))
            resume = workload.resume_patch()
            if resume is not None:
                running = await self._api.patch(workload.resource, ref.name, ref.namespace, resume)
            await together(*(self._api.apply(c) for c in workload.companions(running)))
            view = await self._wait_ready(workload, ref, began, progress)
            # Ready means the kubelet reaches the pod; a Service answers only once
            # kube-proxy has the endpoint, a second or more later on a busy node.
            url = self._url(ref, view)
            if self.kube.reachable_wait > 0:
                await progress(97, "Waiting for the notebook's address to answer")
                if not await takes_connections(url, self.kube.reachable_wait):
                    log.warning("%s takes no connection yet; going on", url)
        except (Exception, asyncio.CancelledError):
            await asyncio.shield(self._clean_up(workload, ref))
            raise
        finally:
            self._starting.pop(ref, None)
        started = {
            "kind": workload.name,
            "namespace": ref.namespace,
            "name": ref.name,
            "url": self._url(ref, view),
        }
        server = workload.server(ref)
        if server:
            started["server"] = server
        node = workload.node(ref)
        if node:
            started["node"] = node
        return started

    async def _wait_ready(
        self,
        workload: Workload,
        ref: names.ObjectRef,
        began: float,
        progress: ProgressCallback,
    ) -> status.Progress:
        deadline = began + self.kube.start_timeout
        reported = ""
        while True:
            version = self._cache.version
            view = workload.progress(ref, began)
            if view.failed:
                raise BackendError(view.message)
            if view.message != reported:
                reported = view.message
                await progress(view.percent, view.message)
            if view.ready:
                return view
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BackendError(
                    f"the notebook did not start within {self.kube.start_timeout:.0f} s: "
                    f"{view.message}"
                )
            await self._cache.changed(version, remaining)

    def _url(self, ref: names.ObjectRef, view: status.Progress) -> str:
        if self.kube.endpoint == "pod-ip" and view.address:
            return f"http://{view.address}:{objects.NOTEBOOK_PORT}"
        domain = self.kube.cluster_domain
        return f"http://{ref.name}.{ref.namespace}.svc.{domain}:{objects.SERVICE_PORT}"

    async def _clean_up(self, workload: Workload, ref: names.ObjectRef) -> None:
        """After a failed start: hold the server stopped, drop its secrets; keep the home."""
        try:
            await self._halt(workload, ref)
        except BackendError as error:
            log.warning(
                "cleaning up %s/%s after a failed start: %s", ref.namespace, ref.name, error
            )

    # -- stop, observe, sweep ----------------------------------------------------------

    def _workload(self, spec: NotebookSpec, state: Mapping[str, Any]) -> Workload:
        return self._workloads[state.get("kind") or spec.kind]

    def _ref(self, spec: NotebookSpec, state: Mapping[str, Any]) -> names.ObjectRef:
        if state.get("namespace") and state.get("name"):
            return names.ObjectRef(state["namespace"], state["name"])
        return self.naming.notebook(spec.owner, spec.name)

    async def _halt(self, workload: Workload, ref: names.ObjectRef) -> None:
        for kind, patch in workload.halt_patches():
            await self._api.patch(kind, ref.name, ref.namespace, patch)
        await self._api.delete("Secret", ref.secret, ref.namespace)

    async def stop(self, spec: NotebookSpec, state: Mapping[str, Any]) -> None:
        """Scale to zero and wait (up to stop_timeout) for the server to be gone.

        A server that is already gone (its pod deleted or replaced behind the controller's
        back) is not waited for: what is left, a replacement pod, ends by itself, and the
        page must say "stopped" now, not once that pod has finished terminating."""
        workload, ref = self._workload(spec, state), self._ref(spec, state)
        gone_already = ref not in self._starting and self._lost(workload, ref, state)
        await self._halt(workload, ref)
        if gone_already:
            return
        deadline = time.monotonic() + self.kube.stop_timeout
        while True:
            version = self._cache.version
            if workload.gone(ref):
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            await self._cache.changed(version, remaining)
        log.warning(
            "%s/%s still shuts down after %.0f s", ref.namespace, ref.name, self.kube.stop_timeout
        )

    async def observe(self, spec: NotebookSpec, state: Mapping[str, Any]) -> Observation:
        workload, ref = self._workload(spec, state), self._ref(spec, state)
        obj = self._cache.get(workload.resource, ref.namespace, ref.name)
        if obj is None:  # each kind has its own watch: on a busy node one may lag another
            obj = await self._api.get(workload.resource, ref.name, ref.namespace)
        if obj is None:
            return Observation(alive=False, detail=f"its {workload.resource} is gone")
        if objects.is_stopped(obj):
            return Observation(alive=False, detail="it was stopped in the cluster")
        if ref not in self._starting:
            # A server that died is dead even while its StatefulSet makes a new pod: the
            # controller must not show it running (it stops it and says why).
            down = self._lost(workload, ref, state)
            if down:
                return Observation(alive=False, detail=down)
        view = workload.progress(ref, 0.0)
        return Observation(
            alive=True,
            ready=view.ready,
            detail="" if view.ready else view.message,
            notice=self._node_notice(workload, ref, state),
        )

    def _node_notice(
        self, workload: Workload, ref: names.ObjectRef, state: Mapping[str, Any]
    ) -> str:
        """What to tell the owner of a server whose node is not ready or cordoned ("" when
        neither). Not ready (its kubelet stopped reporting: the node died or lost its
        network), the server cannot be reached, yet Kubernetes evicts its pod only after
        the pod's toleration (five minutes by default), so until then the owner would see
        it "running". Cordoned (and not drained), its GPUs left the pool, so its owner
        would otherwise learn of it only when a restart lands elsewhere, or when a drain
        that may follow ends it."""
        node = state.get("node") or workload.node(ref)
        if not node or not self._nodes_followed():
            return ""
        found = self._cache.get("Node", "", node) or {}
        why = not_ready(found)
        if why:
            return (
                f"Its node {node} is not answering ({why}): this notebook cannot be reached "
                "until the node is back."
            )
        if not found.get("spec", {}).get("unschedulable"):
            return ""
        return (
            f"Its node {node} is cordoned (taken out of service): this notebook keeps running, "
            "but save your work; when it stops, it starts again on another node."
        )

    def _lost(self, workload: Workload, ref: names.ObjectRef, state: Mapping[str, Any]) -> str:
        """Why the server a start made is gone ("" while it runs), its node's fate first:
        a node deleted takes its pods with it only after the pod garbage collector's
        grace, a dead node's pods are evicted after their toleration, and a drain evicts
        them, so the pod alone would say it later, or only that it "was replaced", where
        the owner needs to hear what happened to the node."""
        down = workload.down(ref, state.get("server", ""))
        node = state.get("node") or workload.node(ref)
        if not node or not self._nodes_followed():
            return down
        found = self._cache.get("Node", "", node)
        if found is None:
            return f"its node {node} was removed"
        # A drain first: it is an administrator's act (a drained node that then stops, as
        # maintenance goes, is still the drain's), where a silent node may only be late.
        if down and found.get("spec", {}).get("unschedulable"):
            return f"its node {node} is being drained ({down})"
        if down and not_ready(found):
            return f"its node {node} stopped answering ({down})"
        return down

    def endpoint(self, state: Mapping[str, Any]) -> str:
        return state["url"]

    async def pending_reason(self, spec: NotebookSpec, state: Mapping[str, Any]) -> str:
        workload, ref = self._workload(spec, state), self._ref(spec, state)
        obj = self._cache.get(workload.resource, ref.namespace, ref.name)
        if obj is None or (objects.is_stopped(obj) and ref not in self._starting):
            return ""  # nothing is on its way
        view = workload.progress(ref, self._starting.get(ref, 0.0))
        return "" if view.ready else view.message

    async def sweep(self, keep: set[int]) -> list[int]:
        """Stop running servers labelled as this installation's that the controller
        does not know (a crash between creating and recording them)."""
        stopped = []
        for workload in self._workloads.values():
            if self._cache.error(workload.resource):
                continue
            for obj in self._cache.objects(workload.resource):
                meta = obj["metadata"]
                if not self.naming.managed(meta["namespace"]):
                    continue  # another configuration's namespaces
                notebook_id = int(meta.get("labels", {}).get(names.NOTEBOOK_ID, "0") or 0)
                if notebook_id in keep or objects.is_stopped(obj):
                    continue
                await self._halt(workload, names.ObjectRef(meta["namespace"], meta["name"]))
                stopped.append(notebook_id)
        return sorted(stopped)

    # -- files of homes (templates, submissions, lab files): kube_files ------------------

    async def pack(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return await self._files.pack(*args, **kwargs)  # Backend.pack's arguments

    async def unpack(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return await self._files.unpack(*args, **kwargs)  # Backend.unpack's arguments

    async def remove_storage(self, owner: str, name: str) -> None:
        """Delete the notebook's objects and its home volume (what it owns goes with it)."""
        ref = self.naming.notebook(owner, name)
        doomed = [
            ("Notebook", ref.name),
            ("Secret", ref.secret),
            ("PersistentVolumeClaim", ref.home),
        ]
        if self._cache.error("VirtualMachine") is None:
            doomed.append(("VirtualMachine", ref.name))
        for kind, object_name in doomed:
            await self._api.delete(kind, object_name, ref.namespace)

    # -- culling annotations, images, quotas ----------------------------------------------

    async def last_activity(self, spec: NotebookSpec, state: Mapping[str, Any]) -> datetime | None:
        workload, ref = self._workload(spec, state), self._ref(spec, state)
        obj = self._cache.get(workload.resource, ref.namespace, ref.name) or {}
        annotations = obj.get("metadata", {}).get("annotations") or {}
        return status.parse_time(annotations.get(names.LAST_ACTIVITY))

    async def record_activity(
        self, spec: NotebookSpec, state: Mapping[str, Any], when: datetime
    ) -> None:
        workload, ref = self._workload(spec, state), self._ref(spec, state)
        patch = objects.activity_patch(status.format_time(when))
        if await self._api.patch(workload.resource, ref.name, ref.namespace, patch) is None:
            raise NotFound(f"{spec.owner} has no notebook '{spec.name}' in the cluster")

    async def images(self, owner: str) -> list[str]:
        """Images of every Notebook in the owner's namespace, ours or not."""
        notebooks, _ = await self._api.list("Notebook", self.naming.user_namespace(owner))
        return status.images(notebooks)

    async def sync_quota(self, owner: str, quota: QuotaSpec, group: bool = False) -> None:
        namespace = (
            self.naming.group_namespace(owner) if group else self.naming.user_namespace(owner)
        )
        await self._namespaces.ensure(namespace, owner, group=group, quota=quota)

    # -- training jobs -------------------------------------------------------------------

    async def submit_training(self, job: TrainingSpec) -> dict[str, Any]:
        ref = self.naming.training(job.owner, job.name, job.group)
        await self._namespaces.ensure(ref.namespace, job.group or job.owner, group=bool(job.group))
        built = training.pytorch_job(ref, job, self.kube)
        if await self._queues.enabled():
            await self._queues.ensure_local(ref.namespace, job.group)
            built = queues.queued(built)
        if await self._api.create(built, True) is None:
            raise Conflict(
                f"a training job named '{job.name}' already exists; "
                "delete it or choose another name"
            )
        return {"namespace": ref.namespace, "name": ref.name}

    async def training_status(
        self, owner: str, name: str, group: str | None = None
    ) -> TrainingStatus:
        ref = self.naming.training(owner, name, group)
        job = await self._api.get("PyTorchJob", ref.name, ref.namespace)
        if job is None:
            raise NotFound(f"there is no training job '{name}'")
        found = status.training_status(job)
        if queues.QUEUE_LABEL not in (job["metadata"].get("labels") or {}):
            return found
        found = dataclasses.replace(found, queue=queues.cluster_queue_name(group, self.kube))
        if not (job.get("spec", {}).get("runPolicy") or {}).get("suspend"):
            return found  # admitted: the training operator's phase
        # held suspended until Kueue admits it: where it stands in its queue
        place = await self._queues.place(job)
        if place is None:
            return dataclasses.replace(
                found, phase="Queued", message="waiting for Kueue to take the job up"
            )
        if place.admitted:
            return found
        return dataclasses.replace(
            found,
            phase="Queued",
            message=queues.describe(place),
            queue=place.cluster_queue,
            queue_position=place.position,
        )

    async def training_logs(
        self,
        owner: str,
        name: str,
        group: str | None = None,
        replica: str = "master",
        index: int = 0,
        tail_lines: int = 200,
    ) -> str:
        ref = self.naming.training(owner, name, group)
        labels = {
            names.JOB_NAME: ref.name,
            names.REPLICA_TYPE: replica.lower(),
            names.REPLICA_INDEX: str(index),
        }
        pod = next(self._cache.find("Pod", ref.namespace, labels), None)
        if pod is None:
            job = await self._api.get("PyTorchJob", ref.name, ref.namespace) or {}
            raise BackendError(training.no_pod(job, f"{replica} {index}", name))
        return await self._api.pod_log(
            ref.namespace, pod["metadata"]["name"], "pytorch", tail_lines
        )

    async def delete_training(self, owner: str, name: str, group: str | None = None) -> None:
        ref = self.naming.training(owner, name, group)
        await self._api.delete("PyTorchJob", ref.name, ref.namespace)

    async def sync_training_budgets(self, budgets: Sequence[TrainingBudget]) -> None:
        """The courses' ClusterQueues and the pool (kube_queues), for the nodes now."""
        if not await self._queues.enabled():
            raise NotSupported(
                "Training queues need Kueue in the cluster (kueue.x-k8s.io); "
                "without it the controller queues jobs itself"
            )
        await self._queues.sync(budgets, await self._nodes())

"""The kinds of notebook server the kubernetes backend runs: JupyterLab pods and KubeVirt VMs.

The backend (kubernetes.py) carries out a start, a stop and the watching the
same way for every kind; what differs is here, one class per kind: which object
holds the server and how it is built (kube_objects), what else it needs, how it
is halted, and how its progress and its end are read from the watch cache
(kube_status). A start never asks the API server where it stands: it reads
what the watches (kube_watch) keep current.

Each kind is given the backend's connection (kube_connection: only its watch
cache is read here) and its settings (what to build); the backend sends what a
kind builds and waits on what it reads, so the data flows one way.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from . import kube_companions as companions
from . import kube_names as names
from . import kube_objects as objects
from . import kube_status as status
from .base import NotebookSpec
from .kube_connection import Connection
from .kube_settings import KubeSettings
from .kube_watch import WatchCache

Obj = dict[str, Any]


def _now() -> str:
    return status.format_time(datetime.now(timezone.utc))


class Workload:
    """One kind of notebook server: how it is built, followed and stopped.

    `name` is the spec's kind ("jupyter", "vm"), `component` the label its pods
    carry, `resource` the object that holds it.
    """

    name = ""
    component = ""
    resource = ""

    def __init__(self, cluster: Connection, settings: KubeSettings) -> None:
        self.cluster = cluster
        self.settings = settings

    @property
    def cache(self) -> WatchCache:
        return self.cluster.cache

    def _events(self, ref: names.ObjectRef, since: float, pod: Obj | None) -> list[Obj]:
        """Events of this start: about the object (or what it makes), and about its pod."""
        pod_uid = (pod or {}).get("metadata", {}).get("uid")
        found = []
        for event in self.cache.objects("Event", ref.namespace, since):
            involved = event.get("involvedObject", {})
            if involved.get("kind") == "Pod":
                if pod_uid and involved.get("uid") == pod_uid:
                    found.append(event)
            elif involved.get("name") == ref.name:
                found.append(event)
        return found

    def _pod(self, ref: names.ObjectRef) -> Obj | None:
        """The server's pod; a live one before one that is shutting down."""
        pods = list(
            self.cache.find(
                "Pod",
                ref.namespace,
                {names.NOTEBOOK_NAME: ref.name, names.COMPONENT: self.component},
            )
        )
        pods.sort(key=lambda pod: ("deletionTimestamp" in pod["metadata"],))
        return pods[0] if pods else None

    def build(self, ref: names.ObjectRef, spec: NotebookSpec, running: bool) -> Obj:
        raise NotImplementedError

    def resume_patch(self) -> Obj | None:
        """Merge patch completing a start, for what applying the running form cannot do."""
        return None

    def companions(self, running: Obj) -> list[Obj]:
        raise NotImplementedError

    def halt_patches(self) -> list[tuple[str, Obj]]:
        raise NotImplementedError

    def progress(self, ref: names.ObjectRef, since: float) -> status.Progress:
        raise NotImplementedError

    def gone(self, ref: names.ObjectRef) -> bool:
        raise NotImplementedError

    def server(self, ref: names.ObjectRef) -> str:
        """What identifies the server a start made (its pod's uid); "" when nothing does."""
        return ""

    def down(self, ref: names.ObjectRef, server: str) -> str:
        """Why the server a start made (`server`) is gone; "" while it runs."""
        return ""

    def node(self, ref: names.ObjectRef) -> str:
        """The node the server's pod was placed on ("" before it is): a start records it,
        so that a node removed or drained later is the reason its notebook is gone."""
        pod = self._pod(ref)
        return (pod or {}).get("spec", {}).get("nodeName", "") or ""


class Jupyter(Workload):
    name = "jupyter"
    component = "notebook"
    resource = "Notebook"

    def build(self, ref: names.ObjectRef, spec: NotebookSpec, running: bool) -> Obj:
        stopped_at = None if running else _now()
        return objects.notebook(ref, spec, self.settings, stopped_at=stopped_at)

    def resume_patch(self) -> Obj | None:
        # The stop annotation was also written by a merge patch (our stop, or Kubeflow's
        # culler); server-side apply leaves a field another writer shares, so remove it.
        return objects.resume_patch()

    def companions(self, running: Obj) -> list[Obj]:
        if not self.settings.builtin:
            return []  # Kubeflow's notebook-controller makes them
        return [companions.service(running), companions.statefulset(running)]

    def halt_patches(self) -> list[tuple[str, Obj]]:
        patches = [("Notebook", objects.stop_patch(_now()))]
        if self.settings.builtin:
            patches.append(("StatefulSet", objects.scale_patch(0)))
        return patches

    def progress(self, ref: names.ObjectRef, since: float) -> status.Progress:
        pod = self._pod(ref)
        return status.notebook_progress(pod, self._events(ref, since, pod))

    def gone(self, ref: names.ObjectRef) -> bool:
        return self._pod(ref) is None

    def server(self, ref: names.ObjectRef) -> str:
        pod = self._pod(ref)
        return pod["metadata"].get("uid", "") if pod else ""

    def down(self, ref: names.ObjectRef, server: str) -> str:
        pod = self._pod(ref)
        reason = status.notebook_down(pod)
        if reason or not server or pod is None or pod["metadata"].get("uid") == server:
            return reason
        # Its StatefulSet made a new pod (the old one was deleted or evicted): another
        # server, at another address, whose kernels and unsaved work are not the ones
        # the user had.
        return "its pod was replaced behind the controller's back"


class Vm(Workload):
    name = "vm"
    component = "vm"
    resource = "VirtualMachine"

    def build(self, ref: names.ObjectRef, spec: NotebookSpec, running: bool) -> Obj:
        return objects.virtual_machine(ref, spec, self.settings, running=running)

    def companions(self, running: Obj) -> list[Obj]:
        return [companions.service(running)]

    def halt_patches(self) -> list[tuple[str, Obj]]:
        return [("VirtualMachine", objects.run_strategy_patch("Halted"))]

    def progress(self, ref: names.ObjectRef, since: float) -> status.Progress:
        vm = self.cache.get("VirtualMachine", ref.namespace, ref.name)
        return status.vm_progress(vm, self._events(ref, since, self._pod(ref)))

    def gone(self, ref: names.ObjectRef) -> bool:
        return status.vm_halted(self.cache.get("VirtualMachine", ref.namespace, ref.name))

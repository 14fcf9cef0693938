"""Reading Kubernetes status: what a start waits for, in words a student can act on.

Pure functions over the objects the watch cache holds. A start reports what the
pod is doing ("Waiting for a node: 0/3 nodes are available: 3 Insufficient
nvidia.com/gpu.", "Pulling image ...") and fails at once on what waiting will
not fix: a quota that refuses the pod, an image that does not exist, a
container that keeps crashing. A pod that no node can take yet is not such a
case (a GPU may be freed, a node added); the start's timeout ends that wait.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .base import TrainingStatus

Obj = dict[str, Any]

# Container waiting reasons that another minute will not cure.
FATAL_WAITING = frozenset(
    {
        "CrashLoopBackOff",
        "CreateContainerConfigError",
        "CreateContainerError",
        "ErrImageNeverPull",
        "ImagePullBackOff",
        "InvalidImageName",
        "RunContainerError",
    }
)
# ...unless the kubelet says it only timed out reading the pod's Secret or ConfigMap into its
# cache (seen right after a stop and a start: it retries, and the start's timeout bounds it).
TRANSIENT_CONFIG = ("failed to sync secret cache", "failed to sync configmap cache")
VM_FATAL = frozenset({"ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff", "DataVolumeError"})
_QUOTA = re.compile(
    r"exceeded quota: (?P<quota>[^,]+), requested: (?P<asked>.*?), "
    r"used: (?P<used>.*?), limited: (?P<limit>.*)$"
)


@dataclass(frozen=True)
class Progress:
    percent: int
    message: str
    ready: bool = False
    failed: bool = False
    address: str = ""  # the pod's IP, once it has one


def condition(obj: Obj | None, kind: str) -> Obj | None:
    for item in (obj or {}).get("status", {}).get("conditions") or []:
        if item.get("type") == kind:
            return item
    return None


def _event_time(event: Obj) -> str:
    return (
        event.get("lastTimestamp")
        or event.get("eventTime")
        or event.get("metadata", {}).get("creationTimestamp")
        or ""
    )


def latest(events: Iterable[Obj], reasons: Iterable[str]) -> Obj | None:
    """The most recent event with one of `reasons`."""
    wanted = set(reasons)
    matching = [event for event in events if event.get("reason") in wanted]
    return max(matching, key=_event_time, default=None)


def _amounts(text: str) -> str:
    return text.replace("requests.", "").replace(",", ", ")


def quota_refusal(message: str) -> str | None:
    """The ResourceQuota admission message, said plainly; None for other messages."""
    match = _QUOTA.search(message)
    if match is None:
        return None
    return (
        f"The cluster quota of your namespace ({match['quota']}) does not allow this: it asks "
        f"for {_amounts(match['asked'])} while {_amounts(match['used'])} is in use of a "
        f"limit of {_amounts(match['limit'])}. Stop another notebook or ask for a larger quota."
    )


def refusal(events: Iterable[Obj]) -> str | None:
    """Why the cluster refused to create the pod at all (quota, pod security...)."""
    event = latest(events, {"FailedCreate"})
    if event is None:
        return None
    message = event.get("message", "")
    explained = quota_refusal(message)
    if explained:
        return explained
    if "status unknown for quota" in message:
        return None  # the quota controller has not counted yet; it will
    if "forbidden" in message:
        return f"The cluster refuses the notebook's pod: {message}"
    return None


def _container_problem(status: Obj) -> str:
    waiting = status.get("state", {}).get("waiting") or {}
    reason = waiting.get("reason", "")
    last = (status.get("lastState") or {}).get("terminated") or {}
    if last.get("reason") == "OOMKilled":
        return "JupyterLab ran out of memory (OOMKilled); give the notebook more memory"
    if reason in ("ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"):
        return f"The image {status.get('image', '')} cannot be pulled ({reason}): " + waiting.get(
            "message", ""
        )
    return f"The notebook's container cannot start ({reason}): {waiting.get('message', '')}"


def notebook_progress(pod: Obj | None, events: list[Obj]) -> Progress:
    """Where a notebook pod stands. `events` are those of this start only: of the
    pod itself and of what creates it (StatefulSet, Notebook)."""
    refused = refusal(events)
    if refused:
        return Progress(100, refused, failed=True)
    if pod is None:
        return Progress(15, "Creating the notebook's pod")
    if pod["metadata"].get("deletionTimestamp"):
        return Progress(15, "Waiting for the previous server to shut down")
    status = pod.get("status", {})
    if status.get("phase") in ("Failed", "Succeeded"):
        reason = status.get("reason") or status.get("message") or status.get("phase")
        return Progress(100, f"The notebook's server exited: {reason}", failed=True)
    containers = status.get("containerStatuses") or []
    for container in containers:
        waiting = container.get("state", {}).get("waiting") or {}
        reason = waiting.get("reason")
        if reason == "CreateContainerConfigError" and any(
            text in waiting.get("message", "") for text in TRANSIENT_CONFIG
        ):
            return Progress(60, "Waiting for the node to read the notebook's settings")
        if reason in FATAL_WAITING:
            return Progress(100, _container_problem(container), failed=True)
    ready = condition(pod, "Ready")
    if ready and ready.get("status") == "True":
        return Progress(95, "JupyterLab is answering", ready=True, address=status.get("podIP", ""))
    scheduled = condition(pod, "PodScheduled")
    if scheduled is None or scheduled.get("status") != "True":
        if scheduled is not None and scheduled.get("message"):
            return Progress(30, f"Waiting for a node: {scheduled['message']}")
        return Progress(20, "Waiting for a node")
    if any("running" in container.get("state", {}) for container in containers):
        return Progress(80, "Starting JupyterLab")
    for container in containers:
        waiting = container.get("state", {}).get("waiting") or {}
        if waiting.get("reason") == "ErrImagePull":
            return Progress(50, f"Retrying the image pull: {waiting.get('message', '')}")
    step = latest(events, {"Pulling", "Pulled", "Created", "Started"})
    if step is not None and step["reason"] == "Pulling":
        return Progress(50, step.get("message", "Pulling the image").replace('"', ""))
    if step is not None:
        return Progress(65, "Image pulled; starting the container")
    node = pod.get("spec", {}).get("nodeName")
    return Progress(40, f"Preparing the container on {node}" if node else "Preparing the container")


def notebook_down(pod: Obj | None) -> str:
    """Why a notebook that was running has no server any more; "" while it has one.

    Its server is its pod's container running: a pod deleted (or being deleted), evicted,
    failed, or whose container exited or waits to be recreated has none, even when
    its StatefulSet (or Kubeflow's controller) is already making a new one. Merely
    not Ready (a readiness probe missed under load) still counts as a server."""
    if pod is None:
        return "its pod is gone"
    if pod["metadata"].get("deletionTimestamp"):
        return "its pod was deleted"
    status = pod.get("status", {})
    if status.get("phase") != "Running":
        reason = status.get("reason") or status.get("message") or status.get("phase")
        if status.get("phase") in ("Failed", "Succeeded"):
            return f"its pod ended ({reason})"
        return f"its pod was replaced and is not running yet ({reason or 'Pending'})"
    for container in status.get("containerStatuses") or []:
        state = container.get("state", {})
        if "running" not in state:
            detail = state.get("terminated") or state.get("waiting") or {}
            return f"JupyterLab's container is not running ({detail.get('reason', 'restarting')})"
    return ""


def _vm_message(vm: Obj) -> str:
    for item in vm.get("status", {}).get("conditions") or []:
        failing = item.get("status") != "True" or item.get("type") == "Failure"
        if failing and item.get("message"):
            return item["message"]
    return ""


def vm_progress(vm: Obj | None, events: list[Obj]) -> Progress:
    """Where a VM notebook stands, from KubeVirt's printableStatus and conditions."""
    refused = refusal(events)
    if refused:
        return Progress(100, refused, failed=True)
    if vm is None:
        return Progress(10, "Creating the virtual machine")
    status = vm.get("status", {})
    if status.get("ready"):
        return Progress(95, "JupyterLab in the virtual machine is answering", ready=True)
    printable = status.get("printableStatus", "")
    message = _vm_message(vm)
    if printable in VM_FATAL:
        return Progress(
            100, f"The virtual machine cannot start ({printable}): {message}", failed=True
        )
    if printable == "ErrorUnschedulable":
        return Progress(30, f"Waiting for a node: {message}" if message else "Waiting for a node")
    if printable == "Running":
        return Progress(80, "The virtual machine is booting; waiting for JupyterLab")
    return Progress(40, f"Virtual machine: {printable or 'waiting for KubeVirt'}")


def vm_halted(vm: Obj | None) -> bool:
    return vm is None or (
        not vm.get("status", {}).get("ready")
        and vm.get("status", {}).get("printableStatus", "Stopped") == "Stopped"
    )


def training_status(job: Obj) -> TrainingStatus:
    """The training operator's view: the newest true condition, and replica counts."""
    status = job.get("status") or {}
    current = [c for c in status.get("conditions") or [] if c.get("status") == "True"]
    replicas = {
        kind: {key: int(counts.get(key, 0)) for key in ("active", "succeeded", "failed")}
        for kind, counts in (status.get("replicaStatuses") or {}).items()
    }
    if not current:
        return TrainingStatus(
            "Pending", "the training operator has not taken the job up yet", replicas
        )
    last = current[-1]
    return TrainingStatus(last.get("type", ""), last.get("message", ""), replicas)


def images(notebooks: Iterable[Obj]) -> list[str]:
    """Every container image of these Notebooks, once each, sorted."""
    found = set()
    for notebook in notebooks:
        pod = notebook.get("spec", {}).get("template", {}).get("spec", {})
        for container in pod.get("containers") or []:
            if container.get("image"):
                found.add(container["image"])
    return sorted(found)


def format_time(when: datetime) -> str:
    """RFC 3339 in UTC, as Kubeflow writes its annotations."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None

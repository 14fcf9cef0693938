"""The small parts every Kubernetes object the platform builds is made of, by pure functions.

Metadata, the labels that make an object this installation's, owner
references, quantities, resources and security contexts, volume claims: what
the builders of whole objects (kube_objects for a notebook, kube_namespaces,
kube_companions, kube_storage, kube_training, kube_files, kube_pod_tool) share.
It exists so that they all build on one floor below them and none of them
imports another only for its parts: kube_objects uses kube_storage's mounts,
and kube_storage's claims are made of these parts, not of kube_objects.
It imports nothing of the platform but the names (kube_names) and the settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import kube_names as names
from .kube_settings import KubeSettings

Obj = dict[str, Any]


def cpu_quantity(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def memory_quantity(size: int) -> str:
    for unit, factor in (("Gi", 2**30), ("Mi", 2**20)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def object_meta(name: str, namespace: str | None, labels: Mapping[str, str], **extra: Any) -> Obj:
    meta: Obj = {"name": name, "labels": dict(labels)}
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update({key: value for key, value in extra.items() if value})
    return meta


def platform_labels(settings: KubeSettings, component: str | None = None) -> dict[str, str]:
    """The labels that make an object this installation's (what watches select on)."""
    labels = {names.MANAGED_BY: names.PLATFORM, names.INSTALLATION: settings.installation}
    if component:
        labels[names.COMPONENT] = component
    return labels


def owner_reference(owner: Obj) -> Obj:
    """Makes the object garbage-collected with `owner` (which must have been created)."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }


def container_resources(cpu_milli: int, memory: int, gpus: int, gpu_resource: str) -> Obj:
    """Requests equal to limits: what the quota counts is what the pod holds."""
    amounts = {"cpu": cpu_quantity(cpu_milli), "memory": memory_quantity(memory)}
    if gpus:
        amounts[gpu_resource] = str(gpus)
    return {"requests": dict(amounts), "limits": dict(amounts)}


def gpu_tolerations() -> list[Obj]:
    """GPU nodes are commonly tainted nvidia.com/gpu:NoSchedule to keep CPU pods off."""
    return [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def pod_security(settings: KubeSettings) -> Obj:
    """A pod that runs as the notebook's user, never root, under the runtime's seccomp
    profile; its volumes' files belong to the notebook's group."""
    return {
        "runAsNonRoot": True,
        "runAsUser": settings.notebook_uid,
        "runAsGroup": settings.notebook_gid,
        "fsGroup": settings.notebook_gid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security() -> Obj:
    """A container that gains no privilege and holds no capability."""
    return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def volume_claim(
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    size: str,
    settings: KubeSettings,
    access_mode: str = "ReadWriteOnce",
) -> Obj:
    """A volume of the platform's storage class (homes, course folders)."""
    claim: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": object_meta(name, namespace, labels, annotations=dict(annotations)),
        "spec": {"accessModes": [access_mode], "resources": {"requests": {"storage": size}}},
    }
    if settings.storage_class:
        claim["spec"]["storageClassName"] = settings.storage_class
    return claim


ARCH_LABEL = "kubernetes.io/arch"


def node_affinity(choices: Mapping[str, Sequence[str]], arch: str = "") -> Obj | None:
    """Required node affinity: for each label, a node carrying one of its values (the GPU
    products a type's models match), and the image's architecture when it is known. It
    is affinity, not a nodeSelector, because one type may match several product label
    values (`In`); None when nothing narrows the choice."""
    expressions = [
        {"key": key, "operator": "In", "values": sorted(set(values))}
        for key, values in sorted(choices.items())
        if values
    ]
    if arch:
        expressions.append({"key": ARCH_LABEL, "operator": "In", "values": [arch]})
    if not expressions:
        return None
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": expressions}]
            }
        }
    }

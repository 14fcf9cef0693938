"""GPU devices of a cluster, read from what NVIDIA's GPU operator puts on nodes.

GPU feature discovery labels each node with `nvidia.com/gpu.product`,
`nvidia.com/gpu.memory` (MiB) and, with time-slicing, `nvidia.com/gpu.replicas`;
the device plugin advertises the resources: `nvidia.com/gpu` (or
`nvidia.com/gpu.shared` when time-slices are renamed), and with the `mixed` MIG
strategy one `nvidia.com/mig-<profile>` per MIG profile, `nvidia.com/gpu` then
counting only the GPUs not in MIG mode. With the `single` strategy every
`nvidia.com/gpu` is a MIG instance and the product label ends in `-MIG-<profile>`.

Devices are what the node can allocate (`nvidia.com/gpu.count` would also count
GPUs split into MIG instances, or not yet offered by the device plugin). The
controller's placement rules count devices, not advertised slots: a time-sliced
GPU is one device that a shared GPU type splits, so replicas are divided back
out here. Cordoned nodes offer nothing.

The same nodes, as labels and allocatable resources, feed the fleet's inventory of
products (`node_gpus`, core.gpu_fleet); and what a namespace offers a notebook from
Kubeflow (its PodDefaults) is read into the notebook form's choices here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..core.gpu_fleet import NodeGpus
from ..core.gpus import Device

_MIG_RESOURCE = "nvidia.com/mig-"
_MIG_SINGLE = re.compile(r"-MIG-(\d+g\.\d+gb)$")
_MIG_MEMORY = re.compile(r"\.(\d+)gb$")


def _int(value: Any) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def gpu_devices(nodes: Iterable[dict[str, Any]]) -> list[Device]:
    devices: list[Device] = []
    for node in nodes:
        if node.get("spec", {}).get("unschedulable"):
            continue
        name = node["metadata"]["name"]
        labels = node["metadata"].get("labels") or {}
        capacity = node.get("status", {}).get("allocatable") or {}
        product = labels.get("nvidia.com/gpu.product", "")
        memory = _int(labels.get("nvidia.com/gpu.memory")) * 2**20
        for resource, count in sorted(capacity.items()):
            if resource.startswith(_MIG_RESOURCE):
                profile = resource[len(_MIG_RESOURCE) :]
                size = _MIG_MEMORY.search(profile)
                devices.extend(
                    Device(
                        id=f"{name}/mig-{profile}-{index}",
                        node=name,
                        model=product,
                        memory=int(size.group(1)) * 10**9 if size else 0,
                        mig_profile=profile,
                        index=index,
                    )
                    for index in range(_int(count))
                )
        advertised = _int(capacity.get("nvidia.com/gpu")) or _int(
            capacity.get("nvidia.com/gpu.shared")
        )
        single = _MIG_SINGLE.search(product)
        if single:
            count, profile = advertised, single.group(1)
        else:
            count = advertised // max(1, _int(labels.get("nvidia.com/gpu.replicas")))
            profile = ""
        devices.extend(
            Device(
                id=f"{name}/gpu-{index}",
                node=name,
                model=product,
                memory=memory,
                mig_profile=profile,
                index=index,
            )
            for index in range(count)
        )
    return devices


def node_gpus(nodes: Iterable[dict[str, Any]]) -> list[NodeGpus]:
    """Each node's labels and allocatable resources, for the fleet's inventory
    (core.gpu_fleet): the I/O side stops here, the rules are pure."""
    return [
        NodeGpus(
            name=node["metadata"]["name"],
            labels=dict(node["metadata"].get("labels") or {}),
            allocatable=dict(node.get("status", {}).get("allocatable") or {}),
            schedulable=not node.get("spec", {}).get("unschedulable"),
        )
        for node in nodes
    ]


def pod_default_choices(listed: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Kubeflow PodDefaults (kubeflow.org/v1alpha1) as the notebook form lists them.

    Kubeflow's jupyter web app offers each PodDefault of the namespace by its `spec.desc`
    (its name when it has none) and, for each one chosen, puts the PodDefault's
    `spec.selector.matchLabels` on the Notebook; its admission webhook then applies the
    PodDefault to the pod those labels reach. Only `matchLabels` selects here: a
    PodDefault selecting by expressions alone cannot be chosen by labels, so it is left out.
    """
    choices = []
    for item in listed:
        spec = item.get("spec") or {}
        labels = dict((spec.get("selector") or {}).get("matchLabels") or {})
        if not labels:
            continue
        name = item.get("metadata", {}).get("name", "")
        choices.append({"name": name, "desc": spec.get("desc") or name, "labels": labels})
    return sorted(choices, key=lambda choice: choice["name"])

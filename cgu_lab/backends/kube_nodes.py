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
out here. Cordoned nodes offer nothing, nor do nodes whose Ready condition is not True
(`not_ready`: a kubelet that stopped reporting, a node that died): the scheduler places
nothing there, so the controller's queue, not a pod stuck Pending, must hold the wait.

The same nodes, as labels and allocatable resources, feed the fleet's inventory of
products (`node_gpus`, core.gpu_fleet) and the monitoring page's list of every node,
CPU-only ones included (`node_summaries`); and what a namespace offers a notebook from
Kubeflow (its PodDefaults) is read into the notebook form's choices here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..core import gpu_fleet
from ..core.errors import Invalid
from ..core.gpu_fleet import NodeGpus
from ..core.gpus import Device
from ..core.resources import parse_cpu, parse_memory

_MIG_RESOURCE = "nvidia.com/mig-"
_MIG_SINGLE = re.compile(r"-MIG-(\d+g\.\d+gb)$")
_MIG_MEMORY = re.compile(r"\.(\d+)gb$")


def _int(value: Any) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def not_ready(node: dict[str, Any]) -> str:
    """Why the node says it is not ready ("" when it is): the message of its Ready
    condition ("Kubelet stopped posting node status." once the node lifecycle controller
    has not heard from its kubelet for its grace period), or its reason and status.

    A node that has posted no Ready condition at all (a Node object written by hand, a
    kubelet before its first report) is taken at its word of what it can allocate."""
    for item in node.get("status", {}).get("conditions") or []:
        if item.get("type") == "Ready" and item.get("status") != "True":
            return item.get("message") or f"{item.get('reason') or 'Ready'}: {item.get('status')}"
    return ""


def takes_pods(node: dict[str, Any]) -> bool:
    """Neither cordoned nor not ready: the scheduler may place a new pod there."""
    return not node.get("spec", {}).get("unschedulable") and not not_ready(node)


def gpu_devices(nodes: Iterable[dict[str, Any]]) -> list[Device]:
    devices: list[Device] = []
    for node in nodes:
        if not takes_pods(node):
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
            schedulable=takes_pods(node),
        )
        for node in nodes
    ]


def _cores(value: Any) -> float:
    try:
        return parse_cpu(str(value)) / 1000
    except Invalid:
        return 0.0


def _bytes(value: Any) -> int:
    try:
        return parse_memory(str(value))
    except Invalid:
        return 0


def _ready(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def node_summaries(nodes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every node, with or without GPUs, as the monitoring page lists it: whether it takes
    pods (cordoned or not, Ready or not), its architecture, CPUs and memory, and its GPU
    product with the whole GPUs, time-slices and MIG instances it offers, counted by the
    fleet's own rules (core.gpu_fleet, one node at a time: a cordoned node's GPUs are
    shown, though the pool no longer offers them). `product` is "" on a CPU-only node."""
    rows = []
    for node in nodes:
        read = node_gpus([node])[0]
        allocatable = read.allocatable
        products = gpu_fleet.inventory([NodeGpus(read.name, read.labels, allocatable)])
        product = products[0] if products else gpu_fleet.Product("")
        rows.append(
            {
                "node": read.name,
                "schedulable": not node.get("spec", {}).get("unschedulable"),
                "ready": _ready(node),
                "arch": read.labels.get(gpu_fleet.ARCH, ""),
                "cpu_cores": _cores(allocatable.get("cpu")),
                "memory_bytes": _bytes(allocatable.get("memory")),
                "product": product.product,
                "gpu_memory_mib": product.memory_mib,
                "gpus": product.gpus,
                "whole": product.whole,
                "replicas": product.replicas,
                "slices": product.slices,
                "slice_resource": product.slice_resource,
                "mig_strategy": product.mig_strategy,
                "mig": dict(sorted(product.mig.items())),
            }
        )
    return sorted(rows, key=lambda row: row["node"])


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

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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

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

"""A node that stops answering, on the real kube-apiserver (issue 27: "nodes that join,
drain or die are seen: their notebooks are marked with the reason within seconds").

A node dies for the cluster when its kubelet stops reporting: the node lifecycle
controller turns its Ready condition Unknown ("Kubelet stopped posting node status.")
after its grace period, but evicts its pods only once their toleration of that has
passed (five minutes by default), and keeps a pod bound to that node Terminating until
the node answers or is removed. Before this, such a notebook showed "running" all that
time with nothing said, and the node's GPUs stayed in the controller's pool.

Only the API server runs here (test_kubernetes_backend's FakeNodes play the StatefulSet
controller and kubelet, without binding pods to nodes): the test binds the notebook's
pod to a Node it made (the binding subresource, as kube-scheduler does) and writes the
node's Ready condition as the node lifecycle controller would. The watch, the backend
and RBAC are real. The same cases through the controller on the real cluster are
test_kube_fleet_cluster's (a drained and a removed node).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

from kubernetes import client

from .test_kubernetes_backend import (  # noqa: F401 - fixtures shared with the backend's tests
    BUILT,
    RUN,
    cluster,
    controller_kubeconfig,
    h,
    loop,
    nodes,
)

pytestmark = BUILT

PRODUCT = "nvidia.com/gpu.product"
GPUS = {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "2"}
SILENT = "Kubelet stopped posting node status."


def set_ready(harness, node: str, status: str, reason: str, message: str) -> None:
    """The node's Ready condition as the kubelet (True) or, once it is silent, the node
    lifecycle controller (Unknown) writes it."""
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    condition = {"type": "Ready", "status": status, "reason": reason, "message": message}
    condition.update(lastHeartbeatTime=now, lastTransitionTime=now)
    harness.admin.patch_status("v1", "Node", node, None, {"status": {"conditions": [condition]}})


def eventually(harness, check, what: str, tries: int = 500):
    """`check()`'s first true answer, asked every 20 ms (the watch's copy lags the API)."""

    async def wait():
        for _ in range(tries):
            found = await check()
            if found:
                return found
            await asyncio.sleep(0.02)
        raise AssertionError(f"never: {what}")

    return harness.run(wait())


def test_a_node_that_stops_answering_marks_its_notebook_and_leaves_the_pool(h):  # noqa: F811
    node = f"t{RUN}-silent"
    h.admin.create(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": node, "labels": {PRODUCT: "NVIDIA-L4"}},
        }
    )
    h.admin.patch_status("v1", "Node", node, None, {"status": {"capacity": GPUS}})
    h.admin.patch_status("v1", "Node", node, None, {"status": {"allocatable": GPUS}})
    set_ready(h, node, "True", "KubeletReady", "kubelet is posting ready status")
    backend = h.backend()
    changes: list[list] = []
    backend.follow_inventory(changes.append)

    async def offered() -> set[str]:
        return {d.id for d in await backend.inventory() if d.node == node}

    spec = h.spec("nora", "far", gpus=0, gpu_type=None, node_selector={})
    ref = backend.naming.notebook(spec.owner, spec.name)
    pods = client.CoreV1Api(h.admin.api_client)
    try:
        assert h.run(offered()) == {f"{node}/gpu-0", f"{node}/gpu-1"}
        state, _ = h.start(backend, spec)
        binding = {"metadata": {"name": f"{ref.name}-0"}, "target": {"kind": "Node", "name": node}}
        pods.create_namespaced_pod_binding(
            f"{ref.name}-0", ref.namespace, binding, _preload_content=False
        )

        async def bound():
            pod = backend.cluster.watch.get("Pod", ref.namespace, f"{ref.name}-0") or {}
            return pod.get("spec", {}).get("nodeName") == node

        eventually(h, bound, "the watch sees the pod on its node")
        observed = h.run(backend.observe(spec, state))
        assert (observed.alive, observed.notice) == (True, "")

        # The kubelet falls silent: the owner is told at the next look, while the pod
        # is still "Running" in the API, and the node's GPUs leave the pool.
        set_ready(h, node, "Unknown", "NodeStatusUnknown", SILENT)
        told = f"Its node {node} is not answering ({SILENT}): this notebook cannot be reached"

        async def notice():
            seen = await backend.observe(spec, state)
            return seen if seen.notice.startswith(told) else None

        observed = eventually(h, notice, "the owner is told the node is not answering")
        assert observed.alive, observed
        assert h.run(offered()) == set()
        assert changes and not [d for d in changes[-1] if d.node == node]

        # It answers again: the notice goes, its GPUs come back.
        set_ready(h, node, "True", "KubeletReady", "kubelet is posting ready status")

        async def back():
            seen = await backend.observe(spec, state)
            return seen.alive and not seen.notice and len(await offered()) == 2

        eventually(h, back, "the notice goes and the GPUs return")

        # Silent again, past the pod's toleration: the taint manager deletes the pod,
        # which stays Terminating on the silent node (no kubelet confirms it). The
        # notebook is down, and its reason names the node, not only the pod.
        set_ready(h, node, "Unknown", "NodeStatusUnknown", SILENT)
        eventually(h, notice, "the owner is told again")
        h.admin.resource("v1", "Pod").delete(name=f"{ref.name}-0", namespace=ref.namespace)

        async def down():
            seen = await backend.observe(spec, state)
            return None if seen.alive else seen.detail

        detail = eventually(h, down, "the notebook is down")
        assert detail == f"its node {node} stopped answering (its pod was deleted)", detail
        h.run(backend.stop(spec, state))
    finally:
        if h.get("Pod", f"{ref.name}-0", ref.namespace):  # Terminating: no kubelet ends it
            h.admin.resource("v1", "Pod").delete(
                name=f"{ref.name}-0", namespace=ref.namespace, body={"gracePeriodSeconds": 0}
            )
        h.close(backend)
        h.admin.resource("v1", "Node").delete(name=node)

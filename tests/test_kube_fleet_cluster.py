"""The school's fleet on the real cluster: simulated GPU nodes (KWOK) beside the real one.

`scripts/kube-cluster.sh fleet 20` makes twenty nodes shaped like the school's (A5000 x4,
V100 x8, P4000 x1, an A100 and an H100 split by MIG in mixed strategy, time-sliced
A5000s, arm64 Jetson boards), labelled as NVIDIA's GPU Feature Discovery labels them,
advertising the device plugin's resources and tainted nvidia.com/gpu=present:NoSchedule;
kwok (built from sigs.k8s.io/kwok, tools/kwok) keeps them Ready and plays their pods.
The real kube-apiserver and kube-scheduler do the rest: what the GPUs page lists is
read from those node objects, and where a notebook lands is the scheduler's decision
(by the type's node selector); a type whose slices are all held waits in the
controller's GPU queue. The controller watches Node objects: a GPU node that joins
after it started is offered at once, and a notebook whose node is deleted, or
drained, is stopped with that reason within seconds.
The fleet goes when this module is done (`fleet 0`), so the
other modules' GPU pods run on the real node. tests/test_kube_fleet.py covers the same
rules without a cluster. The cluster and controller are test_kube_cluster.py's.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from . import test_kube_cluster as cluster
from .test_kube_cluster import CPU, SCRIPT, wait_for

pytestmark = cluster.pytestmark
kube, admin, controller = cluster.kube, cluster.admin, cluster.controller

FLEET = 20
STUDENT = "kfleet"
NAMESPACE = f"{cluster.USER_PREFIX}{STUDENT}"
PRODUCT = "nvidia.com/gpu.product"


@pytest.fixture(scope="module")
def fleet(kube):
    subprocess.run([SCRIPT, "fleet", str(FLEET)], check=True, timeout=600)
    yield
    subprocess.run([SCRIPT, "fleet", "0"], check=True, timeout=300)


@pytest.fixture(scope="module")
def root(fleet, controller):
    with controller.client("kadmin") as session:
        yield session


@pytest.fixture(scope="module")
def student(controller):
    controller.create_user(STUDENT)
    with controller.client(STUDENT) as session:
        yield session


def products(root) -> dict[str, dict]:
    return {p["product"]: p for p in root.ok("GET", "/api/gpus/fleet")["products"]}


def save_proposal(root, product: dict, resource: str) -> str:
    """Save the fleet's proposed GPU type for `resource` as is; its name."""
    proposal = next(p for p in product["proposals"] if p["resource_name"] == resource)
    fields = ("display_name", "resource_name", "share", "mig_profile", "models", "node_selector")
    root.ok("PUT", f"/api/gpu-types/{proposal['name']}", json={k: proposal[k] for k in fields})
    return proposal["name"]


def node_of(admin, name: str) -> str:
    pod = admin.get("v1", "Pod", f"{name}-0", NAMESPACE) or {}
    return pod.get("spec", {}).get("nodeName") or ""


def test_the_gpus_page_lists_the_fleets_products_counts_and_slices(fleet, kube, root):
    found = products(root)
    v100, p4000 = found["Tesla-V100-SXM2-32GB"], found["Quadro-P4000"]
    assert (len(v100["nodes"]), v100["gpus"], v100["whole"]) == (3, 24, 24), v100
    assert (len(p4000["nodes"]), p4000["gpus"], p4000["whole"]) == (6, 6, 6), p4000
    a100, h100 = found["NVIDIA-A100-SXM4-80GB"], found["NVIDIA-H100-80GB-HBM3"]
    assert a100["mig_strategy"] == h100["mig_strategy"] == "mixed"
    assert a100["mig"] == {"1g.10gb": 7, "3g.40gb": 2} and a100["whole"] == 2, a100
    assert h100["mig"] == {"1g.10gb": 14, "2g.20gb": 6} and h100["whole"] == 4, h100
    shared = found["NVIDIA-RTX-A5000-SHARED"]
    assert (shared["replicas"], shared["slices"], len(shared["nodes"])) == (4, 32, 2), shared
    # its own type, named apart from the whole A5000s' (rtx-a5000-whole)
    assert [(p["name"], p["resource_name"], p["share"]) for p in shared["proposals"]] == [
        ("rtx-a5000-shared", "nvidia.com/gpu", 4)
    ], shared
    assert found["NVIDIA-Jetson-AGX-Orin"]["archs"] == ["arm64"]
    # the real node (scripts/kube-cluster.sh labels it an A5000) is one of the A5000s
    a5000 = found["NVIDIA-RTX-A5000"]
    assert kube["CGU_KUBE_NODE"] in a5000["nodes"] and len(a5000["nodes"]) == 6, a5000


def test_a_gpu_type_lands_on_its_product_and_a_full_one_waits_in_the_queue(
    fleet, kube, admin, root, student
):
    found = products(root)
    v100 = save_proposal(root, found["Tesla-V100-SXM2-32GB"], "nvidia.com/gpu")
    a100_half = save_proposal(root, found["NVIDIA-A100-SXM4-80GB"], "nvidia.com/mig-3g.40gb")
    root.ok("PUT", f"/api/users/{STUDENT}/quota", json={"gpus": {v100: 1, a100_half: 3}})

    def notebook(name: str, gpu_type: str) -> None:
        body = {"name": name, "image": "localhost/cgu-kube/pause:1", "cpu": CPU}
        body.update(memory="256Mi", gpu_type=gpu_type, gpus=1)
        student.ok("POST", "/api/notebooks", 201, json=body)
        student.ok("POST", f"/api/notebooks/{STUDENT}/{name}/start", 202)

    notebook("volta", v100)
    node = wait_for("the V100 notebook is scheduled", lambda: node_of(admin, "volta"))
    assert node in found["Tesla-V100-SXM2-32GB"]["nodes"], node

    # The fleet has two 3g.40gb MIG instances, both on the one A100 node: a third waits.
    for name in ("half1", "half2"):
        notebook(name, a100_half)
        placed = wait_for(f"{name} is scheduled", lambda name=name: node_of(admin, name))
        assert placed in found["NVIDIA-A100-SXM4-80GB"]["nodes"], placed
    notebook("half3", a100_half)
    # The controller's GPU pool (read from the nodes when it started) knows both are
    # taken: the third waits in its queue, with its place, and no pod is made.
    said = ""
    deadline = time.monotonic() + 120
    while "next in the queue" not in said:
        assert time.monotonic() < deadline, f"half3 never said why it waits: {said!r}"
        said = student.ok("GET", f"/api/notebooks/{STUDENT}/half3").get("message") or ""
        time.sleep(1)
    assert f"queue for a '{a100_half}' GPU" in said, said
    assert student.ok("GET", f"/api/notebooks/{STUDENT}/half3")["state"] != "running"
    assert node_of(admin, "half3") == ""
    # An A100 node joins with a free 3g.40gb instance: the queue is served at once (before,
    # only a stop freeing a GPU re-checked it), and the scheduler puts half3 on that node.
    labels = {
        PRODUCT: "NVIDIA-A100-SXM4-80GB",
        "nvidia.com/gpu.memory": "81920",
        "nvidia.com/gpu.count": "1",
        "nvidia.com/mig.strategy": "mixed",
    }
    joined = add_node(kube, admin, "a100late", {"nvidia.com/mig-3g.40gb": "1"}, labels)
    try:
        assert wait_for("half3 leaves the queue and is scheduled", lambda: node_of(admin, "half3"))
        assert node_of(admin, "half3") == joined
    finally:
        admin.resource("v1", "Node").delete(name=joined)
    # what this made goes with the namespaces (test_kube_cluster's admin fixture)


# -- nodes that join, drain or leave while the controller runs ------------------------

# One student per test: a pod bound to a deleted node lingers (Terminating) until the pod
# garbage collector removes it, counted meanwhile by its namespace's GPU quota.
LATE_STUDENT, DRAIN_STUDENT = "knodes", "kdrain"
LATE_PRODUCT = "NVIDIA-L4"
TAINT = "NoSchedule"


@pytest.fixture(scope="module")
def late_student(controller):
    controller.create_user(LATE_STUDENT)
    with controller.client(LATE_STUDENT) as session:
        yield session


@pytest.fixture(scope="module")
def drain_student(controller):
    controller.create_user(DRAIN_STUDENT)
    with controller.client(DRAIN_STUDENT) as session:
        yield session


L4S = {"nvidia.com/gpu": "2"}
L4_LABELS = {
    "nvidia.com/gpu.present": "true",
    PRODUCT: LATE_PRODUCT,
    "nvidia.com/gpu.memory": "23034",
    "nvidia.com/gpu.count": "2",
    "nvidia.com/mig.strategy": "none",
}


def add_node(
    kube, admin, suffix: str, gpus: dict | None = None, gpu_labels: dict | None = None
) -> str:
    """A KWOK node, as the fleet's are made (kwok keeps it Ready and runs its pods); by
    default with two L4s (a product the fleet does not have), or the `gpus` resources and
    `gpu_labels` given (none: a CPU-only node); its name."""
    name = f"{kube['CGU_KUBE_NODE']}-gpu-{suffix}"
    gpus, gpu_labels = (L4S, L4_LABELS) if gpus is None else (gpus, gpu_labels or {})
    resources = {"cpu": "32", "memory": "256Gi", "pods": "110", **gpus}
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "type": "kwok",
        "cgu-kube/fleet": kube["CGU_KUBE_NODE"].rsplit("-", 1)[-1],  # `fleet 0` removes it
        **gpu_labels,
    }
    admin.resource("v1", "Node").create(
        body={
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": labels,
                "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
            },
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": TAINT}]},
            "status": {"capacity": resources, "allocatable": resources},
        }
    )

    def ready() -> bool:
        # kwok reports the node Ready as a kubelet would; until it has, the node lifecycle
        # controller may taint it, and a pod placed meanwhile be evicted.
        conditions = (admin.get("v1", "Node", name) or {}).get("status", {}).get("conditions")
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions or [])

    wait_for(f"{name} is Ready", ready)
    return name


def late_pod_node(admin, user: str, name: str) -> str:
    pod = admin.get("v1", "Pod", f"{name}-0", f"{cluster.USER_PREFIX}{user}") or {}
    return pod.get("spec", {}).get("nodeName") or ""


def run_on_late_node(admin, root, session, user: str, name: str, node: str) -> str:
    """`user`'s notebook of the L4 type, started and running on `node`; the type's name."""
    found = wait_for("the new node's GPUs are listed", lambda: products(root).get(LATE_PRODUCT))
    assert found["nodes"] == [node], found
    gpu_type = save_proposal(root, found, "nvidia.com/gpu")
    root.ok("PUT", f"/api/users/{user}/quota", json={"gpus": {gpu_type: 1}})
    body = {"name": name, "image": "localhost/cgu-kube/pause:1", "cpu": CPU}
    body.update(memory="256Mi", gpu_type=gpu_type, gpus=1)
    session.ok("POST", "/api/notebooks", 201, json=body)
    session.ok("POST", f"/api/notebooks/{user}/{name}/start", 202)

    def running() -> bool:
        nb = session.ok("GET", f"/api/notebooks/{user}/{name}")
        # (state and message first: pytest cuts a long dict before the message)
        said = f"{nb['state']}: {nb.get('message')!r} ({nb})"
        assert nb["state"] in {"starting", "running", "queued"}, said
        return nb["state"] == "running"

    wait_for(f"{name} runs", running, timeout=180)
    assert late_pod_node(admin, user, name) == node
    return gpu_type


def stopped_because(session, user: str, name: str, reason: str) -> dict:
    def check():
        nb = session.ok("GET", f"/api/notebooks/{user}/{name}")
        return nb if nb["state"] != "running" and reason in (nb.get("message") or "") else None

    return wait_for(f"{name} is marked '{reason}'", check, timeout=60)


def test_a_node_added_later_is_usable_and_its_removal_marks_its_notebook(
    fleet, kube, admin, root, late_student
):
    """Before the Node watch, a GPU node that joined after the controller started was
    refused ("this platform has no GPU of type ..."), and a deleted one went unnoticed
    until the pod garbage collector removed its pods."""
    node = add_node(kube, admin, "late")
    try:
        run_on_late_node(admin, root, late_student, LATE_STUDENT, "joined", node)
        admin.resource("v1", "Node").delete(name=node)
        nb = stopped_because(late_student, LATE_STUDENT, "joined", f"its node {node} was removed")
        assert nb["state"] in {"stopped", "stopping"}, nb
        # the GPUs page no longer lists the node's product
        wait_for("the L4 leaves the GPUs page", lambda: LATE_PRODUCT not in products(root))
    finally:
        if admin.get("v1", "Node", node):
            admin.resource("v1", "Node").delete(name=node)
    late_student.ok("DELETE", f"/api/notebooks/{LATE_STUDENT}/joined")


def cordon(admin, node: str, on: bool) -> None:
    admin.resource("v1", "Node").patch(
        name=node,
        body={"spec": {"unschedulable": on or None}},
        content_type="application/merge-patch+json",
    )


def message_says(session, text: str) -> dict | None:
    """The drain student's notebook when its message says `text`."""
    nb = session.ok("GET", f"/api/notebooks/{DRAIN_STUDENT}/drained")
    return nb if text in (nb.get("message") or "") else None


def test_a_drained_nodes_notebook_is_marked_with_the_drain(fleet, kube, admin, root, drain_student):
    """A drain cordons the node, then evicts its pods: the notebook's server is gone,
    and its owner is told it was the node's drain, not a crash."""
    node = add_node(kube, admin, "drained")
    try:
        run_on_late_node(admin, root, drain_student, DRAIN_STUDENT, "drained", node)
        # Cordoned, not drained: the notebook runs on, and its owner is told why its GPU
        # left the pool; uncordoned, the message goes.
        cordon(admin, node, True)
        told = f"Its node {node} is cordoned"
        nb = wait_for("the owner is told of the cordon", lambda: message_says(drain_student, told))
        assert nb["state"] == "running", nb
        cordon(admin, node, False)
        wait_for("the cordon's message goes", lambda: not message_says(drain_student, told))
        cordon(admin, node, True)
        namespace = f"{cluster.USER_PREFIX}{DRAIN_STUDENT}"
        admin.resource("v1", "Pod").delete(name="drained-0", namespace=namespace)
        reason = f"its node {node} is being drained"
        stopped_because(drain_student, DRAIN_STUDENT, "drained", reason)
    finally:
        admin.resource("v1", "Node").delete(name=node)
    drain_student.ok("DELETE", f"/api/notebooks/{DRAIN_STUDENT}/drained")


def test_monitoring_lists_every_node_cpu_only_ones_too(fleet, kube, admin, root):
    """The monitoring page listed only nodes with GPUs; a CPU-only node (and what each GPU
    node offers) was nowhere to be seen."""
    cpu_node = add_node(kube, admin, "cpuonly", gpus={})
    try:

        def listed() -> dict | None:
            nodes = {n["node"]: n for n in root.ok("GET", "/api/monitoring")["nodes"]}
            return nodes if cpu_node in nodes and "cluster" in nodes[cpu_node] else None

        nodes = wait_for("the CPU-only node is on the monitoring page", listed, timeout=60)
        assert nodes[cpu_node]["cluster"]["product"] == ""
        assert nodes[cpu_node]["cluster"]["cpu_cores"] == 32
        fleet_nodes = [
            n for n in nodes.values() if n["node"].startswith(f"{kube['CGU_KUBE_NODE']}-gpu-")
        ]
        assert len(fleet_nodes) >= FLEET + 1, sorted(nodes)
        h100 = next(
            n["cluster"] for n in fleet_nodes if n["cluster"]["product"] == "NVIDIA-H100-80GB-HBM3"
        )
        assert h100["mig"] == {"1g.10gb": 14, "2g.20gb": 6} and h100["whole"] == 4, h100
        assert nodes[kube["CGU_KUBE_NODE"]]["cluster"]["product"] == "NVIDIA-RTX-A5000"
    finally:
        admin.resource("v1", "Node").delete(name=cpu_node)

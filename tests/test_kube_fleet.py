"""Issue 27, items 2 and 4 without a cluster: the fleet's GPU products, node affinity,
and Kubeflow's conventions (profile namespaces, NB_PREFIX, PodDefaults).

Nodes are shaped as NVIDIA's GPU Feature Discovery labels them and its device plugin
advertises them; built objects go through test_kube_objects' `validate` (Kubernetes'
own schema, our CRDs and, where present, the upstream Notebook CRD). No PodDefault CRD
is among the upstream CRDs (/work/shared/upstream-crds), so the PodDefaults read here
are shaped from Kubeflow's documented fields (kubeflow.org/v1alpha1: spec.desc,
spec.selector.matchLabels, env, volumes...)."""

from __future__ import annotations

import dataclasses
import re

import pytest

from cgu_lab.backends import kube_companions as companions
from cgu_lab.backends import kube_names as names
from cgu_lab.backends import kube_namespaces as namespaces
from cgu_lab.backends import kube_objects as objects
from cgu_lab.backends.base import EnvironmentSpec
from cgu_lab.backends.kube_nodes import (
    gpu_devices,
    node_gpus,
    node_summaries,
    not_ready,
    pod_default_choices,
)
from cgu_lab.backends.kube_settings import KubeSettings
from cgu_lab.controller.environments.catalog import offer_of
from cgu_lab.controller.gpus.service import product_out
from cgu_lab.core.errors import Invalid
from cgu_lab.core.gpu_fleet import PRODUCT, inventory, products_matching, sliced_product
from cgu_lab.core.gpus import Holding, capacity, check_gpu_type_resource, place
from cgu_lab.core.names import LABEL_PATTERN
from cgu_lab.store.models import GpuType

from .test_kube_objects import KUBE, UPSTREAM, UPSTREAM_SCHEMAS, created, make_spec, validate


def gfd_node(name, product, count, memory, allocatable, arch="amd64", **labels):
    """A node as GPU Feature Discovery labels it and the device plugin fills it."""
    node_labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/arch": arch,
        PRODUCT: product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.memory": str(memory),
        "nvidia.com/gpu.present": "true",
        **labels,
    }
    resources = {"cpu": "32", "memory": "256Gi", "pods": "110", **allocatable}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": node_labels},
        "spec": {},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def school_fleet() -> list[dict]:
    nodes = [
        gfd_node(f"a5000-{i}", "NVIDIA-RTX-A5000", 4, 24564, {"nvidia.com/gpu": "4"})
        for i in range(3)
    ]
    nodes += [
        gfd_node(f"v100-{i}", "Tesla-V100-SXM2-32GB", 8, 32768, {"nvidia.com/gpu": "8"})
        for i in range(2)
    ]
    nodes += [
        gfd_node(f"p4000-{i}", "Quadro-P4000", 1, 8192, {"nvidia.com/gpu": "1"}) for i in range(4)
    ]
    # One A100 in MIG (mixed: seven 1g.10gb), one not: mixed strategy on an 80GB board.
    nodes.append(
        gfd_node(
            "a100-0",
            "NVIDIA-A100-SXM4-80GB",
            2,
            81920,
            {"nvidia.com/gpu": "1", "nvidia.com/mig-1g.10gb": "7"},
            **{"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig.capable": "true"},
        )
    )
    # Time-slicing renamed (renameByDefault): 2 GPUs x 4 replicas as nvidia.com/gpu.shared.
    nodes.append(
        gfd_node(
            "t4-shared-0",
            "Tesla-T4",
            2,
            15360,
            {"nvidia.com/gpu.shared": "8"},
            **{"nvidia.com/gpu.replicas": "4"},
        )
    )
    # arm64 Jetson-class board.
    nodes.append(
        gfd_node("orin-0", "NVIDIA-Jetson-AGX-Orin", 1, 65536, {"nvidia.com/gpu": "1"}, "arm64")
    )
    # A drained V100 node: listed, counts nothing.
    drained = gfd_node("v100-9", "Tesla-V100-SXM2-32GB", 8, 32768, {"nvidia.com/gpu": "8"})
    drained["spec"]["unschedulable"] = True
    nodes.append(drained)
    # A CPU node without GFD labels.
    nodes.append({"metadata": {"name": "cpu-0", "labels": {}}, "status": {"allocatable": {}}})
    return nodes


def by_product():
    return {p.product: p for p in inventory(node_gpus(school_fleet()))}


def test_inventory_counts_products_slices_and_drained_nodes():
    products = by_product()
    assert set(products) == {
        "NVIDIA-RTX-A5000",
        "Tesla-V100-SXM2-32GB",
        "Quadro-P4000",
        "NVIDIA-A100-SXM4-80GB",
        "Tesla-T4",
        "NVIDIA-Jetson-AGX-Orin",
    }
    a5000 = products["NVIDIA-RTX-A5000"]
    assert (a5000.gpus, a5000.whole, len(a5000.nodes), a5000.memory_mib) == (12, 12, 3, 24564)
    v100 = products["Tesla-V100-SXM2-32GB"]
    assert (v100.gpus, v100.whole, v100.unschedulable) == (16, 16, ["v100-9"])
    assert products["Quadro-P4000"].whole == 4
    a100 = products["NVIDIA-A100-SXM4-80GB"]
    assert (a100.mig_strategy, a100.mig, a100.whole) == ("mixed", {"1g.10gb": 7}, 1)
    t4 = products["Tesla-T4"]
    assert (t4.replicas, t4.slices, t4.slice_resource, t4.whole, t4.gpus) == (
        4,
        8,
        "nvidia.com/gpu.shared",
        0,
        2,
    )
    assert products["NVIDIA-Jetson-AGX-Orin"].archs == {"arm64"}
    # Most GPUs first.
    assert inventory(node_gpus(school_fleet()))[0].product == "Tesla-V100-SXM2-32GB"


def test_monitoring_lists_every_node_with_its_gpus_cpu_only_and_cordoned_ones_too():
    """Monitoring once showed only nodes with GPUs: a CPU-only node, or a cordoned one whose
    GPUs left the pool, was not on the page at all."""
    nodes = school_fleet()
    for node in nodes:
        node["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    nodes[-1]["status"]["allocatable"] = {"cpu": "7500m", "memory": "16Gi", "pods": "110"}
    rows = {row["node"]: row for row in node_summaries(nodes)}
    assert set(rows) == {node["metadata"]["name"] for node in nodes}
    cpu = rows["cpu-0"]
    assert (cpu["product"], cpu["gpus"], cpu["cpu_cores"], cpu["memory_bytes"]) == (
        "",
        0,
        7.5,
        16 * 2**30,
    )
    # the cordoned V100 node is listed with its GPUs, marked as taking no pods
    drained = rows["v100-9"]
    assert (drained["schedulable"], drained["gpus"], drained["whole"]) == (False, 8, 8)
    assert rows["a100-0"]["mig"] == {"1g.10gb": 7} and rows["a100-0"]["whole"] == 1
    t4 = rows["t4-shared-0"]
    assert (t4["slices"], t4["replicas"], t4["whole"], t4["gpus"]) == (8, 4, 0, 2)
    assert rows["orin-0"]["arch"] == "arm64" and rows["a5000-0"]["cpu_cores"] == 32
    # a node whose kubelet stopped reporting is not ready
    nodes[0]["status"]["conditions"] = [{"type": "Ready", "status": "Unknown"}]
    late = {row["node"]: row for row in node_summaries(nodes)}
    assert late["a5000-0"]["ready"] is False and late["a5000-1"]["ready"] is True
    # the pool's devices and the page agree on every node that takes pods (uncordoned and
    # ready); the one not ready offers none, though the page shows what it has
    devices = gpu_devices(nodes)
    for name, row in late.items():
        offered = sum(1 for d in devices if d.node == name)
        if row["schedulable"] and row["ready"] and not row["slices"]:
            assert offered == row["whole"] + sum(row["mig"].values()), name
    assert late["a5000-0"]["whole"] == 4 and not [d for d in devices if d.node == "a5000-0"]


def test_a_node_that_stopped_answering_offers_nothing_and_says_why():
    """A dead node (its kubelet silent, Ready Unknown) kept its GPUs in the pool: the
    controller admitted starts that the scheduler could only leave Pending."""
    nodes = school_fleet()
    dead = nodes[0]
    silent = "Kubelet stopped posting node status."
    dead["status"]["conditions"] = [
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": silent}
    ]
    assert not_ready(dead) == silent
    assert not_ready(nodes[1]) == ""  # no Ready condition posted: taken at its word
    assert not [d for d in gpu_devices(nodes) if d.node == dead["metadata"]["name"]]
    a5000 = {p.product: p for p in inventory(node_gpus(nodes))}["NVIDIA-RTX-A5000"]
    assert (a5000.unschedulable, a5000.whole, len(a5000.nodes)) == (["a5000-0"], 8, 2)
    # monitoring still shows what it has, as not ready (and not cordoned)
    row = {r["node"]: r for r in node_summaries(nodes)}["a5000-0"]
    assert (row["ready"], row["schedulable"], row["whole"]) == (False, True, 4)
    dead["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "reason": "KubeletNotReady"}
    ]
    assert not_ready(dead) == "KubeletNotReady: False"


def test_every_proposal_is_a_type_the_gpus_api_accepts():
    names_seen = set()
    for product in by_product().values():
        for proposal in product.proposals():
            assert proposal.name not in names_seen
            names_seen.add(proposal.name)
            assert re.match(LABEL_PATTERN, proposal.name)
            sliced = sliced_product(product.product)
            assert (
                check_gpu_type_resource(
                    proposal.resource_name, proposal.share, proposal.mig_profile, sliced
                )
                == proposal.resource_name
            )
            assert proposal.node_selector == {PRODUCT: product.product}
    proposals = {p.name: p for product in by_product().values() for p in product.proposals()}
    assert {"rtx-a5000-whole", "v100-sxm2-32gb-whole", "p4000-whole", "t4-shared"} <= set(proposals)
    mig = proposals["a100-sxm4-80gb-mig-1g-10gb"]
    assert (mig.resource_name, mig.mig_profile, mig.capacity) == (
        "nvidia.com/mig-1g.10gb",
        "1g.10gb",
        7,
    )
    assert (proposals["t4-shared"].share, proposals["t4-shared"].capacity) == (4, 8)
    assert proposals["v100-sxm2-32gb-whole"].capacity == 16  # the drained node offers nothing


def test_single_mig_and_unrenamed_time_slicing_say_what_to_change():
    single = gfd_node(
        "a30-0",
        "NVIDIA-A30-MIG-1g.6gb",
        1,
        24576,
        {"nvidia.com/gpu": "4"},
        **{"nvidia.com/mig.strategy": "single"},
    )
    sliced = gfd_node(
        "a4000-0",
        "NVIDIA-RTX-A4000-SHARED",
        1,
        16376,
        {"nvidia.com/gpu": "4"},
        **{"nvidia.com/gpu.replicas": "4"},
    )
    products = {p.product: p for p in inventory(node_gpus([single, sliced]))}
    a30 = products["NVIDIA-A30-MIG-1g.6gb"]
    assert a30.mig == {"1g.6gb": 4} and a30.whole == 0 and "mixed" in a30.notes[0]
    a4000 = products["NVIDIA-RTX-A4000-SHARED"]
    assert a4000.whole == 0 and a4000.slices == 4 and "renameByDefault" in a4000.notes[0]
    # Neither offers a type the platform would misplace (a whole GPU on a slice): the
    # unrenamed slices are offered as a shared type of their own, on their resource.
    [shared] = a4000.proposals()
    assert (shared.name, shared.resource_name, shared.share, shared.capacity) == (
        "rtx-a4000-shared",
        "nvidia.com/gpu",
        4,
        4,
    )
    assert shared.node_selector == {PRODUCT: "NVIDIA-RTX-A4000-SHARED"}
    assert [p.resource_name for p in a30.proposals()] == ["nvidia.com/mig-1g.6gb"]
    with pytest.raises(Invalid):
        check_gpu_type_resource("nvidia.com/gpu", 1, "1g.6gb")
    # On sliced nodes nvidia.com/gpu is a slice: a whole-GPU type is refused there, and
    # off them a shared type still may not hold whole GPUs.
    with pytest.raises(Invalid, match="time-sliced"):
        check_gpu_type_resource("nvidia.com/gpu", 1, "", sliced=True)
    assert check_gpu_type_resource("nvidia.com/gpu.shared", 4, "", sliced=True)
    with pytest.raises(Invalid):
        check_gpu_type_resource("nvidia.com/gpu", 4, "")


def test_time_sliced_a5000s_get_a_type_of_their_own_and_whole_ones_stay_whole():
    """Beside whole A5000 nodes, time-sliced ones that GFD calls NVIDIA-RTX-A5000-SHARED
    (as scripts/kube-cluster.sh's fleet has them): each product proposes its own type,
    each type is placed by the allocator only on its product's devices (the models
    "NVIDIA-RTX-A5000" are a substring of both), and the fleet API counts each type
    under its own product only."""
    nodes = [gfd_node("a5000-0", "NVIDIA-RTX-A5000", 4, 24564, {"nvidia.com/gpu": "4"})]
    nodes.append(
        gfd_node(
            "a5000-sliced-0",
            "NVIDIA-RTX-A5000-SHARED",
            4,
            24564,
            {"nvidia.com/gpu": "16"},
            **{"nvidia.com/gpu.replicas": "4"},
        )
    )
    products = {p.product: p for p in inventory(node_gpus(nodes))}
    proposals = {p.name: p for product in products.values() for p in product.proposals()}
    assert sorted(proposals) == ["rtx-a5000-shared", "rtx-a5000-whole"]
    whole, shared = proposals["rtx-a5000-whole"], proposals["rtx-a5000-shared"]
    assert whole.node_selector == {PRODUCT: "NVIDIA-RTX-A5000"}
    assert (shared.resource_name, shared.share, shared.capacity) == ("nvidia.com/gpu", 4, 16)
    assert "shared by 4" in shared.display_name and "whole" in whole.display_name

    types = {
        name: GpuType(
            name=name,
            display_name=p.display_name,
            resource_name=p.resource_name,
            share=p.share,
            mig_profile=p.mig_profile,
            models={"include": list(p.models)},
            node_selector=dict(p.node_selector),
        )
        for name, p in proposals.items()
    }
    devices = gpu_devices(nodes)
    offers = {name: offer_of(t) for name, t in types.items()}
    for name, offer in offers.items():
        nodes_of = {d.node for d in devices if offer.accepts(d)}
        assert nodes_of == {"a5000-0" if name == "rtx-a5000-whole" else "a5000-sliced-0"}
    assert capacity(devices, offers["rtx-a5000-whole"]) == 4
    assert capacity(devices, offers["rtx-a5000-shared"]) == 16
    # The whole type never takes a slice, even with every whole GPU held.
    whole_gpus = [d.id for d in devices if d.node == "a5000-0"]
    held = [Holding(i, "rtx-a5000-whole", (d,)) for i, d in enumerate(whole_gpus, 1)]
    assert place(devices, held, offers["rtx-a5000-whole"], 1) is None
    # Without a pinned product, models still select by substring (as before).
    loose = dataclasses.replace(offers["rtx-a5000-whole"], product="")
    assert {d.node for d in devices if loose.accepts(d)} == {"a5000-0", "a5000-sliced-0"}

    listed = {p.product: product_out(p, types.values()).existing_types for p in products.values()}
    assert listed == {
        "NVIDIA-RTX-A5000": ["rtx-a5000-whole"],
        "NVIDIA-RTX-A5000-SHARED": ["rtx-a5000-shared"],
    }


def test_inventory_agrees_with_the_allocators_devices():
    """The page's counts and the allocator's devices come from the same nodes."""
    nodes = school_fleet()
    devices = gpu_devices(nodes)
    products = inventory(node_gpus(nodes))
    whole = sum(p.whole for p in products)
    mig = sum(sum(p.mig.values()) for p in products)
    shared_devices = sum(p.slices // max(1, p.replicas) for p in products)
    assert len(devices) == whole + mig + shared_devices


def test_products_matching_turns_models_into_label_values():
    found = ["NVIDIA-RTX-A5000", "Tesla-V100-SXM2-32GB", "Tesla-V100-PCIE-16GB", "Quadro-P4000"]
    assert products_matching(found, ["v100"]) == ["Tesla-V100-PCIE-16GB", "Tesla-V100-SXM2-32GB"]
    assert products_matching(found, ["A5000", "P4000"]) == ["NVIDIA-RTX-A5000", "Quadro-P4000"]
    assert products_matching(found, []) == []


# -- node affinity: the product and the image's architecture --------------------------


def affinity_terms(pod: dict) -> list[dict]:
    required = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return required["nodeSelectorTerms"][0]["matchExpressions"]


def test_a_notebook_lands_on_its_product_and_its_images_architecture():
    spec = make_spec(
        node_selector={},
        node_affinity={PRODUCT: ("Tesla-V100-SXM2-32GB", "Tesla-V100-PCIE-16GB")},
        environment=EnvironmentSpec("pytorch-arm", "registry.example.edu/nb:arm", arch="arm64"),
    )
    ref = names.Naming().notebook(spec.owner, spec.name)
    notebook = objects.notebook(ref, spec, KUBE)
    validate(notebook)
    pod = notebook["spec"]["template"]["spec"]
    assert affinity_terms(pod) == [
        {
            "key": PRODUCT,
            "operator": "In",
            "values": ["Tesla-V100-PCIE-16GB", "Tesla-V100-SXM2-32GB"],
        },
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
    ]
    vm = objects.virtual_machine(ref, dataclasses.replace(spec, kind="vm"), KUBE, running=True)
    validate(vm)
    assert affinity_terms(vm["spec"]["template"]["spec"])[1]["values"] == ["arm64"]
    # Nothing to narrow: no affinity at all (today's objects unchanged).
    plain = objects.notebook(ref, make_spec(), KUBE)
    assert "affinity" not in plain["spec"]["template"]["spec"]


# -- Kubeflow's conventions -------------------------------------------------------------

KUBEFLOW = KUBE.replace(
    namespace_naming="kubeflow",
    notebook_paths="kubeflow",
    notebook_controller="kubeflow",
    ingress_header="kubeflow-userid",
)


def test_profile_namespaces_are_named_as_kubeflow_names_them():
    assert names.kubeflow_profile("user@example.com") == "kubeflow-user-example-com"
    assert names.kubeflow_profile("Jane.Doe@Uni.EDU") == "kubeflow-jane-doe-uni-edu"
    long = names.kubeflow_profile("a" * 70 + "@example.com")
    assert len(long) <= 63 and long.startswith("kubeflow-")
    naming = names.Naming(kubeflow=True)
    assert naming.notebook("jane.doe", "hw1") == names.ObjectRef("kubeflow-jane-doe", "hw1")
    assert naming.managed("kubeflow-jane-doe") and naming.managed("cgu-g-course")
    # The default keeps today's names and never claims Kubeflow's profiles.
    assert names.Naming().user_namespace("jane.doe") == "cgu-u-jane-doe--d48722fc"
    assert not names.Naming().managed("kubeflow-jane-doe")
    assert KubeSettings.from_env({"CGU_LAB_KUBE_NAMESPACE_NAMING": "kubeflow"}).namespace_naming


def test_a_profile_namespace_is_used_only_for_its_owner():
    profile = {"metadata": {"name": "kubeflow-jane-doe", "annotations": {"owner": "jane.doe"}}}
    assert namespaces.kubeflow_profile_of(profile, "jane.doe", KUBEFLOW)
    assert not namespaces.kubeflow_profile_of(profile, "jane-doe", KUBEFLOW)
    assert not namespaces.kubeflow_profile_of(profile, "jane.doe", KUBE)


def test_nb_prefix_is_kubeflows_path_in_kubeflow_mode():
    spec = make_spec()
    ref = names.Naming(kubeflow=True).notebook(spec.owner, spec.name)
    notebook = objects.notebook(ref, spec, KUBEFLOW)
    validate(notebook)
    container = notebook["spec"]["template"]["spec"]["containers"][0]
    env = {item["name"]: item.get("value") for item in container["env"]}
    assert env["NB_PREFIX"] == "/notebook/kubeflow-john-doe/hw1"
    assert "--ServerApp.base_url=/notebook/kubeflow-john-doe/hw1/" in container["args"]
    rewrite = notebook["metadata"]["annotations"][names.HTTP_REWRITE_URI]
    assert rewrite == "/notebook/kubeflow-john-doe/hw1/"
    # Standalone mode: the controller's path, as before.
    default = objects.notebook(names.Naming().notebook(spec.owner, spec.name), spec, KUBE)
    container = default["spec"]["template"]["spec"]["containers"][0]
    assert {item["name"]: item.get("value") for item in container["env"]}["NB_PREFIX"] == (
        "/notebook/john.doe/hw1"
    )


@UPSTREAM
def test_pod_default_labels_reach_the_notebook_and_its_pod():
    assert "Notebook" in UPSTREAM_SCHEMAS
    spec = make_spec(pod_labels={"access-ml-pipeline": "true", "add-gcp-secret": "true"})
    ref = names.Naming(kubeflow=True).notebook(spec.owner, spec.name)
    notebook = objects.notebook(ref, spec, KUBEFLOW)
    validate(notebook)
    assert notebook["metadata"]["labels"]["access-ml-pipeline"] == "true"
    # The platform's own labels cannot be overridden by a PodDefault's selector.
    sneaky = make_spec(pod_labels={names.MANAGED_BY: "someone-else"})
    assert objects.notebook(ref, sneaky, KUBEFLOW)["metadata"]["labels"][names.MANAGED_BY] == (
        names.PLATFORM
    )
    # Builtin mode: the StatefulSet gives its pods the Notebook's labels, as Kubeflow does.
    builtin = KUBE.replace(namespace_naming="kubeflow")
    statefulset = companions.statefulset(created(objects.notebook(ref, spec, builtin)))
    validate(statefulset)
    assert statefulset["spec"]["template"]["metadata"]["labels"]["add-gcp-secret"] == "true"


def pod_default(name, desc, labels, **spec):
    """A PodDefault as Kubeflow documents it (admission-webhook, kubeflow.org/v1alpha1)."""
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "PodDefault",
        "metadata": {"name": name, "namespace": "kubeflow-jane-doe"},
        "spec": {"desc": desc, "selector": {"matchLabels": labels}, **spec},
    }


def test_pod_defaults_are_offered_by_their_desc_and_chosen_by_their_labels():
    listed = [
        pod_default(
            "access-ml-pipeline",
            "Allow access to Kubeflow Pipelines",
            {"access-ml-pipeline": "true"},
            env=[{"name": "KF_PIPELINES_SA_TOKEN_PATH", "value": "/var/run/secrets/token"}],
        ),
        pod_default("add-gcp-secret", "", {"add-gcp-secret": "true"}),
        {
            "metadata": {"name": "by-expression"},
            "spec": {"desc": "x", "selector": {"matchExpressions": []}},
        },
    ]
    assert pod_default_choices(listed) == [
        {
            "name": "access-ml-pipeline",
            "desc": "Allow access to Kubeflow Pipelines",
            "labels": {"access-ml-pipeline": "true"},
        },
        {"name": "add-gcp-secret", "desc": "add-gcp-secret", "labels": {"add-gcp-secret": "true"}},
    ]


def test_the_controller_may_list_pod_defaults_in_its_namespaces_only():
    from cgu_lab.backends.kube_api import MANAGED, PERMISSIONS

    assert PERMISSIONS[MANAGED][("PodDefault", "")] == frozenset({"list"})

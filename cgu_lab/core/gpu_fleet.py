"""A cluster's GPU products, counts and slices, and the GPU types an admin could make of them.

Why this exists: a school's fleet mixes products (RTX A5000 x4 per node, V100 x8,
P4000 x1, A100s split by MIG, time-sliced GPUs, arm64 Jetson boards), and a GPU type
(`core.gpus`) must name the exact Kubernetes resource and node label to land on one of
them. Typing `nvidia.com/mig-1g.10gb` and `NVIDIA-A100-SXM4-80GB` by hand is where
mistakes come from, so the fleet is read from what NVIDIA's GPU Feature Discovery and
device plugin put on each node, grouped by product, and each product proposes the
types it can back, ready to save.

Pure: it takes each node as its name, labels, allocatable resources and whether it
takes pods (`NodeGpus`); the backend reads the nodes (backends/kube_nodes.py).

What the labels and resources mean (NVIDIA's k8s-device-plugin and GFD):
- `nvidia.com/gpu.product` the product (GFD appends `-SHARED` under time-slicing
  without `renameByDefault`, and `-MIG-<profile>` under the `single` MIG strategy);
  `nvidia.com/gpu.memory` MiB per GPU; `nvidia.com/gpu.count` physical GPUs;
  `nvidia.com/gpu.replicas` time-slices per GPU; `nvidia.com/mig.strategy`
  none/single/mixed; `kubernetes.io/arch` the node's architecture.
- resources: `nvidia.com/gpu` whole GPUs (or slices, or single-strategy MIG
  instances), `nvidia.com/gpu.shared` renamed time-slices, `nvidia.com/mig-<profile>`
  MIG instances under `mixed`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

PRODUCT = "nvidia.com/gpu.product"
MEMORY = "nvidia.com/gpu.memory"
COUNT = "nvidia.com/gpu.count"
REPLICAS = "nvidia.com/gpu.replicas"
MIG_STRATEGY = "nvidia.com/mig.strategy"
ARCH = "kubernetes.io/arch"
WHOLE = "nvidia.com/gpu"
SHARED = "nvidia.com/gpu.shared"
MIG_PREFIX = "nvidia.com/mig-"
# GFD's product suffix when time-slices are not renamed: nvidia.com/gpu there is a slice.
SLICED_SUFFIX = "-SHARED"

_SINGLE_MIG = re.compile(r"-MIG-(\d+g\.\d+gb)$")
# Vendor words left out of a type's proposed name: "NVIDIA-RTX-A5000" -> "rtx-a5000".
_VENDOR_WORDS = ("nvidia-", "tesla-", "quadro-", "geforce-")
_NOT_IN_NAME = re.compile(r"[^a-z0-9]+")
# A GPU type's name is a DNS label; its suffix ("-mig-3g-40gb") must fit beside the product.
_NAME_LENGTH = 63


@dataclass(frozen=True)
class NodeGpus:
    """What one node says about its GPUs: labels and allocatable resources, as read."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    allocatable: Mapping[str, str] = field(default_factory=dict)
    schedulable: bool = True


@dataclass(frozen=True)
class Proposal:
    """A GPU type an admin can save as is (the fields of PUT /api/gpu-types/{name})."""

    name: str
    display_name: str
    resource_name: str
    share: int = 1
    mig_profile: str = ""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    models: tuple[str, ...] = ()
    capacity: int = 0  # notebooks of one GPU each the fleet's product could hold


@dataclass
class Product:
    """One GPU product (one value of `nvidia.com/gpu.product`) across the fleet."""

    product: str
    memory_mib: int = 0
    archs: set[str] = field(default_factory=set)
    nodes: list[str] = field(default_factory=list)
    unschedulable: list[str] = field(default_factory=list)
    gpus: int = 0  # physical GPUs (gpu.count), on schedulable nodes
    whole: int = 0  # allocatable nvidia.com/gpu that are whole GPUs
    replicas: int = 0  # time-slices per GPU (0: not time-sliced)
    slices: int = 0  # allocatable time-slices (nvidia.com/gpu.shared or sliced nvidia.com/gpu)
    slice_resource: str = ""
    mig_strategy: str = ""
    mig: dict[str, int] = field(default_factory=dict)  # profile -> allocatable instances
    notes: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        """The product without GFD's sharing or single-MIG suffix, for names and models."""
        return _SINGLE_MIG.sub("", self.product).removesuffix(SLICED_SUFFIX)

    def proposals(self) -> list[Proposal]:
        """The GPU types this product can back: whole, time-shared and one per MIG profile.

        Each lands only on nodes of this product (`node_selector` on the exact label
        value, which the Kubernetes backend turns into node affinity, and which the
        controller's allocator also holds to: `core.gpus.Offer.product`). A product whose
        time-slices stay `nvidia.com/gpu` (GFD's `-SHARED` products) gets its own shared
        type on that resource, named apart from the whole type of the same GPU
        ("rtx-a5000-shared" beside "rtx-a5000-whole")."""
        stem = type_stem(self.base)
        selector = {PRODUCT: self.product}
        shown = display_product(self.base)
        found: list[Proposal] = []
        if self.whole:
            found.append(
                Proposal(
                    f"{stem}-whole",
                    f"{shown} (whole GPU)",
                    WHOLE,
                    node_selector=selector,
                    models=(self.base,),
                    capacity=self.whole,
                )
            )
        if self.slices and self.replicas > 1 and self.slice_resource in self._slice_resources():
            found.append(
                Proposal(
                    f"{stem}-shared",
                    f"{shown} (shared by {self.replicas})",
                    self.slice_resource,
                    share=self.replicas,
                    node_selector=selector,
                    models=(self.base,),
                    capacity=self.slices,
                )
            )
        for profile, count in sorted(self.mig.items()):
            if count <= 0:
                continue
            suffix = "-mig-" + _NOT_IN_NAME.sub("-", profile)
            found.append(
                Proposal(
                    f"{stem[: _NAME_LENGTH - len(suffix)].rstrip('-')}{suffix}",
                    f"{shown} MIG {profile}",
                    MIG_PREFIX + profile,
                    mig_profile=profile,
                    node_selector=selector,
                    models=(self.base,),
                    capacity=count,
                )
            )
        return found

    def _slice_resources(self) -> tuple[str, ...]:
        """The slice resources a shared type may ask for here: renamed slices anywhere;
        `nvidia.com/gpu` only on a `-SHARED` product, where every one is a slice."""
        return (SHARED, WHOLE) if sliced_product(self.product) else (SHARED,)


def sliced_product(product: str) -> bool:
    """Whether GFD marked the product's `nvidia.com/gpu` as time-slices (`-SHARED`)."""
    return product.endswith(SLICED_SUFFIX)


def type_stem(product: str) -> str:
    """A GPU type name's stem from a product: "Tesla-V100-SXM2-32GB" -> "v100-sxm2-32gb"."""
    stem = product.lower()
    for word in _VENDOR_WORDS:
        stem = stem.replace(word, "")
    stem = _NOT_IN_NAME.sub("-", stem).strip("-") or "gpu"
    return stem[:50].rstrip("-")


def display_product(product: str) -> str:
    """A product as people write it: "NVIDIA-RTX-A5000" -> "NVIDIA RTX A5000"."""
    return product.replace("-", " ")


def _count(value: str | None) -> int:
    try:
        return max(0, int(str(value)))
    except (TypeError, ValueError):
        return 0


def inventory(nodes: Iterable[NodeGpus]) -> list[Product]:
    """The fleet's products, most GPUs first; nodes without a product label are skipped.

    Counts are what nodes taking pods can allocate; a cordoned or not-ready node is listed under
    `unschedulable` and counts nothing, so a drained rack shows as such."""
    products: dict[str, Product] = {}
    for node in nodes:
        label = node.labels.get(PRODUCT, "")
        if not label:
            continue
        item = products.setdefault(label, Product(label))
        item.memory_mib = item.memory_mib or _count(node.labels.get(MEMORY))
        if node.labels.get(ARCH):
            item.archs.add(node.labels[ARCH])
        if not node.schedulable:
            item.unschedulable.append(node.name)
            continue
        item.nodes.append(node.name)
        _add_node(item, node)
    return sorted(products.values(), key=lambda p: (-(p.gpus or p.whole), p.product))


def _add_node(item: Product, node: NodeGpus) -> None:
    labels, allocatable = node.labels, node.allocatable
    strategy = labels.get(MIG_STRATEGY, "")
    if strategy and strategy != "none":
        item.mig_strategy = item.mig_strategy or strategy
    replicas = _count(labels.get(REPLICAS))
    gpu = _count(allocatable.get(WHOLE))
    shared = _count(allocatable.get(SHARED))
    for resource, value in allocatable.items():
        if resource.startswith(MIG_PREFIX) and not resource.endswith(".shared"):
            profile = resource[len(MIG_PREFIX) :]
            item.mig[profile] = item.mig.get(profile, 0) + _count(value)
    single = _SINGLE_MIG.search(item.product)
    if single:
        item.mig[single.group(1)] = item.mig.get(single.group(1), 0) + gpu
        _note(
            item,
            "MIG strategy 'single' offers its instances as nvidia.com/gpu; the platform "
            "places MIG types on nvidia.com/mig-<profile>: use the 'mixed' strategy",
        )
        gpu = 0
    if replicas > 1:
        item.replicas = max(item.replicas, replicas)
        if shared:
            item.slices += shared
            item.slice_resource = SHARED
        elif gpu:
            item.slices += gpu
            item.slice_resource = item.slice_resource or WHOLE
            _note(
                item,
                "time-slices are advertised as nvidia.com/gpu: set the device plugin's "
                "renameByDefault so they become nvidia.com/gpu.shared and whole-GPU types "
                "never land on a slice",
            )
            gpu = 0
    devices = _count(labels.get(COUNT))
    item.gpus += devices or gpu or (shared // replicas if replicas else 0)
    item.whole += gpu


def _note(item: Product, text: str) -> None:
    if text not in item.notes:
        item.notes.append(text)


def products_matching(products: Iterable[str], models: Iterable[str]) -> list[str]:
    """The product label values a GPU type's `models` (substrings, any case) select.

    The allocator picks devices by substring; the scheduler needs exact label values,
    so the Kubernetes backend is given these for the pod's node affinity."""
    wanted = [model.lower() for model in models if model]
    return sorted({product for product in products if any(w in product.lower() for w in wanted)})

"""Placing GPU requests on devices.

A device is a whole GPU or one MIG instance. A GPU type ("offer") says how
many notebooks may share one device (`share`: 1 for a whole GPU, N for time
slicing or MPS) and which devices qualify (MIG profile, GPU models). One
device serves one offer at a time, so a whole-GPU user never finds a
time-sliced neighbour. Placement is best fit: devices already partly used by
the same offer are filled first, keeping whole devices free for whole-GPU
requests, and a multi-GPU request stays on one node.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Device:
    id: str
    node: str = "local"
    model: str = ""
    memory: int = 0
    mig_profile: str = ""  # set for a MIG instance, e.g. "1g.10gb"
    index: int = 0


@dataclass(frozen=True)
class Offer:
    name: str
    share: int = 1
    models: frozenset[str] = field(default_factory=frozenset)
    mig_profile: str = ""

    def accepts(self, device: Device) -> bool:
        if device.mig_profile != self.mig_profile:
            return False
        if self.models:
            model = device.model.lower()
            return any(wanted.lower() in model for wanted in self.models)
        return True


@dataclass(frozen=True)
class Holding:
    """GPUs a notebook holds now."""

    notebook_id: int
    offer: str
    devices: tuple[str, ...]


@dataclass(frozen=True)
class Occupancy:
    offer: str | None
    users: int


def occupancy(holdings: Iterable[Holding]) -> dict[str, Occupancy]:
    """Which offer uses each device and by how many notebooks."""
    users: Counter[str] = Counter()
    offers: dict[str, str] = {}
    for holding in holdings:
        for device in holding.devices:
            users[device] += 1
            offers[device] = holding.offer
    return {device: Occupancy(offers[device], count) for device, count in users.items()}


def free_slots(device: Device, offer: Offer, used: Mapping[str, Occupancy]) -> int:
    """How many more notebooks of `offer` this device can take."""
    if not offer.accepts(device):
        return 0
    current = used.get(device.id)
    if current is None:
        return offer.share
    if current.offer != offer.name:
        return 0
    return max(0, offer.share - current.users)


def place(
    devices: Iterable[Device],
    holdings: Iterable[Holding],
    offer: Offer,
    count: int,
) -> tuple[str, ...] | None:
    """Choose `count` distinct devices on one node for a new notebook, or None."""
    if count <= 0:
        return ()
    used = occupancy(holdings)
    by_node: dict[str, list[tuple[int, Device]]] = {}
    for device in devices:
        slots = free_slots(device, offer, used)
        if slots > 0:
            by_node.setdefault(device.node, []).append((slots, device))
    best: tuple[int, str, tuple[str, ...]] | None = None
    for node, candidates in by_node.items():
        if len(candidates) < count:
            continue
        # Fewest free slots first: fill partly used devices before opening new ones.
        candidates.sort(key=lambda item: (item[0], item[1].index, item[1].id))
        chosen = candidates[:count]
        score = sum(slots for slots, _ in chosen)
        key = (score, node, tuple(device.id for _, device in chosen))
        if best is None or key < best:
            best = key
    return best[2] if best else None


def capacity(devices: Iterable[Device], offer: Offer) -> int:
    """How many single-GPU notebooks of `offer` an empty platform could hold."""
    return sum(offer.share for device in devices if offer.accepts(device))

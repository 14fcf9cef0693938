"""Placing GPU requests on devices.

A device is a whole GPU or one MIG instance. A GPU type ("offer") says how
many notebooks may share one device (`share`: 1 for a whole GPU, N for time
slicing or MPS) and which devices qualify (MIG profile, GPU models). One
device serves one offer at a time, so a whole-GPU user never finds a
time-sliced neighbour. Placement is best fit: devices already partly used by
the same offer are filled first, keeping whole devices free for whole-GPU
requests, and a multi-GPU request stays on one node.

`place` answers one question from scratch. A pass that places many requests
(the controller's allocator loop, a reclaim search) keeps an `Allocator`
instead: it indexes the free slots of each offer by node once and updates
them as notebooks take and give back GPUs, so a placement costs a look at
each node's best devices rather than a recount of every holding. `place` is
an allocator built for one answer, so both give the same choice.
"""

from __future__ import annotations

import re
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import Invalid


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
    # The exact product a type's node selector pins (GFD's nvidia.com/gpu.product, which
    # is a Kubernetes device's model): the scheduler places its pods on that product
    # only, so the allocator must too. Models are substrings, and "NVIDIA-RTX-A5000"
    # would also take the time-sliced "NVIDIA-RTX-A5000-SHARED" devices.
    product: str = ""

    def accepts(self, device: Device) -> bool:
        if device.mig_profile != self.mig_profile:
            return False
        if self.product and device.model != self.product:
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
    return _open_slots(offer, used.get(device.id))


def _open_slots(offer: Offer, current: Occupancy | None) -> int:
    """How many more notebooks of `offer` a device it accepts can take, used as `current`."""
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
    return Allocator(devices, holdings).place(offer, count)


# How an offer's index sorts the devices with a free slot: fewest free slots
# first, so that partly used devices fill before whole ones are opened; then by
# index and id, so that the choice is stable.
_Slot = tuple[int, int, str]


class _OfferIndex:
    """The devices one offer accepts, by node, and those with a free slot, sorted."""

    def __init__(self, offer: Offer) -> None:
        self.offer = offer
        self.accepted: dict[str, list[Device]] = {}
        self.free: dict[str, list[_Slot]] = {}
        self.slot_of: dict[str, _Slot] = {}

    def build(self, devices: Iterable[Device], used: Mapping[str, Occupancy]) -> None:
        # Whether the offer accepts a device depends on its model and MIG profile only, and a
        # fleet of thousands of devices has a few of each (an index is built once a pass).
        verdicts: dict[tuple[str, str], bool] = {}
        for device in devices:
            kind = (device.model, device.mig_profile)
            accepted = verdicts.get(kind)
            if accepted is None:
                accepted = verdicts[kind] = self.offer.accepts(device)
            if accepted:
                self.accepted.setdefault(device.node, []).append(device)
                free = self.free.setdefault(device.node, [])
                slot = self._slot(device, used)
                if slot is not None:
                    free.append(slot)
        for free in self.free.values():
            free.sort()

    def refresh(self, device: Device, used: Mapping[str, Occupancy]) -> None:
        free = self.free[device.node]
        old = self.slot_of.pop(device.id, None)
        if old is not None:
            del free[bisect_left(free, old)]
        slot = self._slot(device, used)
        if slot is not None:
            insort(free, slot)

    def _slot(self, device: Device, used: Mapping[str, Occupancy]) -> _Slot | None:
        """The device's entry among the free ones (it is one the offer accepts), or None."""
        slots = _open_slots(self.offer, used.get(device.id))
        if slots <= 0:
            return None
        slot = self.slot_of[device.id] = (slots, device.index, device.id)
        return slot


class Allocator:
    """The fleet's devices and who holds them, kept current across many placements.

    One allocator serves one pass: build it from the inventory and the
    holdings read at the start, then `place` requests and `hold` or `release`
    notebooks as the pass decides. An offer's index is built the first time
    the offer is placed and kept in step by every later change.
    """

    def __init__(self, devices: Iterable[Device], holdings: Iterable[Holding] = ()) -> None:
        self._devices: dict[str, Device] = {device.id: device for device in devices}
        self._holdings: dict[int, Holding] = {}
        self._holdings_view = MappingProxyType(self._holdings)
        self._holders: dict[str, list[int]] = {}
        self._used: dict[str, Occupancy] = {}
        self._indexes: dict[Offer, _OfferIndex] = {}
        self._watchers: dict[str, list[_OfferIndex]] = {}
        self._changes: Counter[str] = Counter()
        for holding in holdings:
            self._take(holding)
        self._used = {
            device_id: Occupancy(self._holdings[holders[-1]].offer, len(holders))
            for device_id, holders in self._holders.items()
        }

    @property
    def used(self) -> Mapping[str, Occupancy]:
        """Which offer uses each device and by how many notebooks, as `occupancy` says."""
        return self._used

    @property
    def holdings(self) -> Mapping[int, Holding]:
        """What each notebook holds now, by notebook id (read only)."""
        return self._holdings_view

    def holding(self, notebook_id: int) -> Holding | None:
        return self._holdings.get(notebook_id)

    def holders(self, device_id: str) -> tuple[int, ...]:
        """The notebooks on a device (a notebook twice if its holding names it twice)."""
        return tuple(self._holders.get(device_id, ()))

    def changes(self, node: str) -> int:
        """How often the holdings on `node`'s devices changed since this allocator was built:
        an answer worked out for the node (reclaim's plan for it) holds while this is the
        same."""
        return self._changes[node]

    def accepted_by_node(self, offer: Offer) -> Mapping[str, Sequence[Device]]:
        """The devices `offer` may use, grouped by node, whether free or not."""
        return self._index(offer).accepted

    def place(self, offer: Offer, count: int) -> tuple[str, ...] | None:
        """Choose `count` devices on one node as `place` would; nothing is held yet."""
        if count <= 0:
            return ()
        # The node whose first `count` free slots add up to the fewest, then the first node
        # by name (names are unique, so that decides); only the winner's slots are read.
        free = self._index(offer).free
        if count == 1:
            best = min(((slots[0][0], node) for node, slots in free.items() if slots), default=None)
        else:
            best = min(
                (
                    (sum(slot[0] for slot in slots[:count]), node)
                    for node, slots in free.items()
                    if len(slots) >= count
                ),
                default=None,
            )
        return None if best is None else tuple(slot[2] for slot in free[best[1]][:count])

    def hold(self, holding: Holding) -> None:
        """Count `holding` as taken; a notebook holds one set of GPUs at a time."""
        self._take(holding)
        for device_id in holding.devices:
            self._used[device_id] = Occupancy(holding.offer, len(self._holders[device_id]))
            self._refresh(device_id)

    def release(self, notebook_id: int) -> Holding:
        """Give back what a notebook holds and return that holding."""
        holding = self._holdings.pop(notebook_id)
        for device_id in holding.devices:
            holders = self._holders[device_id]
            holders.remove(notebook_id)
            if holders:
                self._used[device_id] = Occupancy(self._used[device_id].offer, len(holders))
            else:
                del self._holders[device_id]
                del self._used[device_id]
            self._refresh(device_id)
        return holding

    @contextmanager
    def without(self, notebook_ids: Iterable[int]) -> Iterator[Allocator]:
        """Answer "what if these notebooks were stopped?" and put them back afterwards."""
        released = [self.release(notebook_id) for notebook_id in notebook_ids]
        try:
            yield self
        finally:
            for holding in released:
                self.hold(holding)

    def _take(self, holding: Holding) -> None:
        if holding.notebook_id in self._holdings:
            raise ValueError(f"notebook {holding.notebook_id} already holds GPUs")
        self._holdings[holding.notebook_id] = holding
        for device_id in holding.devices:
            self._holders.setdefault(device_id, []).append(holding.notebook_id)

    def _index(self, offer: Offer) -> _OfferIndex:
        index = self._indexes.get(offer)
        if index is None:
            index = self._indexes[offer] = _OfferIndex(offer)
            index.build(self._devices.values(), self._used)
            for devices in index.accepted.values():
                for device in devices:
                    self._watchers.setdefault(device.id, []).append(index)
        return index

    def _refresh(self, device_id: str) -> None:
        device = self._devices.get(device_id)
        if device is not None:
            self._changes[device.node] += 1
        for index in self._watchers.get(device_id, ()):
            index.refresh(self._devices[device_id], self._used)


# A holding's id says whose it is: a notebook's own id, a local training job's negated
# id, or a competition run's entry id negated past this offset, so that none collide.
RUN_HOLDING_OFFSET = 2**40


def run_holding_id(entry_id: int) -> int:
    """The holding id of a competition entry's run."""
    return -(RUN_HOLDING_OFFSET + entry_id)


def run_entry_id(holding_id: int) -> int | None:
    """The competition entry of a run's holding id; None for a notebook's or a job's."""
    return -holding_id - RUN_HOLDING_OFFSET if holding_id <= -RUN_HOLDING_OFFSET else None


def capacity(devices: Iterable[Device], offer: Offer) -> int:
    """How many single-GPU notebooks of `offer` an empty platform could hold."""
    return sum(offer.share for device in devices if offer.accepts(device))


# -- what a GPU type may ask Kubernetes for ---------------------------------------------

NVIDIA = "nvidia.com/"
WHOLE_GPU = "nvidia.com/gpu"
SHARED_GPU = "nvidia.com/gpu.shared"
# A MIG profile as NVIDIA names them: "1g.5gb", "3g.20gb", "1g.10gb+me".
MIG_PROFILE = re.compile(r"^[1-9][0-9]?g\.[1-9][0-9]{0,3}gb(\+[a-z]{1,8})?$")


def check_mig_profile(profile: str) -> str:
    """A MIG profile in NVIDIA's spelling (lower case), or "" for none."""
    profile = profile.strip().lower()
    if profile and not MIG_PROFILE.match(profile):
        raise Invalid(
            f"'{profile}' is not a MIG profile; write it as NVIDIA names them, e.g. 1g.10gb "
            "or 3g.20gb (nvidia-smi mig -lgip lists a GPU's profiles)"
        )
    return profile


def mig_resource(profile: str, shared: bool = False) -> str:
    """The extended resource of a MIG profile under the device plugin's `mixed` strategy."""
    return f"{NVIDIA}mig-{profile}" + (".shared" if shared else "")


def expected_resources(share: int, mig_profile: str, sliced: bool = False) -> tuple[str, ...]:
    """The NVIDIA resource names a GPU type of this kind may ask for, preferred first.

    A whole GPU is `nvidia.com/gpu`; a GPU shared by several notebooks (time
    slicing or MPS, advertised under `renameByDefault`) is `nvidia.com/gpu.shared`;
    a MIG profile is `nvidia.com/mig-<profile>`, and a shared MIG instance may
    also carry the `.shared` suffix. On `sliced` nodes (a type pinned to a product
    GPU Feature Discovery suffixed `-SHARED`: time-slices not renamed) every
    `nvidia.com/gpu` is a slice, so only a shared type fits there, asking for it.
    """
    if mig_profile:
        whole = mig_resource(mig_profile)
        return (whole, mig_resource(mig_profile, shared=True)) if share > 1 else (whole,)
    if sliced:
        return (WHOLE_GPU, SHARED_GPU) if share > 1 else ()
    return (SHARED_GPU,) if share > 1 else (WHOLE_GPU,)


def check_gpu_type_resource(
    resource_name: str, share: int, mig_profile: str, sliced: bool = False
) -> str:
    """Refuse an NVIDIA resource name that does not match what the type hands out.

    A MIG type asking for `nvidia.com/gpu` would be scheduled on a whole GPU
    (or nowhere) while the platform's allocator places it on a MIG instance;
    a shared type asking for whole GPUs would hold one GPU per notebook on a
    cluster, unless its nodes are `sliced` (see `expected_resources`), where a
    whole-GPU type would be given a slice. Resources of other vendors (`amd.com/gpu`)
    are taken as given.
    """
    resource_name = resource_name.strip()
    if not resource_name or "/" not in resource_name or len(resource_name) > 253:
        raise Invalid(
            "the Kubernetes resource name looks like nvidia.com/gpu or nvidia.com/mig-1g.10gb"
        )
    profile = check_mig_profile(mig_profile)
    if not resource_name.startswith(NVIDIA):
        return resource_name
    allowed = expected_resources(share, profile, sliced)
    if resource_name in allowed:
        return resource_name
    if not allowed:
        raise Invalid(
            "the type's nodes are time-sliced (their product ends in -SHARED): each "
            f"{WHOLE_GPU} there is a slice, so a whole-GPU type cannot use them; give the "
            "type a share of the slices per GPU"
        )
    wanted = " or ".join(allowed)
    if profile:
        kind = f"a MIG type with profile {profile}" + (
            " shared by several notebooks" if share > 1 else ""
        )
    elif resource_name.startswith(f"{NVIDIA}mig-"):
        raise Invalid(
            f"{resource_name} is a MIG resource: set the type's MIG profile to "
            f"{resource_name.removeprefix(NVIDIA + 'mig-').removesuffix('.shared')}, "
            f"or use {wanted} for a GPU without MIG"
        )
    elif share > 1:
        kind = "a GPU shared by several notebooks (time slicing or MPS)"
    else:
        kind = "a whole GPU"
    raise Invalid(f"{kind} uses the resource {wanted}, not {resource_name}")

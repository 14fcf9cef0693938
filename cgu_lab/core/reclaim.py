"""Reclaiming GPUs from idle notebooks when a request finds none free, and the queue.

When `place` finds no room for a request, the platform may stop notebooks that
hold GPUs without using them (Colab does the same) rather than turn the
student away. Stopping someone's notebook is the costliest thing the platform
does to them, so the choice is careful:

- only notebooks that are neither persistent nor busy, whose idleness is
  known and at least `min_idle_seconds`, are ever stopped;
- as few notebooks as possible are stopped (the fewest for a one-GPU
  request; a multi-GPU request takes its devices greedily, cheapest first),
  and among equally small choices the one whose least idle victim has been
  idle the longest, so that somebody who just paused to read is the last to
  lose a notebook;
- nobody is stopped without need: every victim is necessary (sparing any one
  of them leaves the request unplaceable), and the choice is checked with the
  real placement before it is returned.

The price of a device is what must stop to open one slot there: all of its
holders when another offer uses it, the longest idle of its own offer's
holders when it is full. A one-GPU request found no free slot, so only
devices that stoppable notebooks hold can open; the search walks those
notebooks longest idle first and ends at the first device one of them opens
alone. A multi-GPU request stays on one node, so each node gets a greedy plan
(its cheapest devices, one at a time) and the smallest plan wins. A pass that
serves many requests keeps one `Reclaimer`, which ranks the candidates once
and keeps each node's plan until the allocator reports a change on that node.

A request that cannot be served waits in a queue, first come first served
per GPU type.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .gpus import Allocator, Device, Offer


@dataclass(frozen=True)
class Candidate:
    """A running notebook as reclaim sees it; `idle_seconds` None means not known to be idle."""

    notebook_id: int
    idle_seconds: float | None
    persistent: bool = False
    busy: bool = False


def choose_victims(
    allocator: Allocator,
    offer: Offer,
    count: int,
    candidates: Iterable[Candidate],
    min_idle_seconds: float = 0.0,
) -> tuple[int, ...] | None:
    """Notebooks to stop, longest idle first, so that `count` GPUs of `offer` can be placed.

    () when the request fits already; None when stopping every stoppable
    notebook would still not make room. The allocator is left as it was.
    """
    return Reclaimer(allocator, candidates, min_idle_seconds).choose(offer, count)


class Reclaimer:
    """The stoppable notebooks of one pass, ranked once, for many reclaim searches.

    A pass that serves many requests builds one next to its `Allocator`; the
    caller releases the victims it stops from that allocator, and later
    searches no longer see them.
    """

    def __init__(
        self,
        allocator: Allocator,
        candidates: Iterable[Candidate],
        min_idle_seconds: float = 0.0,
    ) -> None:
        self._allocator = allocator
        self._idle = {
            c.notebook_id: c.idle_seconds
            for c in candidates
            if not c.persistent
            and not c.busy
            and c.idle_seconds is not None
            and c.idle_seconds >= min_idle_seconds
        }
        self._ranked = sorted(self._idle, key=lambda v: (-self._idle[v], v))
        self._accepted: dict[Offer, dict[str, Device]] = {}
        # Each node's greedy plan for an (offer, count), with the allocator's count of the
        # node's changes it was made at: a pass asks again for the nodes nothing changed on.
        self._plans: dict[tuple[Offer, int, str], tuple[int, set[int] | None]] = {}

    def choose(self, offer: Offer, count: int) -> tuple[int, ...] | None:
        """As `choose_victims`, against the allocator as it is now."""
        if self._allocator.place(offer, count) is not None:
            return ()
        accepted = self._accepted.get(offer)
        if accepted is None:
            by_node = self._allocator.accepted_by_node(offer)
            accepted = {d.id: d for devices in by_node.values() for d in devices}
            self._accepted[offer] = accepted
        plans = (
            self._one_gpu(offer, accepted) if count == 1 else self._nodes(offer, count, accepted)
        )
        for victims in plans:
            needed = _necessary(self._allocator, offer, count, victims, self._idle)
            if needed is not None:
                return tuple(sorted(needed, key=lambda v: (-self._idle[v], v)))
        return None

    def _held_devices(self, accepted: Mapping[str, Device]) -> Iterator[tuple[int, Device]]:
        """The offer's devices that a stoppable notebook holds, longest idle holder first."""
        holdings = self._allocator.holdings
        for victim in self._ranked:
            holding = holdings.get(victim)
            if holding is not None:
                for device_id in holding.devices:
                    if device_id in accepted:
                        yield victim, accepted[device_id]

    def _one_gpu(self, offer: Offer, accepted: Mapping[str, Device]) -> list[set[int]]:
        """The best device to open: only devices a stoppable notebook holds can open."""
        best: tuple[tuple, set[int]] | None = None
        seen: set[str] = set()
        last = None
        for victim, device in self._held_devices(accepted):
            if victim != last and best is not None and len(best[1]) == 1:
                # Ranked longest idle first: a single victim found now is idler than any later.
                break
            last = victim
            if device.id in seen:
                continue
            seen.add(device.id)
            extra = _open_slot(self._allocator, offer, device, self._idle, set())
            if extra:
                key = (*_preference(extra, self._idle), device.node, device.index, device.id)
                if best is None or key < best[0]:
                    best = (key, extra)
        return [best[1]] if best else []

    def _nodes(self, offer: Offer, count: int, accepted: Mapping[str, Device]) -> list[set[int]]:
        """One greedy plan per node where a stoppable notebook holds one of the offer's devices."""
        by_node = self._allocator.accepted_by_node(offer)
        holdings = self._allocator.holdings
        held = {
            accepted[device_id].node
            for victim in self._ranked
            if (found := holdings.get(victim)) is not None
            for device_id in found.devices
            if device_id in accepted
        }
        plans = []
        for node in sorted(held):
            changes = self._allocator.changes(node)
            known = self._plans.get((offer, count, node))
            if known is not None and known[0] == changes:
                victims = known[1]
            else:
                victims = _open_node(self._allocator, offer, count, by_node[node], self._idle)
                self._plans[offer, count, node] = (changes, victims)
            if victims:
                plans.append((_preference(victims, self._idle), node, victims))
        return [victims for _, _, victims in sorted(plans)]


def _preference(victims: set[int], idle: Mapping[int, float]) -> tuple[int, float]:
    """Fewer victims first; then the choice whose least idle victim is the most idle."""
    return len(victims), -min((idle[v] for v in victims), default=math.inf)


def _open_node(
    allocator: Allocator,
    offer: Offer,
    count: int,
    devices: Sequence[Device],
    idle: Mapping[int, float],
) -> set[int] | None:
    """Greedily open `count` devices of one node: the cheapest device each round.

    A device's price changes only when a victim chosen in the last round holds it, so
    each round prices those again and keeps the others' (the same choice, found without
    pricing every device every round; keys end with the device's id, so the cheapest is
    one device whatever the order)."""
    if len(devices) < count:
        return None
    chosen: set[int] = set()
    holders = {device.id: allocator.holders(device.id) for device in devices}
    prices: dict[str, tuple[tuple[int, float, int, str], Device, set[int]] | None] = {}
    stale = list(devices)
    for _ in range(count):
        for device in stale:
            extra = _open_slot(allocator, offer, device, idle, chosen)
            prices[device.id] = (
                None
                if extra is None
                else ((*_preference(extra, idle), device.index, device.id), device, extra)
            )
        best = min((price for price in prices.values() if price is not None), default=None)
        if best is None:
            return None
        added = best[2]
        chosen |= added
        del prices[best[1].id]
        stale = [
            device
            for device in devices
            if device.id in prices and any(h in added for h in holders[device.id])
        ]
    return chosen


def _open_slot(
    allocator: Allocator,
    offer: Offer,
    device: Device,
    idle: Mapping[int, float],
    chosen: set[int],
) -> set[int] | None:
    """Who else must stop so that `device` takes one more notebook of `offer`; None: no one can."""
    used = allocator.used.get(device.id)
    if used is None:
        return set()
    left = [h for h in allocator.holders(device.id) if h not in chosen]
    if used.offer != offer.name:
        return set(left) if all(h in idle for h in left) else None
    need = len(left) - offer.share + 1
    extra: set[int] = set()
    if need <= 0:
        return extra  # a free slot already
    for holder in sorted({h for h in left if h in idle}, key=lambda h: (-idle[h], h)):
        if need <= 0:
            break
        extra.add(holder)
        need -= left.count(holder)
    return extra if need <= 0 else None


def _necessary(
    allocator: Allocator,
    offer: Offer,
    count: int,
    victims: set[int],
    idle: Mapping[int, float],
) -> set[int] | None:
    """Check that stopping `victims` makes room; spare each one not needed, least idle first."""
    with allocator.without(victims):
        if allocator.place(offer, count) is None:
            return None
    needed = set(victims)
    for victim in sorted(victims, key=lambda v: (idle[v], -v)):
        with allocator.without(needed - {victim}):
            if allocator.place(offer, count) is not None:
                needed.discard(victim)
    return needed


@dataclass(frozen=True)
class Waiting:
    """A request waiting for a GPU of `gpu_type` since `since`."""

    request_id: int
    gpu_type: str
    since: datetime


def queue_position(waiting: Iterable[Waiting], request_id: int) -> int | None:
    """The request's place (1 = next) among requests for the same GPU type, or None if absent.

    First come, first served per GPU type: a queue for one type never makes
    a request for another type wait. Ties in time go to the older request id.
    """
    entries = list(waiting)
    mine = next((w for w in entries if w.request_id == request_id), None)
    if mine is None:
        return None
    ahead = sum(
        1
        for w in entries
        if w.gpu_type == mine.gpu_type and (w.since, w.request_id) < (mine.since, mine.request_id)
    )
    return ahead + 1


def queue_message(position: int, gpu_type: str) -> str:
    """The sentence a waiting student sees."""
    if position == 1:
        return (
            f"You are next in the queue for a '{gpu_type}' GPU; "
            "your notebook starts as soon as one is free."
        )
    return (
        f"You are {_ordinal(position)} in the queue for a '{gpu_type}' GPU; "
        "your notebook starts when one is free. You may also choose another GPU type."
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"

"""Placement and reclaim against brute force: every small layout, and random ones.

The oracle tries every set of `count` devices on every node, so it cannot miss
a feasible placement; `place` must find one whenever the oracle does, and one
just as tightly packed (the fewest free slots left on the chosen devices).
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cgu_lab.core.gpus import (
    Allocator,
    Device,
    Holding,
    Offer,
    free_slots,
    occupancy,
    place,
)
from cgu_lab.core.reclaim import Candidate, choose_victims

# Device kinds: two whole-GPU models and two MIG profiles.
KINDS = {
    "a5000": {"model": "NVIDIA RTX A5000"},
    "v100": {"model": "Tesla V100-SXM2-32GB"},
    "3g": {"model": "NVIDIA A100", "mig_profile": "3g.20gb"},
    "1g": {"model": "NVIDIA A100", "mig_profile": "1g.5gb"},
}


def offers(share: int) -> dict[str, Offer]:
    """Whole GPUs of any model, A5000s time-sliced `share` ways, MIG halves and quarters."""
    return {
        "premium": Offer("premium"),
        "standard": Offer("standard", share=share, models=frozenset({"A5000"})),
        "half": Offer("half", mig_profile="3g.20gb"),
        "quarter": Offer("quarter", share=2, mig_profile="1g.5gb"),
    }


def fleet(layout: list[tuple[str, ...]]) -> list[Device]:
    return [
        Device(f"n{n}-{i}", node=f"n{n}", index=i, **KINDS[kind])
        for n, kinds in enumerate(layout)
        for i, kind in enumerate(kinds)
    ]


def oracle(devices, holdings, offer, count) -> int | None:
    """The fewest free slots any feasible placement leaves on its devices; None if none is."""
    used = occupancy(holdings)
    best = None
    for node in {d.node for d in devices}:
        on_node = [d for d in devices if d.node == node]
        for chosen in itertools.combinations(on_node, count):
            slots = [free_slots(d, offer, used) for d in chosen]
            if all(s > 0 for s in slots) and (best is None or sum(slots) < best):
                best = sum(slots)
    return best


def check_placement(devices, holdings, offer, count, placed) -> None:
    by_id = {d.id: d for d in devices}
    used = occupancy(holdings)
    best = oracle(devices, holdings, offer, count)
    if placed is None:
        assert best is None, f"{count} x {offer.name} refused though a placement exists"
        return
    assert len(placed) == count
    assert len(set(placed)) == count, "a device was chosen twice"
    assert len({by_id[p].node for p in placed}) <= 1, "a request spans nodes"
    assert all(offer.accepts(by_id[p]) for p in placed)
    assert sum(free_slots(by_id[p], offer, used) for p in placed) == best, "not best fit"


def check_fleet(devices, holdings, catalogue) -> None:
    """No device over its offer's share, no two offers on a device, no offer on a foreign one."""
    by_id = {d.id: d for d in devices}
    users: Counter[str] = Counter()
    offer_on: dict[str, set[str]] = {}
    for holding in holdings:
        for device in holding.devices:
            users[device] += 1
            offer_on.setdefault(device, set()).add(holding.offer)
    for device, names in offer_on.items():
        assert len(names) == 1, f"{device} mixes {names}"
        offer = catalogue[names.pop()]
        assert users[device] <= offer.share
        assert offer.accepts(by_id[device])


# -- every small layout, every short sequence -----------------------------------

REQUESTS = [("premium", 1), ("premium", 2), ("standard", 1), ("standard", 2), ("half", 1)]
REQUESTS += [("quarter", 1)]
NODE_LAYOUTS = [
    kinds
    for size in (1, 2, 3)
    for kinds in itertools.combinations_with_replacement(("a5000", "v100", "3g", "1g"), size)
]


def explore(devices, catalogue, allocator, holdings, depth) -> int:
    """Try every request at every step; the incremental allocator must agree with `place`."""
    if depth == 0:
        return 0
    explored = 0
    for name, count in REQUESTS:
        offer = catalogue[name]
        placed = allocator.place(offer, count)
        assert placed == place(devices, holdings, offer, count)
        check_placement(devices, holdings, offer, count, placed)
        explored += 1
        if placed:
            holding = Holding(len(holdings) + 1, name, placed)
            allocator.hold(holding)
            holdings.append(holding)
            check_fleet(devices, holdings, catalogue)
            explored += explore(devices, catalogue, allocator, holdings, depth - 1)
            holdings.pop()
            assert allocator.release(holding.notebook_id) == holding
    return explored


def test_every_sequence_of_requests_on_every_small_layout():
    """One node of 1-3 devices or two nodes of up to 4 in all, any mix of the four kinds,
    share counts 1-3, and every sequence of up to 4 requests of the six kinds."""
    explored = 0
    layouts = [[kinds] for kinds in NODE_LAYOUTS]
    pairs = itertools.combinations_with_replacement(NODE_LAYOUTS, 2)
    layouts += [[a, b] for a, b in pairs if len(a) + len(b) <= 4]
    for layout in layouts:
        devices = fleet(layout)
        for share in (1, 2, 3):
            catalogue = offers(share)
            allocator = Allocator(devices)
            explored += explore(devices, catalogue, allocator, [], depth=4)
            assert allocator.used == {}
    assert explored > 100_000


# -- random layouts and histories --------------------------------------------------

layouts = st.lists(
    st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=4), min_size=1, max_size=3
)
steps = st.lists(
    st.tuples(st.sampled_from(REQUESTS), st.booleans(), st.integers(0, 50)), max_size=16
)


@settings(max_examples=200, deadline=None)
@given(layout=layouts, share=st.integers(1, 4), history=steps)
def test_random_histories_of_requests_and_stops(layout, share, history):
    devices = fleet(layout)
    catalogue = offers(share)
    allocator = Allocator(devices)
    holdings: list[Holding] = []
    for notebook_id, ((name, count), stop, pick) in enumerate(history, start=1):
        if stop and holdings:
            gone = holdings.pop(pick % len(holdings))
            allocator.release(gone.notebook_id)
            continue
        offer = catalogue[name]
        placed = allocator.place(offer, count)
        assert placed == place(devices, holdings, offer, count)
        check_placement(devices, holdings, offer, count, placed)
        if placed:
            holdings.append(Holding(notebook_id, name, placed))
            allocator.hold(holdings[-1])
            check_fleet(devices, holdings, catalogue)
    assert dict(allocator.used) == occupancy(holdings)


@settings(max_examples=100, deadline=None)
@given(layout=layouts, share=st.integers(2, 4), history=steps)
def test_best_fit_fills_partly_used_devices_before_opening_a_free_one(layout, share, history):
    devices = fleet(layout)
    catalogue = offers(share)
    holdings = []
    for notebook_id, ((name, count), _, _) in enumerate(history, start=1):
        placed = place(devices, holdings, catalogue[name], count)
        if placed:
            holdings.append(Holding(notebook_id, name, placed))
    used = occupancy(holdings)
    standard = catalogue["standard"]
    partly = [d for d in devices if 0 < free_slots(d, standard, used) < share]
    chosen = place(devices, holdings, standard, 1)
    if partly:
        assert chosen is not None
        assert min(free_slots(d, standard, used) for d in partly) == free_slots(
            next(d for d in devices if d.id == chosen[0]), standard, used
        )


def test_a_notebook_holds_one_set_of_gpus_at_a_time():
    allocator = Allocator(fleet([("a5000", "a5000")]), [Holding(1, "premium", ("n0-0",))])
    with pytest.raises(ValueError, match="notebook 1 already holds GPUs"):
        allocator.hold(Holding(1, "premium", ("n0-1",)))
    assert allocator.holders("n0-0") == (1,)
    with allocator.without([1]):
        assert allocator.holders("n0-0") == ()
        assert allocator.place(Offer("premium"), 2) == ("n0-0", "n0-1")
    assert allocator.holding(1) == Holding(1, "premium", ("n0-0",))


# -- reclaim against brute force --------------------------------------------------


@st.composite
def crowded(draw):
    """A small fleet filled by random requests, each holder with random idleness and flags."""
    # Half of the fleets are time-sliced A5000s only, where a whole GPU costs several victims.
    kinds = draw(st.sampled_from([sorted(KINDS), ["a5000"]]))
    layout = draw(
        st.lists(st.lists(st.sampled_from(kinds), min_size=1, max_size=3), min_size=1, max_size=2)
    )
    catalogue = offers(draw(st.integers(1, 3)))
    devices = fleet(layout)
    # Only requests an empty fleet could serve: the others need no reclaim to be refused.
    servable = [(n, c) for n, c in REQUESTS if place(devices, [], catalogue[n], c) is not None]
    # Sharers crowd the fleet and exclusive requests then need several of them stopped.
    shared = [(n, c) for n, c in servable if catalogue[n].share > 1]
    exclusive = [(n, c) for n, c in servable if catalogue[n].share == 1]
    allocator = Allocator(devices)
    candidates = []
    requests = draw(
        st.lists(st.sampled_from(servable + 2 * shared or REQUESTS), min_size=4, max_size=16)
    )
    for notebook_id, (name, count) in enumerate(requests, start=1):
        placed = allocator.place(catalogue[name], count)
        if placed:
            allocator.hold(Holding(notebook_id, name, placed))
            idle = draw(st.integers(-200, 3600))
            candidates.append(
                Candidate(
                    notebook_id,
                    None if idle < 0 else float(idle),
                    persistent=draw(st.integers(0, 9)) == 0,
                    busy=draw(st.integers(0, 9)) == 0,
                )
            )
    name, count = draw(st.sampled_from(servable + exclusive or REQUESTS))
    return allocator, catalogue[name], count, candidates, draw(st.sampled_from([0.0, 0.0, 300.0]))


def placeable_without(allocator, offer, count, victims) -> bool:
    with allocator.without(victims):
        return allocator.place(offer, count) is not None


@settings(max_examples=250, deadline=None)
@given(case=crowded())
def test_reclaim_is_sufficient_minimal_and_spares_the_unstoppable(case):
    allocator, offer, count, candidates, min_idle = case
    before = dict(allocator.used)
    victims = choose_victims(allocator, offer, count, candidates, min_idle_seconds=min_idle)
    assert dict(allocator.used) == before
    stoppable = {
        c.notebook_id: c.idle_seconds
        for c in candidates
        if not c.persistent and not c.busy and c.idle_seconds is not None
        if c.idle_seconds >= min_idle
    }
    if victims is None:
        assert not placeable_without(allocator, offer, count, stoppable)
        return
    assert set(victims) <= set(stoppable)
    assert len(set(victims)) == len(victims)
    assert [stoppable[v] for v in victims] == sorted((stoppable[v] for v in victims), reverse=True)
    if allocator.place(offer, count) is not None:
        assert victims == ()
        return
    assert placeable_without(allocator, offer, count, victims)
    for spared in victims:
        rest = [v for v in victims if v != spared]
        assert not placeable_without(allocator, offer, count, rest), f"{spared} was not needed"
    if count == 1:
        fewest = next(
            size
            for size in range(1, len(stoppable) + 1)
            if any(
                placeable_without(allocator, offer, count, subset)
                for subset in itertools.combinations(stoppable, size)
            )
        )
        assert len(victims) == fewest

"""The culler's and reclaim's fast paths decide exactly what their plain forms decide.

Issue 25 made a pass over 10,000 notebooks fast: `plan` looks each group's policy up
once and computes the idle clock inline, a node's greedy reclaim plan prices again
only the devices a newly chosen victim holds, and a `Reclaimer` kept for a pass reuses
a node's plan while nothing changed on that node. Each reference here is the rule as
the module docs state it, written the plain way (every device priced every round, a
fresh search per request, `idle_since` called); random cases must give equal answers.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from cgu_lab.core import culling, reclaim
from cgu_lab.core.culling import Activity, CullPolicy, Decision, PolicySet, idle_since, plan
from cgu_lab.core.gpus import Allocator, Device, Holding
from cgu_lab.core.reclaim import Reclaimer, choose_victims

from .test_core_gpus_properties import crowded, offers

NOW = datetime(2026, 3, 4, 14, 0, tzinfo=timezone.utc)

# -- culling -------------------------------------------------------------------------


def reference_decide(policy: CullPolicy, activity: Activity, now: datetime) -> Decision:
    """The decision as the module doc states it, through `idle_since`."""
    since = idle_since(policy, activity)
    idle = None if since is None else max(0.0, (now - since).total_seconds())
    nid = activity.notebook_id
    if activity.exempt:
        return Decision(nid, "keep", activity.exempt, None, None, idle)
    if activity.persistent:
        return Decision(nid, "keep", "persistent notebooks are never stopped", None, None, idle)
    if since is None or idle is None:
        return Decision(nid, "keep", culling._working(policy, activity), None, None, idle)
    spans = culling._spans(policy)
    due, cause = since + spans.idle, "idle"
    reason = f"idle for {culling.minutes_text(idle)} (limit {spans.idle_text})"
    if spans.lifetime is not None and activity.started_at + spans.lifetime < due:
        due, cause = activity.started_at + spans.lifetime, "lifetime"
        hours = math.floor((now - activity.started_at).total_seconds() / 360) / 10
        reason = f"running for {culling._count(hours, 'hour')} (limit {spans.lifetime_text})"
    warn, warned_at = spans.warn, activity.warned_at
    if not warn:
        stop_at, pending = due, reason
    elif warned_at is not None and warned_at >= due - warn:
        stop_at, pending = warned_at + warn, f"{reason}; the owner was warned"
    elif now >= due - warn:
        message = culling._warning(cause, reason, warn)
        return Decision(nid, "warn", reason, now + warn, cause, idle, message)
    else:
        return Decision(nid, "keep", reason, due, cause, idle)
    if now < stop_at:
        notice = culling._warning(cause, reason, stop_at - now) if warn else ""
        return Decision(nid, "keep", pending, stop_at, cause, idle, notice)
    message = f"This notebook was stopped because it was {reason}. Start it again when you need it."
    return Decision(nid, "stop", reason, stop_at, cause, idle, message)


POLICIES = PolicySet(
    CullPolicy(idle_minutes=60, warn_minutes=10, gpu_idle_percent=5, max_lifetime_hours=12),
    {
        "research": CullPolicy(idle_minutes=240, warn_minutes=15, gpu_idle_percent=5),
        "intro": CullPolicy(idle_minutes=30, warn_minutes=5, max_lifetime_hours=8),
        "quiet": CullPolicy(idle_minutes=20),
    },
).validate()

minutes = st.floats(-30, 20 * 60, allow_nan=False)
moment = st.none() | minutes.map(lambda m: NOW - timedelta(minutes=m))


@st.composite
def activities(draw) -> list[Activity]:
    found = []
    for notebook_id in range(1, draw(st.integers(1, 40)) + 1):
        started = NOW - timedelta(minutes=draw(st.floats(0, 24 * 60, allow_nan=False)))
        found.append(
            Activity(
                notebook_id,
                started,
                draw(moment),
                busy=draw(st.integers(0, 6)) == 0,
                gpu_utilization=draw(st.none() | st.floats(0, 100, allow_nan=False)),
                persistent=draw(st.integers(0, 12)) == 0,
                group=draw(st.sampled_from([None, "research", "intro", "quiet", "other"])),
                warned_at=draw(moment),
                kept_at=draw(moment),
                exempt=draw(st.sampled_from(["", "", "", "the culler is off"])),
            )
        )
    return found


@settings(max_examples=300, deadline=None)
@given(found=activities())
def test_a_pass_decides_as_the_plain_rule_for_each_notebook(found):
    expected = [reference_decide(POLICIES.for_group(a.group), a, NOW) for a in found]
    assert plan(POLICIES, found, NOW) == expected
    assert [culling.decide(POLICIES.for_group(a.group), a, NOW) for a in found] == expected


# -- reclaim -------------------------------------------------------------------------


def reference_open_node(allocator, offer, count, devices, idle) -> set[int] | None:
    """The greedy plan of one node, every remaining device priced every round."""
    if len(devices) < count:
        return None
    chosen: set[int] = set()
    remaining = list(devices)
    for _ in range(count):
        best = None
        for device in remaining:
            extra = reclaim._open_slot(allocator, offer, device, idle, chosen)
            if extra is None:
                continue
            key = (*reclaim._preference(extra, idle), device.index, device.id)
            if best is None or key < best[0]:
                best = (key, device, extra)
        if best is None:
            return None
        chosen |= best[2]
        remaining.remove(best[1])
    return chosen


@settings(max_examples=300, deadline=None)
@given(case=crowded())
def test_a_node_plan_is_the_plain_greedy_one(case):
    allocator, offer, _count, candidates, _min_idle = case
    idle = {c.notebook_id: c.idle_seconds for c in candidates if c.idle_seconds is not None}
    for devices in allocator.accepted_by_node(offer).values():
        for count in range(1, len(devices) + 1):
            assert reclaim._open_node(
                allocator, offer, count, devices, idle
            ) == reference_open_node(allocator, offer, count, devices, idle)


@st.composite
def busy_node(draw):
    """One node of 4 to 8 GPUs crowded by whole-GPU and time-sliced notebooks, several of
    them holding two or three GPUs (a victim then frees more than the device it is chosen
    for, which changes the price of its other devices)."""
    catalogue = offers(draw(st.integers(2, 3)))
    devices = [
        Device(f"g{i}", node="n", model="NVIDIA RTX A5000", index=i)
        for i in range(draw(st.integers(4, 8)))
    ]
    allocator = Allocator(devices)
    idle = {}
    for notebook_id in range(1, draw(st.integers(2, 14)) + 1):
        name = draw(st.sampled_from(["premium", "standard"]))
        placed = allocator.place(catalogue[name], draw(st.integers(1, 3)))
        if placed:
            allocator.hold(Holding(notebook_id, name, placed))
            if draw(st.integers(0, 5)):
                idle[notebook_id] = float(draw(st.integers(0, 40)) * 60)
    return allocator, catalogue, devices, idle


@settings(max_examples=300, deadline=None)
@given(case=busy_node())
def test_a_node_plan_on_a_crowded_node_is_the_plain_greedy_one(case):
    allocator, catalogue, devices, idle = case
    for offer in catalogue.values():
        if offer.name in ("premium", "standard"):
            for count in range(1, len(devices) + 1):
                assert reclaim._open_node(
                    allocator, offer, count, devices, idle
                ) == reference_open_node(allocator, offer, count, devices, idle)


@settings(max_examples=200, deadline=None)
@given(case=crowded(), order=st.randoms(use_true_random=False))
def test_a_reclaimer_kept_for_a_pass_answers_as_a_fresh_search(case, order):
    """Requests served one after another, victims released and placements held between them:
    the pass's one Reclaimer (which reuses a node's plan while the node is unchanged) gives
    each time the answer a search from scratch gives on the allocator as it is then."""
    allocator, offer, _count, candidates, min_idle = case
    catalogue = [offer, *offers(2).values()]
    kept = Reclaimer(allocator, candidates, min_idle)
    next_id = 1000
    for _ in range(8):
        offer = order.choice(catalogue)
        count = order.randint(1, 3)
        fresh = choose_victims(allocator, offer, count, candidates, min_idle)
        assert kept.choose(offer, count) == fresh
        for victim in fresh or ():
            allocator.release(victim)
        placed = allocator.place(offer, count)
        if placed:
            allocator.hold(Holding(next_id, offer.name, placed))
            next_id += 1

"""Reclaim: stop the fewest, longest idle, stoppable notebooks, and only when it makes room."""

from datetime import datetime, timedelta, timezone

import pytest

from cgu_lab.core.gpus import Allocator, Device, Holding, Offer
from cgu_lab.core.reclaim import (
    Candidate,
    Waiting,
    choose_victims,
    queue_message,
    queue_position,
)

WHOLE = Offer("premium")
SHARED = Offer("standard", share=4)
HALF = Offer("half", mig_profile="3g.20gb")


def gpus(node: str, count: int, **fields) -> list[Device]:
    return [Device(f"{node}-{i}", node=node, index=i, **fields) for i in range(count)]


def idle(*pairs: tuple[int, float]) -> list[Candidate]:
    return [Candidate(notebook_id, seconds) for notebook_id, seconds in pairs]


def test_nothing_is_stopped_when_the_request_fits():
    allocator = Allocator(gpus("n1", 2), [Holding(1, "premium", ("n1-0",))])
    assert choose_victims(allocator, WHOLE, 1, idle((1, 9999))) == ()


def test_the_longest_idle_whole_gpu_is_taken():
    held = [Holding(1, "premium", ("n1-0",)), Holding(2, "premium", ("n1-1",))]
    allocator = Allocator(gpus("n1", 2), held)
    assert choose_victims(allocator, WHOLE, 1, idle((1, 100), (2, 500))) == (2,)


@pytest.mark.parametrize(
    "candidate",
    [
        Candidate(1, 5000, persistent=True),
        Candidate(1, 5000, busy=True),
        Candidate(1, None),
        Candidate(1, 59),
    ],
    ids=["persistent", "busy", "idleness unknown", "not idle long enough"],
)
def test_only_idle_stoppable_notebooks_are_ever_victims(candidate):
    allocator = Allocator(gpus("n1", 1), [Holding(1, "premium", ("n1-0",))])
    assert choose_victims(allocator, WHOLE, 1, [candidate], min_idle_seconds=60) is None


def test_holders_that_are_not_candidates_are_never_stopped():
    held = [Holding(1, "premium", ("n1-0",)), Holding(2, "premium", ("n1-1",))]
    allocator = Allocator(gpus("n1", 2), held)
    assert choose_victims(allocator, WHOLE, 1, idle((2, 10))) == (2,)
    assert choose_victims(allocator, WHOLE, 1, idle((3, 9999))) is None


def test_fewer_victims_beat_longer_idle_ones():
    # GPU 0 is time-sliced by four long idle notebooks; GPU 1 is one whole GPU, idle 10 s.
    held = [Holding(i, "standard", ("n1-0",)) for i in range(1, 5)]
    held.append(Holding(5, "premium", ("n1-1",)))
    allocator = Allocator(gpus("n1", 2), held)
    candidates = idle((1, 900), (2, 900), (3, 900), (4, 900), (5, 10))
    assert choose_victims(allocator, WHOLE, 1, candidates) == (5,)
    # Without the whole-GPU notebook, all four sharers must go, longest idle first.
    candidates = idle((1, 700), (2, 900), (3, 800), (4, 600))
    assert choose_victims(allocator, WHOLE, 1, candidates) == (2, 3, 1, 4)


def test_a_full_shared_gpu_frees_one_slot_from_its_longest_idle_user():
    held = [Holding(i, "standard", ("n1-0",)) for i in range(1, 5)]
    allocator = Allocator(gpus("n1", 1), held)
    candidates = idle((1, 300), (2, 1200), (3, 600), (4, 50))
    assert choose_victims(allocator, SHARED, 1, candidates) == (2,)


def test_a_gpu_with_a_busy_sharer_cannot_be_emptied():
    held = [Holding(1, "standard", ("n1-0",)), Holding(2, "standard", ("n1-0",))]
    held.append(Holding(3, "premium", ("n1-1",)))
    allocator = Allocator(gpus("n1", 2), held)
    candidates = [Candidate(1, 5000), Candidate(2, 5000, busy=True), Candidate(3, 60)]
    assert choose_victims(allocator, WHOLE, 1, candidates) == (3,)


def test_equal_counts_spare_the_notebook_that_was_used_most_recently():
    held = [
        Holding(1, "standard", ("a-0",)),
        Holding(2, "standard", ("a-0",)),
        Holding(3, "standard", ("b-0",)),
        Holding(4, "standard", ("b-0",)),
    ]
    allocator = Allocator(gpus("a", 1) + gpus("b", 1), held)
    # Two victims either way; on b the less idle one was idle 400 s rather than 30 s on a.
    candidates = idle((1, 5000), (2, 30), (3, 400), (4, 450))
    assert choose_victims(allocator, WHOLE, 1, candidates) == (4, 3)


def test_a_multi_gpu_request_reclaims_on_one_node():
    held = [
        Holding(1, "premium", ("a-0",)),
        Holding(2, "premium", ("b-0",)),
        Holding(3, "premium", ("b-1",)),
        Holding(4, "premium", ("a-1",)),
    ]
    allocator = Allocator(gpus("a", 2) + gpus("b", 2), held)
    # The two idlest are on different nodes; stopping both would not give two GPUs on a node.
    candidates = idle((1, 900), (2, 800), (3, 100), (4, 50))
    assert choose_victims(allocator, WHOLE, 2, candidates) == (2, 3)
    assert choose_victims(allocator, WHOLE, 2, idle((1, 900), (2, 800))) is None


def test_a_victim_that_is_not_needed_is_spared():
    # A notebook holding two GPUs opens both at once; the single-GPU holder is then not needed.
    held = [Holding(1, "premium", ("n1-0",)), Holding(2, "premium", ("n1-1", "n1-2"))]
    allocator = Allocator(gpus("n1", 3), held)
    assert choose_victims(allocator, WHOLE, 2, idle((1, 900), (2, 100))) == (2,)


def test_mig_requests_only_reclaim_their_profile():
    devices = gpus("n1", 1, mig_profile="3g.20gb") + gpus("n2", 1)
    held = [Holding(1, "half", ("n1-0",)), Holding(2, "premium", ("n2-0",))]
    allocator = Allocator(devices, held)
    assert choose_victims(allocator, HALF, 1, idle((1, 10), (2, 9000))) == (1,)


def test_the_allocator_is_left_as_it_was():
    held = [Holding(i, "standard", ("n1-0",)) for i in range(1, 5)]
    allocator = Allocator(gpus("n1", 1), held)
    before = dict(allocator.used)
    assert choose_victims(allocator, WHOLE, 1, idle((1, 5), (2, 5), (3, 5), (4, 5))) is not None
    assert dict(allocator.used) == before
    assert allocator.place(SHARED, 1) is None


# -- the queue -----------------------------------------------------------------

T0 = datetime(2025, 3, 4, 10, 0, tzinfo=timezone.utc)


def test_queue_position_is_first_come_first_served_per_gpu_type():
    waiting = [
        Waiting(7, "standard", T0 + timedelta(seconds=30)),
        Waiting(3, "premium", T0),
        Waiting(5, "standard", T0),
        Waiting(4, "standard", T0),
        Waiting(9, "standard", T0 + timedelta(seconds=10)),
    ]
    assert queue_position(waiting, 4) == 1
    assert queue_position(waiting, 5) == 2
    assert queue_position(waiting, 9) == 3
    assert queue_position(waiting, 7) == 4
    assert queue_position(waiting, 3) == 1
    assert queue_position(waiting, 99) is None


@pytest.mark.parametrize(
    ("position", "ordinal"),
    [
        (2, "2nd"),
        (3, "3rd"),
        (4, "4th"),
        (11, "11th"),
        (12, "12th"),
        (13, "13th"),
        (21, "21st"),
        (22, "22nd"),
        (101, "101st"),
        (111, "111th"),
        (112, "112th"),
    ],
)
def test_queue_message_names_the_place_and_the_type(position, ordinal):
    assert queue_message(position, "standard") == (
        f"You are {ordinal} in the queue for a 'standard' GPU; your notebook starts when one "
        "is free. You may also choose another GPU type."
    )


def test_queue_message_for_the_next_in_line():
    assert queue_message(1, "half") == (
        "You are next in the queue for a 'half' GPU; your notebook starts as soon as one is free."
    )

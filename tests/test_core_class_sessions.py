"""The class session rules (core/class_sessions.py), without a server: a booking's window,
its fit beside overlapping bookings, what it holds at an instant, pre-warm and grace."""

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from cgu_lab.core import class_sessions as rules
from cgu_lab.core.errors import Conflict, Invalid, QuotaExceeded
from cgu_lab.core.quota import Limits

NOW = datetime(2027, 3, 1, 8, 0, tzinfo=timezone.utc)
SEAT = rules.Seat(cpu_milli=2000, memory=2**30, gpu_type="half", gpus=1)


def booking(id=1, start=60, length=90, seats=10, **extra) -> rules.Booking:
    starts = NOW + timedelta(minutes=start)
    return rules.Booking(
        id=id,
        course="cs101",
        title="Lab",
        starts_at=starts,
        ends_at=starts + timedelta(minutes=length),
        seats=seats,
        seat=extra.pop("seat", SEAT),
        **extra,
    )


@pytest.mark.parametrize(
    ("made", "words"),
    [
        (booking(length=0), "end after it starts"),
        (booking(length=13 * 60), "at most 12 hours"),
        (booking(start=-1), "in the future"),
        (booking(start=201 * 24 * 60), "200 days ahead"),
        (booking(prewarm_minutes=61), "pre-warm"),
        (booking(grace_minutes=0), "grace"),
        (booking(seats=0), "without students"),
    ],
)
def test_a_booking_that_is_no_sensible_window_is_refused(made, words):
    with pytest.raises(Invalid, match=words):
        rules.check_booking(made, NOW)


def test_bookings_fit_at_their_peak_not_by_their_sum():
    capacity = rules.Capacity(cpu_milli=40_000, memory=None, gpu_slots={"half": 20})
    morning = booking(id=1, start=60, length=60, seats=10)
    # Starts when the morning one has ended: both may hold all the GPUs.
    noon = booking(id=2, start=125, length=60, seats=10)
    rules.check_fits(noon, [morning], capacity)
    rules.check_fits(booking(id=3, start=60, length=60, seats=10), [morning], capacity)
    # Overlapping the first two: 10 + 10 + 1 slots at 09:05 (pre-warm of the noon one).
    with pytest.raises(Conflict, match="1 GPU of type 'half' asked, 0 left") as refused:
        rules.check_fits(booking(id=4, start=60, seats=1), [morning, booking(id=3)], capacity)
    assert "Book fewer seats" in refused.value.message
    # A cancelled booking holds nothing; CPU is checked as well.
    cancelled = booking(id=3, cancelled=True)
    rules.check_fits(booking(id=4, start=60, seats=1), [morning, cancelled], capacity)
    with pytest.raises(Conflict, match="22 CPUs asked, 20 CPUs left"):
        rules.check_fits(booking(id=5, seats=11, seat=rules.Seat(2000, 0)), [morning], capacity)


def test_what_a_booking_holds_and_keeps_for_its_students():
    lab = booking(prewarm_minutes=5, grace_minutes=10)
    assert not rules.holds_at(lab, lab.starts_at - timedelta(minutes=6))
    assert rules.holds_at(lab, lab.starts_at - timedelta(minutes=5))
    assert not rules.holds_at(lab, lab.ends_at)
    assert rules.total(lab) == {"cpu_milli": 20_000, "memory": 10 * 2**30, "gpus": {"half": 10}}
    assert rules.outstanding(lab, holding_members=3) == 7
    assert rules.outstanding(lab, holding_members=12) == 0
    refusal = rules.refusal(lab, "every free 'half' GPU")
    assert refusal.code == "capacity_held" and refusal.status == 409
    assert "after the session" in refusal.message


def test_phases_prewarm_and_the_grace():
    lab = booking(prewarm_minutes=5, grace_minutes=10)
    at = {
        "booked": lab.starts_at - timedelta(minutes=6),
        "warming": lab.starts_at - timedelta(minutes=1),
        "running": lab.starts_at,
        "ended": lab.ends_at,
    }
    for phase, when in at.items():
        assert rules.phase(lab, when) == phase
        assert rules.due_for_prewarm(lab, when) == (phase in ("warming", "running"))
    seats = [
        rules.WarmSeat(1, opened=False, holding=True),
        rules.WarmSeat(2, opened=True, holding=True),
        rules.WarmSeat(3, opened=False, holding=False),
    ]
    assert rules.unused(lab, seats, lab.starts_at + timedelta(minutes=9)) == []
    assert rules.unused(lab, seats, lab.grace_ends) == [1]
    ids = {rules.holding_id(b, s) for b in range(1, 4) for s in range(rules.MAX_SEATS)}
    assert len(ids) == 3 * rules.MAX_SEATS and max(ids) < -rules.SESSION_HOLDING_OFFSET


def test_a_booking_must_fit_the_course_budget_at_its_peak_and_each_students_quota():
    lab = booking(id=3, seats=4, seat=rules.Seat(2000, 2**30, "half", 1))
    morning = booking(id=1, start=0, length=50, seats=4, seat=rules.Seat(2000, 2**30, "half", 1))
    other = replace(morning, course="other", id=2, ends_at=lab.ends_at)
    budget = Limits(cpu_milli=12_000, memory=None, gpus={"half": 6}, notebooks=None)
    # The morning one ends before this one's pre-warm: the whole budget is there.
    rules.check_quotas(lab, [morning], budget, {})
    overlapping = replace(morning, ends_at=lab.starts_at)
    with pytest.raises(QuotaExceeded) as refused:
        rules.check_quotas(lab, [overlapping], budget, {})
    message = refused.value.message
    assert "budget of course 'cs101'" in message
    assert "8 CPUs asked, 4 CPUs left" in message
    assert "4 GPUs of type 'half' asked, 2 GPUs of type 'half' left" in message
    assert refused.value.details["left"] == {"cpu_milli": 4000, "gpus": {"half": 2}}
    # Another course's bookings and cancelled ones take nothing of this budget; without
    # a budget there is nothing to check against.
    rules.check_quotas(lab, [replace(overlapping, cancelled=True), other], budget, {})
    rules.check_quotas(lab, [overlapping], None, {})

    students = {
        "ann": Limits(cpu_milli=4000, gpus={"half": 1}),
        "ben": Limits(cpu_milli=1000, gpus={"half": 1}),
        "cat": Limits(cpu_milli=1000, gpus={}),
        "dan": Limits(),
    }
    with pytest.raises(QuotaExceeded) as short:
        rules.check_quotas(lab, [], None, students)
    message = short.value.message
    assert "the quota of ben, cat allows 1 CPU" in message
    assert "the quota of cat allows 0 GPUs of type 'half'" in message
    assert "a seat needs 2 CPUs, 1 GiB of memory, 1 GPU of type 'half'" in message
    assert short.value.details["students"] == ["ben", "cat"]
    assert short.value.status == 403 and short.value.code == "quota_exceeded"
    many = {f"s{n:02}": Limits(notebooks=0) for n in range(8)}
    with pytest.raises(QuotaExceeded, match="s00, s01, s02, s03, s04 and 3 others allows 0"):
        rules.check_quotas(lab, [], None, many)

"""The class session rules (core/class_sessions.py), without a server: a booking's window,
its fit beside overlapping bookings, what it holds at an instant, pre-warm and grace."""

from datetime import datetime, timedelta, timezone

import pytest

from cgu_lab.core import class_sessions as rules
from cgu_lab.core.errors import Conflict, Invalid

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

"""Class sessions: the rules of booking a course's capacity for a time window.

A teacher books a window (a class session) for a course: each seat (one per student)
holds one notebook's resources of the session's template, from a few minutes before
the start (when the platform pre-warms the students' notebooks) until the end. These
are the decisions, without I/O, that the controller's class_sessions package acts on:

- whether a booking is well formed, and whether it fits the platform's capacity
  beside the bookings that overlap it (`check_booking`, `check_fits`), and the quotas
  its students' starts will be checked against (`check_quotas`);
- what a booking holds at an instant (`holds_at`, `outstanding`): what other users'
  starts may not take, and what the class's own starts draw from;
- when to pre-warm and when a pre-warmed notebook nobody opened is stopped (`phase`,
  `unused`).

Times are timezone-aware instants from the controller's one clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from . import quota
from .errors import Conflict, Invalid, QuotaExceeded
from .resources import Resources, format_cpu, format_gpus, format_memory

# A session lasts at most this long; a longer "session" is a standing reservation,
# which is what quotas and GPU types are for.
MAX_HOURS = 12
# Bookings are made at most this far ahead (a semester).
MAX_DAYS_AHEAD = 200
MAX_PREWARM_MINUTES = 60
MAX_GRACE_MINUTES = 120
MAX_SEATS = 2000

# A seat the platform holds for a session in the GPU allocator: its holding id is negated
# past this offset (core/gpus.py keeps notebooks', jobs' and runs' ids apart the same way).
SESSION_HOLDING_OFFSET = 2**41


class CapacityHeld(Conflict):
    """A start would take capacity that a class session has booked for its course."""

    code = "capacity_held"


@dataclass(frozen=True)
class Seat:
    """What one student's notebook holds during the session (from the template)."""

    cpu_milli: int
    memory: int
    gpu_type: str | None = None
    gpus: int = 0


@dataclass(frozen=True)
class Booking:
    id: int
    course: str
    title: str
    starts_at: datetime
    ends_at: datetime
    seats: int
    seat: Seat
    prewarm_minutes: int = 5
    grace_minutes: int = 15
    cancelled: bool = False

    @property
    def holds_from(self) -> datetime:
        """Capacity is held from the pre-warm on: the class's notebooks start then."""
        return self.starts_at - timedelta(minutes=self.prewarm_minutes)

    @property
    def grace_ends(self) -> datetime:
        return self.starts_at + timedelta(minutes=self.grace_minutes)

    def overlaps(self, other: Booking) -> bool:
        return self.holds_from < other.ends_at and other.holds_from < self.ends_at


@dataclass(frozen=True)
class Capacity:
    """What the platform can hold at once. None: not bounded (not checked)."""

    cpu_milli: int | None = None
    memory: int | None = None
    # GPU notebooks of one GPU each that each GPU type's devices could hold.
    gpu_slots: Mapping[str, int] = field(default_factory=dict)


def check_booking(booking: Booking, now: datetime) -> None:
    """Refuse a booking that is not a sensible window, with a sentence the teacher can act on."""
    if booking.ends_at <= booking.starts_at:
        raise Invalid("a class session must end after it starts")
    if booking.ends_at - booking.starts_at > timedelta(hours=MAX_HOURS):
        raise Invalid(f"a class session lasts at most {MAX_HOURS} hours; book several")
    if booking.starts_at <= now:
        raise Invalid("a class session must start in the future; pick a later start")
    if booking.starts_at - now > timedelta(days=MAX_DAYS_AHEAD):
        raise Invalid(f"a class session can be booked at most {MAX_DAYS_AHEAD} days ahead")
    if not 0 <= booking.prewarm_minutes <= MAX_PREWARM_MINUTES:
        raise Invalid(f"pre-warm between 0 and {MAX_PREWARM_MINUTES} minutes before the start")
    if not 1 <= booking.grace_minutes <= MAX_GRACE_MINUTES:
        raise Invalid(f"the grace period is between 1 and {MAX_GRACE_MINUTES} minutes")
    if not 1 <= booking.seats <= MAX_SEATS:
        raise Invalid(
            f"a class session holds between 1 and {MAX_SEATS} seats; "
            "a course without students has nobody to hold capacity for"
        )
    if booking.seat.gpus and not booking.seat.gpu_type:
        raise Invalid("a seat with GPUs names their GPU type")


def total(booking: Booking) -> dict:
    """What the whole booking holds while it holds anything: per dimension."""
    seat = booking.seat
    gpus = {seat.gpu_type: seat.gpus * booking.seats} if seat.gpu_type and seat.gpus else {}
    return {
        "cpu_milli": seat.cpu_milli * booking.seats,
        "memory": seat.memory * booking.seats,
        "gpus": gpus,
    }


def holds_at(booking: Booking, when: datetime) -> bool:
    """Whether the booking holds its capacity at `when`: from the pre-warm to the end."""
    return not booking.cancelled and booking.holds_from <= when < booking.ends_at


def _peak(bookings: list[Booking]) -> dict:
    """The most the bookings hold together at any instant (sums at each window's start)."""
    peak: dict = {"cpu_milli": 0, "memory": 0, "gpus": {}}
    for moment in {b.holds_from for b in bookings}:
        held = [total(b) for b in bookings if holds_at(b, moment)]
        peak["cpu_milli"] = max(peak["cpu_milli"], sum(h["cpu_milli"] for h in held))
        peak["memory"] = max(peak["memory"], sum(h["memory"] for h in held))
        for gpu_type in {t for h in held for t in h["gpus"]}:
            count = sum(h["gpus"].get(gpu_type, 0) for h in held)
            peak["gpus"][gpu_type] = max(peak["gpus"].get(gpu_type, 0), count)
    return peak


def check_fits(booking: Booking, others: Iterable[Booking], capacity: Capacity) -> None:
    """Refuse a booking that, with the bookings overlapping its window, passes the capacity.

    Others' bookings are first come, first served: the message names what is left so the
    teacher can book fewer seats, another window or a template with less.
    """
    overlapping = [b for b in others if not b.cancelled and b.id != booking.id]
    overlapping = [b for b in overlapping if b.overlaps(booking)]
    before = _peak(overlapping)
    after = _peak([*overlapping, booking])
    problems = []
    for dimension, label, limit, fmt in (
        ("cpu_milli", "", capacity.cpu_milli, format_cpu),
        ("memory", " of memory", capacity.memory, format_memory),
    ):
        if limit is not None and after[dimension] > limit:
            left = max(0, limit - before[dimension])
            asked = fmt(total(booking)[dimension])
            problems.append(f"{asked}{label} asked, {fmt(left)} left")
    for gpu_type, asked in total(booking)["gpus"].items():
        limit = capacity.gpu_slots.get(gpu_type, 0)
        if after["gpus"].get(gpu_type, 0) > limit:
            left = max(0, limit - before["gpus"].get(gpu_type, 0))
            problems.append(f"{format_gpus(asked, gpu_type)} asked, {left} left")
    if problems:
        raise Conflict(
            "the platform cannot hold this class session beside the bookings in that window: "
            + "; ".join(problems)
            + ". Book fewer seats, another time, or a template that needs less."
        )


def seat_resources(seat: Seat) -> Resources:
    """What one seat's notebook holds, as the quota check of its start counts it."""
    return Resources.for_notebook(seat.cpu_milli, seat.memory, seat.gpu_type, seat.gpus)


def _seats_peak(bookings: list[Booking]) -> int:
    """The most seats (notebooks) the bookings hold together at any instant."""
    moments = {b.holds_from for b in bookings}
    return max((sum(b.seats for b in bookings if holds_at(b, m)) for m in moments), default=0)


def check_quotas(
    booking: Booking,
    others: Iterable[Booking],
    budget: quota.Limits | None,
    students: Mapping[str, quota.Limits],
) -> None:
    """Refuse a booking whose pre-warmed starts the quotas would refuse at the session.

    Why at booking: each student's notebook is started in their name and charged to the
    course (controller/quotas.enforce_start), so a session the course's budget cannot
    hold, or a seat a student's own quota does not allow, fails those starts minutes
    before the class, when nobody can fix it. Checked here: the course's budget against
    the peak of this booking and the course's other bookings overlapping it (among
    `others`; what its members start outside sessions is not known ahead), and each student's own
    quota against one seat (their other notebooks at 9:00 are not known ahead either).
    The message says what is left, per dimension, and who is short.
    """
    seat = seat_resources(booking.seat)
    problems: list[str] = []
    left: dict = {}
    if budget is not None:
        overlapping = [
            b
            for b in others
            if b.course == booking.course
            and not b.cancelled
            and b.id != booking.id
            and b.overlaps(booking)
        ]
        before, after = _peak(overlapping), _peak([*overlapping, booking])
        before["notebooks"] = _seats_peak(overlapping)
        after["notebooks"] = _seats_peak([*overlapping, booking])
        asked = {**total(booking), "notebooks": booking.seats}
        dimensions = [
            ("cpu_milli", budget.cpu_milli, format_cpu),
            ("memory", budget.memory, lambda n: f"{format_memory(n)} of memory"),
            ("notebooks", budget.notebooks, lambda n: f"{n} running notebook{'s' * (n != 1)}"),
        ]
        for dimension, limit, fmt in dimensions:
            if limit is not None and after[dimension] > limit:
                left[dimension] = max(0, limit - before[dimension])
                problems.append(f"{fmt(asked[dimension])} asked, {fmt(left[dimension])} left")
        for gpu_type, count in asked["gpus"].items():
            limit = budget.gpu_limit(gpu_type)
            if limit is not None and after["gpus"].get(gpu_type, 0) > limit:
                spare = max(0, limit - before["gpus"].get(gpu_type, 0))
                left.setdefault("gpus", {})[gpu_type] = spare
                problems.append(
                    f"{format_gpus(count, gpu_type)} asked, {format_gpus(spare, gpu_type)} left"
                )
        if problems:  # only the budget's so far: one sentence of them
            problems = [
                f"the budget of course '{booking.course}' cannot hold this session beside its "
                "other sessions in that window: " + "; ".join(problems)
            ]
    short: dict[str, list[str]] = {}
    for name, limits in sorted(students.items()):
        found = quota.check(quota.USER, limits, Resources(), seat)
        for excess in found.excesses:
            short.setdefault(_allowance(excess), []).append(name)
    for allows, names in short.items():
        problems.append(f"the quota of {_names(names)} allows {allows}")
    if problems:
        needs = ", ".join(
            part
            for part in (
                format_cpu(seat.cpu_milli),
                f"{format_memory(seat.memory)} of memory",
                format_gpus(booking.seat.gpus, booking.seat.gpu_type) if seat.gpus else "",
            )
            if part
        )
        raise QuotaExceeded(
            "; ".join(problems)
            + f" (a seat needs {needs}). Book fewer seats, another time or a template that "
            "needs less, or ask an administrator for more quota.",
            left=left,
            students=sorted({n for names in short.values() for n in names}),
        )


def _allowance(excess: quota.Excess) -> str:
    """A student's limit in one dimension, as a sentence's object ("1 CPU")."""
    if excess.dimension == "cpu":
        return format_cpu(excess.limit)
    if excess.dimension == "memory":
        return f"{format_memory(excess.limit)} of memory"
    if excess.dimension == "notebooks":
        return f"{excess.limit} running notebook{'s' * (excess.limit != 1)}"
    return format_gpus(excess.limit, excess.dimension.removeprefix("gpu:"))


def _names(names: list[str], shown: int = 5) -> str:
    """A list of names for a sentence ("alice, bob and 3 others"): not a class of forty."""
    if len(names) <= shown:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown} others"


def outstanding(booking: Booking, holding_members: int) -> int:
    """Seats the booking still keeps from others now: those no running notebook of its
    students uses yet. (Its own students are never kept out by it: they share its seats,
    whoever of them starts first.)"""
    return max(0, booking.seats - holding_members)


def refusal(booking: Booking, what: str) -> CapacityHeld:
    """The refusal of another user's start, with what to do about it."""
    until = booking.ends_at.strftime("%H:%M UTC")
    return CapacityHeld(
        f"{what} is booked for the class session '{booking.title}' of course "
        f"'{booking.course}' until {until}; start with fewer resources, another GPU type, "
        "or after the session",
        session=booking.id,
        course=booking.course,
        until=booking.ends_at.isoformat(),
    )


def phase(booking: Booking, now: datetime) -> str:
    """Where the session is: booked (ahead), warming (pre-warm started), running (class
    time), ended, or cancelled."""
    if booking.cancelled:
        return "cancelled"
    if now < booking.holds_from:
        return "booked"
    if now < booking.starts_at:
        return "warming"
    if now < booking.ends_at:
        return "running"
    return "ended"


def due_for_prewarm(booking: Booking, now: datetime) -> bool:
    """The students' notebooks are started from the pre-warm time until the end."""
    return holds_at(booking, now)


@dataclass(frozen=True)
class WarmSeat:
    """A pre-warmed notebook as the sweep sees it."""

    notebook_id: int
    opened: bool  # its student opened it (or used it) since it was pre-warmed
    holding: bool  # it still holds resources (starting or running)


def unused(booking: Booking, seats: Iterable[WarmSeat], now: datetime) -> list[int]:
    """Pre-warmed notebooks to stop: nobody opened them by the end of the grace period."""
    if booking.cancelled or now < booking.grace_ends:
        return []
    return [s.notebook_id for s in seats if s.holding and not s.opened]


def holding_id(booking_id: int, seat: int) -> int:
    """The allocator's id of one outstanding seat of a booking (never a notebook's)."""
    return -(SESSION_HOLDING_OFFSET + booking_id * MAX_SEATS + seat)

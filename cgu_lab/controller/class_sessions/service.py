"""Class sessions: a teacher books a window for a course; the platform holds the capacity,
pre-warms each student's notebook before the start and stops the unused ones after a grace.

The rules (does a booking fit? what does it hold now? when to pre-warm, what to stop?)
are in core/class_sessions.py; this service reads and writes the rows, and acts:

- `book` / `cancel` / `describe`: the course page's part (its teachers book and cancel;
  its students see the sessions and their own seat);
- `check_start`: the admission's hook (notebooks/admission.py). Every start asks it, in
  the start's own transaction: a start by someone outside a session's course that would
  leave the session's outstanding seats without room is refused with `capacity_held`;
  the course's students draw from the seats (their own start is never counted against
  them). GPUs are checked the way the allocator places them (each outstanding seat is
  placed and held in a what-if allocator); CPU and memory against the capacity settings;
- `pass_once` (the loop, as the culler's, driven by the one clock): at the pre-warm
  time each student's notebook is created from the session's template version and
  started, in the student's own name, so it is their notebook on their origin with the
  template's files; a start that needs GPUs taken by idle notebooks reclaims them
  through the admission, as any start does. After the grace period, pre-warmed
  notebooks their student never opened are stopped.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import class_sessions as rules
from ...core import gpus as gpu_rules
from ...core.errors import DomainError, Forbidden, Invalid, NotFound
from ...core.lifecycle import HOLDING
from ...core.resources import parse_cpu, parse_memory
from ...core.roles import Principal, Role, can_manage_group
from ...store.class_session_models import ClassSession, ClassSessionSeat
from ...store.db import Database
from ...store.models import Group, Membership, Notebook, Template, TemplateVersion, User
from .. import audit
from ..accounts.directory import get_group
from ..clock import Clock
from ..environments import catalog
from ..notebooks.service import NotebookRequest
from ..quotas import service as quotas
from .schemas import AttachOut, HeldOut, PersonOut, SeatOut, SessionOut, SessionsOut

log = logging.getLogger("cgu_lab.class_sessions")

# Who the platform acts as when it pre-warms or stops a student's notebook.
ACTOR = "class-session"
_SYSTEM = Principal(id=0, name=ACTOR, role=Role.ADMIN)
# A notebook's activity this long after its start counts as its student using it.
USED_AFTER = timedelta(seconds=5)
# The PostgreSQL advisory lock every booking takes (`_one_booking_at_a_time`): a fixed
# 64-bit key of this platform's own (the bytes of "cgu-lab" and 1), not a row's id.
BOOKING_LOCK = 0x6367752D6C616201
SWEEP_NOTE = "Stopped: it was pre-warmed for a class session and nobody opened it in time."


def _holding(state: str) -> bool:
    return state in {s.value for s in HOLDING}


def booking_of(row: ClassSession, course: str) -> rules.Booking:
    return rules.Booking(
        id=row.id,
        course=course,
        title=row.title,
        starts_at=row.starts_at,
        ends_at=row.ends_at,
        seats=row.seats,
        seat=rules.Seat(row.cpu_milli, row.memory, row.gpu_type, row.gpus),
        prewarm_minutes=row.prewarm_minutes,
        grace_minutes=row.grace_minutes,
        cancelled=row.cancelled_at is not None,
    )


class ClassSessions:
    def __init__(self, db: Database, notebooks, settings, clock: Clock) -> None:
        """`notebooks`: the NotebookService (creating, starting and stopping the students'
        notebooks; its GPU pool for the capacity). `clock`: windows, pre-warm and grace."""
        self.db = db
        self.notebooks = notebooks
        self.settings = settings
        self.clock = clock
        # One pass at a time: the loop's and a caller's must not pre-warm a seat twice.
        self._passing = asyncio.Lock()

    # -- reading ---------------------------------------------------------------------

    async def _course(
        self, session: AsyncSession, actor: Principal, name: str, manage: bool = False
    ) -> Group:
        group = await get_group(session, name)
        manages = can_manage_group(actor, group.id)
        if not manages and group.id not in actor.groups:
            raise NotFound(f"you are not in course '{name}'")
        if manage and not manages:
            raise Forbidden(f"only the teachers of course '{name}' book its class sessions")
        return group

    @staticmethod
    async def _students(session: AsyncSession, group_id: int) -> list[User]:
        rows = await session.scalars(
            select(User)
            .join(Membership, Membership.user_id == User.id)
            .where(Membership.group_id == group_id, Membership.manager.is_(False))
            .order_by(User.name)
        )
        return list(rows.all())

    async def capacity(self, session: AsyncSession) -> rules.Capacity:
        """The platform's capacity: GPU slots per type from the pool; CPU and memory from
        the settings (empty: not bounded, as on a cluster that grows)."""
        devices = self.notebooks.gpus.devices
        slots = {
            gpu_type.name: gpu_rules.capacity(devices, catalog.offer_of(gpu_type))
            for gpu_type in await catalog.list_gpu_types(session)
        }
        cpu = self.settings.class_cpu_capacity
        memory = self.settings.class_memory_capacity
        return rules.Capacity(
            cpu_milli=parse_cpu(cpu) if cpu else None,
            memory=parse_memory(memory) if memory else None,
            gpu_slots=slots,
        )

    async def _describe(
        self, session: AsyncSession, row: ClassSession, course: str, manages: bool, me: int
    ) -> SessionOut:
        booking = booking_of(row, course)
        version = await session.get(TemplateVersion, row.template_version_id)
        template = await session.get(Template, version.template_id) if version else None
        seats = (
            await session.execute(
                select(ClassSessionSeat, User.name, Notebook)
                .join(User, User.id == ClassSessionSeat.user_id)
                .outerjoin(Notebook, Notebook.id == ClassSessionSeat.notebook_id)
                .where(ClassSessionSeat.session_id == row.id)
                .order_by(User.name)
            )
        ).all()
        people = [
            PersonOut(
                student=name,
                notebook=nb.name if nb else None,
                state=nb.state if nb else None,
                url=f"/notebook/{name}/{nb.name}/lab" if nb else None,
                prewarmed_at=seat.prewarmed_at,
                opened_at=seat.opened_at,
                in_=bool(nb is not None and _holding(nb.state)),
                message=seat.message,
            )
            for seat, name, nb in seats
            if manages or seat.user_id == me
        ]
        held = rules.total(booking)
        return SessionOut(
            id=row.id,
            course=course,
            title=row.title,
            template=template.name if template else None,
            template_version=version.version if version else None,
            starts_at=row.starts_at,
            ends_at=row.ends_at,
            holds_from=booking.holds_from,
            prewarm_minutes=row.prewarm_minutes,
            grace_minutes=row.grace_minutes,
            seats=row.seats,
            seat=SeatOut(
                cpu_milli=row.cpu_milli,
                memory=row.memory,
                gpu_type=row.gpu_type,
                gpus=row.gpus,
            ),
            held=HeldOut(**held, now=rules.holds_at(booking, self.clock.now())),
            phase=rules.phase(booking, self.clock.now()),
            booked_by=row.booked_by,
            in_=sum(1 for p in people if p.in_),
            people=people,
        )

    async def listing(self, actor: Principal, course: str) -> SessionsOut:
        """A course's sessions not yet over (and those of the last week), newest last."""
        async with self.db.session() as session:
            group = await self._course(session, actor, course)
            manages = can_manage_group(actor, group.id)
            since = self.clock.now() - timedelta(days=7)
            rows = await session.scalars(
                select(ClassSession)
                .where(ClassSession.group_id == group.id, ClassSession.ends_at > since)
                .order_by(ClassSession.starts_at, ClassSession.id)
            )
            sessions = [
                await self._describe(session, row, group.name, manages, actor.id)
                for row in rows.all()
            ]
            return SessionsOut(course=group.name, manages=manages, sessions=sessions)

    async def get(self, actor: Principal, course: str, session_id: int) -> SessionOut:
        async with self.db.session() as session:
            group = await self._course(session, actor, course)
            row = await self._row(session, group, session_id)
            manages = can_manage_group(actor, group.id)
            return await self._describe(session, row, group.name, manages, actor.id)

    @staticmethod
    async def _row(session: AsyncSession, group: Group, session_id: int) -> ClassSession:
        row = await session.get(ClassSession, session_id)
        if row is None or row.group_id != group.id:
            raise NotFound(f"course '{group.name}' has no class session {session_id}")
        return row

    async def mine(self, actor: Principal) -> list[SessionOut]:
        """The caller's upcoming (or running) sessions in the courses they are a student of."""
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(ClassSession, Group.name)
                    .join(Group, Group.id == ClassSession.group_id)
                    .join(Membership, Membership.group_id == Group.id)
                    .where(
                        Membership.user_id == actor.id,
                        ClassSession.ends_at > self.clock.now(),
                        ClassSession.cancelled_at.is_(None),
                    )
                    .order_by(ClassSession.starts_at)
                )
            ).all()
            return [await self._describe(session, row, name, False, actor.id) for row, name in rows]

    async def ahead(self, actor: Principal) -> list[SessionOut]:
        """Every booking not over yet, for the monitoring page (administrators)."""
        if not actor.is_admin:
            raise Forbidden("only administrators see every course's bookings")
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(ClassSession, Group.name)
                    .join(Group, Group.id == ClassSession.group_id)
                    .where(
                        ClassSession.ends_at > self.clock.now(),
                        ClassSession.cancelled_at.is_(None),
                    )
                    .order_by(ClassSession.starts_at)
                )
            ).all()
            return [await self._describe(session, row, name, True, actor.id) for row, name in rows]

    # -- booking -----------------------------------------------------------------------

    async def book(
        self,
        actor: Principal,
        course: str,
        title: str,
        template: str,
        template_version: int | None,
        starts_at: datetime,
        ends_at: datetime,
        prewarm_minutes: int,
        grace_minutes: int,
        seats: int | None,
    ) -> SessionOut:
        """Book a window for the course's students, or refuse with what is left."""
        if starts_at.tzinfo is None or ends_at.tzinfo is None:
            raise Invalid(
                "give the start and end with their time zone, e.g. 2027-03-01T09:00+08:00"
            )
        async with self.db.session() as session:
            group = await self._course(session, actor, course, manage=True)
            await self._one_booking_at_a_time(session)
            chosen, version = await self.notebooks.templates.version(
                session, actor, template, template_version
            )
            students = await self._students(session, group.id)
            booking = rules.Booking(
                id=0,
                course=group.name,
                title=title.strip() or f"{group.name} class",
                starts_at=starts_at,
                ends_at=ends_at,
                seats=len(students) if seats is None else seats,
                seat=rules.Seat(version.cpu_milli, version.memory, version.gpu_type, version.gpus),
                prewarm_minutes=prewarm_minutes,
                grace_minutes=grace_minutes,
            )
            rules.check_booking(booking, self.clock.now())
            others = await self._bookings(session, booking.holds_from, booking.ends_at)
            rules.check_fits(booking, others, await self.capacity(session))
            await self._check_quotas(session, group, booking, students, others)
            row = ClassSession(
                group_id=group.id,
                title=booking.title,
                template_version_id=version.id,
                starts_at=starts_at,
                ends_at=ends_at,
                prewarm_minutes=prewarm_minutes,
                grace_minutes=grace_minutes,
                seats=booking.seats,
                cpu_milli=version.cpu_milli,
                memory=version.memory,
                gpu_type=version.gpu_type if version.gpus else None,
                gpus=version.gpus if version.gpu_type else 0,
                booked_by=actor.name,
            )
            session.add(row)
            await session.flush()
            audit.record(
                session,
                actor.name,
                "class_session.booked",
                f"group:{group.name}",
                class_session=row.id,
                template=chosen.name,
                version=version.version,
                starts_at=starts_at.isoformat(),
                ends_at=ends_at.isoformat(),
                seats=booking.seats,
            )
            return await self._describe(session, row, group.name, True, actor.id)

    @staticmethod
    async def _one_booking_at_a_time(session: AsyncSession) -> None:
        """Make bookings decide one after the other, whichever course they are for.

        Why: a booking's capacity check reads every overlapping booking of every course,
        so two bookings deciding at once (two teachers pressing Book at the same instant)
        could each see room that only one of them can have. SQLite already runs one
        writing transaction at a time (store.db: BEGIN IMMEDIATE); on PostgreSQL a lock
        on the course's row serialised only bookings of that course, so this takes a
        transaction-level advisory lock that every booking takes, released at commit or
        rollback (its wait is bounded by the database's lock_timeout, as a row lock's).
        """
        connection = await session.connection()
        if connection.dialect.name == "postgresql":
            await session.execute(select(func.pg_advisory_xact_lock(BOOKING_LOCK)))

    async def _check_quotas(
        self,
        session: AsyncSession,
        group: Group,
        booking: rules.Booking,
        students: list[User],
        others: list[rules.Booking],
    ) -> None:
        """The quotas the pre-warmed starts will meet (core.class_sessions.check_quotas):
        the course's budget, and each student's own limits."""
        limits = {s.name: (await quotas.user_limits(session, s.id))[0] for s in students}
        budget = await quotas.group_limits(session, group.id)
        rules.check_quotas(booking, others, budget, limits)

    async def _bookings(
        self, session: AsyncSession, start: datetime, end: datetime
    ) -> list[rules.Booking]:
        """Bookings not cancelled whose hold may overlap [start, end)."""
        ahead = timedelta(minutes=rules.MAX_PREWARM_MINUTES)
        rows = await session.execute(
            select(ClassSession, Group.name)
            .join(Group, Group.id == ClassSession.group_id)
            .where(
                ClassSession.cancelled_at.is_(None),
                ClassSession.ends_at > start,
                ClassSession.starts_at < end + ahead,
            )
        )
        return [booking_of(row, name) for row, name in rows.all()]

    async def cancel(self, actor: Principal, course: str, session_id: int) -> SessionOut:
        """Cancel a session: its capacity is free at once; notebooks already pre-warmed stay
        their students' (they stop as any idle notebook does)."""
        async with self.db.session() as session:
            group = await self._course(session, actor, course, manage=True)
            row = await self._row(session, group, session_id)
            if row.cancelled_at is None:
                row.cancelled_at = self.clock.now()
                audit.record(
                    session,
                    actor.name,
                    "class_session.cancelled",
                    f"group:{group.name}",
                    class_session=row.id,
                )
            return await self._describe(session, row, group.name, True, actor.id)

    # -- the admission's hook ----------------------------------------------------------

    async def check_start(self, session: AsyncSession, nb: Notebook) -> frozenset[int]:
        """Refuse a start that would take capacity a running or warming session holds for
        its students (runs in the start's transaction; see the module's docstring).

        Returns the class notebooks this start may not reclaim: a session's students'
        running notebooks, unless the starter is one of them (reclaim ahead of a session
        is the class's, never against it).
        """
        now = self.clock.now()
        active = [b for b in await self._bookings(session, now, now) if rules.holds_at(b, now)]
        waiting: list[tuple[rules.Booking, int]] = []
        kept: set[int] = set()
        for booking in active:
            group_id = await session.scalar(select(Group.id).where(Group.name == booking.course))
            members = {u.id for u in await self._students(session, group_id)}
            holding = (
                await session.execute(
                    select(Notebook.id, Notebook.owner_id).where(
                        Notebook.owner_id.in_(members),
                        Notebook.id != nb.id,
                        Notebook.state.in_([s.value for s in HOLDING]),
                    )
                )
            ).all()
            if nb.owner_id in members:
                continue  # the class's own start draws from its seats
            kept.update(notebook_id for notebook_id, _ in holding)
            left = rules.outstanding(booking, len({owner for _, owner in holding}))
            if left:
                waiting.append((booking, left))
        if waiting:
            await self._check_cpu_memory(session, nb, waiting)
            if nb.gpus and nb.gpu_type:
                await self._check_gpus(session, nb, waiting)
        return frozenset(kept)

    async def _check_cpu_memory(
        self, session: AsyncSession, nb: Notebook, waiting: list[tuple[rules.Booking, int]]
    ) -> None:
        capacity = await self.capacity(session)
        running = (
            await session.execute(
                select(Notebook.cpu_milli, Notebook.memory).where(
                    Notebook.id != nb.id, Notebook.state.in_([s.value for s in HOLDING])
                )
            )
        ).all()
        for dimension, limit, used, asked, label in (
            ("cpu_milli", capacity.cpu_milli, sum(r[0] for r in running), nb.cpu_milli, "CPU"),
            ("memory", capacity.memory, sum(r[1] for r in running), nb.memory, "memory"),
        ):
            if limit is None or used + asked > limit:
                continue  # unbounded, or full without any booking: not the session's doing
            reserved = 0
            for booking, left in waiting:
                reserved += left * getattr(booking.seat, dimension)
                if used + reserved + asked > limit:
                    raise rules.refusal(booking, f"the {label} you asked for")

    async def _check_gpus(
        self, session: AsyncSession, nb: Notebook, waiting: list[tuple[rules.Booking, int]]
    ) -> None:
        same = [(b, left) for b, left in waiting if b.seat.gpu_type == nb.gpu_type and b.seat.gpus]
        if not same:
            return
        offer = catalog.offer_of(await catalog.get_gpu_type(session, nb.gpu_type))
        allocator = await self.notebooks.gpus.allocator(session, exclude=nb.id)
        if allocator.place(offer, nb.gpus) is None:
            return  # no room even without the bookings: the queue and reclaim decide
        for booking, left in same:
            for seat in range(left):
                placed = allocator.place(offer, booking.seat.gpus)
                if placed is None:
                    break
                holding = gpu_rules.Holding(rules.holding_id(booking.id, seat), offer.name, placed)
                allocator.hold(holding)
            if allocator.place(offer, nb.gpus) is None:
                raise rules.refusal(booking, f"every free '{nb.gpu_type}' GPU")

    # -- the students' side --------------------------------------------------------------

    async def attach(self, actor: Principal, course: str, session_id: int) -> AttachOut:
        """The student's click: their pre-warmed notebook (started now if it is not
        running); the first open marks the seat as used, so the sweep leaves it."""
        async with self.db.session() as session:
            group = await self._course(session, actor, course)
            row = await self._row(session, group, session_id)
            seat = await session.scalar(
                select(ClassSessionSeat).where(
                    ClassSessionSeat.session_id == row.id, ClassSessionSeat.user_id == actor.id
                )
            )
            nb = (
                await session.get(Notebook, seat.notebook_id) if seat and seat.notebook_id else None
            )
            if nb is None:
                raise NotFound(
                    f"no notebook was pre-warmed for you in '{row.title}' yet; it is "
                    f"started {row.prewarm_minutes} minutes before the session"
                )
            if seat.opened_at is None:
                seat.opened_at = self.clock.now()
            name, state = nb.name, nb.state
        if not _holding(state):
            nb = await self.notebooks.lifecycle.start(actor, actor.name, name)
            state = nb.state
        return AttachOut(notebook=name, state=state, url=f"/notebook/{actor.name}/{name}/lab")

    # -- the loop ----------------------------------------------------------------------

    async def run(self) -> None:
        while True:
            await self.clock.sleep(self.settings.class_session_interval)
            try:
                await self.pass_once()
            except Exception:  # the next pass tries again
                log.exception("class session pass failed")

    async def pass_once(self) -> None:
        """Pre-warm the sessions whose time has come; stop what nobody opened in time."""
        async with self._passing:
            await self._pass()

    async def _pass(self) -> None:
        now = self.clock.now()
        async with self.db.reading() as session:  # the sessions due: no writer's turn
            rows = (
                await session.execute(
                    select(ClassSession, Group.name)
                    .join(Group, Group.id == ClassSession.group_id)
                    .where(
                        ClassSession.cancelled_at.is_(None),
                        ClassSession.ends_at > now,
                        ClassSession.starts_at
                        <= now + timedelta(minutes=rules.MAX_PREWARM_MINUTES),
                    )
                )
            ).all()
        for row, course in rows:
            booking = booking_of(row, course)
            if rules.due_for_prewarm(booking, now):
                # Again on later passes, for students who joined the course since.
                await self._prewarm(row.id, row.group_id, booking)
            if row.prewarmed_at is not None and row.swept_at is None:
                await self._sweep(row.id, booking, now)

    async def _prewarm(self, session_id: int, group_id: int, booking: rules.Booking) -> None:
        """Each student without a seat yet gets their notebook started (once: a refused
        start is kept in the seat's message for the teacher, not tried every pass)."""
        async with self.db.session() as session:
            row = await session.get(ClassSession, session_id)
            version = await session.get(TemplateVersion, row.template_version_id)
            template = await session.get(Template, version.template_id)
            seated = set(
                (
                    await session.scalars(
                        select(ClassSessionSeat.user_id).where(
                            ClassSessionSeat.session_id == session_id
                        )
                    )
                ).all()
            )
            students = [
                (u.id, u.name)
                for u in await self._students(session, group_id)
                if u.id not in seated
            ]
            template_name, number = template.name, version.version
            first = row.prewarmed_at is None
        if not students and not first:
            return
        for user_id, student in students:
            message = f"Pre-warmed for {booking.title}"
            notebook_id = None
            try:
                notebook_id = await self._warm_one(
                    session_id, user_id, student, booking, template_name, number
                )
            except DomainError as error:
                message = f"Not pre-warmed: {error.message}"
            async with self.db.session() as session:
                seat = await self._seat(session, session_id, user_id)
                seat.notebook_id = notebook_id or seat.notebook_id
                seat.prewarmed_at = self.clock.now()
                seat.message = message[:500]
        async with self.db.session() as session:
            row = await session.get(ClassSession, session_id)
            row.prewarmed_at = row.prewarmed_at or self.clock.now()
            audit.record(
                session,
                ACTOR,
                "class_session.prewarmed",
                f"group:{booking.course}",
                class_session=session_id,
                students=len(students),
            )

    @staticmethod
    async def _seat(session: AsyncSession, session_id: int, user_id: int) -> ClassSessionSeat:
        seat = await session.scalar(
            select(ClassSessionSeat).where(
                ClassSessionSeat.session_id == session_id, ClassSessionSeat.user_id == user_id
            )
        )
        if seat is None:
            seat = ClassSessionSeat(session_id=session_id, user_id=user_id, message="")
            session.add(seat)
            await session.flush()
        return seat

    async def _warm_one(
        self,
        session_id: int,
        user_id: int,
        student: str,
        booking: rules.Booking,
        template: str,
        number: int,
    ) -> int:
        """The student's notebook for the session, created from the template (once) and
        started; returns its id."""
        async with self.db.session() as session:
            seat = await self._seat(session, session_id, user_id)
            nb = await session.get(Notebook, seat.notebook_id) if seat.notebook_id else None
            name = nb.name if nb else None
            if name is None:
                name = await self.notebooks.free_name(session, user_id, f"{template}-s{session_id}")
        if nb is None:
            request = NotebookRequest(
                name=name,
                owner=student,
                display_name=booking.title,
                template=template,
                template_version=number,
                group=booking.course,
            )
            created, _ = await self.notebooks.create_started(_SYSTEM, request)
            return created.id
        if not _holding(nb.state):
            await self.notebooks.lifecycle.start(_SYSTEM, student, name)
        return nb.id

    async def _sweep(self, session_id: int, booking: rules.Booking, now: datetime) -> None:
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(ClassSessionSeat, Notebook, User.name)
                    .join(Notebook, Notebook.id == ClassSessionSeat.notebook_id)
                    .join(User, User.id == Notebook.owner_id)
                    .where(ClassSessionSeat.session_id == session_id)
                )
            ).all()
            warm = [
                rules.WarmSeat(
                    nb.id,
                    opened=seat.opened_at is not None or self._used(nb),
                    holding=_holding(nb.state),
                )
                for seat, nb, _ in rows
            ]
            names = {nb.id: (owner, nb.name) for _, nb, owner in rows}
        if now < booking.grace_ends:
            return
        for notebook_id in rules.unused(booking, warm, now):
            owner, name = names[notebook_id]
            try:
                await self.notebooks.lifecycle.stop(None, owner, name, SWEEP_NOTE, cause="idle")
            except DomainError as error:
                log.info("the unused notebook %s/%s was not stopped: %s", owner, name, error)
            async with self.db.session() as session:
                seat = await session.scalar(
                    select(ClassSessionSeat).where(
                        ClassSessionSeat.notebook_id == notebook_id,
                        ClassSessionSeat.session_id == session_id,
                    )
                )
                seat.stopped_at = self.clock.now()
        async with self.db.session() as session:
            row = await session.get(ClassSession, session_id)
            row.swept_at = self.clock.now()
            audit.record(
                session,
                ACTOR,
                "class_session.swept",
                f"group:{booking.course}",
                class_session=session_id,
            )

    @staticmethod
    def _used(nb: Notebook) -> bool:
        """Activity seen after the start (the culler's readings of kernels and terminals)."""
        return bool(
            nb.last_activity and nb.started_at and nb.last_activity > nb.started_at + USED_AFTER
        )

"""The help queue: a student raises a hand about one of their notebooks; the course's
teacher and TAs see the queue, one takes a request, which shares the notebook with
them (editable, or read-only if the student chose so) until Done or Thanks revokes it.

The share is made in the student's name (they asked for it), through ShareService like
any other, so the proxy, the collaboration room and the audit log treat it as one;
every change of a request is audited too ("help.*"). Waits and help times are kept on
the rows, and the course's figures (queue length, median wait) read from them.
"""

from __future__ import annotations

import contextlib
import statistics
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core.errors import Conflict, Forbidden, Invalid, NotFound
from ...core.roles import Principal, Role, can_manage_group
from ...store.db import Database
from ...store.help_models import HelpRequest
from ...store.models import Group, Membership, Notebook, User
from .. import audit
from ..accounts.directory import get_group
from ..clock import Clock
from .schemas import HelpFigures, HelpPanelOut, HelpQueueOut, HelpRequestOut, HelpStudent

OPEN = ("waiting", "helping")
ACCESS = ("edit", "read")
# How long a helper's share lasts at most (ended sooner by Done or Thanks).
SHARE_MINUTES = 120
# Requests whose times make the course's figures: the most recent ones.
FIGURES_OVER = 200


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else max(0.0, (end - start).total_seconds())


class HelpQueue:
    def __init__(self, db: Database, shares, notebooks, clock: Clock) -> None:
        """`shares`: the ShareService that grants and revokes the helper's access."""
        self.db = db
        self.shares = shares
        self.notebooks = notebooks
        self.clock = clock

    # -- reading -------------------------------------------------------------------

    async def _describe(
        self, session: AsyncSession, row: HelpRequest, group: str
    ) -> HelpRequestOut:
        student = await session.get(User, row.student_id)
        nb = await session.get(Notebook, row.notebook_id)
        helper = await session.get(User, row.helper_id) if row.helper_id else None
        now = self.clock.now()
        position = None
        if row.state == "waiting":
            ahead = await session.scalar(
                select(func.count())
                .select_from(HelpRequest)
                .where(
                    HelpRequest.group_id == row.group_id,
                    HelpRequest.state == "waiting",
                    HelpRequest.id < row.id,
                )
            )
            position = (ahead or 0) + 1
        return HelpRequestOut(
            id=row.id,
            group=group,
            student=HelpStudent(
                name=student.name, display_name=student.display_name or student.name
            ),
            notebook=nb.name if nb else "",
            url=f"/notebook/{student.name}/{nb.name}/lab" if nb else "",
            question=row.question,
            access=row.access,
            state=row.state,
            position=position,
            created_at=row.created_at,
            waited_seconds=_seconds(row.created_at, row.taken_at or now),
            helper=helper.name if helper else None,
            helper_display_name=(helper.display_name or helper.name) if helper else None,
            taken_at=row.taken_at,
            ended_at=row.ended_at,
        )

    async def _course(self, session: AsyncSession, actor: Principal, name: str) -> Group:
        group = await get_group(session, name)
        if group.id not in actor.groups and not can_manage_group(actor, group.id):
            raise NotFound(f"you are not in course '{name}'")
        return group

    async def queue(self, actor: Principal, group_name: str) -> HelpQueueOut:
        """The course's open requests (its managers), or the caller's own (a student);
        and, for managers, the course's figures."""
        async with self.db.session() as session:
            group = await self._course(session, actor, group_name)
            manages = can_manage_group(actor, group.id)
            query = select(HelpRequest).where(
                HelpRequest.group_id == group.id, HelpRequest.state.in_(OPEN)
            )
            if not manages:
                query = query.where(HelpRequest.student_id == actor.id)
            rows = (await session.scalars(query.order_by(HelpRequest.id))).all()
            requests = [await self._describe(session, r, group.name) for r in rows]
            figures = await self._figures(session, group.id, rows) if manages else None
            return HelpQueueOut(
                group=group.name, manages=manages, requests=requests, figures=figures
            )

    async def _figures(self, session: AsyncSession, group_id: int, open_rows) -> HelpFigures:
        recent = (
            await session.scalars(
                select(HelpRequest)
                .where(HelpRequest.group_id == group_id, HelpRequest.taken_at.is_not(None))
                .order_by(HelpRequest.id.desc())
                .limit(FIGURES_OVER)
            )
        ).all()
        waits = [_seconds(r.created_at, r.taken_at) for r in recent]
        helps = [_seconds(r.taken_at, r.ended_at) for r in recent if r.ended_at is not None]
        return HelpFigures(
            waiting=sum(1 for r in open_rows if r.state == "waiting"),
            being_helped=sum(1 for r in open_rows if r.state == "helping"),
            median_wait_seconds=statistics.median(waits) if waits else None,
            median_help_seconds=statistics.median(helps) if helps else None,
            helped=len(helps),
        )

    async def mine(self, actor: Principal) -> HelpPanelOut:
        """For JupyterLab's panel: the queues of the courses the caller helps in, and the
        caller's own open requests, with the courses they may ask in."""
        async with self.db.session() as session:
            memberships = (
                await session.execute(
                    select(Group, Membership.manager)
                    .join(Membership, Membership.group_id == Group.id)
                    .where(Membership.user_id == actor.id)
                    .order_by(Group.name)
                )
            ).all()
        courses = [g.name for g, manager in memberships if not manager]
        helping = [g.name for g, manager in memberships if manager or actor.is_admin]
        queues = [await self.queue(actor, name) for name in helping]
        own = []
        for name in courses:
            own += (await self.queue(actor, name)).requests
        return HelpPanelOut(courses=courses, queues=queues, mine=own)

    # -- changes -------------------------------------------------------------------

    async def ask(
        self, actor: Principal, group_name: str, notebook: str, question: str, access: str
    ) -> HelpRequestOut:
        question = " ".join(question.split())
        if len(question) > 200:
            raise Invalid("a question may have at most 200 characters (one line)")
        if access not in ACCESS:
            raise Invalid("the helper may edit ('edit') or only look ('read')")
        async with self.db.session() as session:
            group = await get_group(session, group_name)
            if group.id not in actor.groups:
                raise Forbidden(f"you are not a member of course '{group_name}'")
            nb, _ = await self.notebooks.load(session, actor.name, notebook)
            if nb.owner_id != actor.id:
                raise Forbidden("you can ask for help only with your own notebooks")
            existing = await session.scalar(
                select(HelpRequest).where(
                    HelpRequest.group_id == group.id,
                    HelpRequest.student_id == actor.id,
                    HelpRequest.state.in_(OPEN),
                )
            )
            if existing is not None:
                raise Conflict(
                    f"your hand is already raised in '{group_name}'; lower it first to ask again"
                )
            row = HelpRequest(
                group_id=group.id,
                student_id=actor.id,
                notebook_id=nb.id,
                question=question,
                access=access,
                state="waiting",
                created_at=self.clock.now(),
                ended_by="",
            )
            session.add(row)
            await session.flush()
            audit.record(
                session,
                actor.name,
                "help.asked",
                f"group:{group.name}",
                request=row.id,
                notebook=f"{actor.name}/{notebook}",
                access=access,
            )
            return await self._describe(session, row, group.name)

    async def _load(self, session: AsyncSession, group_name: str, request_id: int):
        group = await get_group(session, group_name)
        row = await session.get(HelpRequest, request_id)
        if row is None or row.group_id != group.id:
            raise NotFound(f"course '{group_name}' has no help request {request_id}")
        return group, row

    async def take(self, actor: Principal, group_name: str, request_id: int) -> HelpRequestOut:
        """A manager takes a waiting request: the student's notebook is shared with them."""
        async with self.db.session() as session:
            group, row = await self._load(session, group_name, request_id)
            if not can_manage_group(actor, group.id):
                raise Forbidden(f"only the teacher and TAs of '{group_name}' take requests")
            if row.state != "waiting":
                raise Conflict("someone else took this request already, or it ended")
            student = await session.get(User, row.student_id)
            nb = await session.get(Notebook, row.notebook_id)
        owner = Principal(id=student.id, name=student.name, role=Role(student.role))
        share = await self.shares.create(
            owner,
            student.name,
            nb.name,
            actor.name,
            "user",
            row.access,
            "",
            SHARE_MINUTES,
            note=f"Help request {row.id}",
        )
        async with self.db.session() as session:
            group, row = await self._load(session, group_name, request_id)
            if row.state != "waiting":  # taken by another in the meantime: undo ours
                lost = True
            else:
                lost = False
                row.state = "helping"
                row.helper_id = actor.id
                row.taken_at = self.clock.now()
                row.share_id = share.id
                audit.record(
                    session,
                    actor.name,
                    "help.taken",
                    f"group:{group.name}",
                    request=row.id,
                    notebook=f"{student.name}/{nb.name}",
                    access=row.access,
                    share=share.id,
                    waited_seconds=_seconds(row.created_at, row.taken_at),
                )
            described = await self._describe(session, row, group.name)
        if lost:
            await self._revoke(owner, student.name, nb.name, share.id)
            raise Conflict("someone else took this request at the same moment")
        return described

    async def end(self, actor: Principal, group_name: str, request_id: int) -> HelpRequestOut:
        """Done (the helper or a manager), Thanks (the student, once helped) or a lowered
        hand (the student, before): the request ends and the helper's share is revoked."""
        async with self.db.session() as session:
            group, row = await self._load(session, group_name, request_id)
            if row.state not in OPEN:
                raise Conflict("this request has ended already")
            if actor.id == row.student_id:
                state = "thanked" if row.state == "helping" else "cancelled"
            elif can_manage_group(actor, group.id) or actor.id == row.helper_id:
                state = "done"
            else:
                raise Forbidden("only the student, the helper or the course's staff end this")
            student = await session.get(User, row.student_id)
            nb = await session.get(Notebook, row.notebook_id)
            share_id = row.share_id
            row.state = state
            row.ended_at = self.clock.now()
            row.ended_by = actor.name
            audit.record(
                session,
                actor.name,
                f"help.{state}",
                f"group:{group.name}",
                request=row.id,
                helped_seconds=_seconds(row.taken_at, row.ended_at),
            )
            described = await self._describe(session, row, group.name)
        if share_id is not None and nb is not None:
            owner = Principal(id=student.id, name=student.name, role=Role(student.role))
            await self._revoke(owner, student.name, nb.name, share_id)
        return described

    async def _revoke(self, owner: Principal, student: str, notebook: str, share_id: int) -> None:
        # Revoked by hand, or expired and cleaned up: gone either way.
        with contextlib.suppress(NotFound):
            await self.shares.revoke(owner, student, notebook, share_id)


def waited(seconds: float | None) -> str:
    """A wait for people: "2 min", "45 s", "—"."""
    if seconds is None:
        return "—"
    return f"{round(seconds / 60)} min" if seconds >= 90 else f"{round(seconds)} s"

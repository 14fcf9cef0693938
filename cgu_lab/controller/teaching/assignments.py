"""Assignments and submissions: a frozen, runnable copy of a student's files for the TAs.

Teachers (group managers) create assignments with deadlines for a group. A
student submits files of their notebook: the controller packs them as the
student, stores the archive with its content hash, the time, the late flag
and the environment it ran in, and answers a receipt. Resubmitting adds a
new numbered submission; history is kept. A TA of the course opens any
submission as a fresh notebook of their own holding those files, so the
student's original is never touched. Links to a submission work for that
course's managers, admins and the student alone.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.base import BackendError
from ...core import roles
from ...core.errors import Conflict, Forbidden, Invalid, NotFound
from ...core.names import check_label
from ...core.roles import Principal
from ...core.selection import DEFAULT_EXCLUDED
from ...store.db import Database
from ...store.models import Assignment, Environment, Group, Membership, Notebook, Submission, User
from .. import audit
from ..accounts.directory import get_group
from ..archives import remove_quietly, submission_archive
from ..clock import Clock
from ..notebooks.service import NotebookRequest
from .schemas import AssignmentOut, AssignmentSubmissions, SubmissionOut

MAX_SUBMISSION_FILES = 5000


def is_open(assignment: Assignment, now: datetime) -> bool:
    return assignment.deadline is None or now <= assignment.deadline or assignment.allow_late


def describe(
    assignment: Assignment,
    group: str,
    now: datetime,
    mine: int = 0,
    last: datetime | None = None,
    students_submitted: int | None = None,
) -> AssignmentOut:
    return AssignmentOut(
        id=assignment.id,
        group=group,
        name=assignment.name,
        title=assignment.title or assignment.name,
        description=assignment.description,
        deadline=assignment.deadline,
        allow_late=assignment.allow_late,
        open=is_open(assignment, now),
        max_bytes=assignment.max_bytes,
        submissions=mine,
        last_submitted_at=last,
        students_submitted=students_submitted,
    )


class AssignmentService:
    def __init__(self, db: Database, backend, notebooks, settings, clock: Clock) -> None:
        """`clock`: deadlines are judged by it."""
        self.db = db
        self.clock = clock
        self.backend = backend
        self.notebooks = notebooks
        self.settings = settings

    async def _assignment(
        self, session: AsyncSession, assignment_id: int
    ) -> tuple[Assignment, Group]:
        assignment = await session.get(Assignment, assignment_id)
        if assignment is None:
            raise NotFound(f"there is no assignment {assignment_id}")
        return assignment, await session.get(Group, assignment.group_id)

    # -- teachers ------------------------------------------------------------------

    async def create(
        self,
        actor: Principal,
        group: str,
        name: str,
        title: str = "",
        description: str = "",
        deadline: datetime | None = None,
        allow_late: bool = True,
        max_bytes: int | None = None,
    ) -> AssignmentOut:
        name = check_label(name.strip().lower(), "assignment")
        if deadline is not None and deadline.tzinfo is None:
            raise Invalid("give the deadline with its time zone, e.g. 2027-03-01T23:59:00+08:00")
        limit = max_bytes if max_bytes is not None else 100 * 2**20
        if not 0 < limit <= 2**32:
            raise Invalid("an assignment's size limit must be between 1 byte and 4 GiB")
        async with self.db.session() as session:
            target = await get_group(session, group)
            roles.require_group_manager(actor, target.id, target.name)
            if await session.scalar(
                select(Assignment.id).where(
                    Assignment.group_id == target.id, Assignment.name == name
                )
            ):
                raise Conflict(f"group '{group}' already has an assignment named '{name}'")
            assignment = Assignment(
                group_id=target.id,
                name=name,
                title=title.strip(),
                description=description,
                deadline=deadline,
                allow_late=allow_late,
                max_bytes=limit,
                created_by=actor.name,
            )
            session.add(assignment)
            await session.flush()
            audit.record(
                session,
                actor.name,
                "assignment.created",
                f"group:{group}",
                assignment=name,
                deadline=deadline.isoformat() if deadline else None,
            )
            return describe(assignment, target.name, self.clock.now())

    async def for_group(self, actor: Principal, group: str) -> list[AssignmentOut]:
        """A group's assignments: counts of students who submitted, for its managers."""
        now = self.clock.now()
        async with self.db.session() as session:
            target = await get_group(session, group)
            if not (roles.can_manage_group(actor, target.id) or target.id in actor.groups):
                raise Forbidden(f"you are not in group '{group}'")
            rows = (
                await session.scalars(
                    select(Assignment)
                    .where(Assignment.group_id == target.id)
                    .order_by(Assignment.deadline, Assignment.id)
                )
            ).all()
            result = []
            for assignment in rows:
                students = await session.scalar(
                    select(func.count(func.distinct(Submission.user_id))).where(
                        Submission.assignment_id == assignment.id
                    )
                )
                result.append(
                    describe(assignment, target.name, now, students_submitted=students or 0)
                )
            return result

    async def for_member(
        self, session: AsyncSession, actor: Principal, group: Group
    ) -> list[AssignmentOut]:
        now = self.clock.now()
        rows = (
            await session.scalars(
                select(Assignment)
                .where(Assignment.group_id == group.id)
                .order_by(Assignment.deadline, Assignment.id)
            )
        ).all()
        result = []
        for assignment in rows:
            count, last = (
                await session.execute(
                    select(func.count(Submission.id), func.max(Submission.submitted_at)).where(
                        Submission.assignment_id == assignment.id, Submission.user_id == actor.id
                    )
                )
            ).one()
            result.append(describe(assignment, group.name, now, count or 0, last))
        return result

    async def mine(self, actor: Principal) -> list[AssignmentOut]:
        """Assignments of every group I am in: upcoming deadlines first, then those without
        one, then overdue ones that still accept late work, closed ones last."""
        async with self.db.session() as session:
            groups = (
                await session.scalars(
                    select(Group)
                    .join(Membership, Membership.group_id == Group.id)
                    .where(Membership.user_id == actor.id)
                )
            ).all()
            items = [
                item for group in groups for item in await self.for_member(session, actor, group)
            ]
        now = self.clock.now()

        def urgency(a: AssignmentOut) -> tuple:
            overdue = a.deadline is not None and a.deadline < now
            return (not a.open, overdue, a.deadline is None, a.deadline or now, a.id)

        return sorted(items, key=urgency)

    # -- students --------------------------------------------------------------------

    async def submit(
        self, actor: Principal, assignment_id: int, notebook: str, paths: list[str], note: str = ""
    ) -> SubmissionOut:
        """Freeze the chosen files of the student's notebook as their next submission."""
        if not paths:
            raise Invalid("choose the files to submit")
        if len(note) > 2000:
            raise Invalid("a note may have at most 2000 characters")
        async with self.db.session() as session:
            assignment, group, now, late = await self._submittable(session, actor, assignment_id)
            nb, _ = await self.notebooks.load(session, actor.name, notebook)
            environment = await session.scalar(
                select(Environment).where(Environment.name == nb.environment)
            )
        spool, manifest = await self._pack(actor, notebook, paths, assignment.max_bytes)
        async with self.db.session() as session:
            number = await self._file_archive(session, actor, assignment_id, spool)
            submission = Submission(
                assignment_id=assignment_id,
                user_id=actor.id,
                number=number,
                note=note,
                files=len(manifest["files"]),
                bytes=manifest["bytes"],
                content_hash=manifest["content_hash"],
                manifest={"files": manifest["files"], "skipped": manifest["skipped"]},
                late=late,
                environment=nb.environment,
                image=environment.image if environment else "",
                notebook=f"{actor.name}/{notebook}",
                submitted_at=now,
            )
            session.add(submission)
            await session.flush()
            audit.record(
                session,
                actor.name,
                "submission.created",
                f"assignment:{group.name}/{assignment.name}",
                number=number,
                late=late,
                files=submission.files,
                bytes=submission.bytes,
                content_hash=submission.content_hash,
            )
            return receipt(submission, assignment, actor.name)

    async def _submittable(
        self, session: AsyncSession, actor: Principal, assignment_id: int
    ) -> tuple[Assignment, Group, datetime, bool]:
        """The assignment if it takes the actor's work now, with the time and whether it is late."""
        assignment, group = await self._assignment(session, assignment_id)
        if assignment.group_id not in actor.groups and not actor.is_admin:
            raise Forbidden(
                f"assignment '{assignment.name}' belongs to group '{group.name}', "
                "which you are not in"
            )
        now = self.clock.now()
        late = assignment.deadline is not None and now > assignment.deadline
        if late and not assignment.allow_late:
            raise Forbidden(
                f"the deadline of '{assignment.title or assignment.name}' was "
                f"{assignment.deadline.isoformat(timespec='minutes')}; "
                "late submissions are not accepted"
            )
        return assignment, group, now, late

    async def _pack(
        self, actor: Principal, notebook: str, paths: list[str], max_bytes: int
    ) -> tuple[str, dict]:
        """Pack the files as the student into a spool file; slow, so outside any transaction."""
        store = Path(self.settings.store) / "submissions"
        await asyncio.to_thread(store.mkdir, parents=True, exist_ok=True)
        handle, spool = tempfile.mkstemp(dir=store, suffix=".part")
        os.close(handle)
        try:
            manifest = await self.backend.pack(
                actor.name,
                notebook,
                paths,
                list(DEFAULT_EXCLUDED),
                max_bytes,
                MAX_SUBMISSION_FILES,
                Path(spool),
            )
        except BackendError as error:
            await asyncio.to_thread(remove_quietly, spool)
            raise Invalid(f"nothing was submitted: {error}") from None
        if not manifest["files"]:
            await asyncio.to_thread(remove_quietly, spool)
            raise Invalid(
                "nothing was submitted: the selection holds no files "
                "(only folders, or everything excluded)"
            )
        return spool, manifest

    async def _file_archive(
        self, session: AsyncSession, actor: Principal, assignment_id: int, spool: str
    ) -> int:
        """Lock the student's row so two submissions never share a number; store the archive."""
        await session.execute(select(User.id).where(User.id == actor.id).with_for_update())
        number = (
            await session.scalar(
                select(func.max(Submission.number)).where(
                    Submission.assignment_id == assignment_id, Submission.user_id == actor.id
                )
            )
            or 0
        ) + 1
        target = submission_archive(Path(self.settings.store), assignment_id, actor.id, number)
        await asyncio.to_thread(target.parent.mkdir, parents=True, exist_ok=True)
        await asyncio.to_thread(os.replace, spool, target)
        return number

    # -- TAs ---------------------------------------------------------------------------

    async def submissions(self, actor: Principal, assignment_id: int) -> AssignmentSubmissions:
        async with self.db.session() as session:
            assignment, group = await self._assignment(session, assignment_id)
            roles.require_group_manager(actor, group.id, group.name)
            rows = (
                await session.execute(
                    select(Submission, User.name, User.display_name)
                    .join(User, User.id == Submission.user_id)
                    .where(Submission.assignment_id == assignment_id)
                    .order_by(User.name, Submission.number.desc())
                )
            ).all()
            return AssignmentSubmissions(
                assignment=describe(assignment, group.name, self.clock.now()),
                submissions=[
                    receipt(s, assignment, name, display_name=display) for s, name, display in rows
                ],
            )

    async def submission(
        self, actor: Principal, submission_id: int
    ) -> tuple[Submission, Assignment, Group, str]:
        """One submission, for the course's managers, admins and its student only."""
        async with self.db.session() as session:
            submission = await session.get(Submission, submission_id)
            if submission is None:
                raise NotFound(f"there is no submission {submission_id}")
            assignment, group = await self._assignment(session, submission.assignment_id)
            if submission.user_id != actor.id and not roles.can_manage_group(actor, group.id):
                raise NotFound(f"there is no submission {submission_id} of a course you teach")
            student = await session.get(User, submission.user_id)
            return submission, assignment, group, student.name

    async def open(self, actor: Principal, submission_id: int) -> tuple[str, str]:
        """The TA's own copy of a submission, started; (owner, name).

        One copy per TA and submission: a second click opens (starting it if it
        stopped) the copy the first one made, since each new copy costs the TA a
        notebook of their quota and a copy of the files. A first open creates and
        starts the copy or, refused (the TA's quota, no GPU), leaves nothing behind
        (`NotebookService.create_started`); the audit entry is written once it started.
        """
        submission, assignment, group, student = await self.submission(actor, submission_id)
        if not roles.can_manage_group(actor, group.id):
            raise Forbidden("only the course's teachers and TAs open submissions as notebooks")
        existing = await self._copy_of(actor, submission.id)
        if existing is not None:
            await self.notebooks.lifecycle.start(actor, actor.name, existing)
            return actor.name, existing
        async with self.db.session() as session:
            environment = await session.scalar(
                select(Environment.name).where(Environment.name == submission.environment)
            )
            base = check_label(
                f"{assignment.name}-{student}-{submission.number}"[:50]
                .strip("-")
                .replace(".", "-"),
                "notebook",
            )
            name = await self.notebooks.free_name(session, actor.id, base)
        request = NotebookRequest(
            name,
            display_name=f"{student}: {assignment.title or assignment.name} #{submission.number}",
            environment=environment,
            seed={"kind": "submission", "id": submission.id},
            submission=submission.id,
        )
        try:
            nb, owner = await self.notebooks.create_started(actor, request)
        except (Conflict, IntegrityError):
            # A second click that raced the first: open the copy the first one made.
            existing = await self._copy_of(actor, submission.id)
            if existing is None:
                raise
            await self.notebooks.lifecycle.start(actor, actor.name, existing)
            return actor.name, existing
        async with self.db.session() as session:
            audit.record(
                session,
                actor.name,
                "submission.opened",
                f"assignment:{group.name}/{assignment.name}",
                submission=submission.id,
                notebook=f"{owner}/{nb.name}",
            )
        return owner, nb.name

    async def _copy_of(self, actor: Principal, submission_id: int) -> str | None:
        """The name of the actor's copy of a submission, if they have one."""
        async with self.db.session() as session:
            return await session.scalar(
                select(Notebook.name).where(
                    Notebook.owner_id == actor.id, Notebook.submission_id == submission_id
                )
            )


def receipt(
    submission: Submission,
    assignment: Assignment,
    student: str,
    display_name: str = "",
    manifest: list[dict[str, Any]] | None = None,
) -> SubmissionOut:
    """A submission as its student, its TAs and the API see it; `manifest` (its files, as
    stored with it: open mappings) only where one submission is looked at."""
    return SubmissionOut(
        id=submission.id,
        number=submission.number,
        student=student,
        display_name=display_name,
        assignment=assignment.title or assignment.name,
        assignment_id=assignment.id,
        content_hash=submission.content_hash,
        submitted_at=submission.submitted_at,
        late=submission.late,
        files=submission.files,
        bytes=submission.bytes,
        note=submission.note,
        environment=submission.environment,
        url=f"/submissions/{submission.id}",
        manifest=manifest,
    )

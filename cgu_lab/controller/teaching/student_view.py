"""What a member sees of their courses: new lab files, live views, assignments, submissions.

The Courses page and the lab extension's Course panel show, per course, what
the other parts of teaching wrote: the deployments of lab files (`lab_files.py`),
the live views shown to the course (shares, `sharing/`) and the assignments
with the member's own submissions (`assignments.py`). Data flows one way, into
this module: it only reads theirs, and writes nothing but the member's own
"seen" mark that tells new material from old. Kept apart from those services so
that none of them has to know the page that gathers them, and beside
`assignments.py` rather than inside it because most of what it shows is not
about assignments.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import roles
from ...core.errors import NotFound
from ...core.lifecycle import State
from ...core.roles import Principal
from ...store.db import Database
from ...store.models import Assignment, Deployment, Group, Membership, Share, Submission, User
from ..accounts.directory import get_group
from ..clock import Clock
from .assignments import receipt
from .schemas import CourseBroadcast, CourseDeployment, CourseOut, SubmissionOut


class StudentViewService:
    def __init__(self, db: Database, assignments, notebooks, clock: Clock) -> None:
        """`assignments`: a course's assignments as a member sees them (`for_member`);
        `notebooks`: the names and routes of the notebooks live views show; `clock`:
        which live views still run, and when the courses page was last seen."""
        self.db = db
        self.assignments = assignments
        self.notebooks = notebooks
        self.clock = clock

    async def overview(self, actor: Principal) -> list[CourseOut]:
        """Per group: new material, live broadcasts, and assignments with my submissions."""
        now = self.clock.now()
        async with self.db.session() as session:
            me = await session.get(User, actor.id)
            seen = me.courses_seen_at
            groups = (
                await session.scalars(
                    select(Group)
                    .join(Membership, Membership.group_id == Group.id)
                    .where(Membership.user_id == actor.id)
                    .order_by(Group.name)
                )
            ).all()
            result = []
            for group in groups:
                deployments = (
                    await session.scalars(
                        select(Deployment)
                        .where(Deployment.group_id == group.id, Deployment.state != "running")
                        .order_by(Deployment.id.desc())
                        .limit(20)
                    )
                ).all()
                live = await self._broadcasts(session, actor, group, now)
                result.append(
                    CourseOut(
                        name=group.name,
                        display_name=group.display_name,
                        folder=f"courses/{group.name}",
                        deployments=[
                            CourseDeployment(
                                id=d.id,
                                title=d.title,
                                path=f"courses/{group.name}/{d.destination}",
                                by=d.created_by,
                                at=d.created_at,
                                new=seen is None or d.created_at > seen,
                            )
                            for d in deployments
                        ],
                        broadcasts=live,
                        assignments=await self.assignments.for_member(session, actor, group),
                    )
                )
        return result

    async def _broadcasts(
        self, session: AsyncSession, actor: Principal, group: Group, now: datetime
    ) -> list[CourseBroadcast]:
        """The group's unexpired live views of others' notebooks, for a member's course page."""
        broadcasts = (
            await session.execute(
                select(Share, User)
                .join(User, User.name == Share.created_by)
                .where(Share.group_id == group.id)
                .where((Share.expires_at.is_(None)) | (Share.expires_at > now))
            )
        ).all()
        names = await self.notebooks.names(session, [share.notebook_id for share, _ in broadcasts])
        live = []
        for share, author in broadcasts:
            nb_owner, _, nb_name = names.get(share.notebook_id, "").partition("/")
            if not nb_name or nb_owner == actor.name:
                continue
            route = await self.notebooks.routes.lookup(nb_owner, nb_name)
            live.append(
                CourseBroadcast(
                    id=share.id,
                    owner=nb_owner,
                    owner_display_name=author.display_name,
                    notebook=nb_name,
                    url=f"/notebook/{nb_owner}/{nb_name}/lab"
                    + (f"/tree/{share.path}" if share.path else ""),
                    expires_at=share.expires_at,
                    by=share.created_by,
                    running=route is not None and route.state is State.RUNNING,
                )
            )
        return live

    async def mark_seen(self, actor: Principal) -> None:
        """What the courses page shows now is no longer new to the caller."""
        async with self.db.session() as session:
            me = await session.get(User, actor.id)
            me.courses_seen_at = self.clock.now()

    async def my_submissions(self, actor: Principal, group: str) -> list[SubmissionOut]:
        """The caller's own submissions to a course's assignments, newest first."""
        async with self.db.session() as session:
            target = await get_group(session, group)
            if target.id not in actor.groups and not roles.can_manage_group(actor, target.id):
                raise NotFound(f"you are not in a course '{group}'")
            rows = await session.execute(
                select(Submission, Assignment)
                .join(Assignment, Assignment.id == Submission.assignment_id)
                .where(Assignment.group_id == target.id, Submission.user_id == actor.id)
                .order_by(Submission.submitted_at.desc(), Submission.id.desc())
            )
            return [receipt(s, a, actor.name) for s, a in rows.all()]

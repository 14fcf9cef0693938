"""Lab files for a class, live broadcasts, and what a student sees of their courses.

A deployment packs a folder of the teacher's notebook (or a template's
files) once, then unpacks it into the course folder of every member of the
group (`~/courses/<group>/...` in each of their notebooks), running or
stopped, each copy as that member. Existing files are never overwritten: an
identical file is skipped, a different one gets the new copy beside it with
a suffix; the per-student report is kept with the deployment.

The course page's Live tab lists the students' notebooks that run now; a
course's teacher or TA may End one (stop it, recorded with who ended it). A
student's notebook opens for a teacher only where its owner shared it (with them
or with the course): managing a course is no right to read a student's files.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.base import BackendError
from ...core import roles
from ...core.errors import Conflict, Forbidden, Invalid, NotFound
from ...core.lifecycle import State
from ...core.paths import relative_path
from ...core.roles import Principal, Role
from ...core.selection import DEFAULT_EXCLUDED
from ...store.db import Database
from ...store.models import (
    Assignment,
    Deployment,
    Group,
    Membership,
    Notebook,
    Share,
    Submission,
    User,
)
from .. import audit
from ..accounts.directory import get_group
from ..archives import deployment_archive, remove_quietly, template_archive
from ..clock import Clock
from ..progress import ProgressBroker, ProgressEvent
from .assignments import receipt

PARALLEL_COPIES = 4
# A student's notebook that holds or waits for resources now.
LIVE_STATES = (State.QUEUED.value, State.STARTING.value, State.RUNNING.value)
log = logging.getLogger("cgu_lab.coursework")


@dataclass(frozen=True)
class _CopyJob:
    """What a deployment's background copy needs: whose copy, to which group, into which folder."""

    deployment_id: int
    teacher: str
    group_id: int
    group: str
    destination: str


class CourseworkService:
    def __init__(
        self,
        db: Database,
        backend,
        broker: ProgressBroker,
        templates,
        notebooks,
        settings,
        clock: Clock,
    ) -> None:
        """`clock`: when deployments and the courses page's "seen" marks happen."""
        self.db = db
        self.clock = clock
        self.backend = backend
        self.broker = broker
        self.templates = templates
        self.notebooks = notebooks
        self.settings = settings
        self._tasks: set[asyncio.Task] = set()
        # How many follow a notebook live (None: unknown). The notebook proxy, which
        # holds the open websockets, tells it (`count_viewers_with`); the proxy is built
        # after the services, and this service must not know the proxy.
        self._viewers: Callable[[int], int | None] = lambda notebook_id: None

    def count_viewers_with(self, viewers: Callable[[int], int | None]) -> None:
        """Where the Live tab's viewer counts come from: `viewers(notebook_id)`."""
        self._viewers = viewers

    # -- deployments -----------------------------------------------------------

    async def deploy(
        self,
        actor: Principal,
        group: str,
        title: str,
        destination: str,
        notebook: str | None = None,
        path: str = "",
        template: str | None = None,
    ) -> Deployment:
        """Start copying a folder of the actor's notebook, or a template's files, to a class."""
        destination = relative_path(destination or "", "destination folder")
        if not destination:
            raise Invalid("name the folder the files go to, e.g. week1")
        if bool(notebook) == bool(template):
            raise Invalid("deploy either a folder of one of your notebooks or a template")
        async with self.db.session() as session:
            target = await get_group(session, group)
            roles.require_group_manager(actor, target.id, target.name)
            archive = None
            if template:
                chosen, version = await self.templates.version(session, actor, template)
                archive = template_archive(Path(self.settings.store), chosen.id, version.version)
                source = f"template:{chosen.name} v{version.version}"
            else:
                await self.notebooks.load(session, actor.name, notebook)
                source = f"notebook:{actor.name}/{notebook}/{relative_path(path, 'folder')}"
            deployment = await self._record(session, actor, target, title, destination, source)
        self.broker.begin(
            ("deployment", deployment.id),
            ProgressEvent("deploy", 2, "Preparing the files", "running"),
        )
        job = _CopyJob(deployment.id, actor.name, target.id, target.name, destination)
        task = asyncio.create_task(self._run(job, archive, notebook, path))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return deployment

    @staticmethod
    async def _record(
        session: AsyncSession,
        actor: Principal,
        target: Group,
        title: str,
        destination: str,
        source: str,
    ) -> Deployment:
        """The deployment's row, numbered now so that its progress and audit entry name it."""
        deployment = Deployment(
            group_id=target.id,
            title=title.strip() or destination,
            destination=destination,
            source=source,
            created_by=actor.name,
        )
        session.add(deployment)
        await session.flush()
        audit.record(
            session,
            actor.name,
            "deployment.started",
            f"group:{target.name}",
            deployment=deployment.id,
            source=source,
            destination=destination,
        )
        return deployment

    async def _run(
        self, job: _CopyJob, archive: Path | None, notebook: str | None, path: str
    ) -> None:
        """Copy in the background; the deployment ends done or failed, whatever happens."""
        report: dict[str, dict] = {}
        state = "done"
        try:
            if archive is None:
                archive = deployment_archive(Path(self.settings.store), job.deployment_id)
                await asyncio.to_thread(archive.parent.mkdir, parents=True, exist_ok=True)
                await self.backend.pack(
                    job.teacher,
                    notebook,
                    [""],
                    list(DEFAULT_EXCLUDED),
                    self.settings.template_max_bytes,
                    self.settings.template_max_files,
                    archive,
                    base=path,
                )
            await self._copy(job, archive, report)
            if any("error" in item for item in report.values()):
                state = "failed" if all("error" in item for item in report.values()) else "done"
        except BackendError as error:
            state = "failed"
            report["*"] = {"error": str(error)}
        except Exception as error:  # the deployment must end as failed, never stay "running"
            log.exception("deployment %s failed", job.deployment_id)
            state = "failed"
            report["*"] = {"error": f"an internal error stopped the copy: {error}"}
        await self._finish(job, state, report)

    async def _copy(self, job: _CopyJob, archive: Path, report: dict[str, dict]) -> None:
        """Unpack the archive for each active member, a few at once, noting each in `report`."""
        async with self.db.session() as session:
            members = (
                await session.scalars(
                    select(User.name)
                    .join(Membership, Membership.user_id == User.id)
                    .where(
                        Membership.group_id == job.group_id,
                        User.name != job.teacher,
                        User.active,
                    )
                    .order_by(User.name)
                )
            ).all()
        folder, label = f"{job.group}/{job.destination}", f"from {job.teacher}"
        slots = asyncio.Semaphore(PARALLEL_COPIES)
        done = 0
        # Where the backend can, the files are stored once and shared by every member's
        # copy (on one machine: linked, copied on a member's first write); else one copy each.
        stored = await self.backend.store_once(archive) if members else None

        async def copy(member: str) -> None:
            nonlocal done
            async with slots:
                try:
                    if stored is not None:
                        result = await self.backend.unpack_stored(
                            member, "courses", stored, folder, label
                        )
                    else:
                        result = await self.backend.unpack(
                            member, "courses", archive, folder, label
                        )
                    report[member] = {k: result[k] for k in ("copied", "skipped", "conflicts")}
                except BackendError as error:
                    report[member] = {"error": str(error)}
            done += 1
            self.broker.publish(
                ("deployment", job.deployment_id),
                ProgressEvent(
                    "deploy",
                    5 + 90 * done // max(1, len(members)),
                    f"Copied to {done} of {len(members)} members",
                    "running",
                ),
            )

        try:
            await asyncio.gather(*(copy(member) for member in members))
        finally:
            if stored is not None:
                await self.backend.drop_stored(stored)

    async def _finish(self, job: _CopyJob, state: str, report: dict[str, dict]) -> None:
        """Keep the outcome and its report, then tell those watching the progress."""
        async with self.db.session() as session:
            deployment = await session.get(Deployment, job.deployment_id)
            deployment.state = state
            deployment.report = report
            audit.record(
                session,
                job.teacher,
                "deployment.finished",
                f"group:{job.group}",
                deployment=job.deployment_id,
                state=state,
                members=len([m for m in report if m != "*"]),
                conflicts=sum(len(r.get("conflicts", [])) for r in report.values()),
                errors=sum(1 for r in report.values() if "error" in r),
            )
        summary = self.summary(report)
        self.broker.publish(
            ("deployment", job.deployment_id),
            ProgressEvent("deploy", 100, summary, state, done=True, ok=state == "done"),
        )

    @staticmethod
    def summary(report: dict[str, dict]) -> str:
        members = [r for name, r in report.items() if name != "*"]
        if "*" in report:
            return f"Nothing was copied: {report['*']['error']}"
        conflicts = sum(len(r.get("conflicts", [])) for r in members)
        errors = sum(1 for r in members if "error" in r)
        text = f"Copied to {len(members) - errors} member(s)"
        if conflicts:
            text += (
                f"; {conflicts} file(s) already existed and were kept, new copies saved beside them"
            )
        if errors:
            text += f"; {errors} member(s) failed"
        return text + "."

    async def deployments(self, actor: Principal, group: str) -> list[Deployment]:
        async with self.db.session() as session:
            target = await get_group(session, group)
            roles.require_group_manager(actor, target.id, target.name)
            rows = await session.scalars(
                select(Deployment)
                .where(Deployment.group_id == target.id)
                .order_by(Deployment.id.desc())
            )
            return list(rows.all())

    async def deployment(self, actor: Principal, deployment_id: int) -> Deployment:
        async with self.db.session() as session:
            deployment = await session.get(Deployment, deployment_id)
            if deployment is None or not roles.can_manage_group(actor, deployment.group_id):
                raise NotFound(f"there is no deployment {deployment_id} of a group you manage")
            return deployment

    async def deployment_in_group(
        self, actor: Principal, deployment_id: int
    ) -> tuple[Deployment, str | None]:
        """`deployment`, with the name of the group it went to."""
        async with self.db.session() as session:
            deployment = await self.deployment(actor, deployment_id)
            group = await session.scalar(select(Group.name).where(Group.id == deployment.group_id))
        return deployment, group

    # -- what a member sees -------------------------------------------------------

    async def overview(self, actor: Principal, assignments) -> list[dict]:
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
                    {
                        "name": group.name,
                        "display_name": group.display_name,
                        "folder": f"courses/{group.name}",
                        "deployments": [
                            {
                                "id": d.id,
                                "title": d.title,
                                "path": f"courses/{group.name}/{d.destination}",
                                "by": d.created_by,
                                "at": d.created_at,
                                "new": seen is None or d.created_at > seen,
                            }
                            for d in deployments
                        ],
                        "broadcasts": live,
                        "assignments": await assignments.for_member(session, actor, group),
                    }
                )
        return result

    async def _broadcasts(
        self, session: AsyncSession, actor: Principal, group: Group, now: datetime
    ) -> list[dict]:
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
                {
                    "id": share.id,
                    "owner": nb_owner,
                    "owner_display_name": author.display_name,
                    "notebook": nb_name,
                    "url": f"/notebook/{nb_owner}/{nb_name}/lab"
                    + (f"/tree/{share.path}" if share.path else ""),
                    "expires_at": share.expires_at,
                    "by": share.created_by,
                    "running": route is not None and route.state is State.RUNNING,
                }
            )
        return live

    # -- a student keeps what a live view showed ------------------------------------

    async def copy_broadcast(
        self, actor: Principal, group: str, share_id: int, notebook: str | None, path: str = ""
    ) -> dict:
        """Copy a live view's notebook (its shared file, or `path` of it; the whole home
        when neither) into `<owner>-<notebook>/` of one of the caller's own notebooks,
        running or stopped (`notebook`, or the one they used last).

        A live view is read-only and ends: a student who wants to try the teacher's code
        needs their own copy, and must not need the teacher for it. The copy runs as the
        teacher's account on the teacher's files (as a deployment does) and lands as the
        student's, never overwriting (an existing different file keeps its place and the
        copy goes beside it); refusals leave nothing copied."""
        path = relative_path(path or "", "path")
        now = self.clock.now()
        async with self.db.session() as session:
            target = await get_group(session, group)
            if target.id not in actor.groups:
                raise NotFound(f"you are not in a course '{group}'")
            share = await session.scalar(
                select(Share).where(
                    Share.id == share_id,
                    Share.group_id == target.id,
                    or_(Share.expires_at.is_(None), Share.expires_at > now),
                )
            )
            if share is None:
                raise NotFound(f"course '{group}' shows no live view {share_id} now (it ended?)")
            owner, _, source = (await self.notebooks.names(session, [share.notebook_id]))[
                share.notebook_id
            ].partition("/")
            if owner == actor.name:
                raise Invalid("this live view shows your own notebook: its files are yours already")
            if share.path and path and path != share.path:
                raise Forbidden(f"this live view shows only '{share.path}'")
            chosen = path or share.path
            mine = await self._own_notebook(session, actor, notebook)
        folder = f"{owner}-{source}"
        # A spool file of this copy alone, beside the deployments' archives.
        archive = Path(self.settings.store) / "deployments" / f"copy-{uuid.uuid4().hex}.tar"
        try:
            await asyncio.to_thread(archive.parent.mkdir, parents=True, exist_ok=True)
            try:
                await self.backend.pack(
                    owner,
                    source,
                    [chosen],
                    list(DEFAULT_EXCLUDED),
                    self.settings.template_max_bytes,
                    self.settings.template_max_files,
                    archive,
                )
                result = await self.backend.unpack(
                    actor.name, mine.name, archive, folder, f"from {owner}"
                )
            except BackendError as error:
                raise Conflict(f"nothing was copied: {error}") from None
        finally:
            await asyncio.to_thread(remove_quietly, archive)
        copied = {k: result[k] for k in ("copied", "skipped", "conflicts")}
        async with self.db.session() as session:
            audit.record(
                session,
                actor.name,
                "broadcast.copied",
                f"notebook:{actor.name}/{mine.name}",
                group=target.name,
                share=share.id,
                source=f"notebook:{owner}/{source}/{chosen}",
                folder=folder,
                copied=copied["copied"],
                conflicts=len(copied["conflicts"]),
            )
        return {"notebook": mine.name, "folder": folder, **copied}

    async def _own_notebook(
        self, session: AsyncSession, actor: Principal, notebook: str | None
    ) -> Notebook:
        """The caller's notebook to copy into: the one named, or the one used last."""
        if notebook:
            nb, _ = await self.notebooks.load(session, actor.name, notebook)
        else:
            nb = await session.scalar(
                select(Notebook)
                .where(Notebook.owner_id == actor.id)
                .order_by(Notebook.last_activity.desc().nulls_last(), Notebook.id.desc())
                .limit(1)
            )
            if nb is None:
                raise Conflict(
                    "you have no notebook to copy into; create one on My notebooks first"
                )
        if nb.kind != "jupyter":
            raise Invalid(f"'{nb.name}' is a virtual machine; copy into a JupyterLab notebook")
        return nb

    async def mark_seen(self, actor: Principal) -> None:
        async with self.db.session() as session:
            me = await session.get(User, actor.id)
            me.courses_seen_at = self.clock.now()

    async def my_submissions(self, actor: Principal, group: str) -> list[dict]:
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

    # -- live: the students' notebooks now -------------------------------------------

    @staticmethod
    def _students_notebooks(group_id: int):
        """Notebooks of the group's students (plain members) that are not charged to
        another group: those the group's managers see live and may end."""
        return (
            select(Notebook, User)
            .join(User, User.id == Notebook.owner_id)
            .join(
                Membership,
                (Membership.user_id == User.id) & (Membership.group_id == group_id),
            )
            .where(
                Membership.manager.is_(False),
                User.role == Role.STUDENT.value,
                or_(Notebook.group_id.is_(None), Notebook.group_id == group_id),
            )
        )

    async def live(self, actor: Principal, group: str, shares) -> dict:
        """The students' notebooks running now, and the live views shown to the course."""
        now = self.clock.now()
        async with self.db.session() as session:
            target = await get_group(session, group)
            roles.require_group_manager(actor, target.id, target.name)
            rows = (
                await session.execute(
                    self._students_notebooks(target.id)
                    .where(Notebook.state.in_(LIVE_STATES))
                    .order_by(User.name, Notebook.name)
                )
            ).all()
            views = (
                await session.execute(
                    select(Share, Notebook, User)
                    .join(Notebook, Notebook.id == Share.notebook_id)
                    .join(User, User.id == Notebook.owner_id)
                    .where(Share.group_id == target.id)
                    .where(or_(Share.expires_at.is_(None), Share.expires_at > now))
                    .order_by(Share.created_at.desc())
                )
            ).all()
        notebooks = [await self._live_notebook(actor, nb, owner, shares) for nb, owner in rows]
        return {
            "notebooks": notebooks,
            "views": [
                {
                    "id": share.id,
                    "owner": owner.name,
                    "owner_display_name": owner.display_name or owner.name,
                    "notebook": nb.name,
                    "access": share.access,
                    "note": share.note,
                    "expires_at": share.expires_at,
                    "running": nb.state == State.RUNNING.value,
                    "viewers": (self._viewers(nb.id) if nb.state == State.RUNNING.value else 0),
                    "url": f"/notebook/{owner.name}/{nb.name}/lab"
                    + (f"/tree/{share.path}" if share.path else ""),
                }
                for share, nb, owner in views
            ],
        }

    @staticmethod
    async def _live_notebook(actor: Principal, nb: Notebook, owner: User, shares) -> dict:
        """A student's notebook on the Live tab: a link only where its owner shared it."""
        access = await shares.access(actor, nb.id)
        lab = f"/notebook/{owner.name}/{nb.name}/lab"
        if access is not None and access.scope:
            lab += f"/tree/{access.scope[0]}"
        return {
            "owner": owner.name,
            "owner_display_name": owner.display_name or owner.name,
            "notebook": nb.name,
            "display_name": nb.display_name or nb.name,
            "state": nb.state,
            "started_at": nb.started_at,
            "last_activity": nb.last_activity,
            "cpu_milli": nb.cpu_milli,
            "memory": nb.memory,
            "gpu_type": nb.gpu_type,
            "gpus": nb.gpus,
            "access": access.level if access is not None else None,
            "url": lab if access is not None else None,
        }

    async def end(self, actor: Principal, group: str, owner: str, name: str) -> str:
        """A course manager stops a student's notebook; answers what happened."""
        async with self.db.session() as session:
            target = await get_group(session, group)
            roles.require_group_manager(actor, target.id, target.name)
            found = (
                await session.execute(
                    self._students_notebooks(target.id).where(
                        User.name == owner, Notebook.name == name
                    )
                )
            ).first()
            if found is None:
                raise NotFound(f"no student of course '{group}' has a notebook '{owner}/{name}'")
            state = found[0].state
        if state not in LIVE_STATES:
            return f"{owner}'s notebook '{name}' is not running ({state})"
        reason = f"ended by {actor.name} for course {target.name}"
        await self.notebooks.lifecycle.stop(None, owner, name, reason=reason, cause="course")
        async with self.db.session() as session:
            audit.record(
                session,
                actor.name,
                "course.notebook_ended",
                f"notebook:{owner}/{name}",
                group=target.name,
                state=state,
            )
        return f"{owner}'s notebook '{name}' is stopping"

"""Lab files: a teacher's files copied into the notebooks of a course's members.

Two ways files go from one account to another, both packed as their owner and
unpacked as the receiver by the backend, never overwriting:

- a deployment packs a folder of the teacher's notebook (or a template's files)
  once, then unpacks it into the course folder of every member of the group
  (`~/courses/<group>/...` in each of their notebooks), running or stopped, each
  copy as that member. An identical file is skipped, a different one gets the new
  copy beside it with a suffix; the per-student report is kept with the deployment.
- a student keeps what a live view showed (`copy_broadcast`): the view is read-only
  and ends, so the student takes a copy of its files into a notebook of their own.

Kept apart from what a student sees of their courses (`student_view.py`) and the
Live tab (`live.py`) because only this module writes into others' notebooks: its
rules (who may copy what where, what is never overwritten) are read in one place.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.base import BackendError
from ...core import roles
from ...core.errors import Conflict, Forbidden, Invalid, NotFound
from ...core.paths import relative_path
from ...core.roles import Principal
from ...core.selection import DEFAULT_EXCLUDED
from ...store.db import Database
from ...store.models import Deployment, Group, Membership, Notebook, Share, User
from .. import audit
from ..accounts.directory import get_group
from ..archives import deployment_archive, remove_quietly, template_archive
from ..clock import Clock
from ..progress import ProgressBroker, ProgressEvent
from .schemas import BroadcastCopied

PARALLEL_COPIES = 4
log = logging.getLogger("cgu_lab.lab_files")


@dataclass(frozen=True)
class _CopyJob:
    """What a deployment's background copy needs: whose copy, to which group, into which folder."""

    deployment_id: int
    teacher: str
    group_id: int
    group: str
    destination: str


def summarize(report: dict[str, dict]) -> str:
    """A deployment's report in one sentence, as its progress and its page show it."""
    members = [r for name, r in report.items() if name != "*"]
    if "*" in report:
        return f"Nothing was copied: {report['*']['error']}"
    conflicts = sum(len(r.get("conflicts", [])) for r in members)
    errors = sum(1 for r in members if "error" in r)
    text = f"Copied to {len(members) - errors} member(s)"
    if conflicts:
        text += f"; {conflicts} file(s) already existed and were kept, new copies saved beside them"
    if errors:
        text += f"; {errors} member(s) failed"
    return text + "."


class LabFileService:
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
        """`templates`: a template's packed files to deploy; `notebooks`: the teacher's
        and the student's notebooks by name; `clock`: whether a live view still runs."""
        self.db = db
        self.clock = clock
        self.backend = backend
        self.broker = broker
        self.templates = templates
        self.notebooks = notebooks
        self.settings = settings
        self._tasks: set[asyncio.Task] = set()

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
        self.broker.publish(
            ("deployment", job.deployment_id),
            ProgressEvent("deploy", 100, summarize(report), state, done=True, ok=state == "done"),
        )

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

    # -- a student keeps what a live view showed ------------------------------------

    async def copy_broadcast(
        self, actor: Principal, group: str, share_id: int, notebook: str | None, path: str = ""
    ) -> BroadcastCopied:
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
        return BroadcastCopied(notebook=mine.name, folder=folder, **copied)

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

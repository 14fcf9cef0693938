"""Templates: a teacher's notebook (environment, resources, files) published for a class.

Publishing snapshots the chosen files of the teacher's running notebook (as
the teacher, through the backend) into the controller's store as a new
version; starting from a template creates a notebook with the version's
resources and copies its files into the new home before the first start.
"""

from __future__ import annotations

import asyncio
import os
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.base import BackendError
from ...core.errors import Conflict, Forbidden, Invalid, NotFound
from ...core.names import check_label
from ...core.roles import Principal, Role
from ...store.db import Database
from ...store.models import (
    AuditEvent,
    Environment,
    Group,
    Membership,
    Template,
    TemplateVersion,
    User,
)
from .. import audit
from ..accounts.directory import get_group
from ..archives import remove_quietly, template_archive
from ..environments import catalog

PUBLISHERS = frozenset({Role.ADMIN, Role.TEACHER, Role.TA})
VISIBILITY = ("public", "group", "private")
SEEDED_FILES_SHOWN = 500  # of a template's archive, listed for a submission to include


@dataclass(frozen=True)
class SeededFiles:
    """What a notebook's template brought into its home: the template's name and title,
    the version and the files of that version's archive (relative paths of the home)."""

    template: str
    display_name: str
    version: int
    files: list[str]


@dataclass(frozen=True)
class VersionSpec:
    """What a new version records besides its files."""

    label: str
    environment: str
    cpu_milli: int
    memory: int
    gpu_type: str | None
    gpus: int


@dataclass(frozen=True)
class TemplateDetail:
    """One template for its page: every version (newest first), its author and group."""

    template: Template
    versions: list[TemplateVersion]
    author: str
    group: str | None


class TemplateService:
    def __init__(self, db: Database, backend, settings) -> None:
        self.db = db
        self.backend = backend
        self.settings = settings

    # -- who sees what -----------------------------------------------------------

    @staticmethod
    def visible_clause(actor: Principal):
        if actor.is_admin:
            return True
        return or_(
            Template.visibility == "public",
            Template.owner_id == actor.id,
            (Template.visibility == "group")
            & Template.group_id.in_(actor.groups | actor.managed_groups or {-1}),
        )

    async def get(self, session: AsyncSession, actor: Principal, name: str) -> Template:
        template = await session.scalar(
            select(Template).where(Template.name == name, self.visible_clause(actor))
        )
        if template is None:
            raise NotFound(f"there is no template '{name}' that you may use")
        return template

    async def latest(self, session: AsyncSession, template: Template) -> TemplateVersion:
        version = await session.scalar(
            select(TemplateVersion)
            .where(TemplateVersion.template_id == template.id)
            .order_by(TemplateVersion.version.desc())
            .limit(1)
        )
        if version is None:
            raise NotFound(f"template '{template.name}' has no version yet")
        return version

    async def version(
        self, session: AsyncSession, actor: Principal, name: str, number: int | None = None
    ) -> tuple[Template, TemplateVersion]:
        """The version to start from (the newest unless given); retired templates start nothing."""
        template = await self.get(session, actor, name)
        if template.retired:
            raise Conflict(f"template '{name}' was retired by its teacher; choose another")
        if number is None:
            return template, await self.latest(session, template)
        version = await session.scalar(
            select(TemplateVersion).where(
                TemplateVersion.template_id == template.id, TemplateVersion.version == number
            )
        )
        if version is None:
            raise NotFound(f"template '{name}' has no version {number}")
        return template, version

    async def listing(
        self, actor: Principal, query: str = "", group: str | None = None, retired: bool = False
    ) -> list[tuple[Template, TemplateVersion | None, str, str | None]]:
        """Visible templates with their newest version, author and group, for the gallery."""
        async with self.db.session() as session:
            statement = (
                select(Template, User.name, Group.name)
                .outerjoin(User, User.id == Template.owner_id)
                .outerjoin(Group, Group.id == Template.group_id)
                .where(self.visible_clause(actor))
                .order_by(Template.display_name, Template.name)
            )
            if not retired:
                statement = statement.where(Template.retired.is_(False))
            if query:
                like = f"%{query.lower()}%"
                statement = statement.where(
                    or_(
                        func.lower(Template.name).like(like),
                        func.lower(Template.display_name).like(like),
                        func.lower(Template.description).like(like),
                    )
                )
            if group:
                statement = statement.where(Group.name == group)
            rows = (await session.execute(statement)).all()
            result = []
            for template, author, group_name in rows:
                newest = await session.scalar(
                    select(TemplateVersion)
                    .where(TemplateVersion.template_id == template.id)
                    .order_by(TemplateVersion.version.desc())
                    .limit(1)
                )
                result.append((template, newest, author or "", group_name))
            return result

    async def detail(self, actor: Principal, name: str) -> TemplateDetail:
        """A template the caller may use, with all its versions, its author and group."""
        async with self.db.session() as session:
            template = await self.get(session, actor, name)
            versions = await self.versions(session, template)
            author = await session.scalar(select(User.name).where(User.id == template.owner_id))
            group = (
                await session.scalar(select(Group.name).where(Group.id == template.group_id))
                if template.group_id is not None
                else None
            )
        return TemplateDetail(template, versions, author or "", group)

    async def versions(self, session: AsyncSession, template: Template) -> list[TemplateVersion]:
        rows = await session.scalars(
            select(TemplateVersion)
            .where(TemplateVersion.template_id == template.id)
            .order_by(TemplateVersion.version.desc())
        )
        return list(rows.all())

    # -- publishing ----------------------------------------------------------------

    async def publish(
        self,
        actor: Principal,
        notebook: str,
        name: str,
        display_name: str,
        description: str,
        visibility: str,
        group: str | None,
        spec: VersionSpec,
        paths: list[str],
        excluded: list[str],
    ) -> tuple[Template, TemplateVersion]:
        """Snapshot files of the actor's notebook as a new version of template `name`."""
        if actor.role not in PUBLISHERS:
            raise Forbidden("only teachers, TAs and administrators publish templates")
        name = check_label(name.strip().lower(), "template")
        if visibility not in VISIBILITY:
            raise Invalid("a template is 'public', 'group' (one course) or 'private'")
        group_id, environment = await self._check_publishable(actor, name, visibility, group, spec)
        # Snapshot outside any transaction: it can take a while.
        spool, manifest = await self._snapshot(actor, notebook, paths, excluded)
        async with self.db.session() as session:
            template = await self._claim(
                session, actor, name, display_name, description, visibility, group_id
            )
            version = await self._add_version(
                session, actor, notebook, template, spec, environment, manifest
            )
            await asyncio.to_thread(
                os.replace,
                spool,
                template_archive(Path(self.settings.store), template.id, version.version),
            )
            audit.record(
                session,
                actor.name,
                "template.published",
                f"template:{name}",
                version=version.version,
                files=version.files,
                bytes=version.bytes,
                environment=environment.name,
                skipped=len(manifest["skipped"]),
            )
        return template, version

    async def _check_publishable(
        self, actor: Principal, name: str, visibility: str, group: str | None, spec: VersionSpec
    ) -> tuple[int | None, Environment]:
        """Refuse a publication before its snapshot is taken; answers its group and environment."""
        async with self.db.session() as session:
            group_id = None
            if visibility == "group":
                if not group:
                    raise Invalid("choose the group that may use this template")
                target = await get_group(session, group)
                if not (actor.is_admin or target.id in actor.groups | actor.managed_groups):
                    raise Forbidden(f"you are not in group '{group}'")
                group_id = target.id
            environment = await catalog.get_environment(session, spec.environment)
            if spec.gpus and spec.gpu_type:
                await catalog.get_gpu_type(session, spec.gpu_type)
            existing = await session.scalar(select(Template).where(Template.name == name))
            if existing is not None and existing.owner_id != actor.id and not actor.is_admin:
                raise Conflict(
                    f"a template named '{name}' belongs to someone else; choose another name"
                )
        return group_id, environment

    async def _snapshot(
        self, actor: Principal, notebook: str, paths: list[str], excluded: list[str]
    ) -> tuple[str, dict]:
        """Pack the chosen files into a spool file in the store; answers it and its manifest."""
        store = Path(self.settings.store) / "templates"
        await asyncio.to_thread(store.mkdir, parents=True, exist_ok=True)
        handle, spool = tempfile.mkstemp(dir=store, suffix=".part")
        os.close(handle)
        try:
            manifest = (
                await self.backend.pack(
                    actor.name,
                    notebook,
                    paths,
                    excluded,
                    self.settings.template_max_bytes,
                    self.settings.template_max_files,
                    Path(spool),
                )
                if paths
                else {"files": [], "bytes": 0, "content_hash": "", "skipped": []}
            )
        except BackendError as error:
            await asyncio.to_thread(remove_quietly, spool)
            raise Invalid(f"the files could not be saved: {error}") from None
        return spool, manifest

    @staticmethod
    async def _claim(
        session: AsyncSession,
        actor: Principal,
        name: str,
        display_name: str,
        description: str,
        visibility: str,
        group_id: int | None,
    ) -> Template:
        """The template `name`, locked, created if new, with the details just published."""
        template = await session.scalar(
            select(Template).where(Template.name == name).with_for_update()
        )
        if template is None:
            template = Template(name=name, owner_id=actor.id)
            session.add(template)
        template.display_name = display_name.strip() or name
        template.description = description
        template.visibility = visibility
        template.group_id = group_id
        template.retired = False
        await session.flush()
        return template

    @staticmethod
    async def _add_version(
        session: AsyncSession,
        actor: Principal,
        notebook: str,
        template: Template,
        spec: VersionSpec,
        environment: Environment,
        manifest: dict,
    ) -> TemplateVersion:
        """The template's next version, numbered under the lock `_claim` holds."""
        number = (
            await session.scalar(
                select(func.max(TemplateVersion.version)).where(
                    TemplateVersion.template_id == template.id
                )
            )
            or 0
        ) + 1
        version = TemplateVersion(
            template_id=template.id,
            version=number,
            label=spec.label.strip(),
            environment=environment.name,
            image=environment.image,
            cpu_milli=spec.cpu_milli,
            memory=spec.memory,
            gpu_type=spec.gpu_type if spec.gpus else None,
            gpus=spec.gpus,
            files=len(manifest["files"]),
            bytes=manifest["bytes"],
            content_hash=manifest["content_hash"],
            source=f"notebook:{actor.name}/{notebook}",
            created_by=actor.name,
        )
        session.add(version)
        await session.flush()
        return version

    async def update(
        self,
        actor: Principal,
        name: str,
        display_name: str | None = None,
        description: str | None = None,
        visibility: str | None = None,
        group: str | None = None,
        retired: bool | None = None,
    ) -> Template:
        async with self.db.session() as session:
            template = await self.get(session, actor, name)
            if template.owner_id != actor.id and not actor.is_admin:
                raise Forbidden(
                    f"only the author of template '{name}' and administrators may change it"
                )
            if display_name is not None:
                template.display_name = display_name.strip() or template.name
            if description is not None:
                template.description = description
            if visibility is not None:
                if visibility not in VISIBILITY:
                    raise Invalid("a template is 'public', 'group' (one course) or 'private'")
                template.visibility = visibility
                template.group_id = None
                if visibility == "group":
                    if not group:
                        raise Invalid("choose the group that may use this template")
                    target = await get_group(session, group)
                    roles_ok = actor.is_admin or target.id in actor.groups | actor.managed_groups
                    if not roles_ok:
                        raise Forbidden(f"you are not in group '{group}'")
                    template.group_id = target.id
            if retired is not None:
                template.retired = retired
            audit.record(
                session,
                actor.name,
                "template.retired" if retired else "template.updated",
                f"template:{name}",
            )
        return template

    async def publishable_groups(self, session: AsyncSession, actor: Principal) -> list[Group]:
        rows = await session.scalars(
            select(Group)
            .join(Membership, Membership.group_id == Group.id)
            .where(Membership.user_id == actor.id)
            .order_by(Group.name)
        )
        return list(rows.all())

    async def mine(self, session: AsyncSession, actor: Principal) -> list[tuple[Template, int]]:
        rows = await session.execute(
            select(Template, func.count(TemplateVersion.id))
            .outerjoin(TemplateVersion, TemplateVersion.template_id == Template.id)
            .where(Template.owner_id == actor.id)
            .group_by(Template.id)
            .order_by(Template.name)
        )
        return [(t, n) for t, n in rows.all()]

    async def seeded(self, owner: str, name: str) -> SeededFiles | None:
        """The template a notebook was made from, with its files (None when it was not made
        from one), as its creation recorded it: what a submission should include for the
        notebook to run elsewhere. A retired template's archive may be gone: no files then."""
        async with self.db.reading() as session:
            created = await session.scalar(
                select(AuditEvent)
                .where(
                    AuditEvent.action == "notebook.created",
                    AuditEvent.target == f"notebook:{owner}/{name}",
                )
                .order_by(AuditEvent.id.desc())
                .limit(1)
            )
            seed = (created.details or {}).get("seed") if created is not None else None
            if not (isinstance(seed, dict) and seed.get("kind") == "template"):
                return None
            version = await session.get(TemplateVersion, seed.get("id"))
            template = await session.get(Template, version.template_id) if version else None
            if version is None or template is None:
                return None
        archive = template_archive(Path(self.settings.store), template.id, version.version)
        try:
            files = await asyncio.to_thread(_archive_files, archive)
        except (OSError, tarfile.TarError):
            files = []
        return SeededFiles(template.name, template.display_name, version.version, files)


def _archive_files(archive: Path) -> list[str]:
    """The regular files of a template's archive, as relative paths of the home."""
    names = []
    with tarfile.open(archive, mode="r:*") as tar:
        for member in tar:
            if member.isfile():
                names.append(member.name.removeprefix("./"))
            if len(names) >= SEEDED_FILES_SHOWN:
                break
    return names


def may_publish(actor: Principal) -> bool:
    return actor.role in PUBLISHERS

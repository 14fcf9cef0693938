"""Personal and course storage for the portal: who may do what, and with what allowance.

The rules are core/storage.py's; this reads the caller's place in a course
and the allowances from the database, and records every change in the audit
log. The files themselves are the backend's (`backends/local_storage.py`);
a backend without storage file access answers with an error naming it.

Allowances: personal storage holds at most the user's disk allowance (their
quota, else the platform default), a course's at most its group's disk
budget. They are checked by the storage tool on every upload chunk (a
checked allowance, not a filesystem quota; see local_storage).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import storage as rules
from ...core.errors import Forbidden, NotFound, NotSupported
from ...core.roles import Principal, Role
from ...store.db import Database
from ...store.models import Group, Membership, User
from .. import audit
from ..quotas import service as quotas


@dataclass(frozen=True)
class Area:
    """One storage as the caller sees it."""

    kind: str  # "users" or "courses"
    name: str
    title: str
    access: str  # read | write
    role: str  # owner | teacher | ta | member | admin
    allowance: int | None
    whose: str  # how a refusal names the allowance
    ta_write: bool | None = None
    may_configure: bool = False

    @property
    def writable(self) -> bool:
        return self.access == rules.WRITE


def files_of(backend):
    """The backend's storage files, or NotSupported naming the backend."""
    storage = getattr(backend, "storage", None)
    if storage is None:
        raise NotSupported(
            f"the {backend.name} backend does not offer the storage page's file access; "
            "your storage is mounted at ~/storage in each of your notebooks"
        )
    return storage


async def _seat(session: AsyncSession, actor: Principal, group: Group) -> rules.CourseSeat | None:
    row = await session.get(Membership, (group.id, actor.id))
    if row is None:
        return None
    return rules.CourseSeat(member=True, manager=row.manager, role=actor.role)


async def _course(session: AsyncSession, name: str) -> Group:
    group = await session.scalar(select(Group).where(Group.name == name, Group.kind == "course"))
    if group is None:
        raise NotFound(f"there is no course '{name}'")
    return group


async def personal(session: AsyncSession, actor: Principal, owner: str) -> Area:
    rules.require_own_storage(actor, owner)
    limits, _ = await quotas.user_limits(session, actor.id)
    return Area(
        "users", owner, "My storage", rules.WRITE, "owner", limits.disk, "your disk allowance"
    )


async def course(session: AsyncSession, actor: Principal, name: str) -> Area:
    group = await _course(session, name)
    seat = await _seat(session, actor, group)
    access = rules.require_course_read(actor, seat, group.storage_ta_write, name)
    budget = await quotas.group_limits(session, group.id)
    return Area(
        "courses",
        name,
        group.display_name or name,
        access,
        rules.course_role(actor, seat),
        budget.disk if budget is not None else None,
        f"the disk allowance of course '{name}'",
        group.storage_ta_write,
        rules.may_configure(actor, seat),
    )


async def area(session: AsyncSession, actor: Principal, kind: str, name: str) -> Area:
    return await (personal if kind == "users" else course)(session, actor, name)


async def writable_area(session: AsyncSession, actor: Principal, kind: str, name: str) -> Area:
    """The area, or Forbidden naming why the caller may not write it."""
    if kind == "courses":
        group = await _course(session, name)
        seat = await _seat(session, actor, group)
        rules.require_course_write(actor, seat, group.storage_ta_write, name)
    return await area(session, actor, kind, name)


async def areas(session: AsyncSession, actor: Principal) -> list[Area]:
    """The caller's own storage and that of every course they belong to."""
    found = [await personal(session, actor, actor.name)]
    groups = await session.scalars(
        select(Group)
        .join(Membership, Membership.group_id == Group.id)
        .where(Membership.user_id == actor.id, Group.kind == "course")
        .order_by(Group.name)
    )
    for group in groups.all():
        found.append(await course(session, actor, group.name))
    return found


async def course_mounts(session: AsyncSession, user_id: int) -> tuple[tuple[str, bool], ...]:
    """The courses whose storage a user's notebooks mount: (course, writable) pairs."""
    user = await session.get(User, user_id)
    if user is None:
        return ()
    rows = await session.execute(
        select(Group, Membership.manager)
        .join(Membership, Membership.group_id == Group.id)
        .where(Membership.user_id == user_id, Group.kind == "course")
        .order_by(Group.name)
    )
    role = Role(user.role)
    actor = Principal(user.id, user.name, role)
    mounts = []
    for group, manager in rows.all():
        seat = rules.CourseSeat(member=True, manager=manager, role=role)
        access = rules.course_access(actor, seat, group.storage_ta_write)
        mounts.append((group.name, access == rules.WRITE))
    return tuple(mounts)


async def set_ta_write(session: AsyncSession, actor: Principal, name: str, allowed: bool) -> None:
    group = await _course(session, name)
    if not rules.may_configure(actor, await _seat(session, actor, group)):
        raise Forbidden(f"only the teachers of '{name}' decide whether its TAs write its storage")
    group.storage_ta_write = allowed
    audit.record(session, actor.name, "storage.settings", f"group:{name}", ta_write=allowed)


# -- operations: each one transaction of its own, for the router -----------------


@dataclass(frozen=True)
class Opened:
    """A storage opened for one request: the backend's files, the area, the place in it."""

    files: Any
    area: Area
    place: Any


@dataclass(frozen=True)
class Overview:
    """The caller's storages, and how the backend enforces allowances."""

    areas: list[Area]
    enforcement: str


async def open_area(
    db: Database, backend, actor: Principal, kind: str, name: str, write: bool
) -> Opened:
    """The storage `kind`/`name` as the caller may use it; Forbidden when `write` is
    asked of one they may only read, NotSupported on a backend without storage files."""
    files = files_of(backend)
    async with db.session() as session:
        found = await (writable_area if write else area)(session, actor, kind, name)
    owner, course_name = (name, None) if kind == "users" else (None, name)
    place = await files.place(owner, course_name, actor.name, found.writable)
    return Opened(files, found, place)


async def overview(db: Database, backend, actor: Principal) -> Overview:
    async with db.session() as session:
        found = await areas(session, actor)
    storage = getattr(backend, "storage", None)
    enforcement = (
        storage.enforcement
        if storage is not None
        else "not checked from this page: this platform's backend offers no storage page"
    )
    return Overview(found, enforcement)


@dataclass(frozen=True)
class Received:
    """What an upload chunk left: the bytes received so far, and whether the file is in place."""

    received: int
    done: bool


async def _record(db: Database, actor: Principal, action: str, kind: str, name: str, **details):
    """Audit a change to the files of a storage, once the backend has made it."""
    async with db.session() as session:
        audit.record(session, actor.name, action, f"storage:{kind}/{name}", **details)


async def upload(
    db: Database,
    opened: Opened,
    actor: Principal,
    kind: str,
    name: str,
    chunk: bytes,
    path: str,
    upload: str,
    offset: int,
    total: int,
) -> Received:
    """One chunk of an upload into a storage opened for writing (the caller opens it
    before reading the chunk, so a refusal comes first); the last chunk puts the file
    in place and is audited."""
    plan = {
        "path": path,
        "upload": upload,
        "offset": offset,
        "total": total,
        "allowance": opened.area.allowance,
        "whose": opened.area.whose,
    }
    answer = await opened.files.run(opened.place, "put", plan, chunk)
    if answer["done"]:
        await _record(db, actor, "storage.uploaded", kind, name, path=path, bytes=total)
    return Received(answer["received"], answer["done"])


async def make_folder(
    db: Database, backend, actor: Principal, kind: str, name: str, path: str
) -> str:
    """Make a folder; its path as the backend made it."""
    opened = await open_area(db, backend, actor, kind, name, True)
    made = await opened.files.run(opened.place, "mkdir", {"path": path})
    await _record(db, actor, "storage.folder", kind, name, path=made["path"])
    return made["path"]


async def delete(db: Database, backend, actor: Principal, kind: str, name: str, path: str) -> str:
    """Delete a file or a folder with everything in it; its path as the backend named it."""
    opened = await open_area(db, backend, actor, kind, name, True)
    gone = await opened.files.run(opened.place, "delete", {"path": path})
    await _record(db, actor, "storage.deleted", kind, name, path=gone["path"])
    return gone["path"]


async def configure(db: Database, actor: Principal, name: str, ta_write: bool) -> Area:
    """Whether a course's TAs may write its storage; the course's area as it now is."""
    async with db.session() as session:
        await set_ta_write(session, actor, name, ta_write)
    async with db.session() as session:
        return await course(session, actor, name)

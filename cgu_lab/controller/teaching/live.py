"""A course's Live tab: its students' notebooks that run now, and its live views.

A course's teacher or TA sees which of the students' notebooks hold or wait for
resources now and may End one (stop it, recorded with who ended it). A student's
notebook opens for a teacher only where its owner shared it (with them or with
the course): managing a course is no right to read a student's files. The tab
also lists the live views shown to the course, with how many follow each.

Kept apart from lab files and the student's view because it is the only part of
teaching that acts on running notebooks (through the notebooks' lifecycle) and
the one whose set of notebooks the staff pages' event stream follows
(`notebooks/watch.py` asks `students_notebooks`).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Select, or_, select

from ...core import roles
from ...core.errors import NotFound
from ...core.lifecycle import State
from ...core.roles import Principal, Role
from ...store.db import Database
from ...store.models import Membership, Notebook, Share, User
from .. import audit
from ..accounts.directory import get_group
from ..clock import Clock
from .schemas import CourseLive, LiveNotebook, LiveView

# A student's notebook that holds or waits for resources now.
LIVE_STATES = (State.QUEUED.value, State.STARTING.value, State.RUNNING.value)


def students_notebooks(group_id: int) -> Select:
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


class LiveService:
    def __init__(self, db: Database, notebooks, shares, clock: Clock) -> None:
        """`notebooks`: its lifecycle stops a notebook a manager ends; `shares`: what
        the caller may open of a student's notebook; `clock`: which live views still run."""
        self.db = db
        self.notebooks = notebooks
        self.shares = shares
        self.clock = clock
        # How many follow a notebook live (None: unknown). The notebook proxy, which
        # holds the open websockets, tells it (`count_viewers_with`); the proxy is built
        # after the services, and this service must not know the proxy.
        self._viewers: Callable[[int], int | None] = lambda notebook_id: None

    def count_viewers_with(self, viewers: Callable[[int], int | None]) -> None:
        """Where the Live tab's viewer counts come from: `viewers(notebook_id)`."""
        self._viewers = viewers

    async def overview(self, actor: Principal, group: str) -> CourseLive:
        """The students' notebooks running now, and the live views shown to the course."""
        now = self.clock.now()
        async with self.db.session() as session:
            target = await get_group(session, group)
            roles.require_group_manager(actor, target.id, target.name)
            rows = (
                await session.execute(
                    students_notebooks(target.id)
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
        notebooks = [await self._live_notebook(actor, nb, owner) for nb, owner in rows]
        return CourseLive(
            notebooks=notebooks,
            views=[
                LiveView(
                    id=share.id,
                    owner=owner.name,
                    owner_display_name=owner.display_name or owner.name,
                    notebook=nb.name,
                    access=share.access,
                    note=share.note,
                    expires_at=share.expires_at,
                    running=nb.state == State.RUNNING.value,
                    viewers=(self._viewers(nb.id) if nb.state == State.RUNNING.value else 0),
                    url=f"/notebook/{owner.name}/{nb.name}/lab"
                    + (f"/tree/{share.path}" if share.path else ""),
                )
                for share, nb, owner in views
            ],
        )

    async def _live_notebook(self, actor: Principal, nb: Notebook, owner: User) -> LiveNotebook:
        """A student's notebook on the Live tab: a link only where its owner shared it."""
        access = await self.shares.access(actor, nb.id)
        lab = f"/notebook/{owner.name}/{nb.name}/lab"
        if access is not None and access.scope:
            lab += f"/tree/{access.scope[0]}"
        return LiveNotebook(
            owner=owner.name,
            owner_display_name=owner.display_name or owner.name,
            notebook=nb.name,
            display_name=nb.display_name or nb.name,
            state=nb.state,
            started_at=nb.started_at,
            last_activity=nb.last_activity,
            cpu_milli=nb.cpu_milli,
            memory=nb.memory,
            gpu_type=nb.gpu_type,
            gpus=nb.gpus,
            access=access.level if access is not None else None,
            url=lab if access is not None else None,
        )

    async def end(self, actor: Principal, group: str, owner: str, name: str) -> str:
        """A course manager stops a student's notebook; answers what happened."""
        async with self.db.session() as session:
            target = await get_group(session, group)
            roles.require_group_manager(actor, target.id, target.name)
            found = (
                await session.execute(
                    students_notebooks(target.id).where(User.name == owner, Notebook.name == name)
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

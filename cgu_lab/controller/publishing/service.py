"""Published demos: a notebook's owner lets a course (or every logged-in user) use one of
its web apps, and nothing else of the notebook.

A persistent notebook keeps a teacher's demo running; publishing its app is what lets
students use it. The publication is the rule the sharing service's `access` reads (a
caller in the audience gets the app's path, `core/sharing.Access.apps`) and the proxy
applies (`proxy/forward.py`, `_demo_limit`). Every change drops the sharing service's
cached answers for the notebook and re-checks its open websockets, so unpublishing ends
a visitor's access at once. Visitors are counted once per person (`DemoVisit`).

An administrator may make a demo public (`set_public`): the proxy then serves its app's
path to callers without a log-in too (`public_apps`), paced per address (`admit`), each
anonymous visitor counted once by the random name of their cookie (`AnonymousVisit`).

A notebook shown as a page with Voilà is an app its server runs from a list in the home
(notebook/apps/voila_demos.py). The publications here are the truth of which pages
should run: unpublishing one asks the running server to remove the page at once (its
Voilà stops), and a server asks which of its apps are published at each start
(`published_apps`, with its own token) and drops the others, so a page unpublished while
the notebook was stopped does not come back.
"""

from __future__ import annotations

import logging

from cachetools import LRUCache, TTLCache
from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import publishing
from ...core.errors import Forbidden, Invalid, NotFound
from ...core.roles import MANAGER_ROLES, Principal, can_manage_group, require_admin
from ...store.db import Database
from ...store.models import Group, Membership, Notebook, User
from ...store.publishing_models import AnonymousVisit, DemoVisit, Publication
from .. import audit
from ..accounts.directory import get_group
from ..clock import Clock
from ..notebooks.reader import NotebookReader
from ..notebooks.specs import load_owned
from .schemas import DemoCourse, DemoOut, PublishOptionsOut

log = logging.getLogger(__name__)

MAX_PER_NOTEBOOK = 10
# (publication, user) pairs already counted: a bound, not a working size.
COUNTED_ENTRIES = 100_000
# How long the public apps of a notebook are reused (a change drops them at once).
PUBLIC_SECONDS = 5.0
PUBLIC_ENTRIES = 10_000
# An address without a log-in makes NEW_VISITORS_BURST visitor names, then NEW_VISITORS_RATE
# a second (beyond that its requests are served, not counted again); how fast it may send
# requests is the settings' (demo_public_rate, demo_public_burst).
NEW_VISITORS_BURST = 20.0
NEW_VISITORS_RATE = 0.1
ADDRESSES = 100_000


class Publishing:
    def __init__(
        self,
        db: Database,
        shares,
        notebooks,
        plan,
        clock: Clock,
        reader: NotebookReader,
        anonymous_pace: tuple[float, float] = (20.0, 120.0),
    ) -> None:
        """`shares`: the ShareService whose answers a change of a publication invalidates;
        `plan`: the origins, for a demo's address on its notebook's own origin;
        `reader`: how a running notebook's server is asked to remove an unpublished page;
        `anonymous_pace`: (requests a second, at once) of one address without a log-in."""
        self.reader = reader
        self.anonymous_pace = anonymous_pace
        self.db = db
        self.shares = shares
        self.notebooks = notebooks
        self.plan = plan
        self.clock = clock
        self._counted: set[tuple[int, str, int | str]] = set()
        # notebook id -> the prefixes of its public demos
        self._public: TTLCache[int, tuple[str, ...]] = TTLCache(
            PUBLIC_ENTRIES, PUBLIC_SECONDS, timer=clock.monotonic
        )
        # address -> its bucket of requests, and of new visitor names
        self._paces: LRUCache[tuple[str, str], publishing.Bucket] = LRUCache(ADDRESSES)

    # -- reading -------------------------------------------------------------------

    async def _describe(self, session: AsyncSession, row: Publication) -> DemoOut:
        nb = await session.get(Notebook, row.notebook_id)
        owner = await session.get(User, nb.owner_id)
        group = await session.get(Group, row.group_id) if row.group_id is not None else None
        visitors = await session.scalar(
            select(func.count()).select_from(DemoVisit).where(DemoVisit.publication_id == row.id)
        )
        anonymous = await session.scalar(
            select(func.count())
            .select_from(AnonymousVisit)
            .where(AnonymousVisit.publication_id == row.id)
        )
        return DemoOut(
            id=row.id,
            owner=owner.name,
            owner_display_name=owner.display_name or owner.name,
            notebook=nb.name,
            app=row.prefix,
            title=row.title or row.prefix,
            course=group.name if group else None,
            state=nb.state,
            url=self.plan.notebook_url(owner.name, nb.name, row.prefix),
            visitors=(visitors or 0) + (anonymous or 0),
            anonymous_visitors=anonymous or 0,
            public=row.public,
            created_by=row.created_by,
            created_at=row.created_at,
        )

    async def list_for(self, actor: Principal, owner: str, name: str) -> list[DemoOut]:
        """A notebook's published apps (its owner, or an admin)."""
        async with self.db.session() as session:
            nb = await load_owned(session, actor, owner, name, "publish")
            rows = await session.scalars(
                select(Publication).where(Publication.notebook_id == nb.id).order_by(Publication.id)
            )
            return [await self._describe(session, row) for row in rows.all()]

    async def course_demos(self, actor: Principal, group: str) -> list[DemoOut]:
        """The demos published to a course, for its members and managers (and admins)."""
        async with self.db.session() as session:
            found = await get_group(session, group)
            member = await session.get(Membership, (found.id, actor.id))
            if member is None and not can_manage_group(actor, found.id):
                raise NotFound(f"there is no course '{group}' of yours")
            rows = await session.scalars(
                select(Publication)
                .where(Publication.group_id == found.id)
                .order_by(Publication.created_at, Publication.id)
            )
            return [await self._describe(session, row) for row in rows.all()]

    async def lab_options(self, actor: Principal, owner: str, name: str) -> PublishOptionsOut:
        """What JupyterLab's Publish dialog offers the notebook's owner: whether they may
        publish at all (teachers, TAs, administrators), the courses they may publish to,
        and what this notebook publishes now."""
        may = actor.role in MANAGER_ROLES
        async with self.db.session() as session:
            await load_owned(session, actor, owner, name, "publish")
            courses = []
            if may:
                query = select(Group).where(Group.kind == "course").order_by(Group.name)
                if not actor.is_admin:
                    query = query.where(Group.id.in_(actor.managed_groups or {-1}))
                courses = [
                    DemoCourse(name=g.name, display_name=g.display_name or g.name)
                    for g in (await session.scalars(query)).all()
                ]
        return PublishOptionsOut(
            may_publish=may, courses=courses, demos=await self.list_for(actor, owner, name)
        )

    # -- publishing ----------------------------------------------------------------

    async def publish(
        self,
        actor: Principal,
        owner: str,
        name: str,
        app: str,
        course: str | None,
        title: str = "",
    ) -> tuple[DemoOut, bool]:
        """Publish a notebook's app to a course its owner manages (or to everyone logged in);
        publishing the same app again changes its audience and title. (row, created)."""
        prefix = publishing.check_prefix(app)
        title = title.strip()
        if len(title) > publishing.MAX_TITLE:
            raise Invalid(f"a demo's title may have at most {publishing.MAX_TITLE} characters")
        if actor.role not in MANAGER_ROLES:
            raise Forbidden("only teachers, TAs and administrators may publish a demo")
        try:
            async with self.db.session() as session:
                nb = await load_owned(session, actor, owner, name, "publish")
                group_id = None
                if course is not None:
                    group = await get_group(session, course)
                    if not can_manage_group(actor, group.id):
                        raise Forbidden(
                            f"you may publish only to courses you teach, not '{course}'"
                        )
                    group_id = group.id
                row = await session.scalar(
                    select(Publication)
                    .where(Publication.notebook_id == nb.id, Publication.prefix == prefix)
                    .with_for_update()
                )
                created = row is None
                if created:
                    count = await session.scalar(
                        select(func.count())
                        .select_from(Publication)
                        .where(Publication.notebook_id == nb.id)
                    )
                    if count >= MAX_PER_NOTEBOOK:
                        raise Invalid(
                            f"a notebook may publish at most {MAX_PER_NOTEBOOK} apps; "
                            "unpublish one first"
                        )
                    row = Publication(notebook_id=nb.id, prefix=prefix, created_by=actor.name)
                    session.add(row)
                row.group_id = group_id
                row.title = title
                row.created_by = actor.name
                row.created_at = self.clock.now()
                await session.flush()
                audit.record(
                    session,
                    actor.name,
                    "demo.published" if created else "demo.changed",
                    f"notebook:{owner}/{name}",
                    app=prefix,
                    course=course,
                )
                described = await self._describe(session, row)
        except IntegrityError:
            raise Invalid(
                f"'{prefix}' was being published at the same moment; look at the notebook's "
                "demos and try again"
            ) from None
        self._changed(nb.id)
        return described, created

    async def published_apps(
        self, actor: Principal, owner: str, name: str, notebook_id: int | None
    ) -> list[str]:
        """The prefixes a notebook publishes, for its own server (with its token, which
        names its notebook: `notebook_id`) when it starts: the pages it shows with Voilà
        that are not among them are dropped. Asked by each server as it starts, so it only
        reads (no writer's turn behind a class's starts)."""
        async with self.db.reading() as session:
            nb = await load_owned(session, actor, owner, name, "publish")
            if nb.id != notebook_id:
                raise NotFound(f"a notebook's token asks about its own notebook, not '{name}'")
            rows = await session.scalars(
                select(Publication.prefix)
                .where(Publication.notebook_id == nb.id)
                .order_by(Publication.prefix)
            )
            return list(rows.all())

    async def unpublish(self, actor: Principal, owner: str, name: str, publication: int) -> None:
        """End a demo: its visitors lose the app at once (open websockets too). A page
        shown with Voilà is also removed from the running notebook's server, which stops
        its Voilà; a stopped (or starting) notebook's server drops it at its start."""
        async with self.db.session() as session:
            nb = await load_owned(session, actor, owner, name, "publish")
            row = await session.get(Publication, publication)
            if row is None or row.notebook_id != nb.id:
                raise NotFound(f"notebook '{name}' has no published demo {publication}")
            await session.delete(row)
            audit.record(
                session,
                actor.name,
                "demo.unpublished",
                f"notebook:{owner}/{name}",
                app=row.prefix,
            )
        self._counted = {key for key in self._counted if key[0] != nb.id}
        self._changed(nb.id)
        page = publishing.voila_page(row.prefix)
        route = await self.notebooks.routes.lookup(owner, name) if page else None
        if route is not None and route.target is not None:
            removed = await self.reader.delete(route, f"cgu-lab/apps/voila/{page}")
            if removed is None:  # a declared app of that name, or the server did not answer
                log.info("%s/%s: no page %s removed from its server", owner, name, page)

    async def set_public(
        self, actor: Principal, owner: str, name: str, publication: int, public: bool
    ) -> DemoOut:
        """An administrator lets a published demo be used without a log-in, or no longer:
        either takes effect at once (open anonymous websockets close when it ends)."""
        require_admin(actor, "make a demo public")
        async with self.db.session() as session:
            nb = await load_owned(session, actor, owner, name, "publish")
            row = await session.get(Publication, publication)
            if row is None or row.notebook_id != nb.id:
                raise NotFound(f"notebook '{name}' has no published demo {publication}")
            if row.public != public:
                row.public = public
                audit.record(
                    session,
                    actor.name,
                    "demo.public" if public else "demo.not_public",
                    f"notebook:{owner}/{name}",
                    app=row.prefix,
                )
            await session.flush()
            described = await self._describe(session, row)
        self._changed(nb.id)
        return described

    def _changed(self, notebook_id: int) -> None:
        self._public.pop(notebook_id, None)
        self.shares.changed(notebook_id)

    # -- visits ----------------------------------------------------------------------

    async def visited(self, notebook_id: int, prefix: str, user_id: int) -> None:
        """Count `user_id` among the visitors of a notebook's published app (the proxy calls
        this on each visit; the row is written once per person, remembered after that)."""
        key = (notebook_id, prefix, user_id)
        if key in self._counted:
            return
        try:
            async with self.db.session() as session:
                row = await session.scalar(
                    select(Publication).where(
                        Publication.notebook_id == notebook_id, Publication.prefix == prefix
                    )
                )
                if row is None:
                    return
                if await session.get(DemoVisit, (row.id, user_id)) is None:
                    session.add(
                        DemoVisit(publication_id=row.id, user_id=user_id, first_at=self.clock.now())
                    )
        except IntegrityError:
            pass  # the same person's other tab counted them at the same moment
        if len(self._counted) >= COUNTED_ENTRIES:
            self._counted.clear()
        self._counted.add(key)

    async def public_apps(self, notebook_id: int) -> tuple[str, ...]:
        """The prefixes of a notebook's demos that need no log-in (asked by the proxy for
        a caller it does not know; reused for seconds, dropped at once on a change)."""
        hit = self._public.get(notebook_id)
        if hit is not None:
            return hit
        async with self.db.session() as session:
            rows = await session.scalars(
                select(Publication.prefix).where(
                    Publication.notebook_id == notebook_id, Publication.public.is_(True)
                )
            )
            found = tuple(sorted(rows.all()))
        self._public[notebook_id] = found
        return found

    def admit(self, address: str) -> float:
        """0 when an anonymous request from `address` may go now, else the seconds to wait."""
        return self._pace(("request", address), *self.anonymous_pace)

    def _pace(self, key: tuple[str, str], rate: float, burst: float) -> float:
        now = self.clock.monotonic()
        bucket = self._paces.get(key) or publishing.Bucket(burst, now)
        bucket, wait = bucket.take(now, rate, burst)
        self._paces[key] = bucket
        return wait

    async def visited_anonymously(
        self, notebook_id: int, prefix: str, visitor: str, address: str
    ) -> None:
        """Count an anonymous visitor of a public demo once (by their cookie's name); an
        address making up names faster than NEW_VISITORS_RATE is served but not counted."""
        key = (notebook_id, prefix, visitor)
        if key in self._counted:
            return
        if self._pace(("visitor", address), NEW_VISITORS_RATE, NEW_VISITORS_BURST):
            return
        try:
            async with self.db.session() as session:
                row = await session.scalar(
                    select(Publication).where(
                        Publication.notebook_id == notebook_id,
                        Publication.prefix == prefix,
                        Publication.public.is_(True),
                    )
                )
                if row is None:
                    return
                if await session.get(AnonymousVisit, (row.id, visitor)) is None:
                    session.add(
                        AnonymousVisit(
                            publication_id=row.id, visitor=visitor, first_at=self.clock.now()
                        )
                    )
        except IntegrityError:
            pass  # the same visitor's other tab counted them at the same moment
        if len(self._counted) >= COUNTED_ENTRIES:
            self._counted.clear()
        self._counted.add(key)

    async def visible_to(self, actor: Principal) -> list[DemoOut]:
        """Demos this user may visit: their courses' and those for everyone logged in."""
        groups = (actor.groups | actor.managed_groups) or {-1}
        async with self.db.session() as session:
            rows = await session.scalars(
                select(Publication)
                .where(or_(Publication.group_id.is_(None), Publication.group_id.in_(groups)))
                .order_by(Publication.created_at, Publication.id)
            )
            return [await self._describe(session, row) for row in rows.all()]

"""Shares: who besides the owner may open a notebook, and how.

The owner grants read or edit access to a user or a group, for the whole
notebook or one file, optionally for a limited time; a published demo
(controller/publishing/) adds its app for its audience. The proxy asks
`access()` on every request; answers are cached for a few seconds and
dropped at once when a share of that notebook changes, so a revocation takes
effect immediately for new requests and within seconds for open websockets
(the proxy re-checks those).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from urllib.parse import quote

from cachetools import TTLCache
from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import sharing
from ...core.errors import Conflict, Forbidden, Invalid, NotFound
from ...core.paths import relative_path
from ...core.roles import Principal
from ...store.db import LAST_KNOWN_SECONDS, Database, unavailable
from ...store.models import Group, Membership, Notebook, Share, User
from ...store.publishing_models import Publication
from .. import audit
from ..accounts.directory import contains_pattern, get_group, get_user
from ..clock import Clock
from ..notebooks.schemas import (
    Directory,
    DirectoryGroup,
    DirectoryUser,
    Grantee,
    SharedWithMe,
    ShareOut,
)
from ..notebooks.specs import load_owned

CACHE_SECONDS = 5.0
# Answers the cache holds at most (a user and a notebook each): a bound, not a working size.
CACHE_ENTRIES = 50_000
MAX_SHARES_PER_NOTEBOOK = 200


def share_url(owner: str, name: str, path: str) -> str:
    base = f"/notebook/{quote(owner)}/{quote(name)}/lab"
    return f"{base}/tree/{quote(path)}" if path else base


class ShareService:
    def __init__(self, db: Database, notebooks, clock: Clock) -> None:
        """`clock`: shares' expiry and the cache's freshness follow it."""
        self.db = db
        self.notebooks = notebooks
        self.clock = clock
        # (user, notebook) -> (access, until when it holds): a share ending sooner than
        # CACHE_SECONDS from now is cached only until it ends. Entries are kept for
        # LAST_KNOWN_SECONDS: past their time they answer only while the database cannot.
        self._cache: TTLCache[tuple[int, int], tuple[sharing.Access | None, float]] = TTLCache(
            CACHE_ENTRIES, LAST_KNOWN_SECONDS, timer=clock.monotonic
        )
        self._listeners: list[Callable[[int], None]] = []

    def on_change(self, listener: Callable[[int], None]) -> None:
        """Call `listener(notebook_id)` whenever a notebook's shares change."""
        self._listeners.append(listener)

    def changed(self, notebook_id: int) -> None:
        """Forget answers about a notebook whose shares or publications changed, and tell
        the listeners (the proxy re-checks its open websockets at once)."""
        for key in [k for k in self._cache if k[1] == notebook_id]:
            self._cache.pop(key, None)
        for listener in self._listeners:
            listener(notebook_id)

    # -- the proxy's question ---------------------------------------------------

    async def access(self, principal: Principal, notebook_id: int) -> sharing.Access | None:
        key = (principal.id, notebook_id)
        hit = self._cache.get(key)
        if hit is not None and hit[1] > self.clock.monotonic():
            return hit[0]
        now = self.clock.now()
        try:
            async with self.db.reading() as session:
                rows = await session.scalars(
                    select(Share).where(
                        Share.notebook_id == notebook_id,
                        or_(
                            Share.user_id == principal.id,
                            Share.group_id.in_(principal.groups or {-1}),
                        ),
                        or_(Share.expires_at.is_(None), Share.expires_at > now),
                    )
                )
                grants = [sharing.Grant(s.access, s.path, s.expires_at) for s in rows.all()]
                apps = await session.scalars(
                    select(Publication.prefix).where(
                        Publication.notebook_id == notebook_id,
                        or_(
                            Publication.group_id.is_(None),
                            Publication.group_id.in_(
                                (principal.groups | principal.managed_groups) or {-1}
                            ),
                        ),
                    )
                )
                published = apps.all()
        except SQLAlchemyError as error:
            # The database is locked or out of reach: the last answer, so a shared notebook
            # stays usable; never a share that has ended since (a revoke drops the entry).
            last = hit[0] if hit is not None else None
            if unavailable(error) is None or hit is None:
                raise
            if last is not None and last.valid_until is not None and last.valid_until <= now:
                raise
            return last
        access = sharing.resolve(grants, now, published)
        ttl = CACHE_SECONDS
        if access is not None and access.valid_until is not None:
            ttl = max(0.0, min(ttl, (access.valid_until - now).total_seconds()))
        self._cache[key] = (access, self.clock.monotonic() + ttl)
        return access

    # -- managing shares -------------------------------------------------------

    async def describe(
        self, session: AsyncSession, share: Share, owner: str, name: str
    ) -> ShareOut:
        if share.user_id is not None:
            user = await session.get(User, share.user_id)
            grantee = Grantee(kind="user", name=user.name, display_name=user.display_name)
        else:
            group = await session.get(Group, share.group_id)
            grantee = Grantee(kind="group", name=group.name, display_name=group.display_name)
        return ShareOut(
            id=share.id,
            grantee=grantee,
            access=share.access,
            path=share.path,
            note=share.note,
            expires_at=share.expires_at,
            created_at=share.created_at,
            created_by=share.created_by,
            url=share_url(owner, name, share.path),
        )

    async def list_for(self, actor: Principal, owner: str, name: str) -> list[ShareOut]:
        now = self.clock.now()
        async with self.db.session() as session:
            nb = await load_owned(session, actor, owner, name, "share")
            rows = await session.scalars(
                select(Share)
                .where(
                    Share.notebook_id == nb.id,
                    or_(Share.expires_at.is_(None), Share.expires_at > now),
                )
                .order_by(Share.id)
            )
            return [await self.describe(session, s, owner, name) for s in rows.all()]

    @staticmethod
    async def _grant_to(
        session: AsyncSession, actor: Principal, nb: Notebook, share: Share, kind: str, grantee: str
    ) -> None:
        """Aim `share` at an active user besides the owner, or a group of the owner's."""
        if kind == "user":
            user = await get_user(session, grantee)
            if user.id == nb.owner_id:
                raise Invalid("the owner already has full access; choose someone else")
            if not user.active:
                raise Invalid(f"the account '{grantee}' is deactivated")
            share.user_id = user.id
        elif kind == "group":
            group = await get_group(session, grantee)
            member = await session.get(Membership, (group.id, nb.owner_id))
            if member is None and not actor.is_admin:
                raise Forbidden(f"you can share only with groups you belong to, not '{grantee}'")
            share.group_id = group.id
        else:
            raise Invalid(f"share with a 'user' or a 'group', not a '{kind}'")

    @staticmethod
    async def _check_share_limit(session: AsyncSession, nb: Notebook) -> None:
        count = await session.scalar(
            select(func.count()).select_from(Share).where(Share.notebook_id == nb.id)
        )
        if count >= MAX_SHARES_PER_NOTEBOOK:
            limit = MAX_SHARES_PER_NOTEBOOK
            raise Conflict(f"a notebook may have at most {limit} shares; revoke some first")

    async def create(
        self,
        actor: Principal,
        owner: str,
        name: str,
        grantee: str,
        kind: str,
        access: str,
        path: str = "",
        expires_in_minutes: float | None = None,
        note: str = "",
    ) -> ShareOut:
        """Grant access; a grant to the same grantee and scope replaces theirs.

        One row per grantee and scope (`sharing.regrant`), kept by the database's
        unique indexes too: when two grants of the same thing race (two clicks, two
        tabs), the loser's insert fails and it is retried once as the change of the
        winner's row, so neither answers an error nor leaves a second row.
        """
        sharing.check_access(access)
        path = relative_path(path, "shared file")
        now = self.clock.now()
        expires_at = sharing.expiry(expires_in_minutes, now)
        if len(note) > 200:
            raise Invalid("a share's note may have at most 200 characters")
        for attempt in range(2):
            try:
                async with self.db.session() as session:
                    nb, result = await self._grant(
                        session, actor, owner, name, grantee, kind, access, path, expires_at, note
                    )
                break
            except IntegrityError:
                if attempt:
                    raise Conflict(
                        f"{kind} '{grantee}' was being given access at the same moment; "
                        "look at the notebook's shares and try again"
                    ) from None
        self.changed(nb.id)
        return result

    async def _grant(
        self,
        session: AsyncSession,
        actor: Principal,
        owner: str,
        name: str,
        grantee: str,
        kind: str,
        access: str,
        path: str,
        expires_at: datetime | None,
        note: str,
    ) -> tuple[Notebook, ShareOut]:
        """`create`'s transaction: the new grant, or the change of the one it replaces."""
        nb = await load_owned(session, actor, owner, name, "share")
        share = Share(
            notebook_id=nb.id,
            access=access,
            path=path,
            expires_at=expires_at,
            created_by=actor.name,
            note=note.strip(),
        )
        await self._grant_to(session, actor, nb, share, kind, grantee)
        previous = await session.scalar(
            select(Share)
            .where(
                Share.notebook_id == nb.id,
                Share.path == path,
                Share.user_id == share.user_id
                if share.user_id is not None
                else Share.group_id == share.group_id,
            )
            .with_for_update()
        )
        if previous is not None:
            changes = sharing.regrant(
                sharing.Grant(previous.access, previous.path, previous.expires_at),
                sharing.Grant(access, path, expires_at),
            )
            if previous.note != share.note:
                changes["note"] = (previous.note, share.note)
            previous.access = access
            previous.expires_at = expires_at
            previous.note = share.note
            previous.created_by = actor.name
            previous.created_at = self.clock.now()
            audit.record(
                session,
                actor.name,
                "share.changed",
                f"notebook:{owner}/{name}",
                share=previous.id,
                grantee=f"{kind}:{grantee}",
                path=path or None,
                changes={
                    key: [v.isoformat() if isinstance(v, datetime) else v for v in pair]
                    for key, pair in changes.items()
                },
            )
            return nb, await self.describe(session, previous, owner, name)
        await self._check_share_limit(session, nb)
        session.add(share)
        await session.flush()
        audit.record(
            session,
            actor.name,
            "share.created",
            f"notebook:{owner}/{name}",
            grantee=f"{kind}:{grantee}",
            access=access,
            path=path or None,
            expires_at=expires_at.isoformat() if expires_at else None,
        )
        return nb, await self.describe(session, share, owner, name)

    async def revoke(self, actor: Principal, owner: str, name: str, share_id: int) -> None:
        """The owner (or an admin) revokes a share; a grantee may also give one up."""
        async with self.db.session() as session:
            nb, _ = await self.notebooks.load(session, owner, name)
            share = await session.get(Share, share_id)
            if share is None or share.notebook_id != nb.id:
                raise NotFound(f"notebook '{name}' has no share {share_id}")
            mine = share.user_id == actor.id
            if not (nb.owner_id == actor.id or actor.is_admin or mine):
                raise NotFound(f"notebook '{name}' has no share {share_id}")
            await session.delete(share)
            audit.record(
                session,
                actor.name,
                "share.revoked",
                f"notebook:{owner}/{name}",
                share=share_id,
                by_grantee=mine and nb.owner_id != actor.id,
            )
        self.changed(nb.id)

    async def shared_with(self, actor: Principal) -> list[SharedWithMe]:
        now = self.clock.now()
        async with self.db.session() as session:
            rows = await session.execute(
                select(Share, Notebook, User)
                .join(Notebook, Notebook.id == Share.notebook_id)
                .join(User, User.id == Notebook.owner_id)
                .where(
                    or_(Share.user_id == actor.id, Share.group_id.in_(actor.groups or {-1})),
                    or_(Share.expires_at.is_(None), Share.expires_at > now),
                    Notebook.owner_id != actor.id,
                )
                .order_by(User.name, Notebook.name, Share.path)
            )
            return [
                SharedWithMe(
                    id=share.id,
                    owner=owner.name,
                    owner_display_name=owner.display_name,
                    notebook=nb.name,
                    access=share.access,
                    path=share.path,
                    expires_at=share.expires_at,
                    state=nb.state,
                    url=share_url(owner.name, nb.name, share.path),
                )
                for share, nb, owner in rows.all()
            ]

    async def named_user(self, user: str) -> User | None:
        """The active user a notebook server asks about: by platform name, else by the
        e-mail address of exactly one active user (an ingress such as Kubeflow's names
        users by e-mail; between two it never guesses). None when there is none."""
        async with self.db.session() as session:
            found = await session.scalar(select(User).where(User.name == user, User.active))
            if found is None and "@" in user:
                matches = (
                    await session.scalars(
                        select(User).where(func.lower(User.email) == user.lower(), User.active)
                    )
                ).all()
                found = matches[0] if len(matches) == 1 else None
        return found

    async def directory(self, actor: Principal, query: str, limit: int = 20) -> Directory:
        """People and groups to share with: found by name, never listed wholesale."""
        query = query.strip().lower()
        if len(query) < 2:
            raise Invalid("type at least 2 letters of a name")
        like = contains_pattern(query)  # "%" or "_" typed are letters, not wildcards
        async with self.db.session() as session:
            users = await session.scalars(
                select(User)
                .where(
                    User.active,
                    User.id != actor.id,
                    or_(
                        func.lower(User.name).like(like, escape="\\"),
                        func.lower(User.display_name).like(like, escape="\\"),
                    ),
                )
                .order_by(User.name)
                .limit(limit)
            )
            groups = await session.scalars(
                select(Group)
                .where(
                    Group.id.in_(actor.groups | actor.managed_groups)
                    if not actor.is_admin
                    else True,
                    or_(
                        func.lower(Group.name).like(like, escape="\\"),
                        func.lower(Group.display_name).like(like, escape="\\"),
                    ),
                )
                .order_by(Group.name)
                .limit(limit)
            )
            return Directory(
                users=[
                    DirectoryUser(name=u.name, display_name=u.display_name, role=u.role)
                    for u in users.all()
                ],
                groups=[
                    DirectoryGroup(name=g.name, display_name=g.display_name) for g in groups.all()
                ],
            )

"""Authentication: sessions for browsers, bearer tokens for scripts and notebooks.

Lookups are cached for a few seconds so that the proxy, which authenticates
every request to every notebook, does not touch the database on its hot path;
logout, password changes and deactivation evict the cache at once. Misses are
cached too (a made-up token costs one query per few seconds, not one per
request), so the caches are bounded: a flood of made-up tokens evicts the least
recently used entries instead of growing the controller's memory.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from cachetools import TTLCache
from sqlalchemy import delete, select, update
from sqlalchemy.exc import SQLAlchemyError

from ...core.errors import Invalid, TooManyRequests, Unauthenticated
from ...core.roles import Principal, Role
from ...core.scopes import FULL, NOTEBOOK_TOKEN
from ...store.db import LAST_KNOWN_SECONDS, Database, unavailable
from ...store.models import ApiToken, Membership, Session, User
from .. import audit
from ..clock import Clock
from .security import (
    DUMMY_HASH,
    LoginThrottle,
    hash_password,
    new_token,
    token_hash,
    verify_password,
)

log = logging.getLogger("cgu_lab.auth")

CACHE_SECONDS = 10.0
# Entries each cache holds at most: far more than the sessions and tokens in use at once.
CACHE_ENTRIES = 50_000
# How stale a user's stored last activity may get before a request rewrites it.
ACTIVITY_STEP = timedelta(minutes=2)


@dataclass(frozen=True)
class Identity:
    """An authenticated caller."""

    user_id: int
    name: str
    display_name: str
    role: Role
    via: str  # "session", "token", "notebook" (its own token) or "origin" (a notebook's origin)
    csrf: str = ""
    notebook_id: int | None = None
    must_change_password: bool = False
    scopes: frozenset[str] = FULL
    # For a browser session: the hash of its token, which notebook-origin cookies are bound to.
    session_digest: str = ""


def _aware(value: datetime | None) -> datetime | None:
    """A stored time as UTC (SQLite hands times back without their zone)."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value


def _due(last: datetime | None, now: datetime) -> bool:
    """Whether a "last active"/"last used" time is worth writing again: they are kept to
    ACTIVITY_STEP, so a lookup writes at most that often (lookups only read otherwise)."""
    return last is None or now - _aware(last) > ACTIVITY_STEP


def _in_words(seconds: float) -> str:
    """A login wait as people say it: "5 seconds", "2 minutes"."""
    whole = max(1, math.ceil(seconds))
    if whole < 90:
        return f"{whole} second{'s' if whole != 1 else ''}"
    return f"{math.ceil(whole / 60)} minutes"


class Authenticator:
    def __init__(self, db: Database, session_hours: float, clock: Clock) -> None:
        """`clock`: sessions' and tokens' expiry, and the caches' freshness, follow it."""
        self.db = db
        self.clock = clock
        self.session_lifetime = timedelta(hours=session_hours)
        self.throttle = LoginThrottle(clock=clock.monotonic)
        # key -> (identity or None, fresh until (monotonic), valid until (its session's or
        # token's expiry)). Fresh entries answer at once; older ones are kept for
        # LAST_KNOWN_SECONDS and answer only while the database cannot (see _last_known).
        self._identities: TTLCache[str, tuple[Identity | None, float, datetime | None]] = TTLCache(
            CACHE_ENTRIES, LAST_KNOWN_SECONDS, timer=clock.monotonic
        )
        self._principals: TTLCache[int, tuple[Principal, float]] = TTLCache(
            CACHE_ENTRIES, LAST_KNOWN_SECONDS, timer=clock.monotonic
        )

    # -- login and logout -------------------------------------------------

    async def login(self, name: str, password: str, address: str) -> tuple[str, Identity]:
        name = name.strip().lower()
        # Slowed, never locked: a guesser elsewhere cannot keep the owner out (security.py).
        wait = self.throttle.check(name, address)
        if wait:
            raise TooManyRequests(
                f"too many failed logins; try again in {_in_words(wait)}", retry_after=wait
            )
        async with self.db.session() as session:
            user = await session.scalar(select(User).where(User.name == name))
        # Argon2 is slow on purpose: verify in a thread and outside any transaction.
        valid = await asyncio.to_thread(
            verify_password, user.password_hash if user else DUMMY_HASH, password
        )
        if not user or not valid or not user.active:
            async with self.db.session() as session:
                audit.record(
                    session, name or "?", "auth.login_failed", f"user:{name}", address=address
                )
            raise Unauthenticated("wrong user name or password")
        self.throttle.succeeded(name, address)
        now = self.clock.now()
        async with self.db.session() as session:
            token = new_token()
            csrf = new_token()
            session.add(
                Session(
                    token_hash=token_hash(token),
                    user_id=user.id,
                    csrf=csrf,
                    expires_at=now + self.session_lifetime,
                )
            )
            await session.execute(
                update(User).where(User.id == user.id).values(last_login=now, last_activity=now)
            )
            audit.record(session, user.name, "auth.login", f"user:{user.name}", address=address)
            identity = self._identity(user, "session", csrf=csrf)
        return token, identity

    async def logout(self, token: str) -> None:
        digest = token_hash(token)
        self._identities.pop(f"s:{digest}", None)
        async with self.db.session() as session:
            row = await session.scalar(select(Session).where(Session.token_hash == digest))
            if row is not None:
                user = await session.get(User, row.user_id)
                await session.delete(row)
                audit.record(session, user.name if user else "?", "auth.logout", "")

    # -- identification ---------------------------------------------------

    @staticmethod
    def _identity(
        user: User, via: str, csrf: str = "", notebook_id: int | None = None, digest: str = ""
    ) -> Identity:
        return Identity(
            user_id=user.id,
            name=user.name,
            display_name=user.display_name or user.name,
            role=Role(user.role),
            via=via,
            csrf=csrf,
            notebook_id=notebook_id,
            must_change_password=user.must_change_password,
            scopes=NOTEBOOK_TOKEN if via == "notebook" else FULL,
            session_digest=digest,
        )

    def _cached(self, key: str) -> tuple[bool, Identity | None]:
        """(True, the identity or None) for a fresh answer; (False, None) when there is none."""
        hit = self._identities.get(key)
        if hit is None or hit[1] < self.clock.monotonic():
            return (False, None)
        return (True, hit[0])

    def _remember(
        self, key: str, identity: Identity | None, valid_until: datetime | None = None
    ) -> Identity | None:
        self._identities[key] = (identity, self.clock.monotonic() + CACHE_SECONDS, valid_until)
        return identity

    def _last_known(self, key: str, error: Exception) -> Identity | None:
        """While the database is locked or out of reach: the last answer for `key`, so that
        running notebooks stay usable. Never more than was known: a logout, a password
        change or a deactivation drops the entry at once, and a session or token that has
        expired since is not honoured. Without an entry, the error goes on (a 503)."""
        hit = self._identities.get(key)
        if unavailable(error) is None or hit is None:
            raise error
        identity, _, valid_until = hit
        if identity is not None and valid_until is not None and valid_until < self.clock.now():
            raise error
        log.warning("database unavailable; using the last known identity (%s)", error)
        return identity

    async def from_session(self, token: str) -> Identity | None:
        return await self.from_session_digest(token_hash(token))

    async def from_session_digest(self, digest: str) -> Identity | None:
        """The session's identity by the hash of its token (notebook origins keep only that)."""
        key = f"s:{digest}"
        found, identity = self._cached(key)
        if found:
            return identity
        now = self.clock.now()
        try:
            async with self.db.reading() as session:
                row = await session.execute(
                    select(Session, User)
                    .join(User, User.id == Session.user_id)
                    .where(Session.token_hash == digest)
                )
                pair = row.first()
                if pair is None or pair[0].expires_at < now or not pair[1].active:
                    return self._remember(key, None)
                identity = self._identity(pair[1], "session", csrf=pair[0].csrf, digest=digest)
                expires = pair[0].expires_at
                touch = _due(pair[1].last_activity, now)
        except SQLAlchemyError as error:
            return self._last_known(key, error)
        if touch:
            await self._note_use(identity.user_id, None, now)
        return self._remember(key, identity, _aware(expires))

    async def from_bearer(self, token: str) -> Identity | None:
        digest = token_hash(token)
        key = f"t:{digest}"
        found, identity = self._cached(key)
        if found:
            return identity
        now = self.clock.now()
        try:
            async with self.db.reading() as session:
                row = await session.execute(
                    select(ApiToken, User)
                    .join(User, User.id == ApiToken.user_id)
                    .where(ApiToken.token_hash == digest)
                )
                pair = row.first()
                if pair is None or not pair[1].active:
                    return self._remember(key, None)
                api_token, user = pair
                if api_token.expires_at is not None and api_token.expires_at < now:
                    return self._remember(key, None)
                via = "notebook" if api_token.notebook_id else "token"
                identity = self._identity(user, via, notebook_id=api_token.notebook_id)
                expires = api_token.expires_at
                token_id = api_token.id if _due(api_token.last_used, now) else None
                personal = api_token.notebook_id is None and _due(user.last_activity, now)
        except SQLAlchemyError as error:
            return self._last_known(key, error)
        if token_id is not None or personal:
            await self._note_use(identity.user_id if personal else None, token_id, now)
        return self._remember(key, identity, _aware(expires))

    async def _note_use(self, user_id: int | None, token_id: int | None, now: datetime) -> None:
        """Write that a user was active and a token used (to ACTIVITY_STEP: see `_due`). A
        database too busy for it costs the record, never the caller's request."""
        try:
            async with self.db.session() as session:
                if user_id is not None:
                    await session.execute(
                        update(User).where(User.id == user_id).values(last_activity=now)
                    )
                if token_id is not None:
                    await session.execute(
                        update(ApiToken).where(ApiToken.id == token_id).values(last_used=now)
                    )
        except SQLAlchemyError as error:
            if unavailable(error) is None:
                raise
            log.warning("database busy; the last use of a session or token is not recorded")

    async def identify(self, cookie: str | None, authorization: str | None) -> Identity | None:
        if authorization:
            scheme, _, value = authorization.partition(" ")
            if scheme.lower() in ("bearer", "token") and value.strip():
                return await self.from_bearer(value.strip())
            return None
        if cookie:
            return await self.from_session(cookie)
        return None

    async def principal(self, identity: Identity) -> Principal:
        return await self.principal_of(identity.user_id)

    async def principal_of(self, user_id: int) -> Principal:
        """A user's role and groups, for rule checks (cached for a few seconds)."""
        hit = self._principals.get(user_id)
        if hit is not None and hit[1] >= self.clock.monotonic():
            return hit[0]
        try:
            async with self.db.reading() as session:
                user = await session.get(User, user_id)
                rows = await session.execute(
                    select(Membership.group_id, Membership.manager).where(
                        Membership.user_id == user_id
                    )
                )
                memberships = rows.all()
                principal = None
                if user is not None:  # read inside: the rows are gone with the transaction
                    principal = Principal(
                        id=user.id,
                        name=user.name,
                        role=Role(user.role),
                        groups=frozenset(g for g, _ in memberships),
                        managed_groups=frozenset(g for g, manager in memberships if manager),
                    )
        except SQLAlchemyError as error:
            # As _last_known: a role or membership change drops the entry at once.
            if unavailable(error) is None or hit is None:
                raise
            return hit[0]
        if principal is None:
            raise Unauthenticated("this account no longer exists")
        self._principals[user_id] = (principal, self.clock.monotonic() + CACHE_SECONDS)
        return principal

    def forget_user(self, user_id: int) -> None:
        """Drop every cached identity of a user (role, password or membership changed)."""
        self._principals.pop(user_id, None)
        for key, (identity, _, _) in list(self._identities.items()):
            if identity is not None and identity.user_id == user_id:
                self._identities.pop(key, None)

    def forget_memberships(self) -> None:
        """Drop all cached group memberships (a group was deleted or a class enrolled)."""
        self._principals.clear()

    # -- passwords and tokens ---------------------------------------------

    async def change_password(self, identity: Identity, current: str, new: str) -> None:
        async with self.db.session() as session:
            user = await session.get(User, identity.user_id)
            if user is None or not verify_password(user.password_hash, current):
                raise Invalid("the current password is wrong")
            if current == new:
                raise Invalid("choose a new password that differs from the current one")
            user.password_hash = await hash_password(new)
            user.must_change_password = False
            # Other browsers stay logged in only if they are this one.
            await session.execute(
                delete(Session).where(Session.user_id == user.id, Session.csrf != identity.csrf)
            )
            audit.record(session, user.name, "user.password_changed", f"user:{user.name}")
        self.forget_user(identity.user_id)

    async def create_token(
        self,
        user_id: int,
        name: str,
        expires_at: datetime | None = None,
        notebook_id: int | None = None,
    ) -> tuple[str, ApiToken]:
        raw = new_token()
        row = ApiToken(
            token_hash=token_hash(raw),
            user_id=user_id,
            notebook_id=notebook_id,
            name=name,
            prefix=raw[:6],
            expires_at=expires_at,
        )
        async with self.db.session() as session:
            session.add(row)
        return raw, row

    async def revoke_notebook_tokens(self, notebook_id: int) -> None:
        async with self.db.session() as session:
            hashes = (
                await session.scalars(
                    select(ApiToken.token_hash).where(ApiToken.notebook_id == notebook_id)
                )
            ).all()
            await session.execute(delete(ApiToken).where(ApiToken.notebook_id == notebook_id))
        for digest in hashes:
            self._identities.pop(f"t:{digest}", None)

    async def end_sessions(self, user_id: int) -> None:
        async with self.db.session() as session:
            await session.execute(delete(Session).where(Session.user_id == user_id))
            await session.execute(
                update(ApiToken)
                .where(ApiToken.user_id == user_id, ApiToken.notebook_id.is_(None))
                .values(expires_at=self.clock.now())
            )
        self.forget_user(user_id)

    async def purge_expired(self) -> int:
        async with self.db.session() as session:
            result = await session.execute(
                delete(Session).where(Session.expires_at < self.clock.now())
            )
        return result.rowcount or 0

"""Sharing rules: what access a set of grants gives, and how long shares may last.

A grant gives `read` or `edit` access to a whole notebook or to one file in
it, to a user or a group, optionally until a time. Access on a notebook is
`owner`, `edit`, `read` or nothing; a caller's access is the strongest of
their active whole-notebook grants, else the strongest of their file grants
limited to those files (the "scope").

A caller in the audience of a published demo (core/publishing.py) may also use
that app (`apps`); with no share at all, that is their whole access: `visit`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from .errors import Invalid

RANK = {"visit": 0, "read": 1, "edit": 2, "owner": 3}
MAX_SHARE = timedelta(days=366)


@dataclass(frozen=True)
class Grant:
    access: str
    path: str = ""
    expires_at: datetime | None = None

    def active(self, now: datetime) -> bool:
        return self.expires_at is None or self.expires_at > now


@dataclass(frozen=True)
class Access:
    level: str
    scope: tuple[str, ...] = ()
    # When this answer stops being true by itself (the earliest expiry involved).
    valid_until: datetime | None = None
    # Published apps (their path prefixes) this caller may use besides their share.
    apps: tuple[str, ...] = ()

    def at_least(self, other: Access) -> bool:
        """True when this access still allows everything `other` allowed."""
        if RANK[self.level] < RANK[other.level]:
            return False
        # Whole-notebook editors use every app; anyone else only the published ones.
        every_app = self.level in ("owner", "edit") and not self.scope
        if not every_app and not set(other.apps) <= set(self.apps):
            return False
        if other.level == "visit":
            return True
        return not self.scope or (bool(other.scope) and set(other.scope) <= set(self.scope))


OWNER = Access("owner")


def check_access(access: str) -> str:
    if access not in ("read", "edit"):
        raise Invalid(f"access must be 'read' (read-only) or 'edit' (editable), not '{access}'")
    return access


def resolve(grants: Iterable[Grant], now: datetime, apps: Iterable[str] = ()) -> Access | None:
    """The access `grants` give at `now`; `apps`: the published apps the caller may visit."""
    apps = tuple(sorted(set(apps)))
    active = [g for g in grants if g.active(now)]
    if not active:
        return Access("visit", apps=apps) if apps else None
    whole = [g for g in active if not g.path]
    chosen = whole or active
    level = max((g.access for g in chosen), key=RANK.__getitem__)
    expiries = [g.expires_at for g in chosen if g.expires_at is not None]
    scope = () if whole else tuple(sorted({g.path for g in chosen}))
    # Whole-notebook access ends when the last whole grant ends, but the answer
    # may change earlier (a stronger grant expiring): re-check at the earliest.
    return Access(level, scope, min(expiries) if expiries else None, apps)


def expiry(minutes: float | None, now: datetime) -> datetime | None:
    """When a share asked to last `minutes` ends; None for no end."""
    if minutes is None:
        return None
    if minutes < 1:
        raise Invalid("a time-limited share must last at least 1 minute")
    if timedelta(minutes=minutes) > MAX_SHARE:
        raise Invalid("a share may last at most a year; leave the end empty for no end")
    return now + timedelta(minutes=minutes)


def regrant(old: Grant, new: Grant) -> dict[str, tuple]:
    """What a new grant changes in the one it replaces: {field: (old, new)}.

    A notebook holds one grant per grantee and scope (the same user or group, the
    same file or the whole notebook): sharing again is a change of that grant, never
    a second one beside it. Otherwise "read-only" and "can edit" rows for one person
    pile up, the stronger silently wins, and revoking one of them revokes nothing.
    The answer is what the audit log records; empty when nothing changes.
    """
    if old.path != new.path:
        raise ValueError("a grant replaces only one of the same scope")
    changes: dict[str, tuple] = {}
    if old.access != new.access:
        changes["access"] = (old.access, new.access)
    if old.expires_at != new.expires_at:
        changes["expires_at"] = (old.expires_at, new.expires_at)
    return changes

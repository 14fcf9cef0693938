"""Enrolling a class from a CSV list: the accounts made, the members enrolled or invited.

All or nothing: the list is checked whole (core.roster) before anything is
made, new accounts' passwords are hashed concurrently (hashing is slow on
purpose), and existing accounts join at once only where the importer fully
manages them; anyone else is invited, as `accounts.set_member` does one by one.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.local_accounts import UnixClash, check_unix_names
from ...core import roles
from ...core.errors import Forbidden
from ...core.roles import Principal, Role
from ...core.roster import RosterRow, parse_roster
from ...store.models import Group, Membership, User
from .. import audit
from ..api.schemas import CreatedAccount
from . import invitations
from .directory import get_group
from .schemas import ImportOut
from .security import hash_password, new_password


async def _groups_by_user(session: AsyncSession, users: list[User]) -> dict[int, set[int]]:
    """Every listed account's groups, read in one query rather than one per row."""
    groups_of: dict[int, set[int]] = {user.id: set() for user in users}
    ids = list(groups_of)
    query = select(Membership.user_id, Membership.group_id).where(Membership.user_id.in_(ids))
    for user_id, group_id in await session.execute(query):
        groups_of[user_id].add(group_id)
    return groups_of


async def _hashed_passwords(rows: list[RosterRow]) -> dict[str, tuple[str, str]]:
    """Each new account's password and hash, hashed concurrently: hashing is slow on purpose."""
    passwords = [row.password or new_password() for row in rows]
    hashes = await asyncio.gather(*(hash_password(p) for p in passwords))
    return {row.name: (p, h) for row, p, h in zip(rows, passwords, hashes, strict=True)}


async def _add_imported(session: AsyncSession, row: RosterRow, password_hash: str) -> User:
    user = User(
        name=row.name,
        display_name=row.display_name,
        email=row.email,
        role=row.role.value,
        password_hash=password_hash,
        must_change_password=row.password is None,
    )
    session.add(user)
    await session.flush()
    return user


async def _join_imported(
    session: AsyncSession, actor: Principal, target: Group, user: User, groups: set[int], new: bool
) -> str:
    """Enrol or invite one imported account; returns the key of the answer's list it goes in."""
    if target.id in groups:
        return "already_members"
    if not new and not roles.adds_directly(actor, Role(user.role), frozenset(groups)):
        await invitations.invite(session, actor, target, user, manager=False)
        return "invited"
    session.add(Membership(group_id=target.id, user_id=user.id, manager=False))
    groups.add(target.id)
    return "enrolled"


async def import_roster(
    session: AsyncSession,
    actor: Principal,
    text: str,
    group: str | None,
    unix_clash: UnixClash | None = None,
) -> ImportOut:
    """Create the accounts of a class list and enrol them; all or nothing.

    New accounts join the group at once. Existing ones join at once when an
    admin imports, or when the manager already fully manages them; anyone
    else is invited (see `set_member`).
    """
    target = await get_group(session, group) if group else None
    if target is not None:
        roles.require_group_manager(actor, target.id, target.name)
    elif not actor.is_admin:
        raise Forbidden("group managers import a class into one of their groups")
    allowed = frozenset(Role) if actor.is_admin else frozenset({Role.STUDENT})
    rows: list[RosterRow] = parse_roster(text, allowed)
    names = [row.name for row in rows]
    existing = {
        user.name: user
        for user in (await session.scalars(select(User).where(User.name.in_(names)))).all()
    }
    new_rows = [row for row in rows if row.name not in existing]
    await check_unix_names(session, [row.name for row in new_rows], unix_clash)
    groups_of = await _groups_by_user(session, list(existing.values()))
    prepared = await _hashed_passwords(new_rows)
    result = ImportOut(created=[], enrolled=[], already_members=[], invited=[])
    for row in rows:
        user = existing.get(row.name)
        if user is None:
            password, password_hash = prepared[row.name]
            user = await _add_imported(session, row, password_hash)
            groups_of[user.id] = set()
            one_time = None if row.password else password
            result.created.append(CreatedAccount(name=row.name, one_time_password=one_time))
        if target is not None:
            new = row.name not in existing
            joined = await _join_imported(session, actor, target, user, groups_of[user.id], new)
            getattr(result, joined).append(row.name)
    audit.record(
        session,
        actor.name,
        "group.imported" if target else "user.imported",
        f"group:{target.name}" if target else "users",
        created=[c.name for c in result.created],
        enrolled=result.enrolled,
        invited=result.invited,
    )
    return result

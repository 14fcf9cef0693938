"""Accounts and groups: creating users, enrolling a class, managing members.

Every function takes the acting `Principal`, checks the rule from
`core.roles` before touching anything, and records an audit event in the same
transaction as the change.

Seeing an account and changing it are different rights: a group's managers
see its members, but change (profile, password, quota, membership) only
students all of whose groups they manage (`roles.manages_account`). An
existing account that a manager does not fully manage joins their group only
by accepting an invitation, so no manager can pull another course's student,
a teacher or an admin under their control.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.local_accounts import UnixClash, check_unix_names
from ...core import roles
from ...core.errors import Conflict, Forbidden, Invalid, NotFound
from ...core.lifecycle import HOLDING
from ...core.names import check_label, check_user_name
from ...core.roles import Principal, Role
from ...store.models import Group, Membership, Notebook, User
from .. import audit
from . import invitations
from .security import hash_password, new_password


@dataclass
class NewAccount:
    user: User
    one_time_password: str | None


@dataclass
class MemberResult:
    user: User
    manager: bool
    invited: bool  # an invitation was sent; the account joins when its owner accepts


def contains_pattern(text: str) -> str:
    """A LIKE pattern matching `text` anywhere, its own `%`, `_` and `\\` taken literally
    (use with `escape="\\"`), so a search for "%" finds a "%" rather than everyone."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


async def get_user(session: AsyncSession, name: str) -> User:
    user = await session.scalar(select(User).where(User.name == name))
    if user is None:
        raise NotFound(f"there is no user '{name}'")
    return user


async def get_group(session: AsyncSession, name: str) -> Group:
    group = await session.scalar(select(Group).where(Group.name == name))
    if group is None:
        raise NotFound(f"there is no group '{name}'")
    return group


async def user_groups(session: AsyncSession, user_id: int) -> list[tuple[Group, bool]]:
    rows = await session.execute(
        select(Group, Membership.manager)
        .join(Membership, Membership.group_id == Group.id)
        .where(Membership.user_id == user_id)
        .order_by(Group.name)
    )
    return [(group, manager) for group, manager in rows.all()]


async def _member_group_ids(session: AsyncSession, user_id: int) -> frozenset[int]:
    rows = await session.scalars(select(Membership.group_id).where(Membership.user_id == user_id))
    return frozenset(rows.all())


async def require_manages_user(session: AsyncSession, actor: Principal, user: User) -> None:
    """The reading right: the user themself, admins, managers of one of their groups."""
    if actor.id == user.id:
        return
    if not roles.manages_user(actor, await _member_group_ids(session, user.id)):
        raise Forbidden(f"you do not manage user '{user.name}'")


async def require_manages_account(
    session: AsyncSession, actor: Principal, user: User, action: str
) -> None:
    """The changing right (`roles.manages_account`): admins, or a manager of every
    group of a student."""
    groups = await _member_group_ids(session, user.id)
    roles.require_manages_account(actor, user.name, Role(user.role), groups, action)


# -- users -------------------------------------------------------------------


async def list_users(
    session: AsyncSession,
    actor: Principal,
    query: str = "",
    role: str | None = None,
    group: str | None = None,
    limit: int = 500,
) -> list[User]:
    statement = select(User).order_by(User.name).limit(limit)
    if not actor.is_admin:
        if not actor.managed_groups:
            raise Forbidden("only administrators and group managers may list accounts")
        statement = statement.where(
            User.id.in_(
                select(Membership.user_id).where(Membership.group_id.in_(actor.managed_groups))
            )
        )
    if query:
        like = contains_pattern(query.lower())
        statement = statement.where(
            or_(
                func.lower(User.name).like(like, escape="\\"),
                func.lower(User.display_name).like(like, escape="\\"),
            )
        )
    if role:
        statement = statement.where(User.role == Role(role).value)
    if group:
        target = await get_group(session, group)
        statement = statement.where(
            User.id.in_(select(Membership.user_id).where(Membership.group_id == target.id))
        )
    return list((await session.scalars(statement)).all())


async def create_user(
    session: AsyncSession,
    actor: Principal,
    name: str,
    role: Role,
    display_name: str = "",
    email: str = "",
    password: str | None = None,
    group: str | None = None,
    unix_clash: UnixClash | None = None,
) -> NewAccount:
    roles.require_create_role(actor, role)
    name = check_user_name(name.strip().lower())
    target_group = await get_group(session, group) if group else None
    if target_group is not None:
        roles.require_group_manager(actor, target_group.id, target_group.name)
    elif not actor.is_admin:
        raise Forbidden("group managers must enrol a new account into one of their groups")
    if await session.scalar(select(User.id).where(User.name == name)):
        raise Conflict(f"user '{name}' already exists")
    await check_unix_names(session, [name], unix_clash)
    one_time = None if password else new_password()
    user = User(
        name=name,
        display_name=display_name.strip() or name,
        email=email.strip(),
        role=role.value,
        password_hash=await hash_password(password or one_time),
        must_change_password=password is None,
    )
    session.add(user)
    await session.flush()
    if target_group is not None:
        session.add(Membership(group_id=target_group.id, user_id=user.id, manager=False))
    audit.record(
        session,
        actor.name,
        "user.created",
        f"user:{name}",
        role=role.value,
        group=target_group.name if target_group else None,
    )
    return NewAccount(user, one_time)


async def update_user(
    session: AsyncSession,
    actor: Principal,
    name: str,
    display_name: str | None = None,
    email: str | None = None,
    role: Role | None = None,
    active: bool | None = None,
) -> User:
    user = await get_user(session, name)
    changes: dict[str, object] = {}
    if role is not None or active is not None:
        roles.require_admin(actor, "change roles or deactivate accounts")
        if user.id == actor.id and (role not in (None, Role.ADMIN) or active is False):
            raise Invalid("you cannot demote or deactivate yourself; ask another administrator")
        if role is not None and role.value != user.role:
            if role not in roles.MANAGER_ROLES:
                managed = await session.scalar(
                    select(func.count()).where(Membership.user_id == user.id, Membership.manager)
                )
                if managed:
                    raise Conflict(
                        f"'{name}' manages {managed} group(s); remove them as manager first"
                    )
            changes["role"] = (user.role, role.value)
            user.role = role.value
        if active is not None and active != user.active:
            changes["active"] = (user.active, active)
            user.active = active
    if display_name is not None or email is not None:
        if user.id != actor.id:
            await require_manages_account(session, actor, user, "change the profile")
        if display_name is not None:
            changes["display_name"] = (user.display_name, display_name.strip() or user.name)
            user.display_name = display_name.strip() or user.name
        if email is not None:
            changes["email"] = (user.email, email.strip())
            user.email = email.strip()
    if changes:
        audit.record(
            session,
            actor.name,
            "user.updated",
            f"user:{name}",
            changes={k: list(v) for k, v in changes.items()},
        )
    return user


async def reset_password(session: AsyncSession, actor: Principal, name: str) -> str:
    user = await get_user(session, name)
    if user.id == actor.id:
        raise Invalid("change your own password from your account page")
    await require_manages_account(session, actor, user, "reset the password")
    if user.directory and not actor.is_admin:
        # A school login's account has no password of its own; only an admin may give one.
        raise Forbidden(
            f"'{name}' logs in with the school's account; only an administrator may give "
            "them a cgu-lab password"
        )
    password = new_password()
    user.password_hash = await hash_password(password)
    user.must_change_password = True
    audit.record(session, actor.name, "user.password_reset", f"user:{name}")
    return password


async def delete_user(session: AsyncSession, actor: Principal, name: str) -> User:
    roles.require_admin(actor, "delete accounts")
    user = await get_user(session, name)
    if user.id == actor.id:
        raise Invalid("you cannot delete your own account")
    running = await session.scalar(
        select(func.count()).where(
            Notebook.owner_id == user.id, Notebook.state.in_([s.value for s in HOLDING])
        )
    )
    if running:
        raise Conflict(f"'{name}' has {running} notebook(s) running; stop them first")
    await session.delete(user)
    audit.record(session, actor.name, "user.deleted", f"user:{name}")
    return user


# -- groups ------------------------------------------------------------------


async def list_groups(session: AsyncSession, actor: Principal) -> list[tuple[Group, int]]:
    counts = (
        select(Membership.group_id, func.count().label("members"))
        .group_by(Membership.group_id)
        .subquery()
    )
    statement = (
        select(Group, func.coalesce(counts.c.members, 0))
        .outerjoin(counts, counts.c.group_id == Group.id)
        .order_by(Group.name)
    )
    if not actor.is_admin:
        statement = statement.where(Group.id.in_(actor.groups | actor.managed_groups))
    return [(group, members) for group, members in (await session.execute(statement)).all()]


async def create_group(
    session: AsyncSession,
    actor: Principal,
    name: str,
    display_name: str = "",
    description: str = "",
    kind: str = "course",
) -> Group:
    if actor.role not in (Role.ADMIN, Role.TEACHER):
        raise Forbidden("only administrators and teachers may create groups")
    name = check_label(name.strip().lower(), "group")
    if kind not in ("course", "group"):
        raise Invalid("a group's kind is 'course' or 'group'")
    if await session.scalar(select(Group.id).where(Group.name == name)):
        raise Conflict(f"group '{name}' already exists")
    group = Group(
        name=name, display_name=display_name.strip() or name, description=description, kind=kind
    )
    session.add(group)
    await session.flush()
    if actor.role is Role.TEACHER:
        session.add(Membership(group_id=group.id, user_id=actor.id, manager=True))
    audit.record(session, actor.name, "group.created", f"group:{name}", kind=kind)
    return group


async def update_group(
    session: AsyncSession,
    actor: Principal,
    name: str,
    display_name: str | None = None,
    description: str | None = None,
) -> Group:
    group = await get_group(session, name)
    roles.require_group_manager(actor, group.id, group.name)
    if display_name is not None:
        group.display_name = display_name.strip() or group.name
    if description is not None:
        group.description = description
    audit.record(session, actor.name, "group.updated", f"group:{name}")
    return group


async def delete_group(session: AsyncSession, actor: Principal, name: str) -> None:
    roles.require_admin(actor, "delete groups")
    group = await get_group(session, name)
    await session.delete(group)
    audit.record(session, actor.name, "group.deleted", f"group:{name}")


async def members(session: AsyncSession, actor: Principal, name: str) -> list[tuple[User, bool]]:
    group = await get_group(session, name)
    if not (roles.can_manage_group(actor, group.id) or group.id in actor.groups):
        raise Forbidden(f"you are not in group '{name}'")
    rows = await session.execute(
        select(User, Membership.manager)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.group_id == group.id)
        .order_by(Membership.manager.desc(), User.name)
    )
    return [(user, manager) for user, manager in rows.all()]


async def set_member(
    session: AsyncSession, actor: Principal, group_name: str, user_name: str, manager: bool
) -> MemberResult:
    """Add an account to a group, or change whether it manages the group.

    An admin's change, or a manager's on a student they fully manage, takes
    effect at once; a manager's on anyone else becomes an invitation that the
    account's owner accepts or declines (`invitations.answer`). Staff stop
    managing a group only by an admin's act or by their own.
    """
    group = await get_group(session, group_name)
    roles.require_group_manager(actor, group.id, group.name)
    user = await get_user(session, user_name)
    if manager:
        roles.check_can_be_manager(Role(user.role), user.name)
    membership = await session.get(Membership, (group.id, user.id))
    if membership is not None and membership.manager == manager:
        return MemberResult(user, manager, invited=False)
    current = await _member_group_ids(session, user.id)
    stepping_down = (
        not manager
        and membership is not None
        and (user.id == actor.id or roles.may_demote_manager(actor, Role(user.role)))
    )
    if not (stepping_down or roles.adds_directly(actor, Role(user.role), current)):
        if membership is not None and not manager:
            raise Forbidden(
                f"only administrators may stop '{user.name}' managing group '{group.name}'"
            )
        await invitations.invite(session, actor, group, user, manager)
        return MemberResult(user, manager, invited=True)
    if membership is None:
        session.add(Membership(group_id=group.id, user_id=user.id, manager=manager))
        action = "group.member_added"
    else:
        membership.manager = manager
        action = "group.member_changed"
    await invitations.drop(session, group.id, user.id)
    audit.record(
        session, actor.name, action, f"group:{group.name}", user=user.name, manager=manager
    )
    return MemberResult(user, manager, invited=False)


async def remove_member(
    session: AsyncSession, actor: Principal, group_name: str, user_name: str
) -> User:
    """Remove a member (or withdraw a pending invitation) from a group one manages."""
    group = await get_group(session, group_name)
    user = await get_user(session, user_name)
    roles.require_group_manager(actor, group.id, group.name)
    membership = await session.get(Membership, (group.id, user.id))
    if membership is None:
        if await invitations.drop(session, group.id, user.id):
            audit.record(
                session,
                actor.name,
                "group.invitation_withdrawn",
                f"group:{group.name}",
                user=user.name,
            )
            return user
        raise NotFound(f"'{user_name}' is not a member of group '{group_name}'")
    if not roles.may_remove_member(actor, user.id, Role(user.role), membership.manager):
        raise Forbidden(f"only administrators may remove staff member '{user.name}' from a group")
    await session.delete(membership)
    audit.record(session, actor.name, "group.member_removed", f"group:{group.name}", user=user.name)
    return user

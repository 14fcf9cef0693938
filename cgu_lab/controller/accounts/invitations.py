"""Invitations to a group: how an existing account joins a manager's group.

A manager may not pull an account they do not fully manage (another course's
student, a teacher, an admin) into their group: that would give them the
account (its password, profile and quota). Instead the manager's request is
stored here and the account's owner accepts or declines it from
`/api/me/invitations`. Kept apart from `accounts` so each module stays small;
it depends on nothing there.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import roles
from ...core.errors import NotFound
from ...core.roles import Principal, Role
from ...store.models import Group, GroupInvitation, Membership, User
from .. import audit


async def invite(
    session: AsyncSession, actor: Principal, group: Group, user: User, manager: bool
) -> None:
    """Ask `user` to join `group` (as a manager if `manager`); a repeat updates the ask."""
    invitation = await session.get(GroupInvitation, (group.id, user.id))
    if invitation is None:
        session.add(
            GroupInvitation(
                group_id=group.id, user_id=user.id, manager=manager, invited_by=actor.name
            )
        )
    else:
        invitation.manager = manager
        invitation.invited_by = actor.name
    audit.record(
        session,
        actor.name,
        "group.invited",
        f"group:{group.name}",
        user=user.name,
        manager=manager,
    )


async def drop(session: AsyncSession, group_id: int, user_id: int) -> bool:
    """Forget a pending invitation (joined another way, or withdrawn); True if there was one."""
    invitation = await session.get(GroupInvitation, (group_id, user_id))
    if invitation is None:
        return False
    await session.delete(invitation)
    return True


async def pending(session: AsyncSession, actor: Principal) -> list[tuple[GroupInvitation, Group]]:
    """The caller's own pending invitations."""
    rows = await session.execute(
        select(GroupInvitation, Group)
        .join(Group, Group.id == GroupInvitation.group_id)
        .where(GroupInvitation.user_id == actor.id)
        .order_by(Group.name)
    )
    return [(invitation, group) for invitation, group in rows.all()]


async def answer(session: AsyncSession, actor: Principal, group_name: str, accept: bool) -> Group:
    """The invited account's owner joins the group (accept) or not (decline)."""
    group = await session.scalar(select(Group).where(Group.name == group_name))
    invitation = (
        await session.get(GroupInvitation, (group.id, actor.id)) if group is not None else None
    )
    if group is None or invitation is None:
        raise NotFound(f"you have no invitation to group '{group_name}'")
    await session.delete(invitation)
    if accept:
        user = await session.get(User, actor.id)
        # The role may have changed since the invitation: only staff manage groups.
        manager = invitation.manager and Role(user.role) in roles.MANAGER_ROLES
        membership = await session.get(Membership, (group.id, actor.id))
        if membership is None:
            session.add(Membership(group_id=group.id, user_id=actor.id, manager=manager))
        else:
            membership.manager = membership.manager or manager
    audit.record(
        session,
        actor.name,
        "group.invitation_accepted" if accept else "group.invitation_declined",
        f"group:{group.name}",
        invited_by=invitation.invited_by,
        manager=invitation.manager,
    )
    return group


async def for_group(
    session: AsyncSession, actor: Principal, group: Group
) -> list[tuple[GroupInvitation, User]]:
    """A group's pending invitations, for its managers."""
    roles.require_group_manager(actor, group.id, group.name)
    rows = await session.execute(
        select(GroupInvitation, User)
        .join(User, User.id == GroupInvitation.user_id)
        .where(GroupInvitation.group_id == group.id)
        .order_by(User.name)
    )
    return [(invitation, user) for invitation, user in rows.all()]


async def withdraw(session: AsyncSession, actor: Principal, group: Group, user: User) -> None:
    """A manager takes back a pending invitation; a membership is never touched here."""
    roles.require_group_manager(actor, group.id, group.name)
    if not await drop(session, group.id, user.id):
        raise NotFound(f"'{user.name}' has no pending invitation to group '{group.name}'")
    audit.record(
        session, actor.name, "group.invitation_withdrawn", f"group:{group.name}", user=user.name
    )

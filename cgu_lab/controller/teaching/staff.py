"""A course's TAs in one step: the teacher creates the account, and it manages the course.

Before, adding a TA took an administrator (only they create TA accounts), the
teacher (who invites it) and the TA (who accepts). A teacher of the course, or
an administrator, now names the TA once: a new account is created with the TA
role and a one-time password shown once (as the class import does), and joins
the course as its manager at once, as enrolled students do. An existing name is
handled as what it is: a student the teacher fully manages becomes a TA of the
course; a staff account is put in (admins) or invited (teachers) as `Make TA`
does; another course's student is refused, since promoting them would take
their account from the course that has it. Nothing else: this is never a way
to create or promote teachers or administrators.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.local_accounts import UnixClash, check_unix_names
from ...core import roles
from ...core.errors import Forbidden
from ...core.names import check_user_name
from ...core.roles import Principal, Role
from ...store.models import Membership, User
from .. import audit
from ..accounts import invitations
from ..accounts.directory import get_group, set_member
from ..accounts.security import hash_password, new_password


@dataclass
class AddedTa:
    user: User
    created: bool
    invited: bool
    one_time_password: str | None
    message: str


async def add_ta(
    session: AsyncSession,
    actor: Principal,
    group_name: str,
    name: str,
    display_name: str = "",
    email: str = "",
    unix_clash: UnixClash | None = None,
) -> AddedTa:
    """Make `name` a TA of the course, creating the account when there is none."""
    group = await get_group(session, group_name)
    roles.require_ta_appointer(actor, group.id, group.name)
    name = check_user_name(name.strip().lower())
    user = await session.scalar(select(User).where(User.name == name))
    if user is None:
        await check_unix_names(session, [name], unix_clash)
        password = new_password()
        user = User(
            name=name,
            display_name=display_name.strip() or name,
            email=email.strip(),
            role=Role.TA.value,
            password_hash=await hash_password(password),
            must_change_password=True,
        )
        session.add(user)
        await session.flush()
        session.add(Membership(group_id=group.id, user_id=user.id, manager=True))
        audit.record(
            session, actor.name, "user.created", f"user:{name}", role="ta", group=group.name
        )
        added = "group.member_added"
        audit.record(session, actor.name, added, f"group:{group.name}", user=name, manager=True)
        return AddedTa(
            user, True, False, password, f"{name} was created and is now a TA of {group.name}"
        )
    role = Role(user.role)
    if role is not Role.STUDENT:
        # Staff: as "Make TA" does (an admin's act takes effect, a teacher's invites).
        result = await set_member(session, actor, group.name, name, True)
        if result.invited:
            return AddedTa(
                user,
                False,
                True,
                None,
                f"{name} already has an account ({role.value}); they were invited and "
                f"become a TA of {group.name} when they accept",
            )
        return AddedTa(user, False, False, None, f"{name} is now a TA of {group.name}")
    groups = frozenset(
        await session.scalars(select(Membership.group_id).where(Membership.user_id == user.id))
    )
    if not roles.may_promote_to_ta(actor, role, groups):
        raise Forbidden(
            f"'{name}' is a student of a course you do not teach; "
            "an administrator can make them a TA, or choose another user name"
        )
    user.role = Role.TA.value
    audit.record(
        session,
        actor.name,
        "user.updated",
        f"user:{name}",
        changes={"role": [Role.STUDENT.value, Role.TA.value]},
    )
    membership = await session.get(Membership, (group.id, user.id))
    if membership is None:
        session.add(Membership(group_id=group.id, user_id=user.id, manager=True))
        action = "group.member_added"
    else:
        membership.manager = True
        action = "group.member_changed"
    await invitations.drop(session, group.id, user.id)
    audit.record(session, actor.name, action, f"group:{group.name}", user=name, manager=True)
    return AddedTa(
        user, False, False, None, f"{name} was a student and is now a TA of {group.name}"
    )

"""Who may do what: platform roles, group management and notebook ownership.

The rules take a `Principal` (the caller, with the groups they belong to and
manage) and plain ids, so every decision is a pure function that the
controller calls before it changes anything.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from .errors import Forbidden


class Role(str, enum.Enum):
    ADMIN = "admin"
    TEACHER = "teacher"
    TA = "ta"
    STUDENT = "student"


# Roles that may manage a group (a course's teachers and TAs).
MANAGER_ROLES = frozenset({Role.ADMIN, Role.TEACHER, Role.TA})
# Staff accounts: only administrators change them (profile, password, role,
# quota, membership), because whoever controls a staff account controls
# every course and student that account manages.
STAFF_ROLES = MANAGER_ROLES


@dataclass(frozen=True)
class Principal:
    id: int
    name: str
    role: Role
    groups: frozenset[int] = field(default_factory=frozenset)
    managed_groups: frozenset[int] = field(default_factory=frozenset)

    @property
    def is_admin(self) -> bool:
        return self.role is Role.ADMIN


def require_admin(actor: Principal, action: str) -> None:
    if not actor.is_admin:
        raise Forbidden(f"only administrators may {action}")


def can_manage_group(actor: Principal, group_id: int) -> bool:
    return actor.is_admin or group_id in actor.managed_groups


def require_group_manager(actor: Principal, group_id: int, group_name: str) -> None:
    if not can_manage_group(actor, group_id):
        raise Forbidden(f"you do not manage group '{group_name}'")


def check_can_be_manager(role: Role, user_name: str) -> None:
    if role not in MANAGER_ROLES:
        raise Forbidden(
            f"'{user_name}' is a {role.value}; only teachers, TAs and admins can manage a group"
        )


def may_create_role(actor: Principal, role: Role) -> bool:
    """Admins create any account; group managers enrol students into their groups."""
    return actor.is_admin or (bool(actor.managed_groups) and role is Role.STUDENT)


def require_create_role(actor: Principal, role: Role) -> None:
    if not may_create_role(actor, role):
        if actor.managed_groups:
            raise Forbidden("group managers may create student accounts only")
        raise Forbidden("only administrators and group managers may create accounts")


def manages_user(actor: Principal, member_groups: frozenset[int]) -> bool:
    """May the actor SEE this account? Admins, and managers of a group it belongs to.

    This is the reading rule only; changing an account needs `manages_account`.
    """
    return actor.is_admin or bool(actor.managed_groups & member_groups)


def manages_account(actor: Principal, role: Role, member_groups: frozenset[int]) -> bool:
    """May the actor CHANGE this account (profile, password, quota, memberships)?

    Admins change every account. Anyone else (teachers and TAs) only changes a
    student who is in at least one group and all of whose groups they manage:
    a student of two courses answers to both, so a TA of one must not take
    over the account the other course relies on, and a student in no group is
    nobody's to take over. Staff accounts are never a manager's to change.
    """
    if actor.is_admin:
        return True
    return role is Role.STUDENT and bool(member_groups) and member_groups <= actor.managed_groups


def require_manages_account(
    actor: Principal, name: str, role: Role, member_groups: frozenset[int], action: str
) -> None:
    """Refuse, naming why, unless `manages_account` allows the actor to `action`."""
    if manages_account(actor, role, member_groups):
        return
    if role is not Role.STUDENT:
        raise Forbidden(
            f"'{name}' is a {role.value}; only administrators may {action} of staff accounts"
        )
    raise Forbidden(
        f"you do not manage all of the groups of '{name}', so you may not {action}; "
        "ask an administrator"
    )


def adds_directly(actor: Principal, role: Role, member_groups: frozenset[int]) -> bool:
    """Does putting an existing account into a group the actor manages take effect at once?

    Admins add anyone; a manager adds a student they already fully manage.
    Otherwise the account is invited and joins only when its owner accepts, so
    no manager can pull someone else's student (or a teacher, or an admin)
    under their control.
    """
    return manages_account(actor, role, member_groups)


def may_demote_manager(actor: Principal, role: Role) -> bool:
    """May the actor stop an account of `role` managing a group the actor manages?

    Admins, and a course's teacher for its TAs: that takes away no part of the TA's
    account, only their hold on this course. A TA never demotes a teacher, and a
    teacher never another teacher (two teachers of a course answer to an admin).
    """
    return actor.is_admin or (actor.role is Role.TEACHER and role is Role.TA)


def may_remove_member(actor: Principal, user_id: int, role: Role, is_manager: bool) -> bool:
    """Managers remove students from their groups; staff leave on their own or by an admin."""
    if actor.is_admin or actor.id == user_id:
        return True
    return role is Role.STUDENT and not is_manager


def may_manage_notebook(actor: Principal, owner_id: int) -> bool:
    """Lifecycle actions (start, stop, resize, delete) belong to the owner and admins."""
    return actor.is_admin or actor.id == owner_id


def require_notebook_manager(actor: Principal, owner_id: int, notebook: str) -> None:
    if not may_manage_notebook(actor, owner_id):
        raise Forbidden(f"notebook '{notebook}' belongs to someone else")


def require_ta_appointer(actor: Principal, group_id: int, group_name: str) -> None:
    """Who makes TAs of a course in one step (a new account, or one of their students):
    its teacher or an administrator. A TA does not appoint other TAs: the course's
    staff is the teacher's choice, and each TA gets a say over every student."""
    if actor.is_admin or (actor.role is Role.TEACHER and group_id in actor.managed_groups):
        return
    raise Forbidden(f"only a teacher of '{group_name}' or an administrator adds its TAs")


def may_promote_to_ta(actor: Principal, role: Role, member_groups: frozenset[int]) -> bool:
    """May the actor make an existing account a TA (its platform role)?

    Admins, for a student; a teacher, for a student they fully manage
    (`manages_account`: every group of theirs is the teacher's), so no teacher
    promotes another course's student. Staff accounts keep their role: they are
    invited as TAs (`adds_directly`), never changed.
    """
    return role is Role.STUDENT and manages_account(actor, role, member_groups)

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
    """True when the actor is an admin or manages a group the user belongs to."""
    return actor.is_admin or bool(actor.managed_groups & member_groups)


def may_manage_notebook(actor: Principal, owner_id: int) -> bool:
    """Lifecycle actions (start, stop, resize, delete) belong to the owner and admins."""
    return actor.is_admin or actor.id == owner_id


def require_notebook_manager(actor: Principal, owner_id: int, notebook: str) -> None:
    if not may_manage_notebook(actor, owner_id):
        raise Forbidden(f"notebook '{notebook}' belongs to someone else")

"""Who may read and write which storage: a user's own, and a course's shared.

Personal storage is its owner's alone: nobody else reads it through the
platform, administrators included (they hold the machine, not the right to
browse a student's files from the portal).

Course storage is written by the course's teachers (managers whose account
is a teacher or an administrator, and any administrator), by its TAs only
where the teacher allows (`ta_write`), and read by every member. So a data
set is stored once and mounted read-only into each member's notebooks.

The allowance of personal storage is the user's disk allowance
(Limits.disk); a course's is its group's disk budget. Both None: no limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import Forbidden
from .roles import Principal, Role

READ = "read"
WRITE = "write"


@dataclass(frozen=True)
class CourseSeat:
    """The caller's place in a course: member or not, manager or not, and the account's role."""

    member: bool
    manager: bool
    role: Role


def course_access(actor: Principal, seat: CourseSeat | None, ta_write: bool) -> str | None:
    """READ, WRITE or None for a course's storage."""
    if actor.is_admin:
        return WRITE
    if seat is None or not seat.member:
        return None
    if seat.manager and seat.role is Role.TEACHER:
        return WRITE
    if seat.manager and seat.role is Role.TA and ta_write:
        return WRITE
    return READ


def course_role(actor: Principal, seat: CourseSeat | None) -> str:
    """How the page names the caller's part: teacher, ta, member or admin."""
    if seat is not None and seat.manager and seat.role in (Role.TEACHER, Role.TA):
        return "teacher" if seat.role is Role.TEACHER else "ta"
    if actor.is_admin:
        return "admin"
    return "member"


def require_course_read(actor: Principal, seat: CourseSeat | None, ta_write: bool, course: str):
    access = course_access(actor, seat, ta_write)
    if access is None:
        raise Forbidden(
            f"you are not a member of course '{course}', so its storage is not yours to read"
        )
    return access


def require_course_write(actor: Principal, seat: CourseSeat | None, ta_write: bool, course: str):
    access = require_course_read(actor, seat, ta_write, course)
    if access != WRITE:
        if seat is not None and seat.manager and seat.role is Role.TA:
            raise Forbidden(
                f"the teacher of '{course}' has not allowed TAs to write its storage; ask them to"
            )
        raise Forbidden(f"the storage of course '{course}' is read-only for its members")
    return access


def may_configure(actor: Principal, seat: CourseSeat | None) -> bool:
    """Whether the caller decides if TAs write: the course's teachers and administrators."""
    return actor.is_admin or (seat is not None and seat.manager and seat.role is Role.TEACHER)


def require_own_storage(actor: Principal, owner: str) -> None:
    if actor.name != owner:
        raise Forbidden(f"the storage of '{owner}' is theirs alone; you can open only your own")

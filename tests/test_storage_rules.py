"""Who may read and write which storage (core/storage.py), and the allowance's sentence
(core/allowance.py): pure rules, no server."""

from __future__ import annotations

import pytest

from cgu_lab.core import storage as rules
from cgu_lab.core.allowance import DiskFull, OverAllowance, Room, check
from cgu_lab.core.errors import Forbidden
from cgu_lab.core.roles import Principal, Role


def who(role: Role) -> Principal:
    return Principal(1, "x", role)


def seat(role: Role, manager: bool) -> rules.CourseSeat:
    return rules.CourseSeat(member=True, manager=manager, role=role)


@pytest.mark.parametrize(
    ("role", "manager", "ta_write", "access"),
    [
        (Role.STUDENT, False, False, "read"),
        (Role.STUDENT, False, True, "read"),  # the setting is for TAs, never students
        (Role.TA, False, True, "read"),  # a TA of another course is a member here
        (Role.TA, True, False, "read"),
        (Role.TA, True, True, "write"),
        (Role.TEACHER, True, False, "write"),
        (Role.TEACHER, False, False, "read"),  # a teacher enrolled as a member elsewhere
    ],
)
def test_course_access_follows_the_seat_and_the_teachers_setting(role, manager, ta_write, access):
    assert rules.course_access(who(role), seat(role, manager), ta_write) == access


def test_outsiders_get_nothing_and_admins_write():
    assert rules.course_access(who(Role.STUDENT), None, True) is None
    assert rules.course_access(who(Role.TEACHER), None, True) is None
    assert rules.course_access(who(Role.ADMIN), None, False) == "write"
    with pytest.raises(Forbidden, match="not a member of course 'c'"):
        rules.require_course_read(who(Role.STUDENT), None, False, "c")


def test_refusals_say_why_and_who_decides():
    with pytest.raises(Forbidden, match="read-only for its members"):
        rules.require_course_write(who(Role.STUDENT), seat(Role.STUDENT, False), True, "c")
    with pytest.raises(Forbidden, match="has not allowed TAs"):
        rules.require_course_write(who(Role.TA), seat(Role.TA, True), False, "c")
    assert rules.may_configure(who(Role.TEACHER), seat(Role.TEACHER, True))
    assert not rules.may_configure(who(Role.TA), seat(Role.TA, True))
    with pytest.raises(Forbidden, match="theirs alone"):
        rules.require_own_storage(who(Role.ADMIN), "alice")


def test_the_allowance_refusal_names_limit_use_and_need():
    with pytest.raises(OverAllowance) as refused:
        check(Room(2**20, 900 * 1024, 2**40), 200 * 1024, "uploading 'a.bin'", "the allowance of x")
    error = refused.value
    assert error.status == 413 and error.code == "over_allowance"
    assert error.details == {"limit": 2**20, "used": 900 * 1024, "needed": 200 * 1024}
    assert error.message.startswith(
        "uploading 'a.bin' needs 200 KiB, but the allowance of x is 1 MiB"
    )
    check(Room(None, None, 2**40), 2**39)  # no allowance: only the disk counts
    with pytest.raises(DiskFull):
        check(Room(None, None, 10), 11)

"""Sharing rules: resolving grants into access, expiry, downgrades."""

from datetime import datetime, timedelta, timezone

import pytest

from cgu_lab.core.errors import Invalid
from cgu_lab.core.sharing import OWNER, Access, Grant, check_access, expiry, resolve

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
LATER = NOW + timedelta(minutes=30)


def test_no_grants_no_access():
    assert resolve([], NOW) is None
    assert resolve([Grant("edit", expires_at=NOW - timedelta(seconds=1))], NOW) is None


def test_strongest_whole_grant_wins_and_expires_first():
    access = resolve([Grant("read"), Grant("edit", expires_at=LATER)], NOW)
    assert access == Access("edit", (), LATER)
    assert resolve([Grant("read"), Grant("edit", expires_at=LATER)], LATER) == Access("read")


def test_file_grants_limit_the_scope():
    access = resolve([Grant("read", "hw1.ipynb"), Grant("edit", "data/x.csv")], NOW)
    assert access == Access("edit", ("data/x.csv", "hw1.ipynb"))


def test_whole_grant_overrides_file_grants():
    assert resolve([Grant("read", "hw1.ipynb"), Grant("read")], NOW) == Access("read")


def test_downgrades_are_detected():
    assert OWNER.at_least(Access("edit"))
    assert not Access("read").at_least(Access("edit"))
    assert Access("edit").at_least(Access("read", ("a",)))
    assert not Access("edit", ("a",)).at_least(Access("edit"))
    assert Access("read", ("a", "b")).at_least(Access("read", ("a",)))


def test_access_names_and_expiry():
    assert check_access("read") == "read"
    with pytest.raises(Invalid, match="'read' \\(read-only\\) or 'edit'"):
        check_access("owner")
    assert expiry(None, NOW) is None
    assert expiry(30, NOW) == LATER
    with pytest.raises(Invalid):
        expiry(0.5, NOW)
    with pytest.raises(Invalid):
        expiry(60 * 24 * 400, NOW)

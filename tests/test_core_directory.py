"""The school login's pure rules (core/directory.py): role mapping and LDAP escaping."""

from __future__ import annotations

import pytest

from cgu_lab.core.directory import (
    GROUPS,
    RoleRule,
    check_login_name,
    claim_values,
    decide,
    escape_dn_value,
    escape_filter_value,
    fill_filter,
    group_names,
    user_name_for,
)
from cgu_lab.core.errors import Invalid
from cgu_lab.core.roles import Role

RULES = [
    RoleRule("claim", "groups", "staff-ai", Role.TEACHER),
    RoleRule("claim", "groups", "ML-101", None, "ml-101"),
    RoleRule("group", "", "admins", Role.ADMIN, provider="ldap"),
    RoleRule("claim", "realm_access.roles", "ta", Role.TA, "ml-101"),
]


def test_the_strongest_matching_role_wins_and_courses_add_up():
    decision = decide(RULES, "school", {"groups": ["staff-ai", "ml-101"]}, Role.STUDENT)
    assert decision.role is Role.TEACHER and decision.courses == {"ml-101": True}
    student = decide(RULES, "school", {"groups": ["ml-101"]}, Role.STUDENT)
    assert student.role is Role.STUDENT and student.courses == {"ml-101": False}


def test_no_rule_and_no_default_lets_nobody_in():
    assert decide(RULES, "school", {"groups": ["other"]}, None) is None
    assert decide(RULES, "school", {}, Role.STUDENT).role is Role.STUDENT


def test_a_rule_for_one_provider_and_a_group_rule_never_match_a_claim():
    assert decide(RULES, "school", {"groups": ["admins"]}, None) is None
    assert decide(RULES, "other", {GROUPS: ["admins"]}, None) is None
    assert decide(RULES, "ldap", {GROUPS: ["admins"]}, None).role is Role.ADMIN


def test_nested_claims_are_read_by_a_dotted_name():
    claims = {"realm_access": {"roles": ["ta", "x"]}, "groups": "solo", "n": {"x": 1}}
    assert claim_values(claims, "realm_access.roles") == ["ta", "x"]
    assert claim_values(claims, "groups") == ["solo"]
    assert claim_values(claims, "missing.deeper") == []
    attributes = {"realm_access.roles": claim_values(claims, "realm_access.roles")}
    assert decide(RULES, "kc", attributes, None).role is Role.TA


def test_user_names_from_the_directory():
    assert user_name_for("Anna.Berg@school.edu", "") == "anna.berg"
    assert user_name_for("", "Åsa Öberg@school.edu") == "asa-oberg"
    with pytest.raises(Invalid):
        user_name_for("admin", "")
    with pytest.raises(Invalid):
        user_name_for("", "")


@pytest.mark.parametrize("name", ["*", "a)(uid=*", "a\\5c", "a\x00", "cn=x,dc=y", "a\nb", ""])
def test_login_names_with_filter_or_dn_syntax_are_refused(name):
    with pytest.raises(Invalid):
        check_login_name(name)


def test_values_are_escaped_for_filters_and_dns():
    assert escape_filter_value("a*(b)\\\x00") == "a\\2a\\28b\\29\\5c\\00"
    assert fill_filter("(uid={login})", "x*") == "(uid=x\\2a)"
    assert escape_dn_value(" #a,b+c=d ") == "\\ #a\\,b\\+c\\=d\\ "
    assert escape_dn_value("#a") == "\\#a"
    assert group_names(["cn=staff-ai,ou=groups,dc=s"]) == ["cn=staff-ai,ou=groups,dc=s", "staff-ai"]
    assert check_login_name(" anna.berg@school.edu ") == "anna.berg@school.edu"

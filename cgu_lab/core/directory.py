"""Who a school's directory says a user is: pure rules for the school login.

A school's OpenID provider hands over claims, its LDAP directory an entry with
groups; neither knows the platform's roles or courses. An administrator maps
them (`RoleRule`: "members of staff-ai are teachers", "the claim `courses`
holding ml-101 puts the user in course ml-101"), and `decide` applies the
mapping at every login, so a change in the directory reaches the platform the
next time the user logs in.

The LDAP helpers are here because an injection is a property of the text, not
of the server: a user name with filter syntax in it (`*`, `(`, `)`, `\\`, NUL)
is refused before any query is built, and every value that does reach a filter
or a DN is escaped as RFC 4515 / RFC 4514 say.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .errors import Invalid
from .names import MAX_USER_NAME, RESERVED_USER_NAMES, USER_NAME
from .roles import MANAGER_ROLES, Role

# The strongest role wins when several rules match.
RANK = {Role.STUDENT: 0, Role.TA: 1, Role.TEACHER: 2, Role.ADMIN: 3}
SOURCES = ("claim", "group")
# Where a directory's groups sit among a user's attributes: a key no claim can take, so
# a "group" rule never matches an OpenID claim that happens to be called "groups".
GROUPS = "ldap groups"
MAX_LOGIN = 256


@dataclass(frozen=True)
class RoleRule:
    """One line of an administrator's mapping.

    source: "claim" (an ID-token claim, `attribute` its name, dotted for nested claims
    such as Keycloak's `realm_access.roles`) or "group" (an LDAP group the user is a
    member of, `value` its cn or DN). `provider`: the provider it applies to ("" any).
    `role` may be None for a rule that only enrols into `course`."""

    source: str
    attribute: str
    value: str
    role: Role | None
    course: str | None = None
    provider: str = ""

    def matches(self, provider: str, attributes: Mapping[str, Sequence[str]]) -> bool:
        if self.provider and self.provider != provider:
            return False
        key = self.attribute if self.source == "claim" else GROUPS
        wanted = self.value.casefold()
        return any(str(v).casefold() == wanted for v in attributes.get(key, ()))


@dataclass(frozen=True)
class Decision:
    """The role and courses a directory user gets: course -> whether they manage it."""

    role: Role
    courses: Mapping[str, bool]


def decide(
    rules: Iterable[RoleRule],
    provider: str,
    attributes: Mapping[str, Sequence[str]],
    default: Role | None,
) -> Decision | None:
    """The role of the strongest matching rule (else `default`) and every matched course.

    None when no rule gives a role and the provider has no default: that school
    lets in only the users an administrator mapped. A course is managed by the
    user when their role is a manager's (a teacher or TA mapped into a course
    runs it, a student is a member)."""
    role: Role | None = None
    courses: list[str] = []
    for rule in rules:
        if not rule.matches(provider, attributes):
            continue
        if rule.role is not None and (role is None or RANK[rule.role] > RANK[role]):
            role = rule.role
        if rule.course and rule.course not in courses:
            courses.append(rule.course)
    role = role or default
    if role is None:
        return None
    manages = role in MANAGER_ROLES and role is not Role.ADMIN
    return Decision(role, {course: manages for course in courses})


def claim_values(claims: Mapping[str, object], name: str) -> list[str]:
    """A claim's values as a list of strings; `a.b` reads a nested object's member."""
    value: object = claims
    for part in name.split("."):
        if not isinstance(value, Mapping):
            return []
        value = value.get(part)
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if isinstance(v, (str, int))]
    if isinstance(value, (str, int)):
        return [str(value)]
    return []


def user_name_for(preferred: str, email: str) -> str:
    """The platform account name for a directory user: the preferred name (or the
    e-mail's local part) in the platform's alphabet, so `Anna.Berg@school.edu` is
    `anna.berg`. Invalid when nothing usable is left (then the user asks an admin)."""
    source = preferred or email.partition("@")[0]
    if "@" in source:
        source = source.partition("@")[0]
    text = unicodedata.normalize("NFKD", source).encode("ascii", "ignore").decode().lower()
    text = re.sub(r"[^a-z0-9._-]+", "-", text)
    text = re.sub(r"\.{2,}", ".", text).strip("._-")[:MAX_USER_NAME].strip("._-")
    if not text or not USER_NAME.fullmatch(text) or text in RESERVED_USER_NAMES:
        raise Invalid(
            f"the directory's name '{source}' cannot be a cgu-lab user name; "
            "ask an administrator to create your account"
        )
    return text


# -- LDAP ----------------------------------------------------------------------

_FILTER_SPECIAL = {"\\": r"\5c", "*": r"\2a", "(": r"\28", ")": r"\29", "\x00": r"\00"}
_LOGIN_FORBIDDEN = re.compile(r"[\\*()\x00-\x1f\x7f=,+<>#;\"]")


def check_login_name(name: str) -> str:
    """A user name typed into the school's LDAP login, refused when it carries filter
    or DN syntax. Escaping alone would make such a name harmless; refusing it also
    tells the person what went wrong instead of an opaque "wrong password"."""
    name = name.strip()
    if not name:
        raise Invalid("type your school user name")
    if len(name) > MAX_LOGIN:
        raise Invalid(f"a school user name has at most {MAX_LOGIN} characters")
    bad = _LOGIN_FORBIDDEN.search(name)
    if bad:
        shown = bad.group() if bad.group().isprintable() else "a control character"
        raise Invalid(
            f"a school user name cannot contain '{shown}'; type the name you use at your school"
        )
    return name


def escape_filter_value(value: str) -> str:
    """RFC 4515: the value of an assertion in a search filter, taken literally."""
    return "".join(_FILTER_SPECIAL.get(c, c) for c in value)


def escape_dn_value(value: str) -> str:
    """RFC 4514: an attribute value inside a distinguished name, taken literally."""
    out = []
    for i, c in enumerate(value):
        if c in ',+"\\<>;=' or (c == "#" and i == 0) or (c == " " and i in (0, len(value) - 1)):
            out.append("\\" + c)
        elif c == "\x00":
            out.append("\\00")
        else:
            out.append(c)
    return "".join(out)


def fill_filter(template: str, login: str) -> str:
    """`(&(objectClass=person)(uid={login}))` with the login escaped into it."""
    return template.replace("{login}", escape_filter_value(login))


def group_names(values: Iterable[str]) -> list[str]:
    """memberOf DNs as both the DN and its first cn, so a rule may name either."""
    names: list[str] = []
    for value in values:
        names.append(value)
        first = value.split(",", 1)[0]
        if first.lower().startswith("cn="):
            names.append(first[3:])
    return names

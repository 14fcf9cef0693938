"""Rules for the names users type: accounts, groups, notebooks, and the labels beside them.

Names appear in URLs (`/notebook/<user>/<name>/`), in directory names and,
on Kubernetes, inside namespace and object names, so they are restricted to a
safe alphabet here, once, instead of being escaped in every place. Display
names and e-mail addresses are shown on pages and in mails; they are kept
short and free of markup and control characters for the same reason.

The patterns are written so that Python, JSON Schema (ECMA-262) and Rust's
regex crate read them alike: the REST API states them in its OpenAPI
document, and they are always applied with `fullmatch` (a Python `$` would
otherwise let one trailing newline through).
"""

from __future__ import annotations

import re

from .errors import Invalid

USER_NAME_PATTERN = r"^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$"
LABEL_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$"
USER_NAME = re.compile(USER_NAME_PATTERN)
DNS_LABEL = re.compile(LABEL_PATTERN)
MAX_USER_NAME = 64
MAX_LABEL = 63

# Path segments the controller itself uses below /notebook/ and at the root.
RESERVED_USER_NAMES = frozenset({"auto-start", "api", "static", "login", "logout", "admin"})

MAX_DISPLAY_NAME = 100
# No markup ('<', '>') and no control characters: a display name is one line of plain text.
DISPLAY_NAME_PATTERN = r"^[^<>\x00-\x1f\x7f]*$"
DISPLAY_NAME = re.compile(DISPLAY_NAME_PATTERN)

MAX_EMAIL = 254
# Deliberately loose (one '@', something on both sides, no spaces, markup or control
# characters): the platform only shows addresses; a stricter check would refuse real ones.
EMAIL_PATTERN = r"^(?:[^@<>\x00-\x20\x7f]+@[^@<>\x00-\x20\x7f]+)?$"
EMAIL = re.compile(EMAIL_PATTERN)


def check_user_name(name: str) -> str:
    """Return the account name if valid, else raise Invalid with the rule spelled out."""
    if not isinstance(name, str) or not USER_NAME.fullmatch(name) or ".." in name:
        raise Invalid(
            f"'{name}' is not a valid user name: use 1-64 lower-case letters, digits, "
            "'.', '_' or '-', starting and ending with a letter or digit"
        )
    if name in RESERVED_USER_NAMES:
        raise Invalid(f"'{name}' is reserved by the platform; choose another user name")
    return name


def check_label(name: str, what: str) -> str:
    """Validate a group, notebook or GPU-type name (a DNS label, as Kubernetes requires)."""
    if not isinstance(name, str) or not DNS_LABEL.fullmatch(name):
        raise Invalid(
            f"'{name}' is not a valid {what} name: use 1-63 lower-case letters, digits "
            "or '-', starting and ending with a letter or digit"
        )
    return name


def check_display_name(value: str, what: str = "display name") -> str:
    """A display name: at most 100 characters of plain text on one line."""
    if len(value) > MAX_DISPLAY_NAME:
        raise Invalid(f"a {what} may have at most {MAX_DISPLAY_NAME} characters; got {len(value)}")
    if not DISPLAY_NAME.fullmatch(value):
        raise Invalid(f"a {what} cannot contain '<', '>' or control characters")
    return value


def check_email(value: str) -> str:
    """An e-mail address (or empty): short, one '@', no spaces or markup."""
    if len(value) > MAX_EMAIL:
        raise Invalid(f"an e-mail address may have at most {MAX_EMAIL} characters")
    if not EMAIL.fullmatch(value):
        raise Invalid(f"'{value}' is not an e-mail address: write it like ada@example.edu")
    return value

"""Rules for the names users type: accounts, groups, notebooks.

Names appear in URLs (`/notebook/<user>/<name>/`), in directory names and,
on Kubernetes, inside namespace and object names, so they are restricted to a
safe alphabet here, once, instead of being escaped in every place.
"""

from __future__ import annotations

import re

from .errors import Invalid

USER_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$")
DNS_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")

# Path segments the controller itself uses below /notebook/ and at the root.
RESERVED_USER_NAMES = frozenset({"auto-start", "api", "static", "login", "logout", "admin"})


def check_user_name(name: str) -> str:
    """Return the account name if valid, else raise Invalid with the rule spelled out."""
    if not isinstance(name, str) or not USER_NAME.match(name) or ".." in name:
        raise Invalid(
            f"'{name}' is not a valid user name: use 1-64 lower-case letters, digits, "
            "'.', '_' or '-', starting and ending with a letter or digit"
        )
    if name in RESERVED_USER_NAMES:
        raise Invalid(f"'{name}' is reserved by the platform; choose another user name")
    return name


def check_label(name: str, what: str) -> str:
    """Validate a group, notebook or GPU-type name (a DNS label, as Kubernetes requires)."""
    if not isinstance(name, str) or not DNS_LABEL.match(name):
        raise Invalid(
            f"'{name}' is not a valid {what} name: use 1-63 lower-case letters, digits "
            "or '-', starting and ending with a letter or digit"
        )
    return name

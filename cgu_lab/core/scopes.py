"""Named scopes: what a credential may do, declared once per API route.

Every route of the REST API requires one scope (its area), checked before the
route runs. A browser session or a personal API token holds every area scope,
and the account's role then decides within it. Two kinds of credential hold
less, because code the owner does not control can reach them:

- a notebook's own token is readable by every kernel of that notebook (and so
  by anyone the owner let edit it): it may only ask what a user may do in that
  notebook (the ingress mode of a Kubernetes notebook needs this) and which of
  its apps are published (its pages shown with Voilà follow that), never
  create, widen or extend shares, never act on another notebook;
- JupyterLab on a notebook's origin acts for the browser's user through the
  proxy, scoped by that user's access to that one notebook: anyone with access
  reads the lab's status, editors keep it running, the owner shares, resizes,
  publishes and submits.

A scope name that is not declared here fails at import (`require`), so a typo
in a route cannot leave it open.
"""

from __future__ import annotations

SCOPES: dict[str, str] = {
    "system": "read the platform's version and limits",
    "accounts": "manage accounts, groups and your own profile, password and tokens",
    "quotas": "read and set quotas",
    "notebooks": "create, start, stop, resize and delete notebooks",
    "shares": "share notebooks, see what is shared with you and look people up",
    "catalog": "read and define environments",
    "gpus": "read and define GPU types and GPUs",
    "culling": "read and set the idle policy of notebooks",
    "monitoring": "read load and usage",
    "teaching": "templates, lab files, broadcasts, assignments and submissions",
    "training": "run training jobs",
    "audit": "read the audit log",
    "storage": "read and write your storage and your courses' storage",
    "notebook:access": "ask what a user may do in this notebook and what it publishes "
    "(its own server)",
    "lab:read": "read this notebook's status from its JupyterLab",
    "lab:edit": "keep this notebook running from its JupyterLab",
    "lab:own": "share, resize, publish and submit from this notebook's JupyterLab",
}

LAB_SCOPES = frozenset(s for s in SCOPES if s.startswith("lab:"))
# A browser session or personal token: every area; role rules decide within it.
FULL = frozenset(SCOPES) - LAB_SCOPES - {"notebook:access"}
# What a kernel can read: the notebook's own token.
NOTEBOOK_TOKEN = frozenset({"notebook:access", "system"})


def require(name: str) -> str:
    """Return `name` if it is a declared scope; raise at once (import time) if not."""
    if name not in SCOPES:
        raise KeyError(f"unknown scope {name!r}; declare it in cgu_lab/core/scopes.py")
    return name


def lab_scopes(access: str) -> frozenset[str]:
    """What JupyterLab on a notebook's origin may do for a user with this access."""
    if access == "owner":
        return LAB_SCOPES
    if access == "edit":
        return frozenset({"lab:read", "lab:edit"})
    if access == "read":
        return frozenset({"lab:read"})
    return frozenset()

"""Each visitor of a shared notebook gets a JupyterLab workspace of their own.

JupyterLab keeps its layout (open tabs, panels, sizes) in a workspace,
`default` unless the URL names another, read and written through
`lab/api/workspaces/<name>`. Without this module a TA opening a student's
shared notebook would load the student's layout, and an editing TA's layout
would overwrite it (and the other way round) every few seconds.

So for anyone but the owner, the workspaces API of this request works on the
visitor's own copies: `<name>` is stored as `cgu-visitor-<user>--<name>`, a
listing shows only theirs (under the names they asked for), and a visitor can
neither read nor change the owner's. The owner's listing leaves the visitors'
copies out. Read-only visitors only ever read (the request guard refuses their
writes), so they start from JupyterLab's default layout every time.

This is done where every request learns its caller (`identity.get_user`, before
the handler runs): the handler's `manager` (jupyterlab_server's
`WorkspacesManager`) is replaced, for this request only, by a view of it.
"""

from __future__ import annotations

import json
import re
from typing import Any

WORKSPACES_HANDLER = "jupyterlab_server.workspaces_handler.WorkspacesHandler"
VISITOR_PREFIX = "cgu-visitor-"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def visitor_space(user: str, space: str) -> str:
    """The stored name of visitor `user`'s workspace `space`."""
    return f"{VISITOR_PREFIX}{_UNSAFE.sub('-', user)}--{space.strip('/')}"


def _id_of(workspace: dict) -> str:
    return str(workspace.get("metadata", {}).get("id", "")).strip("/")


class VisitorWorkspaces:
    """A visitor's view of the workspaces: their own, under the names they use."""

    def __init__(self, manager, user: str) -> None:
        self.manager = manager
        self.user = user

    def _stored(self, space: str) -> str:
        return visitor_space(self.user, space)

    def load(self, space: str) -> dict:
        workspace = self.manager.load(self._stored(space))
        workspace.setdefault("metadata", {})["id"] = "/" + space.strip("/")
        return workspace

    def save(self, space: str, raw: str) -> Any:
        try:
            workspace = json.loads(raw)
            asked = _id_of(workspace)
        except (ValueError, AttributeError) as error:
            raise ValueError(str(error)) from error
        if asked != space.strip("/"):
            raise ValueError(f"Workspace metadata ID mismatch: expected {space!r} got {asked!r}")
        slash = "/" if str(workspace["metadata"]["id"]).startswith("/") else ""
        workspace["metadata"]["id"] = slash + self._stored(space)
        return self.manager.save(self._stored(space), json.dumps(workspace))

    def delete(self, space: str) -> None:
        self.manager.delete(self._stored(space))

    def list_workspaces(self) -> list:
        mine = visitor_space(self.user, "")
        shown = []
        for workspace in self.manager.list_workspaces():
            stored = _id_of(workspace)
            if stored.startswith(mine):
                slash = "/" if str(workspace["metadata"]["id"]).startswith("/") else ""
                workspace["metadata"]["id"] = slash + stored[len(mine) :]
                shown.append(workspace)
        return shown


class OwnerWorkspaces:
    """The owner's view: everything as JupyterLab keeps it, less the visitors' copies."""

    def __init__(self, manager) -> None:
        self.manager = manager

    def __getattr__(self, name: str):
        return getattr(self.manager, name)

    def list_workspaces(self) -> list:
        return [
            w for w in self.manager.list_workspaces() if not _id_of(w).startswith(VISITOR_PREFIX)
        ]


def separate(handler, user) -> None:
    """Give this request's workspaces handler the caller's view of the workspaces."""
    cls = type(handler)
    if f"{cls.__module__}.{cls.__qualname__}" != WORKSPACES_HANDLER:
        return
    manager = getattr(handler, "manager", None)
    if manager is None or isinstance(manager, (VisitorWorkspaces, OwnerWorkspaces)):
        return
    if getattr(user, "access", "owner") == "owner":
        handler.manager = OwnerWorkspaces(manager)
    else:
        handler.manager = VisitorWorkspaces(manager, user.name)

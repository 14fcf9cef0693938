"""What the caller may do: owner and editable shares everything, readonly only reads.

jupyter_server asks `is_authorized(handler, user, action, resource)` with the
action `read`, `write` or `execute` (websockets, kernels, terminals). A
readonly share is allowed `read` alone; a single-file share is further
limited to those files' contents.
"""

from __future__ import annotations

from jupyter_server.auth.authorizer import Authorizer

from .identity import PlatformUser

# What a single-file share may see besides the file itself: enough for
# JupyterLab to load and render it, nothing that lists or changes other files.
_SCOPED_RESOURCES = frozenset({"contents", "kernelspecs", "api", "events", "nbconvert", "cgu_lab"})


def _contents_path(handler) -> str | None:
    """The file a contents request is about, relative to the server root."""
    path_kwargs = getattr(handler, "path_kwargs", {}) or {}
    path = path_kwargs.get("path")
    return None if path is None else path.strip("/")


class ShareAuthorizer(Authorizer):
    def is_authorized(self, handler, user, action: str, resource: str) -> bool:
        if not isinstance(user, PlatformUser):
            return False
        if user.access == "read" and action != "read":
            return False
        if user.scope:
            if resource not in _SCOPED_RESOURCES:
                return False
            if resource == "contents":
                return _contents_path(handler) in user.scope
        return user.access in ("owner", "edit", "read")

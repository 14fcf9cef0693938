"""Files open read-only in JupyterLab for callers with read-only access.

JupyterLab disables saving and marks a document read-only when the contents
API says the file is not `writable`. The authorizer already refuses writes;
this makes the interface say so up front instead of failing at the first save.
"""

from __future__ import annotations

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

from .identity import CURRENT_USER


def _read_only(model: dict) -> dict:
    model["writable"] = False
    if model.get("type") == "directory" and isinstance(model.get("content"), list):
        for child in model["content"]:
            child["writable"] = False
    return model


class ShareAwareContentsManager(AsyncLargeFileManager):
    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        user = CURRENT_USER.get()
        return _read_only(model) if user is not None and user.access == "read" else model

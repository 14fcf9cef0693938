"""Real-time collaboration's routes, as both the proxy and the server extension judge them.

jupyter-collaboration (jupyter-server-ydoc) serves each open document as a *room* on a
websocket, `api/collaboration/room/<format>:<type>:<file id>`, and before opening one the
browser asks `PUT api/collaboration/session/<path>` for the file's id. That PUT writes
nothing of the owner's (it looks the file up, indexing its id in the server's own
database), so a read-only caller may send it: without it a viewer cannot follow a
notebook live. Everything else a read-only caller sends on the room is filtered per
connection inside the notebook server (cgu_lab/notebook/collaboration).
"""

from __future__ import annotations

import re

# The handler classes (module.QualName) jupyter-server-ydoc routes these to.
ROOM_HANDLER = "jupyter_server_ydoc.handlers.YDocWebSocketHandler"
SESSION_HANDLER = "jupyter_server_ydoc.handlers.DocSessionHandler"
# The room every JupyterLab page joins to show who else is here (no document).
GLOBAL_AWARENESS = "JupyterLab:globalAwareness"

_SESSION_PATH = re.compile(r"^/?api/collaboration/session/[^?#]+$")


def is_lookup(method: str, path: str) -> bool:
    """Whether a writing request is the collaboration session lookup, which reads only.

    `path` is the server path after the notebook's base URL (no query string).
    """
    return method.upper() == "PUT" and bool(_SESSION_PATH.match(path))


def document_file_id(room_id: str) -> str | None:
    """The file id of a document room (`json:notebook:<id>`), None for other rooms."""
    parts = room_id.split(":", 2)
    if len(parts) != 3 or not parts[2]:
        return None
    return parts[2]

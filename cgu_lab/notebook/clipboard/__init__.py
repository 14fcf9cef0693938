"""The clipboard of the student's browser, for the notebook's kernels and terminals.

A notebook runs on a server with no display, so "the clipboard" of Linux
tools (`xclip`, `xsel`, and what shells out to them: `pandas.read_clipboard()`,
`DataFrame.to_clipboard()`, pyperclip) does not exist there. This bridge makes
it the clipboard of the laptop in front of the notebook:

    kernel: xclip / xsel / copy() / paste()
      -> unix socket, this user only (relay.py)
      -> the server extension
      -> websocket of the JupyterLab tab that had the focus last (handlers.py;
         owner and editors only, never a read-only viewer)
      -> navigator.clipboard in that tab, which asks the browser's permission
         once and answers (src/clipboard/)

A failure (no tab open, permission refused, no answer within the timeout)
is a ClipboardError with a sentence; the commands print it on stderr and
exit 1 instead of waiting.

Modules: `protocol` (what both ends agree on), `client` (the kernel's end:
copy, paste), `cli` (xclip, xsel), `relay` (the socket and the pages),
`handlers` (the routes).

>>> from cgu_lab.notebook.clipboard import copy, paste
>>> copy("hello from the notebook")
>>> paste()
"""

from __future__ import annotations

from .client import available_types, copy, paste, paste_bytes
from .protocol import ClipboardError

__all__ = [
    "ClipboardError",
    "available_types",
    "clipboard_bridge",
    "copy",
    "paste",
    "paste_bytes",
]


def clipboard_bridge(app):
    """(relay, routes) for the extension app: the relay's socket is made now, so that the
    first kernel finds it (imported late: jupyter_server is heavy, and this package is
    also what kernels import for copy/paste)."""
    from .handlers import routes
    from .relay import ClipboardRelay

    relay = ClipboardRelay(parent=app)
    try:
        relay.start()
    except OSError as error:  # a home that cannot be written: the rest of the server works
        app.log.warning("cgu-lab clipboard: no socket for the kernels: %s", error)
    return relay, routes(relay)

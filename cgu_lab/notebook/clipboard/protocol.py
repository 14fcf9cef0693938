"""What the kernel's side and the server's side of the clipboard bridge agree on.

Both ends import this module, and the kernel's end (the `xclip`/`xsel`
commands, `copy()`/`paste()`) must start fast and run without jupyter_server,
so it imports nothing beyond the standard library.

The kernel's side reaches the server through a unix socket: one JSON line
asks, one JSON line answers, then the connection closes.

kernel -> server
  {"op": "read" | "write" | "types", "type": MIME, "data": base64, "timeout": seconds}
server -> kernel
  {"ok": true, "data": base64, "type": MIME, "types": [...], "deferred": bool}
  {"ok": false, "code": CODE, "message": sentence}
"""

from __future__ import annotations

import os
from pathlib import Path

# The socket of the server that started this process (kernels and terminals inherit it).
ENV_SOCKET = "CGU_CLIPBOARD_SOCKET"
# How long a command waits for the browser, in seconds.
ENV_TIMEOUT = "CGU_CLIPBOARD_TIMEOUT"
DEFAULT_TIMEOUT = 20.0
# The browser must answer this much before the server gives up, and the command
# waits this much longer than the server: whoever gives up first says why.
MARGIN = 1.0
OPS = ("read", "write", "types")

TEXT = "text/plain"
HTML = "text/html"
PNG = "image/png"
# What the browser's asynchronous clipboard can hold (ClipboardItem's mandatory types).
SUPPORTED = (TEXT, HTML, PNG)
# X11 target names that mean plain text (what xclip and xsel users write).
TEXT_ALIASES = frozenset(
    {"utf8_string", "string", "text", "compound_text", "text/plain;charset=utf-8", "text/plain"}
)
# What `xclip -t TARGETS -o` lists for text, besides the browser's own types.
X11_TEXT_TARGETS = ("UTF8_STRING", "STRING", "TEXT")

# Why a request failed (the `code` of an answer), with what the command says when the
# server itself decides; the page sends its own sentence for the codes it decides.
MESSAGES = {
    "no_page": (
        "no JupyterLab tab of this notebook is open to lend its clipboard: open the notebook "
        "in your browser (as its owner or an editor) and try again; if it is open, check that "
        "Settings > cgu-lab Clipboard > 'Kernel clipboard' is on"
    ),
    "timeout": (
        "the browser did not answer in time: click into the notebook's tab (a browser lends "
        "its clipboard only to the tab in front) and try again"
    ),
    "gone": "the notebook's tab was closed or reloaded before it answered",
    "too_large": "the clipboard content is larger than the bridge carries",
    "bad_type": "the browser's clipboard holds only text/plain, text/html and image/png",
    "bad_request": "the request could not be understood",
    "refused": "the browser refused access to its clipboard",
    "unsupported": "this browser cannot lend its clipboard to the page",
    "not_available": "the clipboard holds nothing of that type",
    "unreachable": "the notebook server's clipboard bridge does not answer",
}


class ClipboardError(Exception):
    """Why the browser's clipboard could not be read or written, as a sentence."""

    def __init__(self, code: str, message: str | None = None) -> None:
        super().__init__(message or MESSAGES.get(code, code))
        self.code = code
        self.message = str(self)


def canonical_type(name: str | None) -> str:
    """The MIME type the browser knows for an X11 target or MIME name.

    ClipboardError("bad_type") for what the browser's clipboard cannot hold.
    """
    if not name:
        return TEXT
    lowered = name.strip().lower()
    if lowered in TEXT_ALIASES or lowered.startswith("text/plain"):
        return TEXT
    if lowered.startswith(HTML):
        return HTML
    if lowered == PNG:
        return PNG
    raise ClipboardError("bad_type", f"{MESSAGES['bad_type']}, not {name}")


def is_text(mime: str) -> bool:
    return mime.startswith("text/")


def directory() -> Path:
    """Where servers describe their sockets: `~/.cgu/clipboard/<pid>.json`."""
    return Path(os.path.expanduser("~")) / ".cgu" / "clipboard"


def alive(pid: int) -> bool:
    """Whether a process runs (a server that left a description may be gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

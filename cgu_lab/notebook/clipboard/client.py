"""The kernel's end of the clipboard bridge: ask the notebook server, which asks the page.

Everything here runs inside kernels, terminals and the `xclip`/`xsel`
commands, as the notebook's own user: standard library only, and no call
that can wait longer than its timeout (plus the margin) for anything.

>>> from cgu_lab.notebook.clipboard import copy, paste
>>> copy("a,b\\n1,2\\n")       # now on the clipboard of the laptop in front of the notebook
>>> paste()                   # what was copied there, as text
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket

from .protocol import (
    DEFAULT_TIMEOUT,
    ENV_SOCKET,
    ENV_TIMEOUT,
    MARGIN,
    TEXT,
    ClipboardError,
    alive,
    canonical_type,
    directory,
)

# An answer is at most the bridge's size limit in base64, and some JSON around it.
MAX_ANSWER = 64 * 2**20


def default_timeout() -> float:
    """$CGU_CLIPBOARD_TIMEOUT seconds, else 20."""
    try:
        value = float(os.environ.get(ENV_TIMEOUT, ""))
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT

    return True


def find_socket() -> str | None:
    """The socket of this process's notebook server.

    Kernels and terminals inherit $CGU_CLIPBOARD_SOCKET from the server that
    started them; a process started some other way (an SSH session into the
    pod, a cron job) takes the newest description a live server left in
    `~/.cgu/clipboard/`.
    """
    named = os.environ.get(ENV_SOCKET)
    if named:
        return named
    newest: tuple[float, str] | None = None
    for file in directory().glob("*.json"):
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            description = json.loads(file.read_text())
            if alive(int(description["pid"])):
                stamp = file.stat().st_mtime
                if newest is None or stamp > newest[0]:
                    newest = (stamp, str(description["socket"]))
    return newest[1] if newest else None


def request(op: str, mime: str = TEXT, data: bytes = b"", timeout: float | None = None) -> dict:
    """One request to the server; its answer when `ok`, else ClipboardError."""
    timeout = default_timeout() if timeout is None else timeout
    path = find_socket()
    if not path:
        raise ClipboardError(
            "unreachable",
            "this process does not run inside a cgu-lab notebook server (no clipboard bridge)",
        )
    message = {"op": op, "type": mime, "timeout": timeout}
    if data:
        message["data"] = base64.b64encode(data).decode()
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(timeout + 2 * MARGIN)
        try:
            connection.connect(path)
            connection.sendall(json.dumps(message).encode() + b"\n")
            answer = _read_line(connection)
        except TimeoutError:
            raise ClipboardError("timeout") from None
        except OSError as error:
            raise ClipboardError(
                "unreachable", f"the notebook server's clipboard bridge does not answer ({error})"
            ) from None
    finally:
        connection.close()
    try:
        reply = json.loads(answer)
    except ValueError:
        raise ClipboardError("unreachable", "the notebook server's answer was cut short") from None
    if not reply.get("ok"):
        raise ClipboardError(str(reply.get("code", "refused")), reply.get("message"))
    return reply


def _read_line(connection: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_ANSWER:
            break
    return b"".join(chunks)


def paste_bytes(mime: str = TEXT, timeout: float | None = None) -> bytes:
    """The browser's clipboard content of this type, as bytes (text as UTF-8)."""
    reply = request("read", canonical_type(mime), timeout=timeout)
    return base64.b64decode(reply.get("data", ""))


def paste(timeout: float | None = None) -> str:
    """The text on the clipboard of the browser in front of this notebook."""
    return paste_bytes(TEXT, timeout).decode("utf-8", "replace")


def copy(content: str | bytes, mime: str = TEXT, timeout: float | None = None) -> bool:
    """Put `content` on the browser's clipboard (an image: PNG bytes and `image/png`).

    True when it is there now; False when the browser keeps it until the user
    clicks "Copy" in the notebook's tab (a browser that lets a page write only
    on a click).
    """
    data = content.encode() if isinstance(content, str) else bytes(content)
    reply = request("write", canonical_type(mime), data, timeout)
    return not reply.get("deferred", False)


def available_types(timeout: float | None = None) -> list[str]:
    """The MIME types the browser's clipboard holds now."""
    reply = request("types", timeout=timeout)
    return [str(t) for t in reply.get("types", [])]

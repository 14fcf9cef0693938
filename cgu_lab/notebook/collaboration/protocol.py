"""The Yjs websocket protocol as far as the platform must read it: pure functions.

A collaboration room (jupyter-collaboration's `/api/collaboration/room/<id>`) relays
three kinds of binary messages from each browser: document sync (`[0, step, payload]`:
step 1 asks for what the client lacks, step 2 and update carry changes), awareness
(`[1, update]`: cursors, selections and the user's name) and raw JSON (`[2, text]`,
which is how a client asks the server to save). Deciding what a caller may send needs
only the first bytes of the first two and the awareness entries, so that is all that is
decoded here; the document payloads are relayed untouched. No I/O, no server: the
guard (guard.py) and the tests call these directly.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

SYNC = 0
AWARENESS = 1
RAW = 2
SYNC_STEP1 = 0  # "here is my state vector, send me what I lack": reading only
SYNC_STEP2 = 1
SYNC_UPDATE = 2

# An awareness state the server will relay at most (a cursor, a selection, a name);
# a bigger one is someone using awareness as a side channel.
MAX_STATE_BYTES = 64 * 1024
# The colours JupyterLab gives collaborators, or a plain hex colour; anything else
# (url(...), expressions) is dropped rather than relayed into other browsers' CSS.
SAFE_COLOR = re.compile(r"^(var\(--jp-collaborator-color[1-7]\)|#[0-9a-fA-F]{3,8})$")


class ProtocolError(ValueError):
    """A message that does not parse as the Yjs protocol: dropped, never relayed."""


def read_var_uint(data: bytes, at: int) -> tuple[int, int]:
    """A lib0 variable-length unsigned integer at `at`: (value, next offset)."""
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ProtocolError("truncated or oversized integer")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        shift += 7
        if byte < 0x80:
            return value, at


def write_var_uint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.append(value)
    return bytes(out)


def read_bytes(data: bytes, at: int) -> tuple[bytes, int]:
    """A length-prefixed byte string at `at`: (bytes, next offset)."""
    length, at = read_var_uint(data, at)
    if at + length > len(data):
        raise ProtocolError("truncated string")
    return data[at : at + length], at + length


def write_bytes(value: bytes) -> bytes:
    return write_var_uint(len(value)) + value


def kind(message: bytes) -> tuple[int, int | None]:
    """(message type, sync step or None) of a client's message."""
    if not message:
        raise ProtocolError("empty message")
    kind_, at = read_var_uint(message, 0)
    if kind_ == SYNC:
        step, _ = read_var_uint(message, at)
        return kind_, step
    return kind_, None


def raw_text(message: bytes) -> str:
    """The JSON/text of a raw message (`[2, string]`)."""
    _, at = read_var_uint(message, 0)
    text, _ = read_bytes(message, at)
    return text.decode("utf-8", errors="replace")


def raw_message(text: str) -> bytes:
    """A raw message to a client, as the server answers a save request."""
    return write_var_uint(RAW) + write_bytes(text.encode())


def save_request_id(message: bytes) -> int | None:
    """The id of a raw `save` request (the client waits for an answer with it), else None."""
    _, at = read_var_uint(message, 0)
    text, at = read_bytes(message, at)
    if text != b"save":
        return None
    try:
        return read_var_uint(message, at)[0]
    except ProtocolError:
        return None


@dataclass(frozen=True)
class Entry:
    """One client's state in an awareness update; `state` None means "gone"."""

    client_id: int
    clock: int
    state: dict | None


def read_awareness(message: bytes) -> list[Entry]:
    """The entries of an awareness message (`[1, varUint8Array(update)]`)."""
    _, at = read_var_uint(message, 0)
    update, _ = read_bytes(message, at)
    count, at = read_var_uint(update, 0)
    entries = []
    for _ in range(count):
        client_id, at = read_var_uint(update, at)
        clock, at = read_var_uint(update, at)
        text, at = read_bytes(update, at)
        if len(text) > MAX_STATE_BYTES:
            raise ProtocolError("awareness state too large")
        try:
            state = json.loads(text) if text else None
        except ValueError as error:
            raise ProtocolError("awareness state is not JSON") from error
        if state is not None and not isinstance(state, dict):
            raise ProtocolError("awareness state is not an object")
        entries.append(Entry(client_id, clock, state))
    return entries


def write_awareness(entries: list[Entry]) -> bytes:
    update = write_var_uint(len(entries))
    for entry in entries:
        text = b"null" if entry.state is None else json.dumps(entry.state).encode()
        update += write_var_uint(entry.client_id) + write_var_uint(entry.clock) + write_bytes(text)
    return write_var_uint(AWARENESS) + write_bytes(update)


def initials(display_name: str) -> str:
    words = [w for w in display_name.replace(".", " ").split() if w]
    return "".join(w[0] for w in words[:2]).upper() or display_name[:1].upper()


def stamp_user(state: dict, username: str, display_name: str) -> dict:
    """`state` with its `user` field saying who the server knows the sender is.

    JupyterLab shows `user.display_name`/`name` beside a collaborator's cursor, and the
    browser fills them in itself; the server rewrites them from the identity the proxy
    vouched for, so no one can appear under another's name. The colour is kept when it
    is one JupyterLab uses; `avatar_url` is dropped (an address of the sender's choice
    that every other browser would fetch).
    """
    sent = state.get("user") if isinstance(state.get("user"), dict) else {}
    user = {
        "username": username,
        "name": display_name,
        "display_name": display_name,
        "initials": initials(display_name),
    }
    color = sent.get("color")
    if isinstance(color, str) and SAFE_COLOR.match(color):
        user["color"] = color
    return {**state, "user": user}

"""Each collaboration connection sends only what its caller may send.

jupyter-collaboration relays every message of every connection to the room: a browser
that is only allowed to look could still edit the shared document, save it, or move
someone else's cursor under their name. Upstream has no per-connection permission, so
the platform adds one here, on the connection itself: when the identity provider has
learned who opens a room's websocket (identity.py, before the handler runs), `attach`
wraps that one handler's `on_message` with a `Connection`, which decides per message:

- document sync: step 1 (asking for the document) from everyone; steps 2 and updates
  (changes) only from the owner and editors. A viewer's changes are dropped before the
  room sees them, so they reach neither the file, the room's store, nor anyone else;
- saving (a raw `save` request) only from writers; a viewer is answered `failed`;
- awareness (cursor, selection, name): each connection owns the first client id it
  speaks for that no other open connection owns, and may only speak for that one;
  the `user` field is rewritten from the identity the proxy vouched for, so nobody
  appears under another's name;
- anything that does not parse, or of a kind not listed, from a viewer: dropped.

`Presence` (one per server, in the server's settings) keeps who is connected to which
room and when an editor last did something, which `cgu-lab/collaboration` reports to
the culler (collaborators keep a notebook alive) and to the owner (viewer counts).
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone

from tornado import websocket

from ...core.collaboration import document_file_id
from ..caller import PlatformUser
from . import protocol

SETTING = "cgu_lab_collaboration"
log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Presence:
    """Who is connected to which room, which awareness client ids each owns, and when
    an editor last changed a document or moved their cursor."""

    connections: dict[int, Connection] = field(default_factory=dict)
    last_activity: datetime | None = None
    dropped: int = 0  # messages refused since the start, for the log and the tests

    def claim(self, connection: Connection, client_id: int) -> bool:
        """Whether `connection` may speak for `client_id` (taking it when free)."""
        if connection.client_id == client_id:
            return True
        if connection.client_id is not None:
            return False
        for other in self.connections.values():
            same_room = other is not connection and other.room == connection.room
            if same_room and other.client_id == client_id:
                return False
        connection.client_id = client_id
        return True

    def summary(self) -> dict:
        rooms: dict[str, dict] = {}
        for connection in self.connections.values():
            room = rooms.setdefault(
                connection.room, {"room": connection.room, "editors": [], "viewers": []}
            )
            who = "editors" if connection.writes else "viewers"
            if connection.user.username not in room[who]:
                room[who].append(connection.user.username)
        last = self.last_activity
        return {
            "last_activity": last.isoformat().replace("+00:00", "Z") if last else None,
            "rooms": sorted(rooms.values(), key=lambda r: r["room"]),
        }


class Connection:
    """One browser's websocket to one room, and what it may send there."""

    def __init__(self, handler, user: PlatformUser, presence: Presence) -> None:
        self.handler = handler
        self.user = user
        self.presence = presence
        self.writes = user.access in ("owner", "edit") and not user.scope
        self.client_id: int | None = None
        self._open = handler.open
        self._on_message = handler.on_message
        self._on_close = handler.on_close

    @property
    def room(self) -> str:
        return getattr(self.handler, "_room_id", "") or ""

    @property
    def document(self) -> bool:
        return document_file_id(self.room) is not None

    async def open(self, *args, **kwargs):
        self.presence.connections[id(self)] = self  # counted once the upgrade is done
        return await self._open(*args, **kwargs)

    async def on_message(self, message):
        if isinstance(message, str):
            message = message.encode()
        admitted = self.admit(message)
        if admitted is None:
            self.presence.dropped += 1
            return None
        if self.writes and _is_edit(admitted):
            self.presence.last_activity = _now()
        return await self._on_message(admitted)

    def on_close(self) -> None:
        self.presence.connections.pop(id(self), None)
        return self._on_close()

    def admit(self, message: bytes) -> bytes | None:
        """The message to hand to the room (possibly rewritten), or None to drop it."""
        try:
            kind, step = protocol.kind(message)
            if kind == protocol.SYNC:
                if step == protocol.SYNC_STEP1 or self.writes:
                    return message
                return self._refuse("a document change")
            if kind == protocol.AWARENESS:
                return self._awareness(message)
            if kind == protocol.RAW:
                if self.writes:
                    return message
                save = protocol.save_request_id(message)
                if save is not None:
                    self._answer_save(save)
                return self._refuse("a save")
        except protocol.ProtocolError as error:
            return self._refuse(f"a malformed message ({error})")
        if self.writes:
            return message  # another kind (chat): the room's own business
        return self._refuse(f"a message of type {kind}")

    def _awareness(self, message: bytes) -> bytes | None:
        kept = []
        for entry in protocol.read_awareness(message):
            if not self.presence.claim(self, entry.client_id):
                # A browser passes on the removal (no state) of a collaborator it has not
                # heard from for 30 s, as y-protocols' awareness does: dropped, as any entry
                # of another's, but no attempt to speak for them, so not worth a warning.
                if entry.state is not None:
                    log.warning(
                        "cgu-lab: %s tried to speak for another collaborator in %s",
                        self.user.username,
                        self.room,
                    )
                continue
            state = entry.state
            if state is not None:
                state = protocol.stamp_user(
                    state, self.user.username, self.user.display_name or self.user.username
                )
            kept.append(protocol.Entry(entry.client_id, entry.clock, state))
        if not kept:
            return self._refuse("an awareness update for someone else")
        return protocol.write_awareness(kept)

    def _answer_save(self, request_id: int) -> None:
        reply = {"type": "save", "responseTo": request_id, "status": "failed"}
        with contextlib.suppress(websocket.WebSocketClosedError):
            self.handler.write_message(protocol.raw_message(json.dumps(reply)), binary=True)

    def _refuse(self, what: str) -> None:
        log.info(
            "cgu-lab: dropped %s from %s (%s access) in %s",
            what,
            self.user.username,
            self.user.access,
            self.room,
        )
        return None


def attach(handler, user: PlatformUser) -> Connection:
    """Put `handler` (a collaboration room's websocket, before its upgrade) under its
    caller's rules: its own `on_message`/`on_close` are wrapped for this connection only."""
    presence = handler.settings.get(SETTING)
    if presence is None:  # the cgu_lab extension is not loaded: still filter, count nothing
        presence = handler.settings.setdefault(SETTING, Presence())
    connection = Connection(handler, user, presence)
    handler.open = connection.open
    handler.on_message = connection.on_message
    handler.on_close = connection.on_close
    return connection


def _is_edit(message: bytes) -> bool:
    """Whether a writer's message changes the document (an update), which is what the
    culler counts as use: an open tab also sends awareness (its cursor, renewed every few
    seconds) and sync requests, and those alone must not keep an idle notebook running."""
    try:
        kind, step = protocol.kind(message)
    except protocol.ProtocolError:
        return False
    return kind == protocol.SYNC and step == protocol.SYNC_UPDATE

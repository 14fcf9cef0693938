"""The routes of the clipboard bridge: `cgu-lab/clipboard` (status) and `cgu-lab/clipboard/channel`.

Both are JupyterHandlers, so the identity provider has vouched for the caller
(the controller's proxy and its secret) before they run, and has already
turned read-only and single-file callers away from any websocket. They check
again themselves: a page that serves as the clipboard hands its user's
clipboard to code running in the notebook, and only people who may run that
code (the owner and editors) may offer theirs. A read-only viewer gets 403
`{message, code}`.

The channel speaks JSON text messages:

server -> page
  `ready`   {max_bytes}
  `request` {id, op: read|write|types, mime, text|base64, deadline_ms}
  `cancel`  {id}                       the kernel stopped waiting
page -> server
  `focus`   {focused}                  the tab got or lost the focus
  `answer`  {id, ok, text|base64, types, deferred} or {id, ok: false, code, message}
"""

from __future__ import annotations

import json

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..access import EditorsOnly, EditorsOnlyChannel
from ..handlers import BaseHandler
from .relay import ClipboardRelay

EDITORS_ONLY = EditorsOnly("lend their clipboard to its kernels")


class ClipboardStatusHandler(BaseHandler):
    """Which pages lend their clipboard now (for the owner and editors)."""

    _track_activity = False  # looking is not using

    def initialize(self, name: str, relay: ClipboardRelay, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.relay = relay

    @web.authenticated
    @authorized
    def get(self) -> None:
        if EDITORS_ONLY.refuse(self):
            return
        self.finish(self.relay.listing())


class ClipboardChannelHandler(EditorsOnlyChannel):
    """One page lending its clipboard to the kernels."""

    editors_only = EDITORS_ONLY
    # An open tab keeps this channel: that alone must not keep the notebook from idling.
    _track_activity = False

    def initialize(self, name: str, relay: ClipboardRelay, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.relay = relay

    def open(self, *args, **kwargs) -> None:
        super().open(*args, **kwargs)
        user = self.current_user
        self.relay.attach(self, user.username, getattr(user, "access", "owner"))

    def on_message(self, message: str | bytes) -> None:
        if isinstance(message, bytes):
            return
        try:
            request = json.loads(message)
            kind = request["type"]
        except (ValueError, KeyError, TypeError):
            self.send_control({"type": "error", "message": "not a message of this channel"})
            return
        if kind == "focus":
            self.relay.focus(self, bool(request.get("focused")))
        elif kind == "answer":
            self.relay.answer(self, request)

    def on_close(self) -> None:
        super().on_close()
        self.relay.detach(self)


def routes(relay: ClipboardRelay) -> list[tuple]:
    return [
        (r"cgu-lab/clipboard", ClipboardStatusHandler, {"relay": relay}),
        (r"cgu-lab/clipboard/channel", ClipboardChannelHandler, {"relay": relay}),
    ]

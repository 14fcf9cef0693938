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

import contextlib
import json

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web, websocket

from ..handlers import AUTH_RESOURCE, BaseHandler
from .relay import ClipboardRelay

READ_ONLY = (
    "read_only",
    "your access to this notebook is read-only: only its owner and editors can lend their "
    "clipboard to its kernels",
)


def refusal(user) -> tuple[str, str] | None:
    """Why this caller may not serve as the clipboard: (code, message), or None."""
    if getattr(user, "access", "owner") not in ("owner", "edit") or getattr(user, "scope", ()):
        return READ_ONLY
    return None


def _refuse(handler: web.RequestHandler, problem: tuple[str, str]) -> None:
    code, message = problem
    handler.set_status(403)
    handler.set_header("Content-Type", "application/json")
    handler.finish(json.dumps({"message": message, "code": code}))


class ClipboardStatusHandler(BaseHandler):
    """Which pages lend their clipboard now (for the owner and editors)."""

    _track_activity = False  # looking is not using

    def initialize(self, name: str, relay: ClipboardRelay, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.relay = relay

    @web.authenticated
    @authorized
    def get(self) -> None:
        problem = refusal(self.current_user)
        if problem is not None:
            _refuse(self, problem)
            return
        self.finish(self.relay.listing())


class ClipboardChannelHandler(
    WebSocketMixin, ExtensionHandlerMixin, JupyterHandler, websocket.WebSocketHandler
):
    """One page lending its clipboard to the kernels."""

    auth_resource = AUTH_RESOURCE
    # An open tab keeps this channel: that alone must not keep the notebook from idling.
    _track_activity = False

    def initialize(self, name: str, relay: ClipboardRelay, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.relay = relay

    @ws_authenticated
    async def get(self, *args, **kwargs) -> None:
        user = self.current_user
        problem = refusal(user)
        if problem is None and not await ensure_async(
            self.authorizer.is_authorized(self, user, "execute", AUTH_RESOURCE)
        ):
            problem = READ_ONLY
        if problem is not None:
            _refuse(self, problem)
            return
        await super().get(*args, **kwargs)

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
        if self.ping_callback is not None:
            self.ping_callback.stop()
        self.relay.detach(self)

    def send_control(self, message: dict) -> None:
        with contextlib.suppress(websocket.WebSocketClosedError):
            self.write_message(json.dumps(message))


def routes(relay: ClipboardRelay) -> list[tuple]:
    return [
        (r"cgu-lab/clipboard", ClipboardStatusHandler, {"relay": relay}),
        (r"cgu-lab/clipboard/channel", ClipboardChannelHandler, {"relay": relay}),
    ]

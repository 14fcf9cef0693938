"""The extension's own refusals: `{message, code}` with a 4xx status, and the check of
the bridges that only the owner and editors may use (serial devices, the clipboard).

The request guard (identity.py, authorizer.py) has already turned read-only and
single-file callers away from any websocket and any writing method; a bridge checks
again itself, on its REST status route too, with words that say what was refused.
`EditorsOnlyChannel` is a bridge's websocket: that check before the upgrade, JSON
text for control messages.
"""

from __future__ import annotations

import contextlib
import json

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web, websocket

from .handlers import AUTH_RESOURCE

READ_ONLY = "read_only"


def send_refusal(
    handler: web.RequestHandler,
    status: int,
    code: str,
    message: str,
    details: dict | None = None,
    *,
    no_store: bool = False,
) -> None:
    """Answer `status` with the JSON body `{...details, message, code}`."""
    handler.set_status(status)
    handler.set_header("Content-Type", "application/json")
    if no_store:
        handler.set_header("Cache-Control", "no-store")
    handler.finish(json.dumps({**(details or {}), "message": message, "code": code}))


class EditorsOnly:
    """A route for the owner and editors only: anyone else gets 403 `read_only`, with
    words that say what only they can do."""

    def __init__(self, what: str) -> None:
        self.code = READ_ONLY
        self.message = (
            f"your access to this notebook is read-only: only its owner and editors can {what}"
        )

    @staticmethod
    def allows(user) -> bool:
        return getattr(user, "access", "owner") in ("owner", "edit") and not getattr(
            user, "scope", ()
        )

    def refuse(self, handler: web.RequestHandler) -> bool:
        """A REST route's check: True when the caller was refused (and answered)."""
        if self.allows(handler.current_user):
            return False
        send_refusal(handler, 403, self.code, self.message)
        return True

    async def refuse_channel(self, handler) -> bool:
        """A websocket's check before the upgrade: the same, and the Authorizer must let
        the caller `execute` too. True when the caller was refused (and answered)."""
        user = handler.current_user
        if self.allows(user) and await ensure_async(
            handler.authorizer.is_authorized(handler, user, "execute", AUTH_RESOURCE)
        ):
            return False
        send_refusal(handler, 403, self.code, self.message)
        return True


class EditorsOnlyChannel(
    WebSocketMixin, ExtensionHandlerMixin, JupyterHandler, websocket.WebSocketHandler
):
    """A bridge's websocket, for the owner and editors only (`editors_only` says what
    only they can do); control messages are JSON text."""

    auth_resource = AUTH_RESOURCE
    editors_only: EditorsOnly

    @ws_authenticated
    async def get(self, *args, **kwargs) -> None:
        if await self.editors_only.refuse_channel(self):
            return
        await super().get(*args, **kwargs)

    def on_close(self) -> None:
        if self.ping_callback is not None:
            self.ping_callback.stop()

    def send_control(self, message: dict) -> None:
        with contextlib.suppress(websocket.WebSocketClosedError):
            self.write_message(json.dumps(message))

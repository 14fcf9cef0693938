"""REST routes of the server extension, all below `<base_url>/cgu-lab/`."""

from __future__ import annotations

import json
import os

from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web

from .. import __version__


class BaseHandler(ExtensionHandlerMixin, APIHandler):
    """Shared policy: JSON errors with a readable `message`."""

    def write_error(self, status_code: int, **kwargs) -> None:
        self.set_header("Content-Type", "application/json")
        reason = self._reason
        exc_info = kwargs.get("exc_info")
        if exc_info and isinstance(exc_info[1], web.HTTPError) and exc_info[1].log_message:
            reason = exc_info[1].log_message
        self.finish(json.dumps({"message": reason}))


class InfoHandler(BaseHandler):
    """The handshake: version, who I am here, and where the control panel is."""

    @web.authenticated
    def get(self) -> None:
        user = self.current_user
        owner = os.environ.get("CGU_NOTEBOOK_OWNER")
        name = os.environ.get("CGU_NOTEBOOK_NAME")
        self.finish(
            {
                "version": __version__,
                "user": {"name": user.username, "display_name": user.display_name},
                "notebook": {"owner": owner, "name": name} if owner and name else None,
                "access": getattr(user, "access", "owner"),
                "controller_url": self.extensionapp.public_url or None,
            }
        )


def route_table() -> list[tuple[str, type]]:
    """Every route of the extension; the ExtensionApp prefixes the server's base_url."""
    return [(r"cgu-lab/info", InfoHandler)]

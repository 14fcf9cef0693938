"""`cgu-lab/collaboration`: who is in which collaboration room, and when an editor last
did something there.

The controller's culler reads `last_activity` beside the kernels' and terminals' (two
people editing without running code are using the notebook); the lab extension shows
the owner how many are watching a broadcast. Polled: reading it is not activity.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web

from ..handlers import AUTH_RESOURCE
from .guard import SETTING, Presence


class CollaborationHandler(ExtensionHandlerMixin, APIHandler):
    auth_resource = AUTH_RESOURCE
    _track_activity = False

    @web.authenticated
    @authorized
    def get(self) -> None:
        presence: Presence = self.settings.setdefault(SETTING, Presence())
        self.finish(presence.summary())


def collaboration_routes() -> list[tuple[str, type]]:
    return [(r"cgu-lab/collaboration", CollaborationHandler)]

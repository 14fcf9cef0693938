"""The apps' own routes: what the launcher lists, and the desktop for read-only viewers.

- `GET cgu-lab/apps`: the apps this notebook offers, where each one opens,
  and what the caller may do with it (`interactive` for the owner and editors;
  a read-only viewer may only `watch` the desktop).
- `cgu-lab/apps/desktop/view` (websocket): the desktop's VNC stream for a
  read-only viewer. The interactive desktop (`<base_url>/desktop/`) is
  jupyter-server-proxy's, refused to read-only callers by the request guard
  (authorizer.py); this route is the one websocket they may open, because
  every byte they send passes `rfb.ViewOnlyFilter`: their keys, pointer and
  clipboard never reach the VNC server, and the desktop's clipboard never
  reaches them (the filter reads the server's side too). It never starts the
  desktop: a viewer watches a session the owner or an editor opened.
"""

from __future__ import annotations

import asyncio
import contextlib

from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web, websocket

from ...core import apps as rules
from ..access import EditorsOnly, send_refusal
from ..handlers import AUTH_RESOURCE, BaseHandler
from . import SETTING
from .registry import Apps
from .rfb import RfbViolation, ViewOnlyFilter

READ_CHUNK = 256 * 1024
NOT_RUNNING = "not_running"


def _kind(name: str) -> str:
    return name if name in rules.BUILT_IN else "web"


class AppsHandler(BaseHandler):
    """The launcher's list."""

    _track_activity = False  # looking is not using

    @web.authenticated
    @authorized
    def get(self) -> None:
        apps: Apps = self.settings[SETTING]
        user = self.current_user
        interactive = EditorsOnly.allows(user)
        listed = []
        for app in apps.offered:
            name = app["name"]
            if not interactive and name != rules.DESKTOP:
                continue
            listed.append(
                {
                    "name": name,
                    "title": app["title"],
                    "kind": _kind(name),
                    "icon": app.get("icon", ""),
                    "path": f"{name}/",
                    "view_path": "cgu-lab/apps/desktop/view" if name == rules.DESKTOP else None,
                    "interactive": interactive,
                }
            )
        self.finish({"apps": listed, "missing": apps.missing, "interactive": interactive})


class DesktopViewHandler(
    WebSocketMixin, ExtensionHandlerMixin, JupyterHandler, websocket.WebSocketHandler
):
    """A read-only view of the running desktop: VNC out, only harmless requests in."""

    auth_resource = AUTH_RESOURCE
    # A watching TA must not keep a student's idle notebook alive.
    _track_activity = False

    def initialize(self, name: str, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.filter = ViewOnlyFilter()
        self.writer: asyncio.StreamWriter | None = None
        self.pump: asyncio.Task | None = None

    @ws_authenticated
    async def get(self, *args, **kwargs) -> None:
        apps: Apps = self.settings[SETTING]
        user = self.current_user
        if getattr(user, "scope", ()):
            send_refusal(self, 403, "not_shared", "only single files are shared with you")
            return
        if not apps.offers(rules.DESKTOP):
            send_refusal(self, 404, "no_desktop", "this notebook's environment has no desktop")
            return
        try:
            reader, self.writer = await asyncio.open_unix_connection(apps.desktop_socket)
        except OSError:
            send_refusal(
                self,
                409,
                NOT_RUNNING,
                "the desktop is not running: its owner or an editor must open it first",
            )
            return
        self.reader = reader
        await super().get(*args, **kwargs)

    def open(self, *args, **kwargs) -> None:
        super().open(*args, **kwargs)
        self.pump = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        """Server to viewer: through the filter (the desktop's clipboard stays behind)."""
        code, reason = None, None
        try:
            while True:
                data = await self.reader.read(READ_CHUNK)
                if not data:
                    break
                shown = self.filter.from_server(data)
                if shown:
                    await self.write_message(shown, binary=True)
        except RfbViolation as error:
            self.log.warning("cgu-lab desktop viewer %s: %s", self.current_user.username, error)
            code, reason = 1008, "view-only: the desktop sent what a viewer is not shown"
        except (OSError, websocket.WebSocketClosedError):
            pass
        finally:
            self.close(code, reason)

    def on_message(self, message: str | bytes) -> None:
        """Viewer to server: through the filter."""
        if isinstance(message, str):
            message = message.encode()
        try:
            passed = self.filter.feed(message)
        except RfbViolation as error:
            self.log.warning("cgu-lab desktop viewer %s: %s", self.current_user.username, error)
            self.close(1008, "view-only: not a message a viewer may send")
            return
        if passed and self.writer is not None:
            self.writer.write(passed)

    def on_close(self) -> None:
        if self.ping_callback is not None:
            self.ping_callback.stop()
        if self.writer is not None:
            with contextlib.suppress(OSError):
                self.writer.close()
        if self.pump is not None:
            self.pump.cancel()


def routes(apps: Apps) -> list[tuple]:
    return [
        (r"cgu-lab/apps", AppsHandler),
        (r"cgu-lab/apps/desktop/view", DesktopViewHandler),
    ]

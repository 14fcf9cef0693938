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
- `POST cgu-lab/apps/browser` `{"url"}`: a browser window on the running desktop
  (web_browser.py), for the owner and editors only; a viewer sees it on the
  desktop but cannot use it.
- `GET cgu-lab/apps/<postgres|mariadb>`: the notebook's database: its engine, where its
  socket is, whether it runs, how long its last start took; the database itself is
  reached by its socket from kernels and terminals, and in the browser through its web
  client (`<base_url>/<postgres|mariadb>/`), both for the owner and editors only.
- `GET|POST cgu-lab/apps/voila`: the notebooks shown as pages with Voilà, each an app
  `voila-<name>/` this server starts and keeps (voila_demos.py); the owner adds one
  (`{"notebook"}`) before publishing it.
- `DELETE cgu-lab/apps/voila/<name>`: the owner (the controller, as the owner, when the
  page is unpublished) takes a page off the home's list; its path answers 404 at once and
  its Voilà stops.
- `POST cgu-lab/apps/<postgres|mariadb>/dump`: `~/database.sql` from the database
  (pg_dump, mariadb-dump), which a submission or a template then carries.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time

from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web, websocket

from ...core import apps as rules
from ...core import publishing
from ...core.errors import Invalid
from ...rfb.filter import RfbViolation, ViewOnlyFilter
from ..access import EditorsOnly, send_refusal
from ..handlers import AUTH_RESOURCE, BaseHandler
from . import SETTING, voila_demos, web_browser
from .registry import Apps, common_entry

READ_CHUNK = 256 * 1024
NOT_RUNNING = "not_running"
BROWSER_EDITORS = EditorsOnly("use a browser on its desktop")
DATABASE_EDITORS = EditorsOnly("use its database")
VOILA_EDITORS = EditorsOnly("see the pages it shows with Voilà")
DUMP_NAME = "database.sql"
DATABASE_NAMES = "|".join(rules.DATABASES)


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
        served = apps.servers()
        for app in apps.offered:
            name = app["name"]
            if not interactive and name != rules.DESKTOP:
                continue
            if name == rules.BROWSER:
                path = "cgu-lab/apps/browser"  # POSTed to, with the desktop opened first
            elif name in served:
                path = f"{name}/"
            else:
                continue  # e.g. a database whose web client is not installed: kernels use it
            listed.append(
                {
                    "name": name,
                    "title": app["title"],
                    "kind": _kind(name),
                    "icon": app.get("icon", ""),
                    "path": path,
                    "view_path": "cgu-lab/apps/desktop/view" if name == rules.DESKTOP else None,
                    "interactive": interactive,
                }
            )
        self.finish({"apps": listed, "missing": apps.missing, "interactive": interactive})


class BrowserHandler(BaseHandler):
    """A browser window on the running desktop, for the owner and editors."""

    @web.authenticated
    @authorized
    def post(self) -> None:
        apps: Apps = self.settings[SETTING]
        if BROWSER_EDITORS.refuse(self):
            return
        if not apps.offers(rules.BROWSER):
            reason = apps.missing.get(rules.BROWSER, "this notebook's environment has no browser")
            send_refusal(self, 404, "no_browser", reason)
            return
        try:
            body = json.loads(self.request.body or b"{}")
            url = web_browser.check_url(body.get("url") if isinstance(body, dict) else None)
        except ValueError:
            send_refusal(self, 400, "invalid", "the request's body is not JSON")
            return
        except Invalid as error:
            send_refusal(self, 400, "invalid", error.message)
            return
        try:
            apps.browsers.append(web_browser.launch(apps.folder, url))
        except ConnectionError:
            send_refusal(self, 409, NOT_RUNNING, "open the desktop first: the browser opens on it")
            return
        except OSError as error:
            send_refusal(self, 409, "browser_failed", f"the browser did not start: {error}")
            return
        self.set_status(202)
        self.finish({"url": url, "display": web_browser.desktop_display(apps.folder)})


class DatabaseHandler(BaseHandler):
    """Where the notebook's database is and how it stands (the owner and editors)."""

    _track_activity = False

    @web.authenticated
    @authorized
    def get(self, name: str) -> None:
        apps: Apps = self.settings[SETTING]
        if DATABASE_EDITORS.refuse(self):
            return
        database = _database(self, apps, name)
        if database is None:
            return
        self.finish(
            {
                "engine": database.engine,
                "host": str(database.folder),
                "socket": str(database.socket_path),
                "user": database.user,
                "database": database.user,
                "running": database.running,
                "started_in": database.started_in,
                "error": database.error,
                "data": str(database.data),
                "web_client": name in apps.servers(),
            }
        )


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


class DatabaseDumpHandler(BaseHandler):
    """`~/database.sql` from the notebook's database (the owner and editors), so that a
    submission or a template carries the data (the cluster's own files are never copied)."""

    @web.authenticated
    @authorized
    async def post(self, name: str) -> None:
        apps: Apps = self.settings[SETTING]
        if DATABASE_EDITORS.refuse(self):
            return
        database = _database(self, apps, name)
        if database is None:
            return
        began = time.monotonic()
        try:
            size = await database.dump(database.home / DUMP_NAME)
        except (RuntimeError, OSError) as error:
            send_refusal(self, 409, "dump_failed", f"the database could not be dumped: {error}")
            return
        self.finish({"path": DUMP_NAME, "size": size, "seconds": time.monotonic() - began})


def _database(handler: BaseHandler, apps: Apps, name: str):
    """The notebook's database if it is the `name` app, else a 404 saying why not."""
    if apps.database is not None and apps.offers(name):
        return apps.database
    reason = apps.missing.get(name, f"this notebook's environment has no {name} database")
    send_refusal(handler, 404, "no_database", reason)
    return None


class VoilaHandler(BaseHandler):
    """The notebooks this server shows as pages with Voilà (voila_demos.py): listed for
    the owner and editors, added by the owner only (publishing is the owner's)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        apps: Apps = self.settings[SETTING]
        if VOILA_EDITORS.refuse(self):
            return
        if apps.voila is not None:
            await apps.voila.checked.wait()  # the start's check against the controller
        shown = apps.voila.shown if apps.voila is not None else {}
        self.finish(
            {
                "demos": [
                    {"app": f"{name}/", "notebook": notebook}
                    for name, notebook in sorted(shown.items())
                ],
                "installed": voila_demos.voila_program() is not None,
            }
        )

    @web.authenticated
    @authorized
    def post(self) -> None:
        """`{"notebook": "<path>.ipynb"}`: the app that shows it (`{"app": "voila-x/"}`),
        made now and again at every start of this server, ready to publish."""
        apps: Apps = self.settings[SETTING]
        if getattr(self.current_user, "access", None) != "owner":
            send_refusal(self, 403, "not_owner", "only this notebook's owner publishes its pages")
            return
        try:
            body = json.loads(self.request.body or b"{}")
            wanted = body.get("notebook") if isinstance(body, dict) else None
            if not isinstance(wanted, str):
                raise Invalid('say which notebook to show: {"notebook": "lesson.ipynb"}')
            notebook = publishing.voila_notebook(wanted)
        except ValueError:
            send_refusal(self, 400, "invalid", "the request's body is not JSON")
            return
        except Invalid as error:
            send_refusal(self, 400, "invalid", error.message)
            return
        if apps.voila is None or voila_demos.voila_program() is None:
            send_refusal(
                self, 409, "no_voila", "Voilà is not installed in this notebook's environment"
            )
            return
        if not (apps.voila.root / notebook).is_file():
            send_refusal(self, 404, "not_found", f"there is no notebook '{notebook}' here")
            return
        taken = {app["name"] for app in apps.offered}
        try:
            name = apps.voila.add(notebook, taken)
        except OSError as error:
            send_refusal(self, 409, "not_saved", f"the list of pages was not saved: {error}")
            return
        apps.voila.register(self.application, self.base_url, name, common_entry())
        self.finish({"app": f"{name}/", "notebook": notebook})


class VoilaPageHandler(BaseHandler):
    """One page shown with Voilà, removed by the owner (voila_demos.py, `remove`)."""

    @web.authenticated
    @authorized
    async def delete(self, name: str) -> None:
        apps: Apps = self.settings[SETTING]
        if getattr(self.current_user, "access", None) != "owner":
            send_refusal(self, 403, "not_owner", "only this notebook's owner removes its pages")
            return
        if apps.voila is None or name not in apps.voila.shown:
            send_refusal(self, 404, "not_found", f"this notebook shows no page '{name}/'")
            return
        try:
            apps.voila.remove(name)
        except OSError as error:
            send_refusal(self, 409, "not_saved", f"the list of pages was not saved: {error}")
            return
        await apps.voila.unregister(self.application, name)
        self.finish({"message": f"the page '{name}/' is no longer shown", "app": f"{name}/"})


def routes(apps: Apps) -> list[tuple]:
    return [
        (r"cgu-lab/apps/voila", VoilaHandler),
        (r"cgu-lab/apps/voila/([a-z][a-z0-9-]{0,30}[a-z0-9])", VoilaPageHandler),
        (r"cgu-lab/apps", AppsHandler),
        (r"cgu-lab/apps/desktop/view", DesktopViewHandler),
        (r"cgu-lab/apps/browser", BrowserHandler),
        (rf"cgu-lab/apps/({DATABASE_NAMES})", DatabaseHandler),
        (rf"cgu-lab/apps/({DATABASE_NAMES})/dump", DatabaseDumpHandler),
    ]

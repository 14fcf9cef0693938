"""What the caller may do: owner and editable shares everything, readonly only reads.

Two layers, one policy:

- `request_refusal` decides on the *request* (method, the handler class
  tornado routed it to, that handler's decoded path arguments) before any
  handler code runs. The identity provider calls it right after learning who
  the caller is, so it covers every handler of jupyter_server,
  jupyterlab_server and every installed extension, including the many that
  never ask the Authorizer (jupyterlab_server's settings and workspaces).
- `ShareAuthorizer.is_authorized` is jupyter_server's hook for handlers that
  do ask (`@authorized`: `read`, `write` or `execute`); it applies the same
  rules, so the two can never disagree.

The rules:

- read-only and single-file callers use only GET, HEAD and OPTIONS, and open
  no websocket but two: a websocket is a two-way channel, and what travels on
  it (kernel execute requests, terminal keystrokes, LSP edits, Yjs document
  updates) writes or runs things although the upgrade is a GET. The two are
  channels that filter what such a caller sends: the desktop's view, and a
  collaboration room (a single-file caller: only its file's room), whose
  connection the identity provider puts under collaboration/guard.py. Their one
  writing method is the collaboration session lookup (`PUT`, which reads);
- a single-file caller reaches only the routes in `ROUTES` whose rule lets
  them; everything not listed is refused, so a route added by a new
  extension is closed to them until someone decides otherwise here;
- handlers whose GET runs the owner's code (Voilà's, `RUNS_CODE_MODULES`) are
  not for read-only and single-file callers either;
- trusting a notebook (making its HTML and scripts run in a viewer's
  browser) is the owner's alone (`OWNER_ONLY`); see `contents.py`;
- a published demo's visitor (`visit`, core/publishing.py) reaches only
  jupyter-server-proxy's handler of the one app the proxy names, with any
  method and websockets (the app's own requests), and nothing else.
"""

from __future__ import annotations

from jupyter_server.auth.authorizer import Authorizer
from tornado.websocket import WebSocketHandler

from ..core.collaboration import ROOM_HANDLER, SESSION_HANDLER, document_file_id
from .caller import PlatformUser

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# How a single-file share may use a route (every method is also limited to SAFE_METHODS):
ANY = "any"  # serves nothing of the notebook's files: static assets, settings, kernelspecs
FILE = "file"  # only when the handler's file argument is one of the shared files
LAB_PAGE = "lab-page"  # the JupyterLab page, bare or opened on a shared file, no workspace
ROOM = "room"  # a collaboration room: only a document room of one of the shared files

# The one table: handler class (module.QualName, exact, not subclasses) -> single-file rule.
# Not listed: refused to single-file shares (directory listings, other files, kernels,
# sessions, terminals, workspaces, language servers, server status, metrics, ...).
ROUTES: dict[str, str] = {
    # JupyterLab's page and what it needs to draw itself
    "jupyterlab_server.handlers.LabHandler": LAB_PAGE,
    "jupyter_server.base.handlers.MainHandler": ANY,  # "/" redirects to the lab page
    "jupyter_server.base.handlers.FileFindHandler": ANY,  # static/, lab/extensions/, favicon
    "jupyterlab_server.settings_handler.SettingsHandler": ANY,  # read only: writes are refused
    "jupyterlab_server.translations_handler.TranslationsHandler": ANY,
    "jupyterlab_server.themes_handler.ThemesHandler": ANY,
    "jupyterlab_server.listings_handler.ListingsHandler": ANY,
    "jupyterlab_server.licenses_handler.LicensesHandler": ANY,
    "jupyter_server.services.api.handlers.APIVersionHandler": ANY,
    "jupyter_server.services.api.handlers.IdentityHandler": ANY,  # api/me: who I am
    "jupyter_server.services.config.handlers.ConfigHandler": ANY,  # frontend config sections
    "jupyter_server.auth.logout.LogoutHandler": ANY,
    "jupyter_server.services.kernelspecs.handlers.MainKernelSpecHandler": ANY,
    "jupyter_server.services.kernelspecs.handlers.KernelSpecHandler": ANY,
    "jupyter_server.kernelspecs.handlers.KernelSpecResourceHandler": ANY,  # kernel logos
    "jupyter_server.services.nbconvert.handlers.NbconvertRootHandler": ANY,  # exporter list
    "cgu_lab.notebook.handlers.InfoHandler": ANY,
    "cgu_lab.notebook.handlers.ResourcesHandler": ANY,
    # The shared file itself, through every route that reads one file
    "jupyter_server.services.contents.handlers.ContentsHandler": FILE,
    "jupyter_server.services.contents.handlers.CheckpointsHandler": FILE,
    "jupyter_server.base.handlers.AuthenticatedFileHandler": FILE,  # files/<path>
    "jupyter_server.view.handlers.ViewHandler": FILE,  # view/<path>
    "jupyter_server.nbconvert.handlers.NbconvertFileHandler": FILE,  # nbconvert/<fmt>/<path>
    # Following the shared file live (jupyter-collaboration): its id, then its room
    SESSION_HANDLER: FILE,
    ROOM_HANDLER: ROOM,
}

# Apps that jupyter-server-proxy runs (notebook/apps/: the desktop, VS Code, an admin's
# web app) are live sessions in the owner's name whatever the HTTP method says (a GET
# may run a command in code-server), so read-only and single-file callers reach none
# of them. They watch the desktop through a channel that filters what it relays:
APP_PROXY_MODULE = "jupyter_server_proxy."
# Handlers whose GET runs the owner's code: Voilà's server extension renders a notebook
# by executing it in a kernel of the owner's. The platform turns that extension off (a
# published Voilà demo runs behind jupyter-server-proxy instead), but an environment may
# install it on: a GET must still not be a read-only caller's way to run the notebook.
RUNS_CODE_MODULES = ("voila.",)
# Websockets a read-only caller may open: GET, filtered (a single-file one: those in ROUTES).
VIEW_ONLY_CHANNELS = frozenset({"cgu_lab.notebook.apps.handlers.DesktopViewHandler", ROOM_HANDLER})
# Writing methods that only read, which read-only callers may use: (route, method).
LOOKUPS = frozenset({(SESSION_HANDLER, "PUT")})

# Routes nobody but the owner may use with a writing method, whatever their share.
OWNER_ONLY = frozenset({"jupyter_server.services.contents.handlers.TrustNotebooksHandler"})

READ_ONLY = "read_only"
DEMO_ONLY = "demo_only"
NOT_SHARED = "not_shared"
OWNER = "owner_only"


def route_name(handler) -> str:
    cls = type(handler)
    return f"{cls.__module__}.{cls.__qualname__}"


def _file_argument(handler) -> str | None:
    """The file a FILE route is about: its `path` argument, or its only positional one."""
    kwargs = getattr(handler, "path_kwargs", None) or {}
    if "path" in kwargs:
        path = kwargs["path"]
    else:
        args = getattr(handler, "path_args", None) or []
        path = args[0] if len(args) == 1 else None
    return None if path is None else path.strip("/")


def _lab_page_allowed(handler, scope: tuple[str, ...]) -> bool:
    kwargs = getattr(handler, "path_kwargs", None) or {}
    if kwargs.get("workspace"):
        return False  # a workspace holds the owner's layout: which other files are open
    tree = kwargs.get("tree")
    if not tree:
        return True  # the bare page: JupyterLab rewrites /lab/tree/<file> to /lab
    return tree.removeprefix("/tree").strip("/") in scope


def _room_in_scope(handler, scope: tuple[str, ...]) -> bool:
    """Whether a collaboration room is a document room of one of the shared files."""
    args = getattr(handler, "path_args", None) or []
    file_id = document_file_id(args[0]) if len(args) == 1 else None
    ids = handler.settings.get("file_id_manager")
    if file_id is None or ids is None:
        return False
    path = ids.get_path(file_id)
    return path is not None and path.strip("/") in scope


def _in_scope(handler, scope: tuple[str, ...]) -> bool:
    rule = ROUTES.get(route_name(handler))
    if rule == ANY:
        return True
    if rule == FILE:
        # Exact match only: `a/../b`, `./a` or an encoded slash never equal a shared path.
        return _file_argument(handler) in scope
    if rule == LAB_PAGE:
        return _lab_page_allowed(handler, scope)
    if rule == ROOM:
        return _room_in_scope(handler, scope)
    return False


def _visit_allowed(handler, user: PlatformUser) -> bool:
    """Whether a published demo's visitor may make this request: only to jupyter-server-proxy
    (the app), and only under the one app path the proxy named (as sent, so that no other
    route's path reaches here). The proxy checked the same; this holds even if it erred."""
    if not user.app or not route_name(handler).startswith(APP_PROXY_MODULE):
        return False
    base = handler.settings.get("base_url", "/")
    path = handler.request.path
    app = base + user.app
    return ".." not in path.split("/") and (path.startswith(app) or path == app.rstrip("/"))


def request_refusal(handler, user: PlatformUser) -> tuple[str, str] | None:
    """Why this request must be refused before its handler runs: (code, message), or None."""
    if user.access == "visit":
        if _visit_allowed(handler, user):
            return None
        return DEMO_ONLY, "you may use this notebook's published demo only"
    method = (handler.request.method or "").upper()
    writes = method not in SAFE_METHODS
    if writes and user.access != "owner" and route_name(handler) in OWNER_ONLY:
        return OWNER, "only the owner of this notebook can trust it"
    limited = user.access == "read" or bool(user.scope)
    route = route_name(handler)
    if limited and route.startswith(APP_PROXY_MODULE):
        return READ_ONLY, (
            "your access to this notebook is read-only: its apps (desktop, VS Code) are for "
            "its owner and editors; you can watch the desktop from the Apps launcher"
        )
    if limited and route.startswith(RUNS_CODE_MODULES):
        return READ_ONLY, (
            "your access to this notebook is read-only: showing a notebook with Voilà runs "
            "its code, which is for its owner and editors"
        )
    upgrade = (handler.request.headers.get("Upgrade") or "").lower() == "websocket"
    viewing = route in VIEW_ONLY_CHANNELS and method == "GET"
    if viewing and user.scope and route not in ROUTES:
        viewing = False  # the desktop: not for single-file callers
    if limited and (isinstance(handler, WebSocketHandler) or upgrade) and not viewing:
        return READ_ONLY, (
            "your access to this notebook is read-only: you cannot run code or edit live here"
        )
    if limited and writes and (route, method) not in LOOKUPS:
        return READ_ONLY, (
            "your access to this notebook is read-only: you can look, but not change, run or save"
        )
    if user.scope and not _in_scope(handler, user.scope):
        shared = ", ".join(user.scope)
        return NOT_SHARED, f"only {shared} is shared with you, not the rest of this notebook"
    return None


class ShareAuthorizer(Authorizer):
    """jupyter_server's per-action check, answered by the same rules as the request guard."""

    def is_authorized(self, handler, user, action: str, resource: str) -> bool:
        if not isinstance(user, PlatformUser) or user.access not in ("owner", "edit", "read"):
            return False
        if (user.access == "read" or user.scope) and action != "read":
            lookup = handler is not None and (
                (route_name(handler), (handler.request.method or "").upper()) in LOOKUPS
            )
            if not lookup:
                return False
        if handler is None:  # not asked about a request: no route to check a scope against
            return not user.scope
        return request_refusal(handler, user) is None

"""The route walk: every route a platform notebook server registers, by every method and role.

A real jupyter_server is started as the backends start one (their identity provider,
authorizer and contents manager; the jupyter-config of every server extension installed here,
ours from the repository). The routes are read out of the running tornado application, so a
route added by jupyter_server, jupyterlab_server or any extension is walked without being
listed here. Each route's regex is filled with concrete values (the shared file, another file,
the root, a live kernel, session, terminal, checkpoint); each URL gets GET, HEAD, POST, PUT,
PATCH and DELETE from each role, websocket routes a real upgrade too. The oracle is the policy,
not the implementation: strangers get no 2xx; read-only and single-file callers get no 2xx for
a write, open no websocket and change nothing; a single-file caller sees nothing of another
file; the owner is never refused, an editor only where the route is the owner's alone (trust).
Failures print as one table. The attacks of issue 9 are replayed by name in
test_notebook_trust.py.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.extension.manager import ExtensionManager
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.routing import PathMatches
from tornado.simple_httpclient import SimpleAsyncHTTPClient
from tornado.web import RequestHandler
from tornado.websocket import WebSocketHandler, websocket_connect

from cgu_lab.backends.base import AUTHORIZER, CONTENTS_MANAGER, IDENTITY_PROVIDER

try:  # Python 3.11+
    from re import _constants as sre_c
    from re import _parser as sre_p
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as sre_c
    import sre_parse as sre_p

REPO = Path(__file__).resolve().parents[2]
SECRET = "route-walk-secret"
OWNER = "alice"
SHARED = "notes.ipynb"
OTHER = "other.ipynb"
SHARED_MARK = "SHARED-CELL-7c1"
OTHER_MARK = "OTHER-CELL-9d4"
SECRET_MARK = "PRIVATE-TEXT-3e8"
POLICY_CODES = {"unauthenticated", "read_only", "not_shared", "owner_only"}
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
NO_ANSWER = 599  # tornado's client: the request timed out or the connection dropped
# (the server drops a request it has given up on: `abandoned_requests_hang_up`)


# -- the server, configured as a platform notebook ---------------------------------


def _merge(into: dict, extra: dict) -> dict:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def platform_config(tmp_path: Path) -> dict:
    """Installed extensions' jupyter-config, ours from the repository, the backend's flags."""
    config: dict = {}
    for directory in (
        Path(sys.prefix, "etc", "jupyter", "jupyter_server_config.d"),
        REPO / "server_extension" / "jupyter_server_config.d",
    ):
        for file in sorted(directory.glob("*.json")):
            _merge(config, json.loads(file.read_text()))
    return _merge(
        config,
        {
            "ServerApp": {
                "identity_provider_class": IDENTITY_PROVIDER,
                "authorizer_class": AUTHORIZER,
                "contents_manager_class": CONTENTS_MANAGER,
            },
            "ProxyIdentityProvider": {"proxy_secret": SECRET, "owner": OWNER},
            "LabApp": {
                "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                # Kept in the test's directory, not the home of whoever runs the tests.
                "user_settings_dir": str(tmp_path / "lab" / "user-settings"),
                "workspaces_dir": str(tmp_path / "lab" / "workspaces"),
            },
        },
    )


@pytest.fixture
def jp_server_config(tmp_path):
    return platform_config(tmp_path)


@pytest.fixture(autouse=True)
def undo_notebook_shim():
    """notebook_shim, loaded by the platform's servers, patches jupyter_server's
    ExtensionManager class for the whole process; later servers without it then fail."""
    saved = ExtensionManager.__dict__.get("sorted_extensions")
    yield
    ExtensionManager.sorted_extensions = saved


@pytest.fixture
def abandoned_requests_hang_up(monkeypatch):
    """The server hangs up on a request it has given up on, so that the walk learns at once
    what its request timeout would tell it later: no answer (599).

    jupyterlab_server's licenses handler overrides `finish` with a required argument, so
    every error it sends (a 405 for HEAD, POST...) fails inside tornado's error handling and
    the request is left open: once per URL and batch the walk waited out the timeout (40 s
    of its minute). Tornado finishes every request whose handler returns unless the handler
    takes that on itself (`_auto_finish` off: websockets, streams); one that has returned,
    left it on and is still unfinished is never answered, so its connection is closed. What
    the walk asserts does not change: such a request is still NO_ANSWER, and "a refusal
    never came" where it had to refuse. A handler that is still working keeps its timeout.
    """
    execute = RequestHandler._execute

    async def execute_then_hang_up(self, *args, **kwargs):
        try:
            return await execute(self, *args, **kwargs)
        finally:
            if self._auto_finish and not self._finished:
                self.request.connection.close()

    monkeypatch.setattr(RequestHandler, "_execute", execute_then_hang_up)


def role_headers(name: str, access: str | None = None, scope=(), secret: str = SECRET) -> dict:
    """What the controller's proxy sends for a user (API-token style: no XSRF in the way)."""
    headers = {"X-Cgu-User": name, "X-Cgu-Proxy-Secret": secret, "X-Cgu-Via": "token"}
    if access:
        headers["X-Cgu-Access"] = access
    if scope:
        headers["X-Cgu-Scope"] = quote(json.dumps(list(scope)))
    return headers


ROLES = {
    "anonymous": {},
    "forged": role_headers(OWNER, "owner", secret="a-guess"),
    "stranger": role_headers("eve"),  # right secret, no access to this notebook
    "single": role_headers("sam", "read", scope=[SHARED]),
    "reader": role_headers("rita", "read"),
    "editor": role_headers("ed", "edit"),
    "owner": role_headers(OWNER, "owner"),
}
STRANGERS = {"anonymous", "forged", "stranger"}
LIMITED = STRANGERS | {"single", "reader"}
# Websockets a limited role may open because the server filters what it sends on them
# per connection (a collaboration room: tests/test_collaboration.py drives the filter).
FILTERED_CHANNELS = {"jupyter_server_ydoc.handlers.YDocWebSocketHandler": {"reader"}}


def notebook(marker: str) -> str:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(f"print('{marker}')")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data", data={"text/html": f"<script>alert('{marker}')</script>"}
        )
    ]
    nb.cells.append(cell)
    return nbformat.writes(nb)


@pytest.fixture
def files(jp_root_dir):
    (jp_root_dir / SHARED).write_text(notebook(SHARED_MARK))
    (jp_root_dir / OTHER).write_text(notebook(OTHER_MARK))
    (jp_root_dir / "private").mkdir()
    (jp_root_dir / "private" / "secret.txt").write_text(SECRET_MARK)
    return jp_root_dir


# A request the server gave up on ends at once (`abandoned_requests_hang_up`), so the timeout
# is only for a handler still at work: generous, as a loaded 2-core runner answers slowly.
FETCH = {"allow_nonstandard_methods": True, "follow_redirects": False, "request_timeout": 30}


async def send(client, url: str, method: str, headers: dict, body: str | None = None):
    """(status, body) of one request; redirects are answers, not followed."""
    if body is None and method in ("POST", "PUT", "PATCH"):
        body = "{}"
    try:
        response = await client.fetch(url, method=method, headers=headers, body=body, **FETCH)
        return response.code, response.body or b""
    except HTTPClientError as error:
        return error.code, (error.response.body if error.response else b"") or b""


def refused_by_policy(status: int, body: bytes) -> bool:
    try:
        return status == 403 and json.loads(body).get("code") in POLICY_CODES
    except (ValueError, AttributeError):
        return False


# -- routes, read from the running application -------------------------------------


@dataclass(frozen=True)
class Route:
    regex: re.Pattern
    handler: type

    @property
    def name(self) -> str:
        return f"{self.handler.__module__}.{self.handler.__qualname__}"


def registered_routes(app) -> list[Route]:
    """Every (path regex, handler) rule of the tornado application, in matching order."""
    routes: list[Route] = []

    def walk(router) -> None:
        for rule in router.rules:
            if hasattr(rule.target, "rules"):
                walk(rule.target)
            else:
                assert isinstance(rule.matcher, PathMatches), f"cannot read {rule!r}"
                routes.append(Route(rule.matcher.regex, rule.target))

    walk(app.web_app.default_router)
    return routes


def reached(routes: list[Route], url: str) -> Route | None:
    """The route tornado runs for a path: the first whose regex matches."""
    path = url.split("?", 1)[0]
    return next((route for route in routes if route.regex.match(path)), None)


# -- concrete URLs from a route's regex ----------------------------------------------

MAX_VARIANTS = 48


def _class_sample(items) -> str:
    if items and items[0][0] is sre_c.NEGATE:
        excluded = {chr(av) for op, av in items[1:] if op is sre_c.LITERAL}
        return next(c for c in "xyz1" if c not in excluded)
    op, av = items[0]
    if op is sre_c.LITERAL:
        return chr(av)
    if op is sre_c.RANGE:
        return chr(av[0])
    if op is sre_c.CATEGORY and av is sre_c.CATEGORY_DIGIT:
        return "1"
    return "x"


def url_variants(pattern: str, values: dict) -> list[str]:
    """Strings the regex matches, its groups filled from `values` (by name, else by number)."""
    parsed = sre_p.parse(pattern)
    names = {index: name for name, index in parsed.state.groupdict.items()}

    def sequence(items) -> list[str]:
        out = [""]
        for op, av in items:
            out = [a + b for a in out for b in node(op, av)][:MAX_VARIANTS]
        return out

    def node(op, av) -> list[str]:
        if op is sre_c.LITERAL:
            return [chr(av)]
        if op is sre_c.NOT_LITERAL:
            return ["y" if chr(av) == "x" else "x"]
        if op is sre_c.ANY:
            return ["x", "."]
        if op is sre_c.IN:
            return [_class_sample(av)]
        if op is sre_c.AT:
            return [""]
        if op is sre_c.BRANCH:
            return [s for branch in av[1] for s in sequence(branch)]
        if op is sre_c.SUBPATTERN:
            group, sub = av[0], av[-1]
            given = values.get(names.get(group, group)) if group is not None else None
            return list(given) if given else sequence(sub)
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            low, _, sub = av
            once = sequence(sub)
            return ["", *once] if low == 0 else [s * low for s in once]
        raise AssertionError(f"the walk cannot build a URL for {pattern!r} ({op})")

    regex = re.compile(pattern)
    made = (s if s.startswith("/") else "/" + s for s in sequence(list(parsed)))
    return [s for s in dict.fromkeys(made) if regex.match(s)]


@dataclass
class Live:
    """Server-side things the URLs name: a kernel and session on another notebook, etc."""

    kernel_id: str
    session_id: str
    terminal: str
    checkpoint: str


async def ensure_live(app) -> Live:
    sessions = await app.session_manager.list_sessions()
    session = next((s for s in sessions if s.get("path") == OTHER), None)
    if session is None:
        session = await app.session_manager.create_session(
            path=OTHER, name=OTHER, type="notebook", kernel_name="python3"
        )
    terminals = app.web_app.settings["terminal_manager"]
    listed = terminals.list()
    terminal = listed[0]["name"] if listed else terminals.create()["name"]
    checkpoints = await app.contents_manager.list_checkpoints(SHARED)
    if not checkpoints:
        checkpoints = [await app.contents_manager.create_checkpoint(SHARED)]
    return Live(session["kernel"]["id"], session["id"], terminal, checkpoints[0]["id"])


def group_values(route: Route, live: Live) -> dict:
    """What fills each group: by name for named groups, by number (1) for an unnamed one."""
    values = {
        "path": [f"/{SHARED}", f"/{OTHER}", "/private/secret.txt", ""],
        "kernel_id": [live.kernel_id],
        "session_id": [live.session_id],
        "checkpoint_id": [live.checkpoint],
        "kernel_name": ["python3"],
        "schema_name": ["@jupyterlab/shortcuts-extension:shortcuts"],
        "space_name": ["default"],
        "section_name": ["notebook"],
        "format": ["python", "html"],
        "language_server": ["pylsp"],
        "locale": ["en"],
        "workspace": ["", "/workspaces/default"],
        "tree": ["", f"/tree/{SHARED}", f"/tree/{OTHER}"],
        1: [SHARED, OTHER],
    }
    if route.name.endswith("KernelSpecResourceHandler"):
        values["path"] = ["logo-64x64.png"]
    if route.name.startswith("jupyter_server_terminals."):
        values[1] = [live.terminal]
    return values


def urls_for(route: Route, live: Live) -> list[str]:
    found = url_variants(route.regex.pattern, group_values(route, live))
    return found or url_variants(route.regex.pattern, {})


# -- state that limited roles must leave alone --------------------------------------


def _tree(directory: Path) -> dict[str, bytes]:
    paths = sorted(directory.rglob("*")) if directory.exists() else []
    return {str(p.relative_to(directory)): p.read_bytes() for p in paths if p.is_file()}


def watched(root: Path, tmp_path: Path) -> list[Path]:
    """The notebook's files, then JupyterLab's user settings and workspaces."""
    return [root, tmp_path / "lab" / "user-settings", tmp_path / "lab" / "workspaces"]


async def state(app, dirs: list[Path]) -> dict:
    sessions = await app.session_manager.list_sessions()
    return {
        "files": [_tree(d) for d in dirs],
        "kernels": set(app.kernel_manager.list_kernel_ids()),
        "sessions": {s["id"] for s in sessions},
        "terminals": {t["name"] for t in app.web_app.settings["terminal_manager"].list()},
    }


def changes(before: dict, after: dict) -> str:
    """What a batch changed: files, settings, workspaces, and kernels, sessions or terminals
    that appeared (one vanishing late is an earlier owner's shutdown completing; a deleting
    2xx is caught as a 2xx)."""
    said = [
        f"{name}: {sorted(set(a) ^ set(b) | {k for k in b if a.get(k) != b[k]})}"
        for name, b, a in zip(
            ("files", "settings", "workspaces"), before["files"], after["files"], strict=True
        )
        if a != b
    ]
    said += [
        f"new {key}" for key in ("kernels", "sessions", "terminals") if after[key] - before[key]
    ]
    return "changed " + "; ".join(said) if said else ""


def restore(dirs: list[Path], trees: list[dict[str, bytes]]) -> None:
    for root, baseline in zip(dirs, trees, strict=True):
        root.mkdir(parents=True, exist_ok=True)
        for path in sorted(root.rglob("*"), reverse=True):
            rel = str(path.relative_to(root))
            if path.is_file() and rel not in baseline:
                path.unlink()
            elif path.is_dir() and not any(k.startswith(rel + "/") for k in baseline):
                path.rmdir()
        for rel, content in baseline.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(content)


# -- the oracle -----------------------------------------------------------------------

# Not sent as owner or editor (they would end the server under test, or start a JupyterLab
# build); every other role still sends them.
NOT_AS_PRIVILEGED = {("ShutdownHandler", "POST"), ("BuildHandler", "POST")}
# Served to anyone by jupyter_server without asking who calls (not a JupyterHandler, so no
# identity provider): robots.txt and favicon.ico. No notebook data (checked below).
PUBLIC = {"jupyter_server.base.handlers.PublicStaticFileHandler"}
OWNER_ONLY = {"jupyter_server.services.contents.handlers.TrustNotebooksHandler"}
# jupyter-server-proxy's `proxy/<host>:<port>` refuses, to everyone, hosts outside its
# allowlist (localhost): its own rule, not the share policy refusing the owner.
HOST_ALLOWLIST = "jupyter_server_proxy.handlers.RemoteProxyHandler"


def forbidden_strings(live: Live) -> list[str]:
    """What a single-file caller must never see: another file, or another notebook's kernel."""
    return [OTHER_MARK, SECRET_MARK, OTHER, "secret.txt", live.kernel_id, live.session_id]


def judge(role: str, method: str, route: Route, status: int, body: bytes, live: Live) -> str:
    ok = 200 <= status < 300
    text = body.decode("utf-8", "replace")
    # A plain tornado handler (a redirect) may refuse a POST for want of an XSRF token.
    jupyter = issubclass(route.handler, JupyterHandler)
    if role in STRANGERS and ok and not (route.name in PUBLIC and method in ("GET", "HEAD")):
        return "a stranger got a 2xx"
    if role in STRANGERS and ok and any(m in text for m in (SHARED_MARK, OTHER_MARK, SECRET_MARK)):
        return "a stranger saw file contents"
    if role in ("reader", "single") and ok and method not in ("GET", "HEAD"):
        return "read-only got a 2xx for a writing method"
    if role == "single" and ok:
        leaked = [s for s in forbidden_strings(live) if s in text]
        if leaked:
            return f"single-file saw {leaked}"
    off_allowlist = (
        route.name == HOST_ALLOWLIST
        and status == 403
        and (b"is not allowed" in body or (method == "HEAD" and not body))  # HEAD: no body
    )
    if (
        role == "owner"
        and not off_allowlist
        and (refused_by_policy(status, body) or (jupyter and status == 403))
    ):
        return "the owner was refused"
    owners_alone = route.name in OWNER_ONLY and method not in ("GET", "HEAD")
    if role == "editor" and refused_by_policy(status, body) and not owners_alone:
        return "the editor was refused by the share policy"
    if role == "editor" and route.name in OWNER_ONLY and method == "POST" and ok:
        return "an editor did what only the owner may"
    return ""


def table(rows: list[tuple]) -> str:
    header = ("role", "method", "url", "handler", "status", "problem")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in [header, *rows]
    )


async def try_websocket(port: int, url: str, headers: dict) -> int:
    """101 when the upgrade succeeded (closed at once), else the refusal's status."""
    request = HTTPRequest(f"ws://127.0.0.1:{port}{url}", headers=headers, request_timeout=30)
    try:
        connection = await websocket_connect(request)
    except HTTPClientError as error:
        return error.code
    connection.close()
    return 101


# -- the walk ---------------------------------------------------------------------------


# Bodies a write would really be accepted with (by handler class name), so that a missing
# refusal shows as a 2xx and a change on disk, not as a 400 for a malformed body. Else "{}".
BODIES = {
    ("SettingsHandler", "PUT"): {"raw": json.dumps({"shortcuts": []})},
    ("WorkspacesHandler", "PUT"): {"data": {"planted": 1}, "metadata": {"id": "default"}},
    ("ContentsHandler", "PUT"): {"type": "file", "format": "text", "content": "written"},
    ("ContentsHandler", "PATCH"): {"path": "renamed.txt"},
    ("ContentsHandler", "POST"): {"type": "file"},
    ("ConfigHandler", "PUT"): {"planted": 1},
    ("ConfigHandler", "PATCH"): {"planted": 1},
    ("SessionRootHandler", "POST"): {"path": SHARED, "type": "notebook", "kernel": {}},
    ("SessionHandler", "PATCH"): {"path": "moved.ipynb"},
    ("MainKernelHandler", "POST"): {"name": "python3"},
}


async def ask_all(
    client, port: int, url: str, target: Route, asks: list[tuple[str, str]]
) -> list[tuple]:
    """Send (role, method) requests for one URL at once: a handler still at work then costs
    the batch one wait, not one each (one that has given up costs none: the server hangs
    up, `abandoned_requests_hang_up`). Answers: (role, method, status, body); 599 is no
    answer."""

    async def one(role: str, method: str) -> tuple:
        body = BODIES.get((target.handler.__name__, method))
        status, answer = await send(
            client,
            f"http://127.0.0.1:{port}{url}",
            method,
            ROLES[role],
            None if body is None else json.dumps(body),
        )
        return role, method, status, answer

    return list(await asyncio.gather(*(one(role, method) for role, method in asks)))


async def walk_url(app, client, port, routes, route, url, dirs) -> list[tuple]:
    """Every role and method on one URL: the limited roles, a check that they changed
    nothing, then the owner and the editor, after whom everything is put back."""
    problems: list[tuple] = []
    target = reached(routes, url) or route
    live = await ensure_live(app)
    baseline = await state(app, dirs)
    limited = [(r, m) for r in ROLES if r in LIMITED for m in METHODS]
    privileged = [
        (r, m)
        for r in ROLES
        if r not in LIMITED
        for m in METHODS
        if (target.handler.__name__, m) not in NOT_AS_PRIVILEGED
    ]
    answered: dict[tuple[str, str], int] = {}
    for batch in (limited, privileged):
        for role, method, status, body in await ask_all(client, port, url, target, batch):
            answered[role, method] = status
            problem = judge(role, method, target, status, body, live)
            if problem:
                problems.append((role, method, url, target.name, status, problem))
        after = await state(app, dirs)
        if batch is limited and changes(baseline, after):
            problems.append(("limited", "*", url, target.name, "-", changes(baseline, after)))
        if after["files"] != baseline["files"]:
            restore(dirs, baseline["files"])
    if answered.get(("owner", "GET")) != NO_ANSWER:  # else the route answers nobody (upstream)
        for (role, method), status in answered.items():
            must_refuse = role in STRANGERS or (role in LIMITED and method not in ("GET", "HEAD"))
            if must_refuse and status == NO_ANSWER:
                problems.append((role, method, url, target.name, status, "a refusal never came"))
    if issubclass(target.handler, WebSocketHandler):
        for role, headers in ROLES.items():
            code = await try_websocket(port, url, headers)
            filtered = role in FILTERED_CHANNELS.get(target.name, ())
            if role in LIMITED and code == 101 and not filtered:
                problems.append((role, "WS", url, target.name, code, "websocket opened"))
            if role == "owner" and code == 403:
                problems.append((role, "WS", url, target.name, code, "the owner was refused"))
    return problems


@pytest.mark.timeout(900)
async def test_every_route_by_every_method_and_role(
    jp_serverapp, http_server_client, jp_http_port, files, tmp_path, abandoned_requests_hang_up
):
    app = jp_serverapp  # http_server_client: the fixture that serves the app on jp_http_port
    routes = registered_routes(app)
    names = {route.name for route in routes}
    # The walk is only as good as what it sees: the platform's extensions are loaded.
    for expected in (
        "jupyterlab_server.settings_handler.SettingsHandler",
        "jupyterlab_server.workspaces_handler.WorkspacesHandler",
        "jupyter_server_terminals.handlers.TermSocket",
        "jupyter_lsp.handlers.LanguageServerWebSocketHandler",
        "cgu_lab.notebook.handlers.InfoHandler",
    ):
        assert expected in names, f"{expected} is not registered: the server is not the platform's"

    client = SimpleAsyncHTTPClient(force_instance=True, max_clients=64)
    problems: list[tuple] = []
    unreached: list[str] = []
    urls_sent = 0
    try:
        for route in routes:
            urls = urls_for(route, await ensure_live(app))
            if not urls:
                problems.append(
                    ("-", "-", route.regex.pattern, route.name, "-", "no URL could be built")
                )
                continue
            if not any(reached(routes, url) is route for url in urls):
                unreached.append(
                    route.regex.pattern
                )  # shadowed by an earlier route: walked as that
            for url in urls:
                dirs = watched(files, tmp_path)
                problems += await walk_url(app, client, jp_http_port, routes, route, url, dirs)
                urls_sent += 1
    finally:
        client.close()
        await app.web_app.settings["terminal_manager"].terminate_all()
    assert urls_sent >= len(routes), "the walk did not walk"
    assert not problems, (
        f"{len(problems)} answers break the policy ({urls_sent} URLs x {len(METHODS)} methods x "
        f"{len(ROLES)} roles; routes only reached through an earlier one: {unreached}):\n"
        f"{table(problems)}"
    )

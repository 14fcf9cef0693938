"""The reverse proxy in front of every notebook, each on its own browser origin.

A notebook's pages run code that its owner, or anyone who planted an output,
wrote; so they are never served from the controller's origin. On the
controller's origin `/notebook/<owner>/<name>/...` only redirects browsers to
the notebook's own origin (scripts with an API token are still served there:
a browser never sends a bearer token by itself). On a notebook's origin the
caller is known by that origin's own cookie (see origin_auth.py), or a bearer
token; every request is authorised (the owner, or a share), stripped of the
platform's credentials and of identity headers the client tried to send, and
forwarded with the identity the proxy vouches for plus the notebook's secret.

Read-only and single-file access is read-only here already: every request but
GET/HEAD/OPTIONS is refused before the notebook sees it. A published demo's visitor
reaches the published app's path only (`_demo_limit`), with any method; a demo an
administrator made public is served there to callers without a log-in too
(`_public_caller`), as anonymous visitors, paced per address. State-changing
requests and websockets must come from the notebook's own origin.

JupyterLab's calls to the controller (`cgu-lab/shares`, `resize`, ...) are
answered here, by the controller's API under the browser user's identity and
scoped to this notebook and their access, never with a credential a kernel
can read. The isolation headers go on every answer (proxy_replies.py).

A server answering at another path than the controller's (Kubeflow's
`/notebook/<namespace>/<name>/`, Route.server_path) is reached at both, since its
pages link under its own; requests go to it under that path.

Here: one HTTP request's path through the proxy (origin check, caller, access,
forwarding and the refusals a person sees). The replies live in proxy_replies.py,
the log-in hand-off in proxy_login.py, websockets in proxy_tunnel.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field, replace
from urllib.parse import quote, urlencode

import aiohttp
from starlette.routing import Match
from yarl import URL

from ...backends.upstream import Upstreams
from ...core import collaboration, publishing
from ...core.identity_headers import names_a_user
from ...core.lifecycle import State
from ...core.origins import notebook_slug
from ...core.redirects import safe_next
from ...core.roles import Role
from ...core.sharing import OWNER, Access
from ..accounts.auth import Identity
from ..api.deps import ORIGIN_IDENTITY
from ..notebooks.routes import Route
from .login import LoginHandOff
from .origin_auth import COOKIE_SECONDS, LOGIN_PATH, OriginAuth, cookie_name
from .replies import (
    PREFIX,
    client_address,
    cookies,
    exact_origin,
    guarded,
    header,
    original,
    own_origin,
    parse_path,
    redirect,
    request_body,
    send_json,
    send_problem,
    set_cookie,
    stop_reason,
    upstream_path,
    wants_page,
    without_platform_cookies,
)
from .tunnel import Tunnel, WebsocketTunnels

log = logging.getLogger("cgu_lab.proxy")

AUTO_START = "/notebook/auto-start/"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# A request's headers the proxy never forwards: those of this connection only (RFC 9110
# 7.6.1), plus those it sets itself (Host, Content-Length) or must not pass on (the
# platform's credentials); and besides these, any that the request's Connection names.
HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
        b"authorization",
        b"cookie",
        b"content-length",
    }
)
# A response's headers of the connection only (and those its Connection names).
RESPONSE_DROP = frozenset(
    {b"connection", b"keep-alive", b"transfer-encoding", b"trailer", b"upgrade"}
)


def connection_options(headers) -> frozenset[bytes]:
    """The header names that a message's `Connection` header lists, lower-case.

    A sender names there the headers meant for the next hop only (RFC 9110 7.6.1: a
    proxy removes them with Connection itself), so a fixed list of hop-by-hop names is
    not enough: a header that a client or a notebook server declared as one hop's (a
    `Keep-Alive`-like option of its own) must not reach the other side as if it were
    meant for it. `headers`: (name, value) byte pairs, as ASGI and aiohttp give them."""
    names = set()
    for key, value in headers:
        if key.lower() == b"connection":
            names.update(name.strip().lower() for name in value.split(b",") if name.strip())
    return frozenset(names)


SMALL_BODY = 256 * 1024
# Where the API answers JupyterLab's calls about one notebook (api/lab.py and the feature
# routers that add to it); the proxy sends `<notebook>/cgu-lab/<x>` there when the API
# declares `<x>`, else to the notebook's server extension.
LAB_API_PREFIX = "/api/lab/{owner}/{name}"
LAB_PROBE = "/api/lab/owner/name"
LAB_PATH = "/cgu-lab"
# A public demo's anonymous visitor: the name the notebook server is told, and the cookie
# that counts them once (a platform cookie: the notebook server never sees it).
ANONYMOUS = "anonymous-visitor"
VISITOR_COOKIE = "cgu-visitor-{}"
VISITOR_SECONDS = 365 * 24 * 3600


@dataclass
class Caller:
    """Who is asking on a notebook's origin, and how to re-check them later."""

    identity: Identity
    access: Access
    cookie: object | None = None  # the OriginCookie, when the browser logged in here
    renew: list = field(default_factory=list)  # Set-Cookie headers to send back
    visitor: str = ""  # a public demo's anonymous visitor: the name in their cookie
    public: bool = False  # let in by a public demo alone (not by a share or an audience)


class NotebookProxy(LoginHandOff, WebsocketTunnels):
    def __init__(self, platform) -> None:
        self.platform = platform
        self.plan = platform.settings.origins
        self.origin_auth: OriginAuth = platform.origin_auth
        # Clients to the notebook servers, by address (a port, or a local server's socket).
        self.upstreams = Upstreams(
            lambda: {
                "auto_decompress": False,
                "cookie_jar": aiohttp.DummyCookieJar(),
                "timeout": aiohttp.ClientTimeout(total=None, sock_connect=10),
                "skip_auto_headers": ("User-Agent", "Accept-Encoding", "Content-Type"),
            }
        )
        self._lab_app = None
        self._tunnels: dict[int, set[Tunnel]] = {}
        self._background: set[asyncio.Task] = set()
        # The header the backend's notebook servers trust from an ingress ("" for none):
        # a client's copy is dropped like every identity header, and the proxy sets it.
        self.ingress_header = platform.backend.ingress_header
        self._ingress_key = self.ingress_header.encode("latin-1", "replace")

    async def open(self) -> None:
        self.platform.shares.on_change(self._shares_changed)
        self.platform.live.count_viewers_with(self.viewers)
        self._spawn(self._watch())

    def _spawn(self, work) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _shares_changed(self, notebook_id: int) -> None:
        self._spawn(self.revalidate(notebook_id))

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        await self.upstreams.close()

    def on_notebook_origin(self, scope) -> bool:
        if self.plan.subdomains:
            return self.plan.slug_of_host(header(scope, b"host")) is not None
        server = scope.get("server")
        return bool(server) and server[1] == self.plan.port

    # -- who may do what ------------------------------------------------------------

    async def _access(self, identity: Identity, route: Route) -> Access | None:
        """The caller's access: the owner's, a share's, or none (a notebook's token: none)."""
        if identity.via not in ("session", "token"):
            return None
        if identity.user_id == route.owner_id:
            return OWNER
        principal = await self.platform.auth.principal(identity)
        return await self.platform.shares.access(principal, route.notebook_id)

    async def _bearer(self, scope) -> Identity | None:
        authorization = header(scope, b"authorization")
        if not authorization.lower().startswith(("bearer ", "token ")):
            return None
        identity = await self.platform.auth.identify(None, authorization)
        return identity if identity is not None and identity.via == "token" else None

    async def _caller(self, scope, route: Route) -> tuple[Identity | None, Caller | None]:
        """Who asks on a notebook's origin (its cookie, or a script's API token), and with
        what access: (None, None) for nobody, (identity, None) for no access."""
        if header(scope, b"authorization"):
            identity = await self._bearer(scope)
            cookie = None
        else:
            value = cookies(scope).get(cookie_name(route.notebook_id))
            cookie = self.origin_auth.read_cookie(value, route.notebook_id) if value else None
            identity = await self.origin_auth.identify(cookie) if cookie else None
        if identity is None:
            return None, None
        access = await self._access(identity, route)
        if access is None:
            return identity, None
        caller = Caller(identity, access, cookie)
        if cookie is not None and cookie.needs_renewal:
            value = self.origin_auth.cookie_value(
                identity.user_id, route.notebook_id, identity.session_digest
            )
            caller.renew.extend(self._cookie(cookie_name(route.notebook_id), value, route))
        return identity, caller

    def _cookie(self, name: str, value: str, route: Route, max_age: int = COOKIE_SECONDS):
        """Set-Cookie headers for each path the notebook is reached at (Route.paths): a
        server at Kubeflow's path links there, where the cookie of the controller's path
        would not be sent."""
        secure = self.plan.scheme == "https"
        return [set_cookie(name, value, path, max_age, secure) for path in route.paths]

    async def _route(self, first: str, second: str) -> Route | None:
        """The notebook at `/notebook/<first>/<second>/`: where its server answers (in
        memory, asked first) or its owner and name."""
        routes = self.platform.notebooks.routes
        return routes.at_server_path(first, second) or await routes.lookup(first, second)

    # -- HTTP -------------------------------------------------------------------------

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket":
            await self.websocket(scope, receive, send)
        elif self.on_notebook_origin(scope):
            await self.notebook_origin(scope, receive, send)
        else:
            await self.controller_origin(scope, receive, guarded(send))

    async def controller_origin(self, scope, receive, send) -> None:
        """`/notebook/...` on the controller: scripts with a token, else off to the notebook."""
        parsed = parse_path(scope["path"])
        if parsed is None:
            await self._not_found(scope, send, "there is no notebook at this address")
            return
        owner, name, rest = parsed
        served = self.platform.notebooks.routes.at_server_path(owner, name)
        if served is not None:  # its server's own address: the origin is the notebook's
            owner, name = served.owner, served.name
        if header(scope, b"authorization"):
            route = served or await self.platform.notebooks.routes.lookup(owner, name)
            caller = (await self._caller(scope, route))[1] if route is not None else None
            if caller is None:
                await send_json(
                    send, 404, f"{owner} has no notebook '{name}' that you may open", "not_found"
                )
                return
            await self._serve(scope, receive, send, route, caller, rest)
            return
        target = self.plan.notebook_origin(owner, name) + original(scope)
        if scope["method"] in ("GET", "HEAD"):
            await redirect(send, target)
            return
        await send_json(
            send, 421, f"this notebook lives at {target}; send the request there", "wrong_origin"
        )

    async def notebook_origin(self, scope, receive, send) -> None:
        parsed = parse_path(scope["path"])
        slug = self.plan.slug_of_host(header(scope, b"host"))
        served = self.platform.notebooks.routes.at_server_path(*parsed[:2]) if parsed else None
        owner, name = (served.owner, served.name) if served else (parsed or ("", ""))[:2]
        if parsed is None or (slug is not None and notebook_slug(owner, name) != slug):
            await self._elsewhere(scope, guarded(send), slug)
            return
        rest = parsed[2]
        route = served or await self.platform.notebooks.routes.lookup(owner, name)
        if route is None:
            await self._not_found(scope, guarded(send), f"{owner} has no notebook '{name}'")
            return
        if not rest:
            await redirect(guarded(send), f"{PREFIX}{quote(owner)}/{quote(name)}/lab")
            return
        if rest.split("?", 1)[0] == "/" + LOGIN_PATH:
            await self._login_callback(scope, guarded(send), route)
            return
        identity, caller = await self._caller(scope, route)
        if caller is None and not header(scope, b"authorization"):
            caller = await self._public_caller(scope, route, rest, identity)
            if caller is not None:
                wait = self.platform.publishing.admit(client_address(scope))
                if wait:
                    await send_json(
                        guarded(send),
                        429,
                        "too many requests to this demo from your address; wait a moment",
                        "too_many_requests",
                        headers=[(b"retry-after", str(max(1, round(wait))).encode())],
                    )
                    return
        if identity is None and caller is None:
            await self._log_in(scope, guarded(send), route)
            return
        if caller is None and header(scope, b"authorization"):
            await self._not_found(
                scope, guarded(send), f"{owner} has no notebook '{name}' that you may open"
            )
            return
        if caller is None:
            # Logged in here once (the origin's cookie is good), but no share any more.
            await send_problem(
                scope,
                guarded(send),
                404,
                f"you no longer have access to {owner}'s notebook '{name}': "
                "its share ended or was revoked",
                "no_access",
                {"portal_url": self.plan.controller_url + "/"},
                title="No access to this notebook",
                links=[("Back to the cgu-lab portal", self.plan.controller_url + "/")],
            )
            return
        send = guarded(send, caller.renew)
        if scope["method"] not in SAFE_METHODS:
            origin = header(scope, b"origin")
            if origin and not exact_origin(origin, own_origin(scope)):
                await send_json(send, 403, "requests from other sites are refused", "cross_origin")
                return
        await self._serve(scope, receive, send, route, caller, rest)

    async def _public_caller(
        self, scope, route: Route, rest: str, identity: Identity | None
    ) -> Caller | None:
        """A caller with no access of theirs on a path under a public demo: a visit to
        that app, as the logged-in person they are, else as an anonymous visitor known by
        a random cookie of this origin (given now when they have none). None elsewhere:
        the log-in (or the refusal) as before. `_demo_limit` then checks the path as sent."""
        app = publishing.app_of(rest, await self.platform.publishing.public_apps(route.notebook_id))
        if app is None:
            return None
        access = Access("visit", apps=(app,))
        if identity is not None:
            return Caller(identity, access, public=True)
        name = VISITOR_COOKIE.format(route.notebook_id)
        visitor = cookies(scope).get(name, "")
        renew = []
        if not publishing.is_visitor(visitor):
            visitor = publishing.new_visitor()
            renew = self._cookie(name, visitor, route, VISITOR_SECONDS)
        anonymous = Identity(0, ANONYMOUS, "Visitor", Role.STUDENT, "public")
        return Caller(anonymous, access, renew=renew, visitor=visitor, public=True)

    def _demo_limit(self, scope, caller: Caller, rest: str) -> Caller | None:
        """The caller as the notebook sees them on this path, with a published demo's rule:
        under a published app a visitor (or a read-only one) is a `visit` to that app
        alone; elsewhere a visitor with no share is nobody (None). The path is checked as
        decoded and as sent (`original`), so an encoded slash cannot pass as another."""
        access = caller.access
        if not access.apps or (access.level in ("owner", "edit") and not access.scope):
            return caller
        sent = original(scope)[len(PREFIX) :].split("/", 2)
        sent_rest = "/" + sent[2] if len(sent) == 3 else ""
        app = publishing.app_of(rest, access.apps)
        if app is None or publishing.app_of(sent_rest, (app,)) is None:
            return None if access.level == "visit" else caller
        return replace(caller, access=Access("visit", apps=(app,)))

    async def _visited(self, scope, route: Route, caller: Caller) -> None:
        """Count a demo's visitor (once per person: the service remembers whom it counted;
        an anonymous one by their cookie)."""
        if caller.identity.via == "public":
            if caller.visitor:
                await self.platform.publishing.visited_anonymously(
                    route.notebook_id, caller.access.apps[0], caller.visitor, client_address(scope)
                )
        elif caller.access.level == "visit":
            await self.platform.publishing.visited(
                route.notebook_id, caller.access.apps[0], caller.identity.user_id
            )

    async def _serve(self, scope, receive, send, route: Route, caller: Caller, rest: str) -> None:
        """The shared tail: a demo's limit, read-only rule, the lab's controller routes, then
        the notebook."""
        limited = self._demo_limit(scope, caller, rest)
        if limited is None:
            # A page for a visitor who typed or followed the lab's address, JSON for a script.
            where = f"{PREFIX}{quote(route.owner)}/{quote(route.name)}/"
            # (_demo_limit refuses only a caller who has published apps: the first is theirs)
            demos = [("Open the published demo", where + caller.access.apps[0])]
            portal = [("Back to the cgu-lab portal", self.plan.controller_url + "/")]
            await send_problem(
                scope,
                send,
                403,
                "you may use this notebook's published demo only, not its files, kernels, "
                "terminals or other apps",
                "demo_only",
                title="Only the demo is shared",
                links=demos + portal,
            )
            return
        caller = limited
        await self._visited(scope, route, caller)
        access = caller.access
        writes = scope["method"] not in SAFE_METHODS and not collaboration.is_lookup(
            scope["method"], rest.split("?", 1)[0]
        )  # the collaboration session lookup reads (core/collaboration.py)
        if writes and (access.level == "read" or access.scope):
            await send_json(
                send,
                403,
                "your access to this notebook is read-only"
                if not access.scope
                else "this share covers reading one file only",
                "read_only",
            )
            return
        if self.answers_lab(rest):
            await self._lab_api(scope, receive, send, route, caller, rest)
            return
        if route.state is not State.RUNNING or route.target is None:
            if wants_page(scope):
                await redirect(send, self._start_page(route, original(scope)))
            else:
                await self._stopped(send, route)
            return
        await self._forward(scope, receive, send, route, caller)

    async def _stopped(self, send, route: Route) -> None:
        """503 for JupyterLab's requests to a notebook that is not running: why (the culler,
        its server dying, a stop) and where to restart it, so the page can say so."""
        why = await stop_reason(self.platform.db, route.notebook_id, route.state.value)
        lab = f"{PREFIX}{quote(route.owner)}/{quote(route.name)}/lab"
        await send_json(
            send,
            503,
            f"notebook '{route.name}' is {route.state.value}: {why.sentence}; restart it to go on",
            "notebook_stopped",
            {
                "reason": why.reason,
                "detail": why.detail,
                "cause": why.cause,
                "state": route.state.value,
                "restart_url": self._start_page(route, lab, start=True),
                "portal_url": self.plan.controller_url + "/",
            },
        )

    async def _not_found(self, scope, send, message: str) -> None:
        portal = self.plan.controller_url + "/"
        await send_problem(
            scope,
            send,
            404,
            message,
            "not_found",
            title="Notebook not found",
            links=[("Back to the cgu-lab portal", portal)],
        )

    def _start_page(self, route: Route, target: str, start: bool = False) -> str:
        """The controller's start page of a notebook, coming back to `target` once it runs;
        `start`: the person already chose to restart (JupyterLab's Restart), so the page
        starts it for its owner instead of asking again."""
        where = f"{quote(route.owner)}/{quote(route.name)}"
        query = {"next": target, **({"start": "1"} if start else {})}
        return f"{self.plan.controller_url}{AUTO_START}{where}?{urlencode(query)}"

    async def _elsewhere(self, scope, send, slug: str | None) -> None:
        """A path that is not this origin's notebook: pages go where they belong."""
        if slug is not None and scope["path"] in ("", "/"):
            for (owner, name), _route in self.platform.notebooks.routes.items():
                if notebook_slug(owner, name) == slug:
                    await redirect(send, f"{PREFIX}{quote(owner)}/{quote(name)}/lab")
                    return
        if scope["method"] == "GET" and safe_next(scope["path"], "") == scope["path"]:
            await redirect(send, self.plan.controller_url + original(scope))
            return
        await self._not_found(scope, send, "this address serves one notebook only")

    # -- JupyterLab's calls to the controller -------------------------------------------

    @property
    def lab_app(self):
        """The controller's API app, which answers JupyterLab's calls (set by the Controller)."""
        return self._lab_app

    @lab_app.setter
    def lab_app(self, app) -> None:
        self._lab_app = app

    def answers_lab(self, rest: str) -> bool:
        """Whether `<notebook>/<rest>` is one of JupyterLab's calls the controller answers.

        One declaration: the API's own routes below LAB_API_PREFIX (api/lab.py and the
        feature routers that add to it), asked through Starlette's `matches` as a request
        would be; nothing lists them a second time. A path only some methods take counts
        (the API then answers 405 with the ones it takes)."""
        if self._lab_app is None or not rest.startswith(LAB_PATH + "/"):
            return False
        probe = {
            "type": "http",
            "method": "GET",
            "path": LAB_PROBE + rest[len(LAB_PATH) :],
            "root_path": "",
            "headers": [],
        }
        return any(route.matches(probe)[0] is not Match.NONE for route in self._lab_app.routes)

    async def _lab_api(self, scope, receive, send, route: Route, caller: Caller, rest: str):
        path = f"/api/lab/{quote(route.owner)}/{quote(route.name)}{rest[len(LAB_PATH) :]}"
        inner = {
            **scope,
            "path": path,
            "raw_path": path.encode(),
            "headers": [
                (k, v) for k, v in scope["headers"] if k not in (b"cookie", b"authorization")
            ],
            ORIGIN_IDENTITY: self.origin_auth.for_lab(
                caller.identity, route.notebook_id, caller.access.level
            ),
        }
        await self.lab_app(inner, receive, send)

    # -- forwarding to the notebook server -------------------------------------------------

    def _upstream_headers(self, scope, caller: Caller, route: Route) -> list[tuple[str, str]]:
        identity, access = caller.identity, caller.access
        listed = connection_options(scope["headers"])
        headers = []
        for key, value in scope["headers"]:
            if (
                key in HOP_BY_HOP
                or key in listed
                or names_a_user(key, self._ingress_key)
                or key.startswith(b"sec-websocket")
            ):
                continue
            headers.append((key.decode("latin-1"), value.decode("latin-1")))
        host = header(scope, b"host")
        client = scope.get("client")
        headers += [
            ("Host", host),
            ("X-Forwarded-Host", host),
            ("X-Forwarded-Proto", "https" if scope.get("scheme") in ("https", "wss") else "http"),
            ("X-Forwarded-For", client[0] if client else ""),
            ("X-Cgu-User", identity.name),
            ("X-Cgu-Display-Name", quote(identity.display_name)),
            ("X-Cgu-Access", access.level),
            # Bearer tokens are not sent by browsers on their own, so such
            # requests need no XSRF check in the notebook server.
            ("X-Cgu-Via", "token" if identity.via == "token" else "session"),
            ("X-Cgu-Proxy-Secret", route.secret),
        ]
        if self.ingress_header:  # only ever the identity the proxy authenticated
            headers.append((self.ingress_header, identity.name))
        if access.scope:
            headers.append(("X-Cgu-Scope", quote(json.dumps(list(access.scope)))))
        if access.level == "visit":  # the one published app this request is under
            headers.append(("X-Cgu-App", quote(access.apps[0])))
        kept = "" if b"cookie" in listed else without_platform_cookies(header(scope, b"cookie"))
        if kept:
            headers.append(("Cookie", kept))
        return headers

    async def _forward(self, scope, receive, send, route: Route, caller: Caller) -> None:
        client, base = self.upstreams.client(route.target)
        url = URL(base + upstream_path(scope, route.server_path), encoded=True)
        headers = self._upstream_headers(scope, caller, route)
        length = header(scope, b"content-length")
        if length:
            headers.append(("Content-Length", length))
        body = await request_body(receive) if scope["method"] not in ("GET", "HEAD") else None
        try:
            async with client.request(
                scope["method"], url, headers=headers, data=body, allow_redirects=False
            ) as upstream:
                dropped = RESPONSE_DROP | connection_options(upstream.raw_headers)
                response_headers = [
                    (k.lower(), v)
                    for k, v in upstream.raw_headers
                    if k.lower() not in dropped
                    and not (k.lower() == b"set-cookie" and v.lstrip().startswith(b"cgu-"))
                ]
                await send(
                    {
                        "type": "http.response.start",
                        "status": upstream.status,
                        "headers": response_headers,
                    }
                )
                if upstream.content_length is not None and upstream.content_length <= SMALL_BODY:
                    await send({"type": "http.response.body", "body": await upstream.read()})
                    return
                async for chunk in upstream.content.iter_any():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
        # ClientPayloadError: the server ended its answer early (it was stopped, or a
        # client of its own went away); the caller's connection is then cut, not completed,
        # so a download cannot look whole when it is not.
        except (
            aiohttp.ClientConnectionError,
            aiohttp.ClientPayloadError,
            asyncio.TimeoutError,
        ) as error:
            log.warning("notebook %s/%s did not answer: %s", route.owner, route.name, error)
            with contextlib.suppress(Exception):
                if wants_page(scope):  # a browser gets the start page, which says what happened
                    await redirect(send, self._start_page(route, original(scope)))
                    return
                await send_json(
                    send,
                    502,
                    f"notebook '{route.name}' is not answering; "
                    "try again in a moment or restart it",
                    "not_answering",
                )

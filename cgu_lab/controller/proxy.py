"""The reverse proxy in front of every notebook: /notebook/<owner>/<name>/...

Each request is authenticated (session cookie or bearer token), authorised
(the owner; later issues add shares), stripped of the platform's credentials
and of any identity headers the client tried to send, and forwarded to the
notebook server with the identity the proxy vouches for plus the notebook's
secret. Websockets take the same path, with an Origin check against
cross-site websocket hijacking.

Pages and notebooks share one origin, so notebook responses get headers that
keep a notebook's own JavaScript away from the controller: a CSP limiting
fetches, forms and frames to the notebook's own prefix, and an opener policy
that severs windows it opens to the controller's pages (which are
`Cross-Origin-Opener-Policy: same-origin` and refuse framing).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field
from urllib.parse import quote

import aiohttp
from yarl import URL

from ..core.lifecycle import State
from ..core.sharing import OWNER, Access
from .auth import SESSION_COOKIE, Identity
from .notebooks import Route

log = logging.getLogger("cgu_lab.proxy")

PREFIX = "/notebook/"
AUTO_START = "/notebook/auto-start/"
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
RESPONSE_DROP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"transfer-encoding",
        b"trailer",
        b"upgrade",
        b"service-worker-allowed",
        b"cross-origin-opener-policy",
    }
)
SMALL_BODY = 256 * 1024
REVALIDATE_SECONDS = 5.0


def parse_path(path: str) -> tuple[str, str, str] | None:
    """Split /notebook/<owner>/<name><rest> into its parts; rest is "" or starts with "/"."""
    if not path.startswith(PREFIX):
        return None
    parts = path[len(PREFIX) :].split("/", 2)
    if len(parts) < 2 or not parts[0] or not parts[1]:
        return None
    rest = "/" + parts[2] if len(parts) == 3 else ""
    return parts[0], parts[1], rest


def session_cookie(cookie_header: str) -> tuple[str | None, str]:
    """The platform session from a Cookie header, and the header without it."""
    value = None
    kept = []
    for part in cookie_header.split(";"):
        name, _, rest = part.strip().partition("=")
        if name == SESSION_COOKIE:
            value = rest
        elif name:
            kept.append(part.strip())
    return value, "; ".join(kept)


def origin_matches(origin: str, host: str) -> bool:
    """True when a browser's Origin is this very site (or absent, as from scripts)."""
    if not origin:
        return True
    try:
        url = URL(origin)
    except ValueError:
        return False
    if url.host is None:
        return False
    host = host.lower()
    return host in ((url.authority or "").lower(), (url.host_port_subcomponent or "").lower())


def _header(scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return ""


@dataclass(eq=False)
class Tunnel:
    """An open websocket through the proxy, closed when its user's access ends."""

    notebook_id: int
    identity: Identity
    access: Access
    revoked: asyncio.Event = field(default_factory=asyncio.Event)


class NotebookProxy:
    def __init__(self, platform) -> None:
        self.platform = platform
        self.client: aiohttp.ClientSession | None = None
        self._csp: dict[tuple[str, str, str], bytes] = {}
        self._tunnels: dict[int, set[Tunnel]] = {}
        self._background: set[asyncio.Task] = set()

    async def open(self) -> None:
        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=60, enable_cleanup_closed=True)
        self.client = aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Content-Type"),
        )
        self.platform.shares.on_change(self._shares_changed)
        self._spawn(self._watch_shares())

    def _spawn(self, work) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _shares_changed(self, notebook_id: int) -> None:
        self._spawn(self.revalidate(notebook_id))

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        if self.client:
            await self.client.close()

    # -- shared steps ---------------------------------------------------------

    async def _who(self, scope) -> tuple[Identity | None, str]:
        session, kept_cookies = session_cookie(_header(scope, b"cookie"))
        authorization = _header(scope, b"authorization") or None
        if authorization and not authorization.lower().startswith(("bearer ", "token ")):
            authorization = None
        identity = await self.platform.auth.identify(session, authorization)
        return identity, kept_cookies

    async def _access(self, identity: Identity, route: Route) -> Access | None:
        """What the caller may do in this notebook: the owner's access, a share's, or none."""
        if identity.via == "notebook":
            return OWNER if identity.notebook_id == route.notebook_id else None
        if identity.user_id == route.owner_id:
            return OWNER
        principal = await self.platform.auth.principal(identity)
        return await self.platform.shares.access(principal, route.notebook_id)

    def _upstream_headers(
        self, scope, identity: Identity, access: Access, route: Route, cookies: str
    ) -> list[tuple[str, str]]:
        headers = []
        for key, value in scope["headers"]:
            if key in HOP_BY_HOP or key.startswith(b"x-cgu-") or key.startswith(b"sec-websocket"):
                continue
            headers.append((key.decode("latin-1"), value.decode("latin-1")))
        host = _header(scope, b"host")
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
            ("X-Cgu-Via", "token" if identity.via in ("token", "notebook") else "session"),
            ("X-Cgu-Proxy-Secret", route.secret),
        ]
        if access.scope:
            headers.append(("X-Cgu-Scope", quote(json.dumps(list(access.scope)))))
        if cookies:
            headers.append(("Cookie", cookies))
        return headers

    def _isolation(self, scope, route: Route) -> bytes:
        host = _header(scope, b"host")
        secure = scope.get("scheme") in ("https", "wss")
        key = (host, route.owner, route.name)
        csp = self._csp.get(key)
        if csp is None:
            prefix = f"{host}/notebook/{quote(route.owner)}/{quote(route.name)}/"
            http, ws = ("https", "wss") if secure else ("http", "ws")
            own = f"{http}://{prefix} {ws}://{prefix}"
            csp = (
                f"connect-src {own} data: blob:; form-action {http}://{prefix}; "
                f"frame-src {http}://{prefix} data: blob:; worker-src {http}://{prefix} blob:"
            ).encode()
            self._csp[key] = csp
        return csp

    async def _send_json(self, send, status: int, message: str, extra: dict | None = None) -> None:
        body = json.dumps({"message": message, **(extra or {})}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _redirect(self, send, location: str) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", location.encode()), (b"content-length", b"0")],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    @staticmethod
    def _wants_page(scope) -> bool:
        return scope["method"] == "GET" and "text/html" in _header(scope, b"accept")

    # -- HTTP -------------------------------------------------------------------

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "websocket":
            await self.websocket(scope, receive, send)
        else:
            await self.http(scope, receive, send)

    def _original(self, scope) -> str:
        raw = scope.get("raw_path") or scope["path"].encode()
        query = scope.get("query_string") or b""
        return raw.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")

    async def http(self, scope, receive, send) -> None:
        parsed = parse_path(scope["path"])
        if parsed is None:
            await self._send_json(send, 404, "no notebook at this address")
            return
        owner, name, rest = parsed
        if not rest:
            await self._redirect(send, f"{PREFIX}{quote(owner)}/{quote(name)}/")
            return
        identity, cookies = await self._who(scope)
        if identity is None:
            if self._wants_page(scope):
                await self._redirect(send, "/login?next=" + quote(self._original(scope), safe=""))
            else:
                await self._send_json(send, 401, "log in first (or send a valid API token)")
            return
        route = await self.platform.notebooks.route(owner, name)
        access = await self._access(identity, route) if route is not None else None
        if route is None or access is None:
            await self._send_json(send, 404, f"{owner} has no notebook '{name}' that you may open")
            return
        if route.state is not State.RUNNING or route.target is None:
            if self._wants_page(scope):
                target = f"{AUTO_START}{quote(owner)}/{quote(name)}?next=" + quote(
                    self._original(scope), safe=""
                )
                await self._redirect(send, target)
            else:
                await self._send_json(
                    send,
                    503,
                    f"notebook '{name}' is {route.state.value}; start it first",
                    {"state": route.state.value},
                )
            return
        await self._forward(scope, receive, send, route, identity, access, cookies)

    async def _body(self, scope, receive):
        """The request body: bytes when small and complete, else a stream."""
        message = await receive()
        first = message.get("body", b"")
        if not message.get("more_body"):
            return first

        async def stream():
            yield first
            more = True
            while more:
                chunk = await receive()
                more = chunk.get("more_body", False)
                yield chunk.get("body", b"")

        return stream()

    async def _forward(
        self, scope, receive, send, route: Route, identity: Identity, access: str, cookies: str
    ) -> None:
        assert self.client is not None
        url = URL(route.target + self._original(scope), encoded=True)
        headers = self._upstream_headers(scope, identity, access, route, cookies)
        length = _header(scope, b"content-length")
        if length:
            headers.append(("Content-Length", length))
        body = await self._body(scope, receive) if scope["method"] not in ("GET", "HEAD") else None
        try:
            async with self.client.request(
                scope["method"], url, headers=headers, data=body, allow_redirects=False
            ) as upstream:
                response_headers = [
                    (k.lower(), v)
                    for k, v in upstream.raw_headers
                    if k.lower() not in RESPONSE_DROP
                    and not (k.lower() == b"set-cookie" and v.startswith(SESSION_COOKIE.encode()))
                ]
                response_headers.append((b"content-security-policy", self._isolation(scope, route)))
                response_headers.append((b"cross-origin-opener-policy", b"unsafe-none"))
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
        except (aiohttp.ClientConnectionError, asyncio.TimeoutError) as error:
            log.warning("notebook %s/%s did not answer: %s", route.owner, route.name, error)
            with contextlib.suppress(Exception):
                await self._send_json(
                    send,
                    502,
                    f"notebook '{route.name}' is not answering; "
                    "try again in a moment or restart it",
                )

    # -- websockets ---------------------------------------------------------------

    async def websocket(self, scope, receive, send) -> None:
        connect = await receive()
        if connect["type"] != "websocket.connect":
            return
        parsed = parse_path(scope["path"])
        identity, cookies = await self._who(scope)
        route = await self.platform.notebooks.route(parsed[0], parsed[1]) if parsed else None
        access = await self._access(identity, route) if identity and route else None
        same_origin = origin_matches(_header(scope, b"origin"), _header(scope, b"host"))
        if (
            parsed is None
            or identity is None
            or route is None
            or access is None
            or not same_origin
            or route.state is not State.RUNNING
            or route.target is None
        ):
            await send({"type": "websocket.close", "code": 1008})
            return
        assert self.client is not None
        target = URL(route.target.replace("http", "ws", 1) + self._original(scope), encoded=True)
        protocols = [
            p.strip() for p in _header(scope, b"sec-websocket-protocol").split(",") if p.strip()
        ]
        try:
            upstream = await self.client.ws_connect(
                target,
                headers=self._upstream_headers(scope, identity, access, route, cookies),
                protocols=protocols,
                max_msg_size=0,
                autoclose=False,
            )
        except (aiohttp.ClientError, asyncio.TimeoutError) as error:
            log.warning("websocket to %s/%s refused: %s", route.owner, route.name, error)
            await send({"type": "websocket.close", "code": 1011})
            return
        await send({"type": "websocket.accept", "subprotocol": upstream.protocol})
        tunnel = Tunnel(route.notebook_id, identity, access)
        self._tunnels.setdefault(route.notebook_id, set()).add(tunnel)
        try:
            await self._pump(receive, send, upstream, tunnel)
        finally:
            self._tunnels.get(route.notebook_id, set()).discard(tunnel)

    async def revalidate(self, notebook_id: int) -> None:
        """Close shared users' websockets whose access was revoked, expired or narrowed."""
        tunnels = [t for t in self._tunnels.get(notebook_id, ()) if t.access is not OWNER]
        if not tunnels:
            return
        route = next(
            (r for r in self.platform.notebooks.routes.values() if r.notebook_id == notebook_id),
            None,
        )
        for tunnel in tunnels:
            now = await self._access(tunnel.identity, route) if route is not None else None
            if now is None or not now.at_least(tunnel.access):
                tunnel.revoked.set()

    async def _watch_shares(self) -> None:
        """Expiry and group changes have no event: re-check open shared websockets regularly."""
        while True:
            await asyncio.sleep(REVALIDATE_SECONDS)
            for notebook_id in [n for n, tunnels in self._tunnels.items() if tunnels]:
                try:
                    await self.revalidate(notebook_id)
                except Exception:  # one broken check must not stop the watch
                    log.exception("re-checking websockets of notebook %s failed", notebook_id)

    async def _pump(
        self, receive, send, upstream: aiohttp.ClientWebSocketResponse, tunnel: Tunnel
    ) -> None:
        async def client_to_upstream() -> None:
            while True:
                message = await receive()
                if message["type"] == "websocket.disconnect":
                    await upstream.close(code=message.get("code", 1000))
                    return
                if message.get("bytes") is not None:
                    await upstream.send_bytes(message["bytes"])
                elif message.get("text") is not None:
                    await upstream.send_str(message["text"])

        async def upstream_to_client() -> None:
            async for message in upstream:
                if message.type == aiohttp.WSMsgType.TEXT:
                    await send({"type": "websocket.send", "text": message.data})
                elif message.type == aiohttp.WSMsgType.BINARY:
                    await send({"type": "websocket.send", "bytes": message.data})
                elif message.type in (
                    aiohttp.WSMsgType.CLOSE,
                    aiohttp.WSMsgType.CLOSING,
                    aiohttp.WSMsgType.CLOSED,
                    aiohttp.WSMsgType.ERROR,
                ):
                    break
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": upstream.close_code or 1000})

        async def revoked() -> None:
            await tunnel.revoked.wait()
            with contextlib.suppress(Exception):
                await send({"type": "websocket.close", "code": 1008, "reason": "access revoked"})

        tasks = [
            asyncio.create_task(client_to_upstream()),
            asyncio.create_task(upstream_to_client()),
            asyncio.create_task(revoked()),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await upstream.close()

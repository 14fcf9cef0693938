"""Websockets through the notebook proxy: opening one, the pump that moves its messages,
and closing it when its user's access ends.

A browser's websocket must come from the notebook's own origin (its Origin is
checked exactly); a script's, with an API token, sends no Origin. Each tunnel
remembers how its user got in (the notebook origin's cookie or an API token)
and with what access, so the proxy closes it (code 1008) within seconds of a
logout, a password change, or a share being revoked, expired or narrowed: at
once when a share changes, and every REVALIDATE_SECONDS for what sends no event
(logouts, expiry, group changes). A public demo's anonymous visitor has neither: their
tunnel lasts while the demo stays public.

`WebsocketTunnels` is the NotebookProxy's websocket half, as `LoginHandOff`
(proxy_login.py) is its log-in half: it uses the proxy's caller checks and
upstream headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

import aiohttp
from yarl import URL

from ...core.collaboration import document_file_id
from ...core.lifecycle import State
from ...core.origins import notebook_slug
from ...core.sharing import Access
from ..notebooks.routes import Route
from .replies import client_address, exact_origin, header, own_origin, parse_path, upstream_path

log = logging.getLogger("cgu_lab.proxy")

REVALIDATE_SECONDS = 5.0


@dataclass(eq=False)
class Tunnel:
    notebook_id: int
    access: Access
    cookie: object | None  # the OriginCookie of a browser
    bearer: str  # or the API token of a script
    revoked: asyncio.Event = field(default_factory=asyncio.Event)
    user: str = ""  # who opened it (the viewer count counts people, not their tabs)
    document_room: bool = False  # a collaboration room of a document (a live follower)
    public_app: str = ""  # let in by this public demo alone (core/publishing.py)


async def pump(receive, send, upstream: aiohttp.ClientWebSocketResponse, tunnel: Tunnel) -> None:
    """Move messages both ways until either side closes or the tunnel is revoked."""

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


def _document_room(rest: str) -> bool:
    """Whether a notebook path (after /notebook/<owner>/<name>) is the websocket of a
    document's collaboration room (`api/collaboration/room/json:notebook:<id>`)."""
    prefix = "/api/collaboration/room/"
    return rest.startswith(prefix) and document_file_id(rest[len(prefix) :]) is not None


class WebsocketTunnels:
    """Websockets of the NotebookProxy; `_tunnels` (notebook id -> open tunnels) is its."""

    async def websocket(self, scope, receive, send) -> None:
        connect = await receive()
        if connect["type"] != "websocket.connect":
            return
        parsed = parse_path(scope["path"])
        route = await self._route(parsed[0], parsed[1]) if parsed else None
        caller = None
        if route is not None:
            on_origin = self.on_notebook_origin(scope)
            slug = self.plan.slug_of_host(header(scope, b"host"))
            origin = header(scope, b"origin")
            if on_origin and (slug is None or slug == notebook_slug(route.owner, route.name)):
                # A browser: its Origin must be this very notebook's.
                if exact_origin(origin, own_origin(scope)):
                    identity, caller = await self._caller(scope, route)
                    if caller is None and parsed is not None:
                        caller = await self._public_socket(scope, route, parsed[2], identity)
            elif not origin and header(scope, b"authorization"):
                _, caller = await self._caller(scope, route)  # a script with an API token
        if caller is not None and parsed is not None:
            caller = self._demo_limit(scope, caller, parsed[2])  # a demo's visitor: its app
        if (
            caller is None
            or route is None
            or route.state is not State.RUNNING
            or route.target is None
        ):
            await send({"type": "websocket.close", "code": 1008})
            return
        client, base = self.upstreams.client(route.target)
        path = upstream_path(scope, route.server_path)
        target = URL(base.replace("http", "ws", 1) + path, encoded=True)
        protocols = [
            p.strip() for p in header(scope, b"sec-websocket-protocol").split(",") if p.strip()
        ]
        try:
            upstream = await client.ws_connect(
                target,
                headers=self._upstream_headers(scope, caller, route),
                protocols=protocols,
                max_msg_size=0,
                autoclose=False,
            )
        except (aiohttp.ClientError, asyncio.TimeoutError) as error:
            # A refusal by the notebook server (403: read-only viewers may not subscribe
            # to events or run kernels) is expected; anything else is worth a warning.
            level = logging.DEBUG if getattr(error, "status", None) == 403 else logging.WARNING
            log.log(level, "websocket to %s/%s refused: %s", route.owner, route.name, error)
            await send({"type": "websocket.close", "code": 1011})
            return
        await send({"type": "websocket.accept", "subprotocol": upstream.protocol})
        await self._visited(scope, route, caller)
        bearer = header(scope, b"authorization").partition(" ")[2].strip()
        tunnel = Tunnel(
            route.notebook_id,
            caller.access,
            caller.cookie,
            bearer,
            user=caller.identity.name,
            document_room=_document_room(parsed[2] if parsed else ""),
            public_app=caller.access.apps[0] if caller.public else "",
        )
        self._tunnels.setdefault(route.notebook_id, set()).add(tunnel)
        try:
            await pump(receive, send, upstream, tunnel)
        finally:
            self._tunnels.get(route.notebook_id, set()).discard(tunnel)

    async def _public_socket(self, scope, route: Route, rest: str, identity):
        """A browser's websocket under a public demo, from a caller with no access of
        their own (as `_public_caller` says), paced as its pages are; counted only with
        the visitor cookie its page gave (a websocket cannot set one)."""
        caller = await self._public_caller(scope, route, rest, identity)
        if caller is None or self.platform.publishing.admit(client_address(scope)):
            return None
        if caller.renew:
            caller.renew, caller.visitor = [], ""
        return caller

    def viewers(self, notebook_id: int) -> int:
        """How many people other than the owner follow one of the notebook's documents
        live now (a broadcast's audience, as the teacher's Live tab shows it): counted
        from the open tunnels, so it needs no call to the notebook server and works
        the same for every backend."""
        return len(
            {
                tunnel.user
                for tunnel in self._tunnels.get(notebook_id, ())
                if tunnel.document_room and tunnel.access.level != "owner"
            }
        )

    async def revalidate(self, notebook_id: int) -> None:
        """Close websockets whose user logged out, or whose access was revoked or narrowed."""
        tunnels = list(self._tunnels.get(notebook_id, ()))
        if not tunnels:
            return
        route = self.platform.notebooks.routes.by_id(notebook_id)
        for tunnel in tunnels:
            if not await self._recheck(tunnel, route):
                tunnel.revoked.set()

    async def _watch(self) -> None:
        """Logouts, expiry and group changes have no event here: re-check open websockets."""
        while True:
            await self.platform.clock.sleep(REVALIDATE_SECONDS)
            for notebook_id in [n for n, tunnels in self._tunnels.items() if tunnels]:
                try:
                    await self.revalidate(notebook_id)
                except Exception:  # one broken check must not stop the watch
                    log.exception("re-checking websockets of notebook %s failed", notebook_id)

    async def _recheck(self, tunnel: Tunnel, route: Route | None) -> bool:
        """Whether an open websocket's user still has (at least) the access it opened with."""
        if route is None:
            return False
        if tunnel.public_app:
            public = await self.platform.publishing.public_apps(tunnel.notebook_id)
            if tunnel.public_app in public:
                return True
            if tunnel.cookie is None and not tunnel.bearer:
                return False  # an anonymous visitor: the demo is no longer public
        if tunnel.cookie is not None:
            identity = await self.origin_auth.identify(tunnel.cookie)
        else:
            identity = await self.platform.auth.from_bearer(tunnel.bearer)
        if identity is None:
            return False
        now = await self._access(identity, route)
        return now is not None and now.at_least(tunnel.access)

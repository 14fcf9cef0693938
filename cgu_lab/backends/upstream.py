"""HTTP clients to notebook servers, by the address a backend gives (`Backend.endpoint`).

An address is a base URL (`http://10.0.0.7:8888`, a pod; `http://127.0.0.1:PORT`, a VM's
console) or `unix:<path>`, the socket a local notebook server listens on from inside its
own network namespace (local_launch.outbound says why it has no port the host can reach).
aiohttp pools connections per client, and a Unix socket needs a connector of its own, so
there is one pooled client for every TCP address and one per socket; the proxy and the
local backend's liveness check both ask here, so the two never disagree on where a
notebook is.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from typing import Any

import aiohttp

UNIX = "unix:"
# The Host of requests sent over a socket when the caller sets none (the proxy always does).
SOCKET_HOST = "http://notebook"


def unix_path(address: str) -> str | None:
    """The socket's path of a `unix:` address, else None."""
    return address[len(UNIX) :] if address.startswith(UNIX) else None


class Upstreams:
    """Clients to notebook servers: `client(address)` gives (session, base URL to prefix).

    `options` makes aiohttp.ClientSession's keyword arguments (timeouts, cookie jar...),
    the same for every client, when one is made (a cookie jar needs the running loop);
    connections are pooled without a limit. A socket's
    client is closed once its file is gone (the notebook stopped), when the next new
    socket's client is made, so a long-lived proxy keeps no client per past notebook.
    """

    def __init__(self, options: Callable[[], dict[str, Any]] = dict, keepalive: float = 60) -> None:
        self.options = options
        self.keepalive = keepalive
        self._tcp: aiohttp.ClientSession | None = None
        self._sockets: dict[str, aiohttp.ClientSession] = {}
        self._closing: set[asyncio.Task] = set()

    def client(self, address: str) -> tuple[aiohttp.ClientSession, str]:
        path = unix_path(address)
        if path is None:
            if self._tcp is None or self._tcp.closed:
                self._tcp = self._session(
                    lambda: aiohttp.TCPConnector(
                        limit=0, keepalive_timeout=self.keepalive, enable_cleanup_closed=True
                    )
                )
            return self._tcp, address.rstrip("/")
        session = self._sockets.get(path)
        if session is None or session.closed:
            self._forget_gone()
            session = self._session(
                lambda: aiohttp.UnixConnector(path, limit=0, keepalive_timeout=self.keepalive)
            )
            self._sockets[path] = session
        return session, SOCKET_HOST

    def _session(self, connector: Callable[[], aiohttp.BaseConnector]) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=connector(), **self.options())

    def _forget_gone(self) -> None:
        for path in [p for p in self._sockets if not os.path.exists(p)]:
            task = asyncio.ensure_future(self._sockets.pop(path).close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        sessions = [*self._sockets.values(), *([self._tcp] if self._tcp else [])]
        self._sockets.clear()
        self._tcp = None
        for session in sessions:
            with contextlib.suppress(Exception):
                await session.close()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

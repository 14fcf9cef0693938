"""Reading running notebooks from the controller: their kernels, terminals and resources.

The culler and the monitor ask each notebook's own server, as its owner and
with its proxy secret, and add `no_track_activity` so that looking at a
notebook never counts as using it. The server is reached where the proxy reaches
it (backends/upstream.py: a port, or a local server's Unix socket). The one thing
the controller removes there the same way is a page an unpublished demo showed
(`delete`, publishing/service.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from ...backends.upstream import Upstreams
from .routes import Route, base_path

CONCURRENCY = 16
TIMEOUT = aiohttp.ClientTimeout(total=5)


class NotebookReader:
    def __init__(self) -> None:
        self._upstreams: Upstreams | None = None
        self._slots = asyncio.Semaphore(CONCURRENCY)

    async def open(self) -> None:
        self._upstreams = Upstreams(lambda: {"timeout": TIMEOUT})

    async def close(self) -> None:
        if self._upstreams:
            await self._upstreams.close()

    async def get(self, route: Route, path: str) -> Any | None:
        """The JSON at `path` below the notebook's base URL, or None when it cannot be read."""
        return await self._send("GET", route, path)

    async def delete(self, route: Route, path: str) -> Any | None:
        """DELETE `path` below the notebook's base URL: its JSON answer, or None when the
        server refused it or could not be reached."""
        return await self._send("DELETE", route, path)

    async def _send(self, method: str, route: Route, path: str) -> Any | None:
        if self._upstreams is None or route.target is None:
            return None
        client, server = self._upstreams.client(route.target)
        separator = "&" if "?" in path else "?"
        base = f"{server}{base_path(route.owner, route.name)}"
        url = f"{base}{path}{separator}no_track_activity=1"
        headers = {
            "X-Cgu-User": route.owner,
            "X-Cgu-Access": "owner",
            "X-Cgu-Via": "token",
            "X-Cgu-Proxy-Secret": route.secret,
        }
        async with self._slots:
            try:
                async with client.request(method, url, headers=headers) as response:
                    if response.status != 200:
                        return None
                    return json.loads(await response.read())
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError):
                return None

"""An open websocket through the notebook proxy, and the pump that moves its messages.

Each tunnel remembers how its user got in (the notebook origin's cookie or an
API token) and with what access, so the proxy can close it within seconds of
a logout, a password change, or a share being revoked, expired or narrowed.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

import aiohttp

from ..core.sharing import Access


@dataclass(eq=False)
class Tunnel:
    notebook_id: int
    access: Access
    cookie: object | None  # the OriginCookie of a browser
    bearer: str  # or the API token of a script
    revoked: asyncio.Event = field(default_factory=asyncio.Event)


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

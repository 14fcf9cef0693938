"""Whether an address accepts TCP connections yet.

A notebook's pod is Ready when the kubelet reaches it, but the address the proxy uses
(its Service) answers only once kube-proxy has programmed the new endpoint. A student
sent there in between got "not answering" (met in CI on a busy node), so a start waits
for the address itself. Bounded: a controller that cannot reach notebooks at all is a
deployment problem the proxy reports on each request, not a failed start."""

from __future__ import annotations

import asyncio
import contextlib
import time
from urllib.parse import urlsplit


async def takes_connections(url: str, seconds: float = 30.0, every: float = 0.5) -> bool:
    """Try to connect to the URL's host and port until it works or `seconds` pass."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    deadline = time.monotonic() + seconds
    while True:
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(parts.hostname, port), timeout=min(2.0, seconds)
            )
        except (OSError, asyncio.TimeoutError):
            if time.monotonic() + every >= deadline:
                return False
            await asyncio.sleep(every)
            continue
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return True

"""Server-Sent Events of a long operation's progress, one way for every stream.

Notebook starts, stops and resizes and environment builds publish to the same
`ProgressBroker`; a client that connects while nothing is under way gets one
final "status" event saying where things stand, so it never waits on silence.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Hashable

from fastapi import Request
from fastapi.responses import StreamingResponse

from ..progress import ProgressBroker

# The route decorator's description of the answer, for the OpenAPI document.
SSE_RESPONSES = {200: {"content": {"text/event-stream": {}}}}


def progress_stream(
    request: Request, broker: ProgressBroker, key: Hashable, status: dict
) -> StreamingResponse:
    """Follow `key`'s events; `status` (state, message, ok...) when none is under way."""

    async def stream() -> AsyncIterator[str]:
        last = broker.last(key)
        if last is None or last.done:
            payload = {"operation": "status", "percent": 100, "done": True, **status}
            yield f"data: {json.dumps(payload)}\n\n"
            return
        async for event in broker.follow(key):
            if await request.is_disconnected():
                return
            yield (
                ": keep-alive\n\n" if event is None else f"data: {json.dumps(event.as_dict())}\n\n"
            )

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )

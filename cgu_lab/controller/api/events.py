"""Server-Sent Events of long operations, one way for every stream.

Notebook starts, stops and resizes and environment builds publish to the same
`ProgressBroker`; a client that connects while nothing is under way gets one
final "status" event saying where things stand, so it never waits on silence.
The notebook list follows many notebooks at once through `notebook_changes`, and
so do the staff pages (Users, an account, a course's Live tab), each with its own
answer to "may this caller hear of that notebook?" (`controller.notebook_watch`).
sse-starlette frames the events, sends keep-alive pings and notices when the
client has gone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Hashable
from typing import Any

from sse_starlette import EventSourceResponse, JSONServerSentEvent, ServerSentEvent

from ..notebooks.watch import Followed
from ..progress import ProgressBroker, ProgressEvent

# The route decorator's description of the answer, for the OpenAPI document.
SSE_RESPONSES = {200: {"content": {"text/event-stream": {}}}}

# How long a browser waits before it reconnects to a stream that ended.
RETRY_MS = 3000
# A list stream ends after this long; the browser reconnects, and its session is
# checked again (a logged-out user or a demoted admin stops being told).
LIST_STREAM_SECONDS = 600.0


def progress_stream(broker: ProgressBroker, key: Hashable, status: dict) -> EventSourceResponse:
    """Follow `key`'s events; `status` (state, message, ok...) when none is under way."""

    async def stream() -> AsyncIterator[ServerSentEvent]:
        last = broker.last(key)
        if last is None or last.done:
            yield JSONServerSentEvent(
                {"operation": "status", "percent": 100, "done": True, **status}
            )
            return
        async for event in broker.follow(key):
            # The broker's keep-alives (None) are left out: sse-starlette pings on its own.
            if event is not None:
                yield JSONServerSentEvent(event.as_dict())

    return EventSourceResponse(stream())


def notebook_changes(broker: ProgressBroker, followed: Followed) -> EventSourceResponse:
    """One event each time a followed notebook changes state or ends an operation.

    Notebooks are the broker's integer keys (environments and deployments use
    tuples). `followed` is asked once per notebook: owners do not change.
    """

    async def stream() -> AsyncIterator[ServerSentEvent]:
        names: dict[int, tuple[str, str] | None] = {}
        states: dict[int, str] = {}
        # Not the platform's clock: this bounds one connection's real lifetime, and the
        # wait below (asyncio.wait_for) runs on the event loop's real clock as well.
        deadline = time.monotonic() + LIST_STREAM_SECONDS
        with broker.watch() as changes:
            # Sent once subscribed: from here on no change is missed.
            yield ServerSentEvent(retry=RETRY_MS)
            while (left := deadline - time.monotonic()) > 0:
                try:
                    key, event = await asyncio.wait_for(changes.get(), left)
                except asyncio.TimeoutError:
                    return
                if not isinstance(key, int):
                    continue
                if key not in names:
                    names[key] = await followed(key)
                who = names[key]
                if who is None or (states.get(key) == event.state and not event.done):
                    continue
                states[key] = event.state
                yield JSONServerSentEvent(change(*who, event))

    return EventSourceResponse(stream())


def json_stream(
    items: AsyncIterator[Any], encode: Callable[[Any], Any] = lambda item: item
) -> EventSourceResponse:
    """Each item, made JSON-ready by `encode`, as one event, for at most
    LIST_STREAM_SECONDS (then the browser reconnects and its session and rights are
    checked again)."""

    async def stream() -> AsyncIterator[ServerSentEvent]:
        # The connection's real lifetime, as for notebook_changes (not the platform's clock).
        deadline = time.monotonic() + LIST_STREAM_SECONDS
        yield ServerSentEvent(retry=RETRY_MS)
        try:
            while (left := deadline - time.monotonic()) > 0:
                try:
                    item = await asyncio.wait_for(anext(items), left)
                except (asyncio.TimeoutError, StopAsyncIteration):
                    return
                yield JSONServerSentEvent(encode(item))
        finally:
            await items.aclose()

    return EventSourceResponse(stream())


def change(owner: str, name: str, event: ProgressEvent) -> dict:
    """What the list needs to know: whose notebook, its new state and why."""
    return {
        "owner": owner,
        "name": name,
        "operation": event.operation,
        "state": event.state,
        "message": event.message,
        "done": event.done,
        "ok": event.ok,
    }

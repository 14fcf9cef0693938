"""Progress of long operations (start, stop, resize, deployments), streamed to pages.

Each subject (a notebook id, or a key such as ("deployment", 7)) has one
channel holding the events of its current operation; a page that subscribes
late first receives what it missed, then waits for more. A page that follows
many subjects at once (the notebook list) watches every event instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable, Iterator
from dataclasses import asdict, dataclass, replace

from .clock import Clock


@dataclass(frozen=True)
class ProgressEvent:
    operation: str
    percent: int
    message: str
    state: str
    done: bool = False
    ok: bool | None = None
    url: str | None = None
    # When it happened (seconds since the epoch): stamped by the broker's clock on publishing.
    at: float | None = None

    def as_dict(self) -> dict:
        """The event as the JSON of one Server-Sent Event (api/events.py)."""
        return asdict(self)


class _Channel:
    def __init__(self) -> None:
        self.events: list[ProgressEvent] = []
        self.changed = asyncio.Event()

    def publish(self, event: ProgressEvent) -> None:
        self.events.append(event)
        changed, self.changed = self.changed, asyncio.Event()
        changed.set()


Change = tuple[Hashable, ProgressEvent]


class ProgressBroker:
    def __init__(self, clock: Clock) -> None:
        """`clock`: stamps each event's `at` as it is published."""
        self.clock = clock
        self._channels: dict[Hashable, _Channel] = {}
        self._watchers: set[asyncio.Queue[Change]] = set()

    def begin(self, key: Hashable, event: ProgressEvent) -> None:
        """Start a new operation: earlier events are dropped, subscribers see the new one."""
        event = self._stamped(event)
        channel = self._channels.setdefault(key, _Channel())
        channel.events = []
        channel.publish(event)
        self._tell_watchers(key, event)

    def publish(self, key: Hashable, event: ProgressEvent) -> None:
        event = self._stamped(event)
        self._channels.setdefault(key, _Channel()).publish(event)
        self._tell_watchers(key, event)

    def _stamped(self, event: ProgressEvent) -> ProgressEvent:
        return event if event.at is not None else replace(event, at=self.clock.now().timestamp())

    def _tell_watchers(self, key: Hashable, event: ProgressEvent) -> None:
        # Unbounded: an operation publishes a handful of events, and a watcher's
        # queue lives only as long as its page's connection.
        for queue in self._watchers:
            queue.put_nowait((key, event))

    @contextlib.contextmanager
    def watch(self) -> Iterator[asyncio.Queue[Change]]:
        """Every subject's events, (key, event), from now until the block ends."""
        queue: asyncio.Queue[Change] = asyncio.Queue()
        self._watchers.add(queue)
        try:
            yield queue
        finally:
            self._watchers.discard(queue)

    def last(self, key: Hashable) -> ProgressEvent | None:
        channel = self._channels.get(key)
        return channel.events[-1] if channel and channel.events else None

    async def follow(
        self, key: Hashable, heartbeat: float = 15.0
    ) -> AsyncIterator[ProgressEvent | None]:
        """Yield the current operation's events until it is done; None is a keep-alive."""
        channel = self._channels.setdefault(key, _Channel())
        sent = 0
        events = channel.events
        while True:
            if channel.events is not events:  # a new operation began
                events, sent = channel.events, 0
            while sent < len(events):
                event = events[sent]
                sent += 1
                yield event
                if event.done:
                    return
            waiter = channel.changed
            try:
                await asyncio.wait_for(waiter.wait(), heartbeat)
            except asyncio.TimeoutError:
                yield None

"""An in-memory copy of the objects the backend follows, kept current by watches.

Each source (pods, events, Notebooks, VirtualMachines, Nodes) is listed once and then
watched from the list's resourceVersion, in a task of its own on the event
loop (the client is asyncio's, so a watch costs a connection, not a thread,
and stopping is cancelling). Every event advances the resourceVersion
(bookmarks included) so a watch that the server ends is resumed where it
stopped; a `410 Gone` (the version was compacted away) means a fresh list.
A change wakes whoever waits on the cache on the event loop, so a start
follows its pod without polling the API server.

Each object is stamped with the monotonic time it was last seen changing, so
a start can ignore events older than itself (events outlive attempts: a
quota refusal from the previous try must not fail this one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kubernetes.aio.client.exceptions import ApiException

log = logging.getLogger("cgu_lab.kubernetes.watch")

Obj = dict[str, Any]
GONE = 410


@dataclass
class Source:
    """One watched collection: how to list it, how to watch it, what to keep of it."""

    name: str
    list: Callable[[], Awaitable[tuple[list[Obj], str]]]
    watch: Callable[[str, int], AsyncIterator[Obj]]
    keep: Callable[[Obj], bool] = field(default=lambda obj: True)
    # Told after each change of this source, on the event loop, with the object that
    # changed (None after a relist: any may have): what must follow it at once rather
    # than when next read (the GPU pool follows Nodes).
    changed: Callable[[Obj | None], None] | None = None


@dataclass
class _Entry:
    obj: Obj
    seen: float  # time.monotonic() when this version arrived


class WatchCache:
    """Objects by source, namespace and name; one task per source writes, the backend reads."""

    def __init__(self, sources: Iterable[Source], watch_timeout: int = 300) -> None:
        self.sources = {source.name: source for source in sources}
        self.watch_timeout = watch_timeout
        self.version = 0  # bumped on every change, read by waiters
        # source -> namespace -> name -> entry: a start's wait reads its own namespace's
        # Events on every change of the cache, so a class's burst must not scan everyone's
        # (fleet_burst found a burst of 100 spending its time in that scan).
        self._objects: dict[str, dict[str, dict[str, _Entry]]] = {name: {} for name in self.sources}
        self._tasks: list[asyncio.Task] = []
        self._synced: dict[str, asyncio.Event] = {name: asyncio.Event() for name in self.sources}
        self._errors: dict[str, str] = {}
        self._changed = asyncio.Event()

    # -- running --------------------------------------------------------------

    async def start(self, timeout: float = 30.0) -> None:
        """Start every watch and return once each source has been listed (or failed)."""
        for source in self.sources.values():
            self._tasks.append(asyncio.create_task(self._run(source), name=f"watch-{source.name}"))
        deadline = time.monotonic() + timeout
        for name, synced in self._synced.items():
            remaining = max(0.0, deadline - time.monotonic())
            try:
                await asyncio.wait_for(synced.wait(), remaining)
            except asyncio.TimeoutError:
                raise TimeoutError(f"listing {name} took more than {timeout:.0f} s") from None

    async def stop(self) -> None:
        """Stop every watch (its connection closes with its task)."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def error(self, name: str) -> str | None:
        """Why a source cannot be listed or watched right now (None when it can)."""
        return self._errors.get(name)

    async def _run(self, source: Source) -> None:
        resource_version = ""
        backoff = 0.5
        while True:
            try:
                if not resource_version:
                    items, resource_version = await source.list()
                    self._replace(source, items)
                began, events = time.monotonic(), 0
                async for event in source.watch(resource_version, self.watch_timeout):
                    resource_version = self._apply(source, event) or resource_version
                    events += 1
                self._errors.pop(source.name, None)
                backoff = 0.5
                if not events and time.monotonic() - began < 1:
                    await asyncio.sleep(1)  # a server ending watches at once: do not spin
            except ApiException as error:
                if error.status == GONE:
                    log.info("watch of %s expired (410 Gone); listing again", source.name)
                    resource_version = ""
                    continue
                resource_version = ""
                backoff = await self._failed(source, f"{error.status} {error.reason}", backoff)
            except Exception as error:  # connection reset, server restarting...
                backoff = await self._failed(source, str(error) or type(error).__name__, backoff)

    async def _failed(self, source: Source, reason: str, backoff: float) -> float:
        self._errors[source.name] = reason
        self._synced[source.name].set()  # waiting longer at start would not help
        log.warning("watching %s failed (%s); retrying in %.1f s", source.name, reason, backoff)
        await asyncio.sleep(backoff)
        return min(backoff * 2, 30.0)

    # -- writing (the watch tasks) -------------------------------------------------

    @staticmethod
    def _key(obj: Obj) -> tuple[str, str]:
        meta = obj.get("metadata", {})
        return meta.get("namespace", ""), meta.get("name", "")

    def _replace(self, source: Source, items: list[Obj]) -> None:
        now = time.monotonic()
        old = self._objects[source.name]
        fresh: dict[str, dict[str, _Entry]] = {}
        for obj in items:
            if not source.keep(obj):
                continue
            namespace, name = self._key(obj)
            previous = old.get(namespace, {}).get(name)
            unchanged = previous is not None and previous.obj.get("metadata", {}).get(
                "resourceVersion"
            ) == obj.get("metadata", {}).get("resourceVersion")
            fresh.setdefault(namespace, {})[name] = previous if unchanged else _Entry(obj, now)
        self._objects[source.name] = fresh
        self._errors.pop(source.name, None)
        self._synced[source.name].set()
        self._notify(source)

    def _apply(self, source: Source, event: Obj) -> str:
        """Apply one watch event; return the resourceVersion it brings."""
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            raise ApiException(status=obj.get("code", 0), reason=obj.get("message", ""))
        version = obj.get("metadata", {}).get("resourceVersion", "")
        if kind == "BOOKMARK":
            return version
        namespace, name = self._key(obj)
        objects = self._objects[source.name]
        if kind == "DELETED" or not source.keep(obj):
            names = objects.get(namespace, {})
            names.pop(name, None)
            if not names:
                objects.pop(namespace, None)
        else:
            objects.setdefault(namespace, {})[name] = _Entry(obj, time.monotonic())
        self._notify(source, obj)
        return version

    def _notify(self, source: Source, obj: Obj | None = None) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()
        if source.changed is not None:
            try:
                source.changed(obj)
            except Exception:  # a follower's bug must not end the watch
                log.exception("following a change of %s failed", source.name)

    # -- reading ------------------------------------------------------------------------

    async def changed(self, since_version: int, timeout: float) -> None:
        """Wait until the cache changes after `since_version`, or `timeout` seconds."""
        if self.version != since_version:
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)

    def get(self, source: str, namespace: str, name: str) -> Obj | None:
        entry = self._objects[source].get(namespace, {}).get(name)
        return entry.obj if entry else None

    def objects(self, source: str, namespace: str | None = None, since: float = 0.0) -> list[Obj]:
        """The source's objects (in one namespace), those seen changing after `since` only."""
        by_namespace = self._objects[source]
        if namespace is None:
            entries = [entry for names in list(by_namespace.values()) for entry in names.values()]
        else:
            entries = list(by_namespace.get(namespace, {}).values())
        return [entry.obj for entry in entries if entry.seen >= since]

    def find(self, source: str, namespace: str, labels: dict[str, str]) -> Iterator[Obj]:
        """Objects in `namespace` carrying all of `labels`."""
        for obj in self.objects(source, namespace):
            found = obj.get("metadata", {}).get("labels") or {}
            if all(found.get(key) == value for key, value in labels.items()):
                yield obj

"""An in-memory copy of the objects the backend follows, kept current by watches.

Each source (pods, events, Notebooks, VirtualMachines) is listed once and then
watched from the list's resourceVersion, in a thread of its own because the
official client's watch blocks. Every event advances the resourceVersion
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
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kubernetes.client.exceptions import ApiException
from kubernetes.watch import Watch

log = logging.getLogger("cgu_lab.kubernetes.watch")

Obj = dict[str, Any]
GONE = 410


@dataclass
class Source:
    """One watched collection: how to list it, how to watch it, what to keep of it."""

    name: str
    list: Callable[[], tuple[list[Obj], str]]
    watch: Callable[[Watch, str, int], Iterable[Obj]]
    keep: Callable[[Obj], bool] = field(default=lambda obj: True)


@dataclass
class _Entry:
    obj: Obj
    seen: float  # time.monotonic() when this version arrived


class WatchCache:
    """Objects by source, namespace and name; threads write, the event loop reads."""

    def __init__(self, sources: Iterable[Source], watch_timeout: int = 300) -> None:
        self.sources = {source.name: source for source in sources}
        self.watch_timeout = watch_timeout
        self.version = 0  # bumped on every change, read by waiters
        self._objects: dict[str, dict[tuple[str, str], _Entry]] = {
            name: {} for name in self.sources
        }
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._watches: dict[str, Watch] = {}
        self._synced: dict[str, threading.Event] = {
            name: threading.Event() for name in self.sources
        }
        self._errors: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed = asyncio.Event()

    # -- running --------------------------------------------------------------

    async def start(self, timeout: float = 30.0) -> None:
        """Start every watch and return once each source has been listed (or failed)."""
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        for source in self.sources.values():
            thread = threading.Thread(
                target=self._run, args=(source,), name=f"watch-{source.name}", daemon=True
            )
            self._threads.append(thread)
            thread.start()
        deadline = time.monotonic() + timeout
        for name, synced in self._synced.items():
            remaining = max(0.0, deadline - time.monotonic())
            if not await asyncio.to_thread(synced.wait, remaining):
                raise TimeoutError(f"listing {name} took more than {timeout:.0f} s")

    def stop(self, grace: float = 2.0) -> None:
        """Stop every watch. The kubernetes client 37 interrupts a watch at once; older
        ones (30 was tried) only when its request ends, so a daemon thread may outlive
        this by up to `watch_timeout` and then exit without touching anything."""
        self._stopping.set()
        for watch in list(self._watches.values()):
            watch.stop()
        deadline = time.monotonic() + grace
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._threads.clear()

    def error(self, name: str) -> str | None:
        """Why a source cannot be listed or watched right now (None when it can)."""
        return self._errors.get(name)

    def _run(self, source: Source) -> None:
        resource_version = ""
        backoff = 0.5
        while not self._stopping.is_set():
            try:
                if not resource_version:
                    items, resource_version = source.list()
                    self._replace(source, items)
                watch = self._watches[source.name] = Watch()
                began, events = time.monotonic(), 0
                for event in source.watch(watch, resource_version, self.watch_timeout):
                    if self._stopping.is_set():
                        return
                    resource_version = self._apply(source, event) or resource_version
                    events += 1
                self._errors.pop(source.name, None)
                backoff = 0.5
                if not events and time.monotonic() - began < 1:
                    self._stopping.wait(1)  # a server ending watches at once: do not spin
            except ApiException as error:
                if self._stopping.is_set():
                    return
                if error.status == GONE:
                    log.info("watch of %s expired (410 Gone); listing again", source.name)
                    resource_version = ""
                    continue
                resource_version = ""
                backoff = self._failed(source, f"{error.status} {error.reason}", backoff)
            except Exception as error:  # connection reset, server restarting...
                if self._stopping.is_set():
                    return
                backoff = self._failed(source, str(error) or type(error).__name__, backoff)

    def _failed(self, source: Source, reason: str, backoff: float) -> float:
        self._errors[source.name] = reason
        self._synced[source.name].set()  # waiting longer at start would not help
        log.warning("watching %s failed (%s); retrying in %.1f s", source.name, reason, backoff)
        self._stopping.wait(backoff)
        return min(backoff * 2, 30.0)

    # -- writing (watch threads) ---------------------------------------------------

    @staticmethod
    def _key(obj: Obj) -> tuple[str, str]:
        meta = obj.get("metadata", {})
        return meta.get("namespace", ""), meta.get("name", "")

    def _replace(self, source: Source, items: list[Obj]) -> None:
        now = time.monotonic()
        with self._lock:
            old = self._objects[source.name]
            fresh: dict[tuple[str, str], _Entry] = {}
            for obj in items:
                if not source.keep(obj):
                    continue
                key = self._key(obj)
                previous = old.get(key)
                unchanged = previous is not None and previous.obj.get("metadata", {}).get(
                    "resourceVersion"
                ) == obj.get("metadata", {}).get("resourceVersion")
                fresh[key] = previous if unchanged else _Entry(obj, now)
            self._objects[source.name] = fresh
        self._errors.pop(source.name, None)
        self._synced[source.name].set()
        self._notify()

    def _apply(self, source: Source, event: Obj) -> str:
        """Apply one watch event; return the resourceVersion it brings."""
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            raise ApiException(status=obj.get("code", 0), reason=obj.get("message", ""))
        version = obj.get("metadata", {}).get("resourceVersion", "")
        if kind == "BOOKMARK":
            return version
        key = self._key(obj)
        with self._lock:
            objects = self._objects[source.name]
            if kind == "DELETED" or not source.keep(obj):
                objects.pop(key, None)
            else:
                objects[key] = _Entry(obj, time.monotonic())
        self._notify()
        return version

    def _notify(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._bump)

    def _bump(self) -> None:
        self.version += 1
        self._changed.set()
        self._changed = asyncio.Event()

    # -- reading (event loop) ---------------------------------------------------------

    async def changed(self, since_version: int, timeout: float) -> None:
        """Wait until the cache changes after `since_version`, or `timeout` seconds."""
        if self.version != since_version:
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)

    def get(self, source: str, namespace: str, name: str) -> Obj | None:
        with self._lock:
            entry = self._objects[source].get((namespace, name))
        return entry.obj if entry else None

    def objects(self, source: str, namespace: str | None = None, since: float = 0.0) -> list[Obj]:
        """The source's objects (in one namespace), those seen changing after `since` only."""
        with self._lock:
            entries = list(self._objects[source].items())
        return [
            entry.obj
            for (object_namespace, _), entry in entries
            if (namespace is None or object_namespace == namespace) and entry.seen >= since
        ]

    def find(self, source: str, namespace: str, labels: dict[str, str]) -> Iterator[Obj]:
        """Objects in `namespace` carrying all of `labels`."""
        for obj in self.objects(source, namespace):
            found = obj.get("metadata", {}).get("labels") or {}
            if all(found.get(key) == value for key, value in labels.items()):
                yield obj

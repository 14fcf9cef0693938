"""One bridged port: a pty and an RFC 2217 endpoint in the notebook, a browser at the other end.

Flow control is by credit in both directions, with the same window:

- kernel -> browser: the bridge sends at most `window` bytes the browser has
  not yet acknowledged (`{"type": "ack", "bytes": n}` once they were handed
  to the device). What the kernel writes beyond that waits in a bounded
  outbox; when the outbox is full the bridge stops reading the pty and the
  RFC 2217 socket, so the kernel's own writes block as on a slow real port.
- browser -> kernel: the bridge acknowledges bytes once they are in the pty
  (or handed to the RFC 2217 socket), and the browser sends no more than
  `window` unacknowledged bytes; it stops reading the device meanwhile.

Credit rather than waiting on each websocket message keeps control messages
(acks, modem lines, disconnect) flowing while data is stalled, so a kernel
that writes without reading cannot deadlock the channel.

A browser that goes away without saying so (a page reload, a network cut)
leaves the port waiting for `grace_seconds`, the pty and its path unchanged:
the page that comes back re-attaches with the port's resume token, and tools
that had the device open never notice. A browser that says `close` (the user
disconnected, the device was unplugged), or a grace that runs out, closes the
pty: the kernel's tools then read an I/O error instead of waiting forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from pathlib import Path
from typing import Protocol

from .lines import LineSettings, PtyLine
from .pty_port import CHUNK, PtyPort
from .rfc2217 import Rfc2217Endpoint

# Close codes the page knows (4000-4999 are the application's).
TAKEN_OVER = 4001  # the same port was re-attached from another page
CLOSED = 4002  # the port was closed (disconnect, grace over, server stopping)
OVERRUN = 4003  # the page sent beyond its window


class Peer(Protocol):
    """The browser end: the websocket handler."""

    def send_data(self, data: bytes) -> None: ...

    def send_control(self, message: dict) -> None: ...

    def drop(self, code: int, reason: str) -> None: ...


class Registry(Protocol):
    """What a port needs of the notebook's list of ports (registry.SerialPorts is it):
    given to each port, so the port never imports the registry that makes it."""

    log: logging.Logger
    window_bytes: int
    grace_seconds: float
    directory: Path
    pid: int

    def describe(self, port: BridgedPort) -> None: ...

    def forget(self, port: BridgedPort) -> None: ...


class BridgedPort:
    """A port of this notebook (`ttyWEB0`...), whether or not a browser is attached now."""

    def __init__(
        self, registry: Registry, name: str, settings: LineSettings, info: dict, user: str
    ) -> None:
        self.registry = registry
        self.name = name
        self.settings = settings
        self.info = info
        self.user = user
        self.resume = secrets.token_urlsafe(18)
        self.signals = {"dtr": True, "rts": True, "break": False}
        self.modem = {"cts": False, "dsr": False, "ri": False, "dcd": False}
        self.peer: Peer | None = None
        self.to_device = 0  # bytes the kernel sent to the device
        self.from_device = 0  # bytes the device sent to the kernel
        self.since = time.time()
        self.closed = False
        self.pty: PtyPort | None = None
        self.rfc2217 = Rfc2217Endpoint(self, registry.log)
        self._window = registry.window_bytes
        self._outbox = bytearray()  # kernel -> browser, not sent yet
        self._unacked = 0  # sent to the browser, not acknowledged yet
        self._acks = 0  # browser -> kernel bytes delivered, not acknowledged yet
        self._held_acks = 0  # delivered to a RFC 2217 socket that is full
        self._ack_scheduled = False
        self._sources_paused = False
        self._grace: asyncio.TimerHandle | None = None

    @property
    def link(self):
        return self.registry.directory / self.name

    async def open(self) -> None:
        """Make the pty, its symlink and the RFC 2217 listener."""
        self.pty = PtyPort(
            self.link,
            self.settings,
            on_data=self.from_kernel,
            on_line=self._pty_line,
            on_written=self._delivered,
        )
        try:
            await self.rfc2217.start()
        except BaseException:
            self.pty.close()
            raise

    def description(self) -> dict:
        """What `~/.cgu/serial/<name>.json` says to the kernel's user, and the listing."""
        return {
            "name": self.name,
            "path": str(self.link),
            "device": self.pty.device if self.pty else None,
            "rfc2217": self.rfc2217.url,
            "state": "attached" if self.peer is not None else "waiting",
            "settings": self.settings.as_json(),
            "browser": self.info,
            "attached_by": self.user,
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.since)),
            "pid": self.registry.pid,
            "bytes": {"to_device": self.to_device, "from_device": self.from_device},
        }

    # -- the browser ---------------------------------------------------------------------

    def attach(self, peer: Peer, resumed: bool) -> None:
        """Make `peer` the browser end (a new page, or the same page after a reload)."""
        previous = self.peer
        if previous is not None and previous is not peer:
            previous.send_control({"type": "closed", "reason": "taken-over"})
            previous.drop(TAKEN_OVER, "this serial port was attached from another page")
        if self._grace is not None:
            self._grace.cancel()
            self._grace = None
        self.peer = peer
        self._unacked = 0  # what the previous page had not acknowledged is gone with it
        peer.send_control(
            {
                "type": "attached",
                "resumed": resumed,
                "resume": self.resume,
                "window": self._window,
                "signals": self.signals,
                **self.description(),
            }
        )
        self.registry.describe(self)
        self._pump()
        self._throttle()

    def detach(self, peer: Peer) -> None:
        """The page went away without closing: keep the port for a while."""
        if self.peer is not peer or self.closed:
            return
        self.peer = None
        loop = asyncio.get_running_loop()
        self._grace = loop.call_later(
            self.registry.grace_seconds, self.close, "the page did not come back"
        )
        self.registry.describe(self)

    def from_browser(self, data: bytes) -> None:
        """Bytes the device sent: to the RFC 2217 client if one is connected, else the pty."""
        if self.closed or self.pty is None:
            return
        self.from_device += len(data)
        client = self.rfc2217.client
        if client is not None:
            client.deliver(data)
            if client.paused:
                self._held_acks += len(data)
            else:
                self._delivered(len(data))
        else:
            self.pty.write(data)
        if self.pty.pending + self._held_acks > 4 * self._window and self.peer is not None:
            self.peer.drop(OVERRUN, "the page sent more than its window")

    def ack_from_browser(self, count: int) -> None:
        """The browser handed `count` bytes to the device: that much more may go."""
        self._unacked = max(0, self._unacked - count)
        self._pump()
        self._throttle()

    def modem_from_browser(self, lines: dict) -> None:
        """The device's modem lines (`port.getSignals()`), for RFC 2217 clients."""
        changed = False
        for key in self.modem:
            value = lines.get(key)
            if isinstance(value, bool) and value != self.modem[key]:
                self.modem[key] = value
                changed = True
        if changed and self.rfc2217.client is not None:
            self.rfc2217.client.modem_changed()

    def _delivered(self, count: int) -> None:
        self._acks += count
        if not self._ack_scheduled:
            self._ack_scheduled = True
            asyncio.get_running_loop().call_soon(self._send_acks)

    def _send_acks(self) -> None:
        self._ack_scheduled = False
        count, self._acks = self._acks, 0
        if count and self.peer is not None:
            self.peer.send_control({"type": "ack", "bytes": count})

    # -- the kernel ----------------------------------------------------------------------

    def from_kernel(self, data: bytes) -> None:
        """Bytes a tool wrote (pty or RFC 2217), for the device."""
        self._outbox += data
        self._pump()
        self._throttle()

    def _pump(self) -> None:
        while self.peer is not None and self._outbox and self._unacked < self._window:
            n = min(len(self._outbox), self._window - self._unacked, CHUNK)
            chunk = bytes(self._outbox[:n])
            del self._outbox[:n]
            self._unacked += n
            self.to_device += n
            self.peer.send_data(chunk)

    def _throttle(self) -> None:
        """Stop reading the kernel's side while the outbox is full; go on below half."""
        size = len(self._outbox)
        if not self._sources_paused and size >= self._window:
            self._pause_sources(True)
        elif self._sources_paused and size < self._window // 2:
            self._pause_sources(False)

    def _pause_sources(self, paused: bool) -> None:
        self._sources_paused = paused
        client = self.rfc2217.client
        if self.pty is not None:
            (self.pty.pause_reading if paused else self.pty.resume_reading)()
        if client is not None:
            (client.pause_reading if paused else client.resume_reading)()

    def rfc2217_changed(self) -> None:
        """An RFC 2217 client came or went: it too waits while the outbox is full."""
        if self.rfc2217.client is not None and self._sources_paused:
            self.rfc2217.client.pause_reading()
        if self.rfc2217.client is None and self._held_acks:
            self.rfc2217_drained()

    def rfc2217_drained(self) -> None:
        count, self._held_acks = self._held_acks, 0
        if count:
            self._delivered(count)

    def kernel_settings(self, **changes) -> None:
        """RFC 2217 changed the line: tell the browser, and keep the pty in step."""
        settings = self.settings.replace(**changes)  # ValueError: not for Web Serial
        if settings == self.settings:
            return
        self.settings = settings
        if self.pty is not None:
            self.pty.apply(settings)
        self._announce_settings()

    def _pty_line(self, line: PtyLine) -> None:
        try:
            settings = line.merged_into(self.settings)
        except ValueError:  # B0 (hang up) or a rate Web Serial cannot open: not for the device
            return
        if settings != self.settings:
            self.settings = settings
            self._announce_settings()

    def _announce_settings(self) -> None:
        if self.peer is not None:
            self.peer.send_control({"type": "settings", "settings": self.settings.as_json()})
        self.registry.describe(self)

    def kernel_signals(
        self, dtr: bool | None = None, rts: bool | None = None, brk: bool | None = None
    ) -> None:
        """DTR, RTS or break from RFC 2217: the browser sets them with `port.setSignals()`."""
        for key, value in (("dtr", dtr), ("rts", rts), ("break", brk)):
            if value is not None:
                self.signals[key] = value
        if self.peer is not None:
            self.peer.send_control({"type": "signals", **self.signals})

    def purge_to_kernel(self) -> None:
        if self.pty is not None:
            self.pty.discard_pending()

    def purge_to_browser(self) -> None:
        self._outbox.clear()
        self._throttle()

    # -- the end -------------------------------------------------------------------------

    def close(self, reason: str) -> None:
        """Unplug: tools with the device open get an I/O error; the path goes away."""
        if self.closed:
            return
        self.closed = True
        if self._grace is not None:
            self._grace.cancel()
        if self.pty is not None:
            self.pty.close()
        self.rfc2217.close()
        self.registry.forget(self)
        peer, self.peer = self.peer, None
        if peer is not None:
            with contextlib.suppress(Exception):
                peer.send_control({"type": "closed", "reason": reason})
            peer.drop(CLOSED, reason)

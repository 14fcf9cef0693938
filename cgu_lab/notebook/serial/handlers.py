"""The routes of Web Serial: `cgu-lab/serial` (the ports) and `cgu-lab/serial/channel`.

Both are JupyterHandlers, so the identity provider has vouched for the caller
(the controller's proxy, its secret) before they run, and has already turned
read-only and single-file callers away from any websocket. They check again
themselves: a serial device is code running on a student's hardware, for the
owner and editors only, and a read-only viewer gets 403 `{message, code}`.

The channel speaks binary messages for the device's bytes and JSON text
messages for everything else:

page -> server
  `hello`  {settings, info, port?, resume?}  attach (again, with the resume token)
  `ack`    {bytes}                           bytes handed to the device
  `modem`  {cts, dsr, ri, dcd}               the device's modem lines changed
  `close`  {}                                disconnect: close the pty now
server -> page
  `attached` {port name, path, device, rfc2217, resume, settings, signals, window}
  `ack`      {bytes}                         bytes delivered to the kernel's side
  `settings` {settings}                      reopen the port with these options
  `signals`  {dtr, rts, break}               `port.setSignals()`
  `closed`   {reason}, `error` {message}
"""

from __future__ import annotations

import contextlib
import json

from jupyter_server.auth.decorator import authorized
from tornado import web, websocket

from ..access import EditorsOnly, EditorsOnlyChannel
from ..handlers import BaseHandler
from .bridge import BridgedPort
from .registry import SerialPorts

EDITORS_ONLY = EditorsOnly("attach a serial device")
BAD_HELLO = 4400  # close code: the page's hello could not be honoured


class SerialPortsHandler(BaseHandler):
    """The ports attached now, with their paths and byte counts (the status bar, the dialog)."""

    _track_activity = False  # polled: looking is not using

    def initialize(self, name: str, ports: SerialPorts, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.ports = ports

    @web.authenticated
    @authorized
    def get(self) -> None:
        if EDITORS_ONLY.refuse(self):
            return
        self.finish({"ports": self.ports.listing(), "directory": str(self.ports.directory)})


class SerialChannelHandler(EditorsOnlyChannel):
    """One page's end of one bridged port."""

    editors_only = EDITORS_ONLY

    def initialize(self, name: str, ports: SerialPorts, **kwargs) -> None:
        super().initialize(name, **kwargs)
        self.ports = ports
        self.port: BridgedPort | None = None

    def open(self, *args, **kwargs) -> None:
        super().open(*args, **kwargs)
        # A serial console sends a byte at a time: without this, Nagle's algorithm holds a
        # small message back until the previous one is acknowledged (40 ms on Linux).
        self.set_nodelay(True)

    def on_message(self, message: str | bytes):
        if isinstance(message, bytes):
            if self.port is not None:
                self.port.from_browser(message)
            return None
        try:
            request = json.loads(message)
            kind = request["type"]
        except (ValueError, KeyError, TypeError):
            self.send_control({"type": "error", "message": "not a message of this channel"})
            return None
        if kind == "hello":
            return self._hello(request)  # tornado waits for it before the next message
        port = self.port
        if port is None:
            return None
        if kind == "ack" and isinstance(request.get("bytes"), int):
            port.ack_from_browser(request["bytes"])
        elif kind == "modem":
            port.modem_from_browser(request)
        elif kind == "close":
            port.close("disconnected in the browser")
        return None

    async def _hello(self, request: dict) -> None:
        if self.port is not None:
            return
        try:
            self.port = await self.ports.attach(self, request, self.current_user.username)
        except (ValueError, LookupError, OSError) as error:
            self.send_control({"type": "error", "message": str(error)})
            self.close(BAD_HELLO, "cannot attach")

    def on_close(self) -> None:
        super().on_close()
        if self.port is not None:
            self.port.detach(self)

    # -- the bridge's peer ---------------------------------------------------------------
    # (and `send_control`, EditorsOnlyChannel's)

    def send_data(self, data: bytes) -> None:
        with contextlib.suppress(websocket.WebSocketClosedError):
            self.write_message(data, binary=True)

    def drop(self, code: int, reason: str) -> None:
        self.close(code, reason)


def routes(app) -> list[tuple]:
    """The Web Serial routes, sharing one registry configured from the extension app."""
    ports = SerialPorts(parent=app)
    return [
        (r"cgu-lab/serial", SerialPortsHandler, {"ports": ports}),
        (r"cgu-lab/serial/channel", SerialChannelHandler, {"ports": ports}),
    ]

"""Web Serial: a serial device on the student's laptop, used from the kernel on the server.

The browser opens the device with Web Serial and streams it over a websocket
(through the controller's proxy, with the page's own authentication) to this
server, which makes it a real serial device for unmodified tools:

- a pty, at a stable path in the home: `~/.cgu/serial/ttyWEB0` -> `/dev/pts/N`
  (`serial.Serial(path)`, esptool, mpremote, arduino-cli);
- an RFC 2217 endpoint on loopback, `rfc2217://127.0.0.1:PORT`, which also
  carries what a pty cannot: DTR/RTS (reset and boot), break, parity;
- `~/.cgu/serial/ttyWEB0.json` describing both, read by `attached_ports()`.

Modules: `lines` (line settings and the pty's termios), `pty_port` (the pty),
`rfc2217` (the endpoint, pyserial's PortManager), `bridge` (one port, flow
control both ways, re-attach after a reload), `registry` (the ports and
their files), `handlers` (the routes).
"""

from __future__ import annotations

from .registry import attached_ports

__all__ = ["attached_ports", "serial_routes"]


def serial_routes(app) -> list[tuple]:
    """The routes to add to the extension app's (imported late: jupyter_server is heavy
    and `attached_ports` is also used from the kernel)."""
    from .handlers import routes

    return routes(app)

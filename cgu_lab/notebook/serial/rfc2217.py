"""The RFC 2217 endpoint of a bridged port, on loopback.

A pty cannot carry DTR/RTS (the ESP32's reset and boot dance), break, parity
or 7 data bits (lines.py says why). RFC 2217 (serial port control over
Telnet) carries all of them explicitly, and pyserial speaks both of its ends:
`serial_for_url("rfc2217://127.0.0.1:PORT")` in the kernel and
`serial.rfc2217.PortManager` here, which parses the Telnet stream and sets
the settings on a serial-port-like object. That object (`LineControl`) is not
a local device but the browser's port as the bridge knows it: setting
`dtr` sends a control message to the browser, reading `cts` answers the
browser's last modem lines.

Bytes from an RFC 2217 client go to the browser like the pty's; bytes from
the browser go to the RFC 2217 client while one is connected (one at a time,
as a serial port has one opener), else to the pty.

Loopback is shared by every account on a machine running the local backend,
so a connection is accepted only from a socket owned by the server's own
user (found in /proc/net/tcp); in a Kubernetes pod loopback is the pod's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import struct
from pathlib import Path
from typing import Protocol

from serial.rfc2217 import IAC, IAC_DOUBLED, M_NORMAL, PortManager

from .lines import LineSettings

HOST = "127.0.0.1"
PYSERIAL_PARITY = {"none": "N", "even": "E", "odd": "O"}
WEB_PARITY = {letter: name for name, letter in PYSERIAL_PARITY.items()}


class BridgedLine(Protocol):
    """What the endpoint needs of the port it serves (bridge.BridgedPort is one): the
    port makes its endpoint, so the endpoint knows it by this shape, not by import."""

    name: str
    settings: LineSettings
    signals: dict[str, bool]
    modem: dict[str, bool]

    def from_kernel(self, data: bytes) -> None: ...

    def kernel_settings(self, **changes) -> None: ...

    def kernel_signals(
        self, dtr: bool | None = None, rts: bool | None = None, brk: bool | None = None
    ) -> None: ...

    def purge_to_kernel(self) -> None: ...

    def purge_to_browser(self) -> None: ...

    def rfc2217_changed(self) -> None: ...

    def rfc2217_drained(self) -> None: ...


class LineControl:
    """The serial port `PortManager` drives: the browser's port, through the bridge.

    A setting the browser cannot take raises ValueError, which PortManager
    answers by restoring and reporting the previous value.
    """

    def __init__(self, port: BridgedLine) -> None:
        self._port = port
        self.xonxoff = False  # reported, not applied: Web Serial has no software flow control

    @property
    def baudrate(self) -> int:
        return self._port.settings.baud_rate

    @baudrate.setter
    def baudrate(self, value: int) -> None:
        self._port.kernel_settings(baud_rate=int(value))

    @property
    def bytesize(self) -> int:
        return self._port.settings.data_bits

    @bytesize.setter
    def bytesize(self, value: int) -> None:
        self._port.kernel_settings(data_bits=int(value))

    @property
    def parity(self) -> str:
        return PYSERIAL_PARITY[self._port.settings.parity]

    @parity.setter
    def parity(self, value: str) -> None:
        if value not in WEB_PARITY:
            raise ValueError(f"parity {value!r} is not offered by Web Serial")
        self._port.kernel_settings(parity=WEB_PARITY[value])

    @property
    def stopbits(self) -> float:
        return self._port.settings.stop_bits

    @stopbits.setter
    def stopbits(self, value: float) -> None:
        if value not in (1, 2):
            raise ValueError(f"{value} stop bits are not offered by Web Serial")
        self._port.kernel_settings(stop_bits=int(value))

    @property
    def rtscts(self) -> bool:
        return self._port.settings.flow_control == "hardware"

    @rtscts.setter
    def rtscts(self, value: bool) -> None:
        self._port.kernel_settings(flow_control="hardware" if value else "none")

    @property
    def dtr(self) -> bool:
        return self._port.signals["dtr"]

    @dtr.setter
    def dtr(self, value: bool) -> None:
        self._port.kernel_signals(dtr=bool(value))

    @property
    def rts(self) -> bool:
        return self._port.signals["rts"]

    @rts.setter
    def rts(self, value: bool) -> None:
        self._port.kernel_signals(rts=bool(value))

    @property
    def break_condition(self) -> bool:
        return self._port.signals["break"]

    @break_condition.setter
    def break_condition(self, value: bool) -> None:
        self._port.kernel_signals(brk=bool(value))

    # The modem lines, as the browser last reported them (`port.getSignals()`).
    @property
    def cts(self) -> bool:
        return self._port.modem["cts"]

    @property
    def dsr(self) -> bool:
        return self._port.modem["dsr"]

    @property
    def ri(self) -> bool:
        return self._port.modem["ri"]

    @property
    def cd(self) -> bool:
        return self._port.modem["dcd"]

    def reset_input_buffer(self) -> None:
        self._port.purge_to_kernel()

    def reset_output_buffer(self) -> None:
        self._port.purge_to_browser()


class Rfc2217Endpoint:
    """A loopback listener for one bridged port; at most one client at a time."""

    def __init__(self, port: BridgedLine, log: logging.Logger) -> None:
        self._port = port
        self.log = log
        self.client: Rfc2217Client | None = None
        self._server: asyncio.base_events.Server | None = None
        self.port_number = 0

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: Rfc2217Client(self), HOST, 0)
        self.port_number = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"rfc2217://{HOST}:{self.port_number}"

    def close(self) -> None:
        with contextlib.suppress(Exception):  # at exit the loop may be closed already
            if self._server is not None:
                self._server.close()
            if self.client is not None:
                self.client.close()

    def accept(self, client: Rfc2217Client, transport: asyncio.Transport) -> bool:
        peer, local = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        uid = socket_owner(peer, local)
        if uid is not None and uid != os.getuid():
            self.log.warning("cgu-lab serial: refused an RFC 2217 client of uid %s", uid)
            return False
        if self.client is not None:
            self.log.info("cgu-lab serial: %s already has an RFC 2217 client", self._port.name)
            return False
        self.client = client
        return True

    def released(self, client: Rfc2217Client) -> None:
        if self.client is client:
            self.client = None
            self._port.rfc2217_changed()


class Rfc2217Client(asyncio.Protocol):
    """One RFC 2217 connection: Telnet through pyserial's PortManager, data to the bridge."""

    def __init__(self, endpoint: Rfc2217Endpoint) -> None:
        self.endpoint = endpoint
        self.transport: asyncio.Transport | None = None
        self.manager: PortManager | None = None
        self.paused = False  # our sending to it: its socket buffer is full

    # PortManager's `connection`: where its Telnet answers go.
    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        if not self.endpoint.accept(self, transport):
            transport.abort()
            return
        self.transport = transport
        port = self.endpoint._port
        self.manager = PortManager(LineControl(port), self)
        port.rfc2217_changed()

    def data_received(self, data: bytes) -> None:
        if self.manager is not None:
            payload = self._filter(data)
            if payload:
                self.endpoint._port.from_kernel(payload)

    def _filter(self, data: bytes) -> bytes:
        """PortManager.filter, but runs of plain data between Telnet commands pass whole.

        The filter takes one byte at a time; random binary data (a firmware image) has an
        IAC every 256 bytes or so, so that alone would cap the rate near 100 KiB/s.
        """
        manager = self.manager
        assert manager is not None
        out = bytearray()
        index = 0
        while index < len(data):
            if manager.mode == M_NORMAL and manager.suboption is None:
                command = data.find(IAC, index)
                if command < 0:
                    out += data[index:]
                    break
                out += data[index:command]
                index = command
            out += b"".join(manager.filter(data[index : index + 1]))
            index += 1
        return bytes(out)

    def deliver(self, data: bytes) -> None:
        """Bytes from the device: data IACs are doubled, as PortManager.escape does."""
        self.write(data.replace(IAC, IAC_DOUBLED))

    def modem_changed(self) -> None:
        if self.manager is not None:
            self.manager.check_modem_lines()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self.endpoint._port.rfc2217_drained()

    def pause_reading(self) -> None:
        if self.transport is not None:
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.manager = None
        self.endpoint.released(self)


def _proc_address(address: tuple) -> str:
    """An IPv4 address as /proc/net/tcp prints it: the 32-bit value in host order, then port."""
    (value,) = struct.unpack("=I", socket.inet_aton(address[0]))
    return f"{value:08X}:{address[1]:04X}"


def socket_owner(peer: tuple, local: tuple, table: Path = Path("/proc/net/tcp")) -> int | None:
    """The uid owning the client end of a loopback connection; None where /proc cannot tell.

    -1 when /proc is there but has no such socket (then nobody is trusted).
    """
    try:
        text = table.read_text()
    except OSError:
        return None
    client, server = _proc_address(peer), _proc_address(local)
    for row in text.splitlines()[1:]:
        fields = row.split()
        if len(fields) > 7 and fields[1] == client and fields[2] == server:
            return int(fields[7])
    return -1

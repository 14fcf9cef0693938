"""Line settings of a bridged port, and how they are kept on its pty.

The browser opens the real port with Web Serial's options (`baudRate`,
`dataBits`, `stopBits`, `parity`, `flowControl`), so those are the settings'
names on the wire. The kernel changes them either on the pty (`tcsetattr`, as
any serial tool does) or over RFC 2217.

A Linux pty keeps only part of a termios: the baud rate (any rate, through
`TCSETS2`), the stop bits, RTS/CTS (`CRTSCTS`) and XON/XOFF (`IXON`, which
the pty's own line discipline then applies). It refuses data bits other than
8 and parity outright (`EINVAL`), and has no modem lines (`TIOCMSET` is
`ENOTTY`) and no break. So parity, 7 data bits, DTR/RTS and break reach the
browser only through the RFC 2217 endpoint, which carries them explicitly.

A pty is put in raw mode with `EXTPROC`: with the master in packet mode
(`TIOCPKT`), every `tcsetattr` on the slave then wakes the master with
`TIOCPKT_IOCTL`, so a baud change is seen at once and not at the next poll.
"""

from __future__ import annotations

import array
import dataclasses
import fcntl
import struct
import termios
import tty
from dataclasses import dataclass

try:  # Linux: any baud rate, read and written as a number (pyserial's constants)
    from serial.serialposix import BOTHER, TCGETS2, TCSETS2
except ImportError:  # pragma: no cover - other systems: the Bxxx constants only
    BOTHER = TCGETS2 = TCSETS2 = None

EXTPROC = 0o200000  # <asm-generic/termbits.h>; not exported by Python's termios
TIOCPKT_IOCTL = 64  # <asm-generic/ioctls.h>: the slave's termios changed

PARITIES = ("none", "even", "odd")
FLOW_CONTROLS = ("none", "hardware")
# pyserial's parity letters, for the RFC 2217 side.
PYSERIAL_PARITY = {"none": "N", "even": "E", "odd": "O"}
MAX_BAUD = 20_000_000


# Web Serial's option names (the wire) and ours.
WIRE_NAMES = {
    "baudRate": "baud_rate",
    "dataBits": "data_bits",
    "stopBits": "stop_bits",
    "parity": "parity",
    "flowControl": "flow_control",
}


@dataclass(frozen=True)
class LineSettings:
    """How the browser opens the real port (Web Serial's `SerialOptions`)."""

    baud_rate: int = 115200
    data_bits: int = 8
    stop_bits: int = 1
    parity: str = "none"
    flow_control: str = "none"

    def as_json(self) -> dict:
        """Under Web Serial's names, ready for `port.open()`."""
        return {wire: getattr(self, name) for wire, name in WIRE_NAMES.items()}

    def replace(self, **changes) -> LineSettings:
        settings = dataclasses.replace(self, **changes)
        settings.check()
        return settings

    @classmethod
    def from_json(cls, value: object) -> LineSettings:
        """Checked settings from the browser; ValueError (a sentence) when one is wrong."""
        if not isinstance(value, dict):
            raise ValueError("line settings must be an object")
        settings = cls(**{name: value[wire] for wire, name in WIRE_NAMES.items() if wire in value})
        settings.check()
        return settings

    def check(self) -> None:
        baud = self.baud_rate
        if isinstance(baud, bool) or not isinstance(baud, int) or not 0 < baud <= MAX_BAUD:
            raise ValueError(f"baud rate {baud!r} is not between 1 and {MAX_BAUD}")
        if self.data_bits not in (7, 8):
            raise ValueError("data bits must be 7 or 8 (what Web Serial offers)")
        if self.stop_bits not in (1, 2):
            raise ValueError("stop bits must be 1 or 2 (what Web Serial offers)")
        if self.parity not in PARITIES:
            raise ValueError(f"parity must be one of {', '.join(PARITIES)}")
        if self.flow_control not in FLOW_CONTROLS:
            raise ValueError(f"flow control must be one of {', '.join(FLOW_CONTROLS)}")


@dataclass(frozen=True)
class PtyLine:
    """What a pty keeps of the line settings (see the module's docstring)."""

    baud_rate: int
    stop_bits: int
    hardware_flow: bool
    xonxoff: bool

    def merged_into(self, settings: LineSettings) -> LineSettings:
        return settings.replace(
            baud_rate=self.baud_rate,
            stop_bits=self.stop_bits,
            flow_control="hardware" if self.hardware_flow else "none",
        )


def _speed_constants() -> dict[int, int]:
    return {
        getattr(termios, name): int(name[1:])
        for name in dir(termios)
        if name.startswith("B") and name[1:].isdigit()
    }


SPEEDS = _speed_constants()
SPEED_CODES = {rate: code for code, rate in SPEEDS.items()}


def _termios2(fd: int) -> array.array:
    """`struct termios2` of a tty: its flags, then c_ispeed and c_ospeed at [9] and [10]."""
    buffer = array.array("i", [0] * 64)
    fcntl.ioctl(fd, TCGETS2, buffer)
    return buffer


def observe(fd: int) -> PtyLine:
    """The pty's line now (the slave's termios; a master's fd answers for its slave)."""
    iflag, _, cflag, _, _, ospeed, _ = termios.tcgetattr(fd)
    baud = _termios2(fd)[10] if TCGETS2 is not None else SPEEDS.get(ospeed, 0)
    return PtyLine(
        baud_rate=baud,
        stop_bits=2 if cflag & termios.CSTOPB else 1,
        hardware_flow=bool(cflag & termios.CRTSCTS),
        xonxoff=bool(iflag & termios.IXON),
    )


def prepare(fd: int, settings: LineSettings) -> None:
    """A fresh slave: raw (no echo, no CR/LF mapping: bytes pass as they are), EXTPROC."""
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    attrs[3] |= EXTPROC
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    apply(fd, settings)


def apply(fd: int, settings: LineSettings) -> None:
    """Write what the pty can keep of `settings`, leaving its other flags alone."""
    attrs = termios.tcgetattr(fd)
    cflag = attrs[2]
    cflag = (cflag | termios.CSTOPB) if settings.stop_bits == 2 else (cflag & ~termios.CSTOPB)
    if settings.flow_control == "hardware":
        cflag |= termios.CRTSCTS
    else:
        cflag &= ~termios.CRTSCTS
    attrs[2] = cflag
    attrs[3] |= EXTPROC  # keep the master told of the next change
    code = SPEED_CODES.get(settings.baud_rate)
    if code is not None:
        attrs[4] = attrs[5] = code
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    if code is None and TCSETS2 is not None:
        buffer = _termios2(fd)
        buffer[2] = (buffer[2] & ~termios.CBAUD) | BOTHER
        buffer[9] = buffer[10] = settings.baud_rate
        fcntl.ioctl(fd, TCSETS2, buffer)


def set_packet_mode(master: int) -> None:
    """Reads of the master start with a status byte; TIOCPKT_IOCTL marks a termios change."""
    fcntl.ioctl(master, termios.TIOCPKT, struct.pack("i", 1))

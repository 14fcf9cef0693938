"""The server side of the view-only filter: what a read-only viewer may be shown.

A VNC server sends the desktop's clipboard to every client (TigerVNC does on
each copy), so a viewer watching a student's desktop would receive whatever
the student copied in it. This parser reads the server's stream of a
view-only connection message by message (RFC 6143 and the community rfbproto
pseudo-encodings) and drops ServerCutText, extended-clipboard form included;
every other byte passes unchanged and in order.

Skipping a message needs its length, and a rectangle's length depends on its
encoding: the viewer's side (rfb.py) only lets the viewer ask for encodings
whose length is known without decoding (Raw, CopyRect, length-prefixed ZRLE,
and pseudo-encodings of computable size), and tells this side which protocol
version, security type and pixel format were chosen. A server message or
rectangle encoding it does not know ends the connection (`RfbViolation`)
rather than being guessed at. Pixel data is streamed through as it arrives,
never buffered whole.

Pure: bytes in, bytes out, no I/O.
"""

from __future__ import annotations

import re
import struct

SECURITY_NONE = 1
SECURITY_VNC_AUTH = 2

FRAMEBUFFER_UPDATE = 0
SET_COLOUR_MAP_ENTRIES = 1
BELL = 2
SERVER_CUT_TEXT = 3

RAW = 0
COPY_RECT = 1
ZRLE = 16
DESKTOP_SIZE = -223
LAST_RECT = -224
CURSOR = -239
DESKTOP_NAME = -307
EXTENDED_DESKTOP_SIZE = -308
# What the viewer may ask for: every rectangle of these has a computable length.
RECT_ENCODINGS = frozenset(
    {RAW, COPY_RECT, ZRLE, DESKTOP_SIZE, LAST_RECT, CURSOR, DESKTOP_NAME, EXTENDED_DESKTOP_SIZE}
)
# Hints that never come back as rectangles (compression and JPEG quality levels).
HINT_RANGES = (range(-256, -246), range(-32, -22))

VERSION = re.compile(rb"RFB \d{3}\.\d{3}\n")
PIXEL_SIZES = (1, 2, 4)
MAX_REASON = 64 * 1024
MAX_NAME = 64 * 1024


class RfbViolation(Exception):
    """A side of the connection sent something the filter cannot parse or will not relay."""


def may_request(encoding: int) -> bool:
    """Whether a viewer's SetEncodings may keep `encoding`."""
    return encoding in RECT_ENCODINGS or any(encoding in r for r in HINT_RANGES)


class ScreenFilter:
    """Feed the server's bytes in any chunks; get back the bytes the viewer may see."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._state = "version"
        self._copy = 0  # bytes of the current message still to pass unread
        self._skip = 0  # bytes of the current message still to drop unread
        self._rects = 0  # rectangles left in the current FramebufferUpdate
        # Told by the viewer's side as the viewer chooses them:
        self.version: bytes | None = None
        self.security: int | None = None
        self.bytes_per_pixel = 0
        self.dropped: dict[int, int] = {}  # server message type -> how many were dropped

    def feed(self, data: bytes) -> bytes:
        self._buffer += data
        out = bytearray()
        while self._buffer:
            if self._copy or self._skip:
                size = min(self._copy or self._skip, len(self._buffer))
                if self._copy:
                    out += self._buffer[:size]
                    self._copy -= size
                else:
                    self._skip -= size
                del self._buffer[:size]
                continue
            step = getattr(self, f"_{self._state}")()
            if step is None:
                break
            out += step
        return bytes(out)

    def _take(self, length: int) -> bytes | None:
        if len(self._buffer) < length:
            return None
        chunk = bytes(self._buffer[:length])
        del self._buffer[:length]
        return chunk

    def _peek(self, length: int) -> bytes | None:
        return bytes(self._buffer[:length]) if len(self._buffer) >= length else None

    # The handshake, server side
    def _version(self) -> bytes | None:
        chunk = self._take(12)
        if chunk is not None:
            if not VERSION.fullmatch(chunk):
                raise RfbViolation(f"not an RFB server: {chunk!r}")
            self._state = "security_types"
        return chunk

    def _security_types(self) -> bytes | None:
        if self.version is None:
            raise RfbViolation("the server went on before the viewer chose a version")
        header = self._peek(1)
        if header is None:
            return None
        if header[0] == 0:  # refused: a reason, then the server closes
            return self._reason(1)
        chunk = self._take(1 + header[0])
        if chunk is not None:
            self._state = "security_answer"
        return chunk

    def _reason(self, offset: int) -> bytes | None:
        header = self._peek(offset + 4)
        if header is None:
            return None
        (length,) = struct.unpack(">I", header[offset:])
        if length > MAX_REASON:
            raise RfbViolation("the server's failure reason is too long")
        self._state = "closed"
        self._copy = length
        return self._take(offset + 4)

    def _security_answer(self) -> bytes | None:
        if self.security == SECURITY_VNC_AUTH:
            chunk = self._take(16)  # the challenge
            if chunk is not None:
                self._state = "security_result"
            return chunk
        if self.security == SECURITY_NONE and self.version == b"RFB 003.007\n":
            self._state = "server_init"  # 3.7 sends no result for None
            return b""
        if self.security == SECURITY_NONE:
            self._state = "security_result"
            return b""
        raise RfbViolation("the server went on before the viewer chose a security type")

    def _security_result(self) -> bytes | None:
        header = self._peek(4)
        if header is None:
            return None
        if header == b"\0\0\0\0":
            self._state = "server_init"
            return self._take(4)
        if self.version == b"RFB 003.007\n":
            self._state = "closed"
            return self._take(4)
        return self._reason(4)

    def _closed(self) -> bytes | None:
        raise RfbViolation("the server sent more after refusing the connection")

    def _server_init(self) -> bytes | None:
        header = self._peek(24)
        if header is None:
            return None
        if not self.bytes_per_pixel:  # the viewer may have set its own already
            self.bytes_per_pixel = pixel_size(header[4])
        (length,) = struct.unpack(">I", header[20:24])
        if length > MAX_NAME:
            raise RfbViolation("the desktop's name is too long")
        self._state = "message"
        self._copy = length
        return self._take(24)

    # Normal messages
    def _message(self) -> bytes | None:
        kind = self._buffer[0]
        if kind == FRAMEBUFFER_UPDATE:
            header = self._take(4)
            if header is not None:
                (self._rects,) = struct.unpack(">H", header[2:4])
                if self._rects:
                    self._state = "rect"
            return header
        if kind == SET_COLOUR_MAP_ENTRIES:
            header = self._take(6)
            if header is not None:
                (count,) = struct.unpack(">H", header[4:6])
                self._copy = 6 * count
            return header
        if kind == BELL:
            return self._take(1)
        if kind == SERVER_CUT_TEXT:
            header = self._take(8)
            if header is None:
                return None
            (length,) = struct.unpack(">i", header[4:8])
            self._skip = abs(length)  # negative: the extended clipboard's form
            self.dropped[kind] = self.dropped.get(kind, 0) + 1
            return b""
        raise RfbViolation(f"server message type {kind} is not relayed to viewers")

    def _rect(self) -> bytes | None:
        header = self._peek(12)
        if header is None:
            return None
        _, _, width, height, encoding = struct.unpack(">HHHHi", header)
        extra, body = self._rect_size(encoding, width, height, self._peek(12 + 4))
        if extra is None:
            return None
        self._rects = 0 if encoding == LAST_RECT else self._rects - 1
        if not self._rects:
            self._state = "message"
        self._copy = body
        return self._take(12 + extra)

    def _rect_size(
        self, encoding: int, width: int, height: int, header: bytes | None
    ) -> tuple[int | None, int]:
        """(bytes after the rectangle header to read now, bytes to pass unread then);
        (None, 0) until the rectangle's own length field has arrived."""
        if encoding == RAW:
            return 0, width * height * self.bytes_per_pixel
        if encoding == COPY_RECT:
            return 0, 4
        if encoding in (DESKTOP_SIZE, LAST_RECT):
            return 0, 0
        if encoding == CURSOR:
            return 0, width * height * self.bytes_per_pixel + (width + 7) // 8 * height
        if encoding not in (ZRLE, DESKTOP_NAME, EXTENDED_DESKTOP_SIZE):
            raise RfbViolation(f"rectangle encoding {encoding} is not relayed to viewers")
        if header is None:
            return None, 0
        if encoding == EXTENDED_DESKTOP_SIZE:  # screens, 3 padding, 16 bytes a screen
            return 4, 16 * header[12]
        (length,) = struct.unpack(">I", header[12:16])
        if encoding == DESKTOP_NAME and length > MAX_NAME:
            raise RfbViolation("the desktop's name is too long")
        return 4, length


def pixel_size(bits_per_pixel: int) -> int:
    """Bytes a pixel takes, from a pixel format's bits-per-pixel."""
    size = bits_per_pixel // 8
    if bits_per_pixel % 8 or size not in PIXEL_SIZES:
        raise RfbViolation(f"{bits_per_pixel} bits per pixel is not an RFB pixel format")
    return size

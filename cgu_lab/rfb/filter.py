"""A view-only filter for both sides of an RFB (VNC) connection.

A read-only viewer of a notebook watches its desktop through the same VNC
server as the editor; what makes the view read-only is this filter on the
server, between the viewer's websocket and the VNC socket, not the viewer's
page (noVNC's `viewOnly` is a courtesy, a modified page could send anything).

The filter parses every byte the viewer sends (RFC 6143 and the extensions
noVNC speaks), message by message, and passes on only what watching needs:

- the handshake: the protocol version (3.7 or 3.8), the security type (None,
  or VNC authentication with its 16-byte answer) and ClientInit, whose
  "shared" flag is forced on so a viewer can never disconnect the editor;
- SetPixelFormat (before the first FramebufferUpdateRequest only: the
  server side could not tell which updates still use the old format),
  FramebufferUpdateRequest, and SetEncodings cut down to the encodings whose
  rectangles the server side can measure without decoding
  (`rfb_screen.may_request`: Raw, CopyRect, ZRLE and some pseudo-encodings).
  That leaves out fences and continuous updates (the server would wait for
  client messages the filter drops), input channels (QEMU key events, the
  extended clipboard) and compressed encodings such as Tight; noVNC falls
  back to ZRLE.

Everything else is parsed to its end and dropped: KeyEvent, PointerEvent,
ClientCutText, SetDesktopSize, ClientFence, EnableContinuousUpdates, xvp,
gii, QEMU key events. A message this parser does not know cannot be skipped
safely (its length is unknown), so it ends the connection (`RfbViolation`).

The server's side (`from_server`, rfb_screen.py) drops the desktop's
clipboard, which the VNC server sends to every client; this side tells it the
version, security type and pixel format the viewer chose.

Pure: bytes in, bytes out, no I/O; the handlers own the sockets.
"""

from __future__ import annotations

import struct

from .screen import (
    SECURITY_NONE,
    SECURITY_VNC_AUTH,
    RfbViolation,
    ScreenFilter,
    may_request,
    pixel_size,
)

VERSIONS = (b"RFB 003.007\n", b"RFB 003.008\n")

SET_PIXEL_FORMAT = 0
SET_ENCODINGS = 2
FRAMEBUFFER_UPDATE_REQUEST = 3
KEY_EVENT = 4
POINTER_EVENT = 5
CLIENT_CUT_TEXT = 6
ENABLE_CONTINUOUS_UPDATES = 150
CLIENT_FENCE = 248
XVP = 250
SET_DESKTOP_SIZE = 251
GII = 253
QEMU = 255

ALLOWED = frozenset({SET_PIXEL_FORMAT, SET_ENCODINGS, FRAMEBUFFER_UPDATE_REQUEST})

# Some of the pseudo-encodings a viewer may not advertise (signed 32-bit values).
FENCE = -312
CONTINUOUS_UPDATES = -313
QEMU_EXTENDED_KEY = -258
EXTENDED_CLIPBOARD = -1063131698  # 0xC0A1E5CE

MAX_ENCODINGS = 1024
MAX_CUT_TEXT = 10 * 1024 * 1024


class ViewOnlyFilter:
    """Feed the viewer's bytes in any chunks to `feed`, the server's to `from_server`;
    each gives back the bytes the other side may see."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._state = "version"
        self._requested = False  # a FramebufferUpdateRequest has passed
        self.screen = ScreenFilter()
        self.dropped: dict[int, int] = {}  # message type -> how many were dropped
        self.passed: dict[int, int] = {}

    def from_server(self, data: bytes) -> bytes:
        return self.screen.feed(data)

    def feed(self, data: bytes) -> bytes:
        self._buffer += data
        out = bytearray()
        while True:
            step = getattr(self, f"_{self._state}")()
            if step is None:
                return bytes(out)
            out += step

    def _take(self, length: int) -> bytes | None:
        if len(self._buffer) < length:
            return None
        chunk = bytes(self._buffer[:length])
        del self._buffer[:length]
        return chunk

    # The handshake, client side
    def _version(self) -> bytes | None:
        chunk = self._take(12)
        if chunk is None:
            return None
        if chunk not in VERSIONS:
            raise RfbViolation(f"unsupported RFB version {chunk!r}")
        self.screen.version = chunk
        self._state = "security"
        return chunk

    def _security(self) -> bytes | None:
        chunk = self._take(1)
        if chunk is None:
            return None
        if chunk[0] == SECURITY_NONE:
            self._state = "client_init"
        elif chunk[0] == SECURITY_VNC_AUTH:
            self._state = "vnc_auth"
        else:
            raise RfbViolation(f"security type {chunk[0]} is not relayed to viewers")
        self.screen.security = chunk[0]
        return chunk

    def _vnc_auth(self) -> bytes | None:
        chunk = self._take(16)
        if chunk is not None:
            self._state = "client_init"
        return chunk

    def _client_init(self) -> bytes | None:
        chunk = self._take(1)
        if chunk is None:
            return None
        self._state = "message"
        return b"\x01"  # shared: a viewer never pushes the editor off

    # Normal messages
    def _message(self) -> bytes | None:
        if not self._buffer:
            return None
        kind = self._buffer[0]
        length = self._length(kind)
        if length is None:
            return None
        chunk = self._take(length)
        if chunk is None:
            return None
        if kind not in ALLOWED:
            self.dropped[kind] = self.dropped.get(kind, 0) + 1
            return b""
        self.passed[kind] = self.passed.get(kind, 0) + 1
        if kind == SET_ENCODINGS:
            return _strip_encodings(chunk)
        if kind == SET_PIXEL_FORMAT:
            if self._requested:
                raise RfbViolation("the pixel format cannot change once updates are requested")
            self.screen.bytes_per_pixel = pixel_size(chunk[4])
        if kind == FRAMEBUFFER_UPDATE_REQUEST:
            self._requested = True
        return chunk

    def _header(self, size: int) -> bytes | None:
        return bytes(self._buffer[:size]) if len(self._buffer) >= size else None

    def _length(self, kind: int) -> int | None:
        """The whole message's length, None until enough of its header has arrived."""
        fixed = {
            SET_PIXEL_FORMAT: 20,
            FRAMEBUFFER_UPDATE_REQUEST: 10,
            KEY_EVENT: 8,
            POINTER_EVENT: 6,
            ENABLE_CONTINUOUS_UPDATES: 10,
            XVP: 4,
        }
        if kind in fixed:
            return fixed[kind]
        if kind == SET_ENCODINGS:
            header = self._header(4)
            if header is None:
                return None
            (count,) = struct.unpack(">H", header[2:4])
            if count > MAX_ENCODINGS:
                raise RfbViolation(f"{count} encodings is more than any client sends")
            return 4 + 4 * count
        if kind == CLIENT_CUT_TEXT:
            header = self._header(8)
            if header is None:
                return None
            (size,) = struct.unpack(">i", header[4:8])
            size = abs(size)  # negative: the extended clipboard's format
            if size > MAX_CUT_TEXT:
                raise RfbViolation("clipboard text larger than any viewer may send")
            return 8 + size
        if kind == CLIENT_FENCE:
            header = self._header(9)
            if header is None:
                return None
            if header[8] > 64:
                raise RfbViolation("fence payload longer than 64 bytes")
            return 9 + header[8]
        if kind == SET_DESKTOP_SIZE:
            header = self._header(8)
            if header is None:
                return None
            return 8 + 16 * header[6]
        if kind == GII:
            header = self._header(4)
            if header is None:
                return None
            big_endian = header[1] & 0x80
            (size,) = struct.unpack(">H" if big_endian else "<H", header[2:4])
            return 4 + size
        if kind == QEMU:
            header = self._header(2)
            if header is None:
                return None
            if header[1] == 0:  # extended key event
                return 12
            raise RfbViolation(f"QEMU client message subtype {header[1]} is not relayed")
        raise RfbViolation(f"unknown RFB client message type {kind}")


def _strip_encodings(message: bytes) -> bytes:
    (count,) = struct.unpack(">H", message[2:4])
    encodings = struct.unpack(f">{count}i", message[4:])
    kept = [e for e in encodings if may_request(e)]
    return struct.pack(f">BxH{len(kept)}i", SET_ENCODINGS, len(kept), *kept)

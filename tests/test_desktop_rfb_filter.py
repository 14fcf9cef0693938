"""The view-only RFB filter on its own: every client message parsed, only watching passes;
every server message parsed, the desktop's clipboard dropped.

Byte streams are cut at every possible point, as websockets deliver them in any
chunks; the filter must give the same answer however the bytes arrive.
"""

from __future__ import annotations

import struct

import pytest

from cgu_lab.rfb import filter as rfb

HANDSHAKE = b"RFB 003.008\n" + b"\x01" + b"\x00"  # version, security None, non-shared
PIXEL_FORMAT = b"\x00\x00\x00\x00" + struct.pack(
    ">BBBBHHHBBBxxx", 32, 24, 0, 1, 255, 255, 255, 16, 8, 0
)
ENCODINGS = struct.pack(">BxH5i", 2, 5, 0, 7, rfb.FENCE, rfb.EXTENDED_CLIPBOARD, -223)
UPDATE = struct.pack(">BBHHHH", 3, 1, 0, 0, 640, 480)
KEY = struct.pack(">BBxxI", 4, 1, ord("a"))
POINTER = struct.pack(">BBHH", 5, 1, 10, 10)
CUT = struct.pack(">BxxxI", 6, 5) + b"hello"
EXTENDED_CUT = struct.pack(">Bxxxi", 6, -8) + b"\x01\x00\x00\x01abcd"
DESKTOP_SIZE = struct.pack(">BxHHBx", 251, 800, 600, 1) + b"\x00" * 16
FENCE = struct.pack(">BxxxIB", 248, 0, 3) + b"abc"
CONTINUOUS = struct.pack(">BBHHHH", 150, 1, 0, 0, 10, 10)
QEMU_KEY = struct.pack(">BBHII", 255, 0, 1, 0x61, 30)
GII = struct.pack(">BBH", 253, 0x80, 4) + b"\x00" * 4
XVP = struct.pack(">BxBB", 250, 1, 2)

# Tight (7) is left out too: its rectangles cannot be measured without decoding them.
STRIPPED_ENCODINGS = struct.pack(">BxH2i", 2, 2, 0, -223)
EXPECTED = b"RFB 003.008\n\x01\x01" + PIXEL_FORMAT + STRIPPED_ENCODINGS + UPDATE + UPDATE


def stream() -> bytes:
    return (
        HANDSHAKE
        + PIXEL_FORMAT
        + ENCODINGS
        + UPDATE
        + KEY
        + POINTER
        + CUT
        + EXTENDED_CUT
        + DESKTOP_SIZE
        + FENCE
        + CONTINUOUS
        + QEMU_KEY
        + GII
        + XVP
        + UPDATE
    )


def test_only_watching_passes_in_one_piece():
    view = rfb.ViewOnlyFilter()
    assert view.feed(stream()) == EXPECTED
    assert view.passed == {0: 1, 2: 1, 3: 2}
    assert view.dropped == {4: 1, 5: 1, 6: 2, 251: 1, 248: 1, 150: 1, 255: 1, 253: 1, 250: 1}


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 13])
def test_the_same_in_any_chunks(size):
    data = stream()
    view = rfb.ViewOnlyFilter()
    out = b"".join(view.feed(data[i : i + size]) for i in range(0, len(data), size))
    assert out == EXPECTED


def test_vnc_authentication_passes_its_answer():
    view = rfb.ViewOnlyFilter()
    answer = bytes(range(16))
    assert view.feed(b"RFB 003.008\n\x02" + answer + b"\x00" + KEY) == (
        b"RFB 003.008\n\x02" + answer + b"\x01"
    )


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"RFB 003.003\n", "version"),
        (b"RFB 003.008\n\x13", "security type 19"),
        (b"RFB 003.008\n\x01\x01" + b"\x63", "unknown RFB client message type 99"),
        (
            b"RFB 003.008\n\x01\x01" + struct.pack(">BBH", 255, 1, 0),
            "QEMU client message subtype 1",
        ),
        (b"RFB 003.008\n\x01\x01" + struct.pack(">BxH", 2, 5000), "encodings"),
        (b"RFB 003.008\n\x01\x01" + struct.pack(">Bxxxi", 6, 1 << 30), "clipboard"),
    ],
)
def test_what_cannot_be_parsed_ends_the_connection(data, reason):
    with pytest.raises(rfb.RfbViolation, match=reason):
        rfb.ViewOnlyFilter().feed(data)


# The server's side: what a viewer is shown.
CLIENT_INIT = b"\x01"
NAME = b"Linux desktop"
SERVER_HANDSHAKE = (
    b"RFB 003.008\n"
    + b"\x01\x01"  # one security type: None
    + b"\x00\x00\x00\x00"  # SecurityResult OK
    + struct.pack(">HH", 640, 480)
    + PIXEL_FORMAT[4:]
    + struct.pack(">I", len(NAME))
    + NAME
)
BELL = b"\x02"
SECRET = b"the student's password"
SERVER_CUT = struct.pack(">BxxxI", 3, len(SECRET)) + SECRET
# The extended clipboard's form: negative length, flags and zlib data.
SERVER_EXTENDED_CUT = struct.pack(">Bxxxi", 3, -12) + b"\x10\x00\x00\x01" + b"\x78\x9c" + SECRET[:6]
COLOUR_MAP = struct.pack(">BxHH", 1, 0, 2) + b"\x00\x01" * 6


def update(*rects: bytes, count: int | None = None) -> bytes:
    return struct.pack(">BxH", 0, len(rects) if count is None else count) + b"".join(rects)


def rect(encoding: int, w: int, h: int, payload: bytes = b"", x: int = 0, y: int = 0) -> bytes:
    return struct.pack(">HHHHi", x, y, w, h, encoding) + payload


RAW = rect(0, 3, 2, bytes(range(24)))  # 3x2 pixels at 4 bytes: even a 0x03 byte inside
COPY = rect(1, 16, 16, struct.pack(">HH", 3, 3))
ZRLE = rect(16, 64, 64, struct.pack(">I", 9) + b"\x03" * 9)  # a length-prefixed body


def watching(pixel_format: bytes = PIXEL_FORMAT) -> rfb.ViewOnlyFilter:
    """A filter past the viewer's handshake and first requests."""
    view = rfb.ViewOnlyFilter()
    view.feed(b"RFB 003.008\n\x01" + CLIENT_INIT + pixel_format + ENCODINGS + UPDATE)
    return view


def chunked(view: rfb.ViewOnlyFilter, data: bytes, size: int) -> bytes:
    return b"".join(view.from_server(data[i : i + size]) for i in range(0, len(data), size))


@pytest.mark.parametrize("size", [100_000, 1, 2, 3, 5, 7, 13])
def test_the_desktops_clipboard_never_reaches_a_viewer(size):
    shown = [SERVER_HANDSHAKE, update(RAW, COPY), BELL, update(ZRLE), COLOUR_MAP, update(RAW)]
    data = (
        shown[0]
        + SERVER_CUT
        + shown[1]
        + SERVER_CUT  # between two framebuffer updates
        + shown[2]
        + shown[3]
        + SERVER_EXTENDED_CUT
        + shown[4]
        + shown[5]
        + SERVER_CUT
    )
    view = watching()
    assert chunked(view, data, size) == b"".join(shown)
    assert view.screen.dropped == {3: 4}


def test_a_cursor_is_measured_in_the_viewers_pixel_format():
    # 16 bits per pixel: a 9x2 cursor is 9*2*2 bytes of pixels and a 2x2 bitmask.
    sixteen = b"\x00\x00\x00\x00" + struct.pack(
        ">BBBBHHHBBBxxx", 16, 16, 0, 1, 31, 63, 31, 11, 5, 0
    )
    cursor = rect(-239, 9, 2, b"\x03" * 36 + b"\xff\x80\xff\x80", x=4, y=4)
    raw = rect(0, 2, 2, b"\x03" * 8)
    view = watching(sixteen)
    shown = SERVER_HANDSHAKE + update(cursor, raw) + BELL
    assert chunked(view, SERVER_HANDSHAKE + update(cursor, raw) + SERVER_CUT + BELL, 4) == shown


def test_pseudo_rectangles_and_last_rect():
    screens = struct.pack(">BxxxIHHHHI", 1, 0, 0, 0, 640, 480, 0)
    name = struct.pack(">I", 4) + b"desk"
    first = update(rect(-308, 640, 480, screens), rect(-307, 0, 0, name), rect(-223, 800, 600), RAW)
    # 0xFFFF rectangles: as many as come before a LastRect.
    second = update(RAW, rect(-224, 0, 0), count=0xFFFF)
    view = watching()
    data = SERVER_HANDSHAKE + first + second + SERVER_CUT + BELL
    assert chunked(view, data, 3) == SERVER_HANDSHAKE + first + second + BELL


def test_the_server_handshake_with_vnc_authentication_and_rfb_3_7():
    view = rfb.ViewOnlyFilter()
    view.feed(b"RFB 003.008\n\x02" + bytes(16) + CLIENT_INIT)
    challenge = b"RFB 003.008\n\x02\x01\x02" + bytes(range(16)) + b"\x00\x00\x00\x00"
    assert view.from_server(challenge + SERVER_HANDSHAKE[18:] + SERVER_CUT) == (
        challenge + SERVER_HANDSHAKE[18:]
    )
    # 3.7 sends no SecurityResult for None: ServerInit follows the choice.
    view = rfb.ViewOnlyFilter()
    view.feed(b"RFB 003.007\n\x01" + CLIENT_INIT)
    handshake = b"RFB 003.008\n\x01\x01" + SERVER_HANDSHAKE[18:]
    assert view.from_server(handshake + BELL) == handshake + BELL


def test_a_refusal_passes_with_its_reason_and_nothing_after():
    view = rfb.ViewOnlyFilter()
    view.feed(b"RFB 003.008\n\x01")
    refusal = b"RFB 003.008\n\x01\x01" + struct.pack(">II", 1, 6) + b"denied"
    assert view.from_server(refusal) == refusal
    with pytest.raises(rfb.RfbViolation, match="after refusing"):
        view.from_server(BELL)


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"\x63", "server message type 99"),
        (b"\xf8\x00\x00\x00", "server message type 248"),  # a fence nobody asked for
        (update(rect(7, 8, 8, b"\x00" * 4)), "rectangle encoding 7"),  # Tight
        (update(rect(-261, 0, 0, b"\x01")), "rectangle encoding -261"),  # QEMU LED state
    ],
)
def test_what_the_server_sends_unparsed_ends_the_connection(data, reason):
    view = watching()
    view.from_server(SERVER_HANDSHAKE + update(RAW))
    with pytest.raises(rfb.RfbViolation, match=reason):
        view.from_server(data)


def test_the_server_must_wait_for_the_viewers_choices():
    with pytest.raises(rfb.RfbViolation, match="version"):
        rfb.ViewOnlyFilter().from_server(SERVER_HANDSHAKE)
    with pytest.raises(rfb.RfbViolation, match="not an RFB server"):
        rfb.ViewOnlyFilter().from_server(b"HTTP/1.1 200 OK\r\n")


def test_the_pixel_format_is_fixed_once_updates_are_requested():
    view = watching()
    with pytest.raises(rfb.RfbViolation, match="pixel format"):
        view.feed(PIXEL_FORMAT)
    odd = b"\x00\x00\x00\x00" + struct.pack(">BBBBHHHBBBxxx", 24, 24, 0, 1, 255, 255, 255, 16, 8, 0)
    with pytest.raises(rfb.RfbViolation, match="24 bits per pixel"):
        rfb.ViewOnlyFilter().feed(b"RFB 003.008\n\x01" + CLIENT_INIT + odd)


def test_novncs_encodings_are_cut_to_measurable_ones():
    # noVNC 1.7's list, in its order (with Tight, TightPNG, JPEG, H.264, Hextile, RRE, Zlib).
    novnc = [1, 50, 7, -260, 16, 21, 5, 2, 6, 0, -26, -254, -223, -224, -258, -261, -308]
    novnc += [-309, -312, -313, -307, rfb.EXTENDED_CLIPBOARD, -316, 0x574D5664, -239]
    message = struct.pack(f">BxH{len(novnc)}i", 2, len(novnc), *novnc)
    kept = [1, 16, 0, -26, -254, -223, -224, -308, -307, -239]
    view = rfb.ViewOnlyFilter()
    assert view.feed(b"RFB 003.008\n\x01" + CLIENT_INIT + message) == (
        b"RFB 003.008\n\x01" + CLIENT_INIT + struct.pack(f">BxH{len(kept)}i", 2, len(kept), *kept)
    )

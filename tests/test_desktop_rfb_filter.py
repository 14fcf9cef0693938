"""The view-only RFB filter on its own: every client message parsed, only watching passes.

Byte streams are cut at every possible point, as websockets deliver them in any
chunks; the filter must give the same answer however the bytes arrive.
"""

from __future__ import annotations

import struct

import pytest

from cgu_lab.notebook.apps import rfb

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

STRIPPED_ENCODINGS = struct.pack(">BxH3i", 2, 3, 0, 7, -223)
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

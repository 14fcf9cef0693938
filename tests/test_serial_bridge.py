"""Web Serial's server side in a real jupyter_server: a real pty, pyserial on both of its paths.

The page's end of the channel is played by a websocket client here (`Page`);
the kernel's end is pyserial, run in threads because it blocks and the
server runs on this test's event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import serial
from tornado.httpclient import HTTPClientError

from cgu_lab.notebook.serial import attached_ports
from cgu_lab.notebook.serial.lines import LineSettings
from cgu_lab.notebook.serial.registry import SerialPorts
from cgu_lab.notebook.serial.rfc2217 import socket_owner

from .harness import extension_server_config
from .harness import proxy_headers as as_user

pytestmark = pytest.mark.timeout(90)

WINDOW = 4096


@pytest.fixture
def jp_server_config():
    return extension_server_config(SerialPorts={"grace_seconds": 3.0, "window_bytes": WINDOW})


class Page:
    """The browser's end: bytes for the device pile up in `received`, acknowledged or not."""

    def __init__(self, ws, auto_ack: bool = True) -> None:
        self.ws = ws
        self.auto_ack = auto_ack
        self.received = bytearray()
        self.controls: list[dict] = []
        self.close_code: int | None = None

    async def hello(self, **fields) -> dict:
        fields.setdefault("settings", {"baudRate": 115200})
        await self.send_control({"type": "hello", **fields})
        return await self.control("attached")

    async def send_control(self, message: dict) -> None:
        await self.ws.write_message(json.dumps(message))

    async def send(self, data: bytes) -> None:
        await self.ws.write_message(data, binary=True)

    async def _next(self, timeout: float) -> bool:
        message = await asyncio.wait_for(self.ws.read_message(), timeout)
        if message is None:
            self.close_code = self.ws.close_code
            return False
        if isinstance(message, bytes):
            self.received += message
            if self.auto_ack:
                await self.send_control({"type": "ack", "bytes": len(message)})
        else:
            self.controls.append(json.loads(message))
        return True

    async def control(self, kind: str, timeout: float = 10, **expected) -> dict:
        """The first control message of this kind (and these fields) not seen before."""
        deadline = time.monotonic() + timeout
        while True:
            for index, message in enumerate(self.controls):
                wanted = all(message.get(k) == v for k, v in expected.items())
                if message["type"] == kind and wanted:
                    del self.controls[index]
                    return message
            if not await self._next(max(0.01, deadline - time.monotonic())):
                raise AssertionError(f"closed ({self.close_code}) before {kind}: {self.controls}")

    async def bytes(self, count: int, timeout: float = 10) -> bytes:
        deadline = time.monotonic() + timeout
        while len(self.received) < count:
            if not await self._next(max(0.01, deadline - time.monotonic())):
                break
        data = bytes(self.received[:count])
        del self.received[:count]
        return data

    async def closed(self, timeout: float = 10) -> int | None:
        deadline = time.monotonic() + timeout
        while await self._next(max(0.01, deadline - time.monotonic())):
            pass
        return self.close_code


@pytest.fixture
def open_page(jp_ws_fetch):
    async def open_page(user: str = "alice", access: str | None = None, **options) -> Page:
        ws = await jp_ws_fetch("cgu-lab", "serial", "channel", headers=as_user(user, access))
        return Page(ws, **options)

    return open_page


def kernel(function, *args, **kwargs):
    """A blocking pyserial call, off the event loop the server runs on."""
    return asyncio.to_thread(function, *args, **kwargs)


async def until(predicate, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_owner_attaches_and_bytes_flow_through_the_device_path(
    open_page, jp_fetch, jp_home_dir
):
    page = await open_page()
    attached = await page.hello(info={"usbVendorId": 0x2341, "usbProductId": 0x43})
    path = jp_home_dir / ".cgu" / "serial" / "ttyWEB0"
    assert attached["name"] == "ttyWEB0"
    assert attached["path"] == str(path) and attached["resumed"] is False
    assert os.readlink(path) == attached["device"] and attached["device"].startswith("/dev/pts/")
    assert attached["rfc2217"].startswith("rfc2217://127.0.0.1:")
    [described] = attached_ports(path.parent)
    assert described["path"] == str(path) and described["rfc2217"] == attached["rfc2217"]
    assert described["state"] == "attached" and described["browser"]["usbVendorId"] == 0x2341

    ser = await kernel(serial.Serial, str(path), 115200, timeout=5)
    try:
        await kernel(ser.write, b"hello device\n")
        assert await page.bytes(13) == b"hello device\n"
        await page.send(b"hello kernel\n")
        assert await kernel(ser.readline) == b"hello kernel\n"
        assert (await page.control("ack"))["bytes"] == 13

        # A baud change on the pty reaches the page, which reopens the port with it.
        await kernel(setattr, ser, "baudrate", 921600)
        settings = (await page.control("settings"))["settings"]
        assert settings["baudRate"] == 921600 and settings["dataBits"] == 8
        await kernel(setattr, ser, "baudrate", 74880)  # an ESP8266's boot rate: not a Bxxx
        assert (await page.control("settings"))["settings"]["baudRate"] == 74880
        listing = json.loads((await jp_fetch("cgu-lab", "serial", headers=as_user("alice"))).body)
        [port] = listing["ports"]
        assert port["bytes"] == {"to_device": 13, "from_device": 13}
        assert port["settings"]["baudRate"] == 74880
    finally:
        ser.close()


async def test_rfc2217_carries_data_signals_break_and_settings(open_page):
    page = await open_page()
    attached = await page.hello()
    ser = await kernel(serial.serial_for_url, attached["rfc2217"], 115200, timeout=5)
    try:
        await kernel(ser.write, b"\xffbinary\x00")
        assert await page.bytes(8) == b"\xffbinary\x00"  # Telnet's IAC escaping undone
        await page.send(b"from the device \xff")
        assert await kernel(ser.read, 17) == b"from the device \xff"
        firmware = os.urandom(20000)  # IACs all through it, doubled by the client
        await kernel(ser.write, firmware)
        assert await page.bytes(len(firmware)) == firmware

        await kernel(setattr, ser, "dtr", False)
        assert (await page.control("signals", dtr=False))["rts"] is True
        await kernel(setattr, ser, "rts", False)
        await page.control("signals", dtr=False, rts=False)
        await kernel(setattr, ser, "break_condition", True)
        await page.control("signals", **{"break": True})

        await kernel(setattr, ser, "baudrate", 460800)
        assert (await page.control("settings"))["settings"]["baudRate"] == 460800
        await kernel(setattr, ser, "parity", serial.PARITY_EVEN)
        assert (await page.control("settings"))["settings"]["parity"] == "even"
        await kernel(setattr, ser, "bytesize", serial.SEVENBITS)
        assert (await page.control("settings"))["settings"]["dataBits"] == 7
        # The pty follows, so `stty` on the device path tells the same rate.
        assert attached_ports(Path(attached["path"]).parent)[0]["settings"]["baudRate"] == 460800

        # The device's modem lines reach the kernel.
        await page.send_control({"type": "modem", "cts": True, "dsr": True, "ri": False})

        def lines_seen() -> bool:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                if ser.cts and ser.dsr and not ser.ri:
                    return True
                time.sleep(0.05)  # modem lines are read by ioctl, which has no wait
            return False

        assert await kernel(lines_seen)
    finally:
        await kernel(ser.close)


async def test_editor_may_attach_read_only_and_single_file_viewers_may_not(
    open_page, jp_ws_fetch, jp_fetch
):
    editor = await open_page("ta", "edit")
    assert (await editor.hello())["attached_by"] == "ta"
    for headers in (as_user("pupil", "read"), as_user("ta", "edit", scope="notes.ipynb")):
        with pytest.raises(HTTPClientError) as refused:
            await jp_ws_fetch("cgu-lab", "serial", "channel", headers=headers)
        assert refused.value.code == 403
        with pytest.raises(HTTPClientError) as listed:
            await jp_fetch("cgu-lab", "serial", headers=headers)
        assert listed.value.code == 403
        body = json.loads(listed.value.response.body)
        assert body["code"] in ("read_only", "not_shared") and body["message"]
    with pytest.raises(HTTPClientError) as read_only:
        await jp_fetch("cgu-lab", "serial", headers=as_user("pupil", "read"))
    body = json.loads(read_only.value.response.body)
    assert body["code"] == "read_only" and "owner and editors" in body["message"]


async def test_a_reload_reattaches_to_the_same_pty(open_page, jp_home_dir):
    first = await open_page()
    attached = await first.hello()
    ser = await kernel(serial.Serial, attached["path"], 115200, timeout=5)
    try:
        first.ws.close()  # a reload: no `close` message
        description = jp_home_dir / ".cgu" / "serial" / "ttyWEB0.json"
        await until(lambda: json.loads(description.read_text())["state"] == "waiting")
        await kernel(ser.write, b"while away")  # waits in the bridge for the page

        second = await open_page()
        again = await second.hello(port="ttyWEB0", resume=attached["resume"])
        assert again["resumed"] is True and again["device"] == attached["device"]
        assert await second.bytes(10) == b"while away"
        await second.send(b"back")
        assert await kernel(ser.read, 4) == b"back"

        # Without the token the name is someone else's: another port.
        stranger = await open_page()
        other = await stranger.hello(port="ttyWEB0", resume="guess")
        assert other["name"] == "ttyWEB1" and other["device"] != attached["device"]

        # The same token from a second page takes the port over; the first is told.
        third = await open_page()
        await third.hello(port="ttyWEB0", resume=attached["resume"])
        assert (await second.control("closed"))["reason"] == "taken-over"
        assert await second.closed() == 4001
    finally:
        ser.close()


async def test_disconnect_gives_the_kernel_an_io_error_not_a_hang(open_page):
    page = await open_page()
    attached = await page.hello()
    ser = await kernel(serial.Serial, attached["path"], 115200, timeout=None)  # would wait forever
    reading = kernel(ser.read, 1)
    await asyncio.sleep(0.2)
    await page.send_control({"type": "close"})
    with pytest.raises(serial.SerialException):
        await asyncio.wait_for(reading, 5)
    with pytest.raises(serial.SerialException):
        await kernel(ser.write, b"x")
    assert await page.closed() == 4002
    assert not os.path.lexists(attached["path"])
    assert attached_ports(Path(attached["path"]).parent) == []
    ser.close()


async def test_a_page_that_does_not_come_back_unplugs_after_the_grace(open_page):
    page = await open_page()
    attached = await page.hello()
    ser = await kernel(serial.Serial, attached["path"], 115200, timeout=None)
    page.ws.close()
    started = time.monotonic()
    with pytest.raises(serial.SerialException):
        await asyncio.wait_for(kernel(ser.read, 1), 10)
    assert 2.5 < time.monotonic() - started < 8  # grace_seconds = 3
    ser.close()


async def test_back_pressure_holds_the_kernel_until_the_page_acknowledges(open_page):
    page = await open_page(auto_ack=False)
    attached = await page.hello()
    assert attached["window"] == WINDOW
    ser = await kernel(serial.Serial, attached["path"], 115200, write_timeout=None)
    payload = os.urandom(256 * 1024)
    writer = asyncio.ensure_future(kernel(ser.write, payload))
    await asyncio.sleep(1.0)
    # Nothing acknowledged: one window reached the page, the rest waits in the kernel's write.
    while True:
        try:
            await page._next(0.3)
        except asyncio.TimeoutError:
            break
    assert len(page.received) == WINDOW
    assert not writer.done()
    page.auto_ack = True
    first = bytes(page.received)
    page.received.clear()
    await page.send_control({"type": "ack", "bytes": len(first)})
    assert first + await page.bytes(len(payload) - WINDOW, 30) == payload
    assert await asyncio.wait_for(writer, 10) == len(payload)
    ser.close()


async def test_a_bad_hello_is_answered_with_a_reason(open_page):
    page = await open_page()
    await page.send_control({"type": "hello", "settings": {"baudRate": 115200, "parity": "mark"}})
    assert "parity" in (await page.control("error"))["message"]
    assert await page.closed() == 4400


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another user")
async def test_rfc2217_refuses_another_users_connection(open_page):
    page = await open_page()
    attached = await page.hello()
    port = int(attached["rfc2217"].rsplit(":", 1)[1])
    probe = (
        "import socket; s = socket.create_connection(('127.0.0.1', %d)); s.settimeout(5)\n"
        "try:\n    print('data' if s.recv(64) else 'closed')\n"
        "except OSError:\n    print('closed')\n"
    )
    answers = {}
    for uid in (65534, os.getuid()):
        run = await kernel(
            subprocess.run,
            ["/usr/bin/python3", "-c", probe % port],
            user=uid,
            capture_output=True,
            text=True,
            timeout=20,
            cwd="/",
        )
        answers[uid] = run.stdout.strip()
    assert answers == {65534: "closed", os.getuid(): "data"}


def test_socket_owner_reads_proc_net_tcp(tmp_path):
    table = tmp_path / "tcp"
    table.write_text(
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid\n"
        "   0: 0100007F:9C40 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000 0 1\n"
        "   1: 0100007F:D431 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     7 0 2\n"
    )
    if sys.byteorder != "little":
        pytest.skip("the table above is written as a little-endian kernel prints it")
    assert socket_owner(("127.0.0.1", 0xD431), ("127.0.0.1", 0x9C40), table) == 7
    assert socket_owner(("127.0.0.1", 1), ("127.0.0.1", 0x9C40), table) == -1
    assert socket_owner(("127.0.0.1", 1), ("127.0.0.1", 2), tmp_path / "none") is None


def test_line_settings_are_what_web_serial_can_open():
    assert LineSettings.from_json({"baudRate": 9600}).as_json() == {
        "baudRate": 9600,
        "dataBits": 8,
        "stopBits": 1,
        "parity": "none",
        "flowControl": "none",
    }
    for wrong in ({"baudRate": 0}, {"baudRate": True}, {"dataBits": 5}, {"stopBits": 1.5}):
        with pytest.raises(ValueError):
            LineSettings.from_json(wrong)


def test_stale_ports_of_a_server_that_is_gone_are_removed(tmp_path):
    gone, alive = tmp_path / "ttyWEB3", tmp_path / "ttyWEB4"
    for link, pid in ((gone, 2**22 + 1), (alive, os.getppid())):
        link.symlink_to("/dev/null")
        link.with_name(link.name + ".json").write_text(json.dumps({"pid": pid}))
    ports = SerialPorts(directory_path=str(tmp_path))
    assert not os.path.lexists(gone) and not gone.with_name("ttyWEB3.json").exists()
    assert alive.is_symlink() and alive.with_name("ttyWEB4.json").exists()
    assert not ports._free("ttyWEB4") and ports._free("ttyWEB3")

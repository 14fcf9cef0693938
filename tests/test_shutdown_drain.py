"""A controller stopped (SIGTERM) while a download is in flight.

Within the grace (CGU_LAB_SHUTDOWN_GRACE) the download finishes whole, and the log says
what the stop waits for; a download still running when the grace ends fails visibly at
the client (the chunked body ends without its last chunk), never as a complete-looking
file. The controller is a real process (tests/harness.py); the download is a storage
zip of a file larger than the sockets' buffers, read slowly, so it is still in flight
when the signal comes.
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import signal
import time
import zipfile
from collections.abc import Iterator

import httpx
import pytest

from .harness import Controller, running_controller

pytestmark = [pytest.mark.integration, pytest.mark.end_to_end]

SIZE = 48 * 2**20  # random bytes: the zip is as large, far beyond the loopback buffers
CHUNK = 8 * 2**20


@contextlib.contextmanager
def controller_with_a_big_file(grace: str) -> Iterator[tuple[Controller, httpx.Client]]:
    """A controller with this shutdown grace, and the student sam's client, sam's storage
    holding big.bin; both go on leaving."""
    env = {"CGU_LAB_SHUTDOWN_GRACE": grace}
    with running_controller([("sam", "student")], env=env) as ctl, ctl.client("sam") as sam:
        data, upload = os.urandom(SIZE), secrets.token_hex(8)
        for offset in range(0, SIZE, CHUNK):
            params = {"path": "big.bin", "upload": upload, "offset": offset, "total": SIZE}
            part = data[offset : offset + CHUNK]
            sam.ok("PUT", "/api/storage/users/sam/upload", params=params, content=part)
        yield ctl, sam


def stop_while_downloading(ctl: Controller, sam: httpx.Client, pause: float) -> bytes:
    """Start the zip, read its first block, send SIGTERM, wait `pause` s, read the rest."""
    url = "/api/storage/users/sam/zip"
    with sam.stream("GET", url, params={"path": "big.bin"}, timeout=60) as response:
        assert response.status_code == 200
        blocks = response.iter_raw(1 << 16)
        received = [next(blocks)]
        ctl.process.send_signal(signal.SIGTERM)
        time.sleep(pause)  # the client reads nothing: the zip waits for room in the socket
        received += list(blocks)
    return b"".join(received)


def test_a_download_in_flight_finishes_within_the_grace():
    with controller_with_a_big_file("30") as (ctl, sam):
        body = stop_while_downloading(ctl, sam, pause=7)  # past the 5 s it once had
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            assert archive.testzip() is None and archive.getinfo("big.bin").file_size == SIZE
        # it ends once the download is done, within the 30 s grace (a stuck drain would not)
        ctl.process.wait(30)  # its status is the signal's, as uvicorn raises it again
        assert "draining 1 transfers for up to 30 s" in ctl.log.read_text()


def test_a_download_cut_at_the_end_of_the_grace_fails_at_the_client():
    with controller_with_a_big_file("1") as (ctl, sam):
        with pytest.raises(httpx.RemoteProtocolError):  # "peer closed connection without
            stop_while_downloading(ctl, sam, pause=4)  # sending complete message body"
        ctl.process.wait(30)
        assert "draining 1 transfers for up to 1 s" in ctl.log.read_text()

"""The pty that stands in for the browser's serial device inside the notebook.

Its slave is what the kernel's tools open (through a stable symlink in the
home, `~/.cgu/serial/ttyWEB0` -> `/dev/pts/N`); the server holds the master
and moves bytes between it and the browser. Why a pty and not a FIFO or a
socket: unmodified tools (`serial.Serial(path)`, esptool, mpremote,
arduino-cli) need a tty: `tcsetattr`, `tcflush`, `tcdrain` must work.

The server also keeps one slave descriptor open for the pty's whole life.
Without it the master reads EIO and polls as hung up whenever no tool has the
device open (between two cells), which would end the bridge; with it, the
device behaves like a real one: bytes arriving while nobody reads wait in the
tty's buffer (tools flush it when they open), and when that buffer is full
the master stops accepting, which pauses the browser (back-pressure). Closing
the master (unplugged, disconnected) makes every open slave read EIO or
end-of-file, which pyserial reports as an error instead of waiting forever.

Everything runs on the server's event loop: the master is non-blocking and
watched with `add_reader`/`add_writer`; nothing here blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import termios
from collections.abc import Callable
from pathlib import Path

from . import lines

CHUNK = 4096
# A tool may clear EXTPROC with its own termios; then packet mode stops telling
# us about changes, and this poll still sees them.
POLL_SECONDS = 0.25


class PtyPort:
    """A pty pair: the slave for the kernel's tools, the master for the bridge.

    `on_data(bytes)` gets what tools wrote; `on_line(PtyLine)` a changed line
    (baud, stop bits, flow control); `on_written(n)` that n bytes of `write()`
    went into the pty (the browser may send that many more).
    """

    def __init__(
        self,
        link: Path,
        settings: lines.LineSettings,
        on_data: Callable[[bytes], None],
        on_line: Callable[[lines.PtyLine], None],
        on_written: Callable[[int], None],
    ) -> None:
        self.link = link
        self._on_data, self._on_line, self._on_written = on_data, on_line, on_written
        self.master, self._holder = os.openpty()
        try:
            lines.prepare(self._holder, settings)
            lines.set_packet_mode(self.master)
            os.set_blocking(self.master, False)
            self.device = os.ttyname(self._holder)
            with contextlib.suppress(OSError):  # the notebook's own user, not the tty group
                os.chmod(self.device, 0o600)
            _replace_symlink(link, self.device)
        except BaseException:
            os.close(self.master)
            os.close(self._holder)
            raise
        self.line = lines.observe(self._holder)
        self._loop = asyncio.get_running_loop()
        self._pending = bytearray()
        self._reading = False
        self._writing = False
        self.closed = False
        self.resume_reading()
        self._poller = self._loop.call_later(POLL_SECONDS, self._poll)

    # -- kernel -> bridge ----------------------------------------------------------------

    def pause_reading(self) -> None:
        """Stop taking the tools' output: the pty fills and their writes wait."""
        if self._reading and not self.closed:
            self._loop.remove_reader(self.master)
            self._reading = False

    def resume_reading(self) -> None:
        if not self._reading and not self.closed:
            self._loop.add_reader(self.master, self._readable)
            self._reading = True

    def _readable(self) -> None:
        try:
            packet = os.read(self.master, CHUNK + 1)
        except BlockingIOError:
            return
        except OSError as error:  # not expected while we hold a slave: stop watching
            if error.errno == errno.EIO:
                self.pause_reading()
                return
            raise
        if not packet:
            return
        status, data = packet[0], packet[1:]
        if status == 0:
            if data:
                self._on_data(data)
        elif status & lines.TIOCPKT_IOCTL:
            self._check_line()

    def _poll(self) -> None:
        if self.closed:
            return
        self._check_line()
        self._poller = self._loop.call_later(POLL_SECONDS, self._poll)

    def _check_line(self) -> None:
        try:
            line = lines.observe(self._holder)
        except OSError:
            return
        if line != self.line:
            self.line = line
            self._on_line(line)

    # -- bridge -> kernel ----------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Bytes accepted by `write()` that the pty has not taken yet."""
        return len(self._pending)

    def write(self, data: bytes) -> None:
        """Queue bytes for the tools; `on_written` says when the pty took them."""
        if self.closed:
            return
        self._pending += data
        self._flush()

    def discard_pending(self) -> None:
        """Forget bytes the pty has not taken (a purge of the kernel's input)."""
        self._pending.clear()
        with contextlib.suppress(termios.error, OSError):
            termios.tcflush(self._holder, termios.TCIFLUSH)

    def _flush(self) -> None:
        written = 0
        while self._pending and not self.closed:
            try:
                n = os.write(self.master, self._pending[:CHUNK])
            except BlockingIOError:
                break
            except OSError:
                self._pending.clear()
                break
            del self._pending[:n]
            written += n
        if self._pending and not self._writing and not self.closed:
            self._loop.add_writer(self.master, self._flush)
            self._writing = True
        elif not self._pending and self._writing:
            self._loop.remove_writer(self.master)
            self._writing = False
        if written:
            self._on_written(written)

    # -- the line ------------------------------------------------------------------------

    def apply(self, settings: lines.LineSettings) -> None:
        """Set the line from the RFC 2217 side or the browser, so `stty` shows it too."""
        if self.closed:
            return
        lines.apply(self._holder, settings)
        self.line = lines.observe(self._holder)

    def close(self) -> None:
        """Unplug: every tool with the device open reads EIO from now on."""
        if self.closed:
            return
        self.closed = True
        self._poller.cancel()
        with contextlib.suppress(Exception):  # at exit the loop may be closed already
            if self._reading:
                self._loop.remove_reader(self.master)
            if self._writing:
                self._loop.remove_writer(self.master)
        self._pending.clear()
        with contextlib.suppress(OSError):
            if os.readlink(self.link) == self.device:
                self.link.unlink()
        os.close(self.master)
        os.close(self._holder)


def _replace_symlink(link: Path, target: str) -> None:
    """Point `link` at `target` in one step: a tool never finds it missing or half made."""
    temporary = link.with_name(f".{link.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    os.symlink(target, temporary)
    os.replace(temporary, link)

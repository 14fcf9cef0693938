"""The serial ports of this notebook server, and the files that tell the kernel about them.

Ports are named `ttyWEB0`, `ttyWEB1`... and each has, in `~/.cgu/serial/`,
the symlink tools open (`ttyWEB0` -> `/dev/pts/N`) and a JSON description
(`ttyWEB0.json`: path, device, `rfc2217` URL, line settings, who attached
it), so a notebook can find its port without being told: `attached_ports()`
reads them. A page asks for the name it had (a reload): it gets the same
port back when it shows that port's resume token, the same name when that
name is free, and the lowest free name otherwise.

The files name the server's pid: at start, those of a server that is gone
(crashed, restarted) are removed, so no stale symlink can lead a tool to a
`/dev/pts/N` that now belongs to someone's terminal.
"""

from __future__ import annotations

import atexit
import contextlib
import hmac
import json
import os
import re
from pathlib import Path

import psutil
from traitlets import Float, Int, Unicode, default
from traitlets.config import LoggingConfigurable

from .bridge import BridgedPort, Peer
from .lines import LineSettings

NAME = re.compile(r"ttyWEB\d{1,2}")
INFO_KEYS = ("usbVendorId", "usbProductId", "bluetoothServiceClassId", "label")


def default_directory() -> Path:
    return Path.home() / ".cgu" / "serial"


def attached_ports(directory: Path | None = None) -> list[dict]:
    """The ports a browser attached to this notebook, for code in the kernel.

    >>> port = attached_ports()[0]
    >>> serial.Serial(port["path"])  # or serial.serial_for_url(port["rfc2217"])
    """
    folder = directory or default_directory()
    found = []
    for file in sorted(folder.glob("ttyWEB*.json")):
        with contextlib.suppress(OSError, ValueError):
            found.append(json.loads(file.read_text()))
    return found


class SerialPorts(LoggingConfigurable):
    """Every bridged port of this server, by name."""

    grace_seconds = Float(
        60.0,
        help="How long a port whose page went away (a reload) waits to be re-attached.",
    ).tag(config=True)

    window_bytes = Int(
        16384,
        help="Flow-control window: bytes in flight each way between server and browser.",
    ).tag(config=True)

    max_ports = Int(8, help="How many serial ports one notebook may attach.").tag(config=True)

    directory_path = Unicode(
        help="Where the ports' symlinks and descriptions go (default: ~/.cgu/serial)."
    ).tag(config=True)

    @default("directory_path")
    def _default_directory(self) -> str:
        return str(default_directory())

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.directory = Path(self.directory_path)
        self.pid = os.getpid()
        self.ports: dict[str, BridgedPort] = {}
        self.directory.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            self.directory.chmod(0o700)
        self.remove_stale()
        atexit.register(self.close_all, "the notebook server stopped")

    async def attach(self, peer: Peer, hello: dict, user: str) -> BridgedPort:
        """The port for a page's `hello`: its own again, or a new one.

        ValueError (bad settings) and LookupError (no free name) say why not.
        """
        requested = hello.get("port")
        existing = self.ports.get(requested) if isinstance(requested, str) else None
        token = hello.get("resume")
        if (
            existing is not None
            and isinstance(token, str)
            and hmac.compare_digest(token.encode(), existing.resume.encode())
        ):
            existing.attach(peer, resumed=True)
            return existing
        settings = LineSettings.from_json(hello.get("settings") or {})
        info = hello.get("info") if isinstance(hello.get("info"), dict) else {}
        info = {k: info[k] for k in INFO_KEYS if isinstance(info.get(k), (int, str))}
        name = requested if isinstance(requested, str) and self._free(requested) else None
        name = name or self._free_name()
        port = BridgedPort(self, name, settings, info, user)
        self.ports[name] = port  # taken now: another page's hello may come during open()
        try:
            await port.open()
        except BaseException:
            self.ports.pop(name, None)
            raise
        port.attach(peer, resumed=False)
        return port

    def _free(self, name: str) -> bool:
        if not NAME.fullmatch(name) or name in self.ports:
            return False
        return not self._claimed_elsewhere(self.directory / f"{name}.json")

    def _free_name(self) -> str:
        for index in range(self.max_ports):
            if self._free(f"ttyWEB{index}"):
                return f"ttyWEB{index}"
        raise LookupError(f"all {self.max_ports} serial ports of this notebook are in use")

    def _claimed_elsewhere(self, file: Path) -> bool:
        """A description written by another live server sharing this home."""
        try:
            pid = int(json.loads(file.read_text()).get("pid", 0))
        except (OSError, ValueError, TypeError, AttributeError):
            return False
        return pid != self.pid and psutil.pid_exists(pid)

    def listing(self) -> list[dict]:
        return [port.description() for port in self.ports.values()]

    def describe(self, port: BridgedPort) -> None:
        """Write the port's description for the kernel's user, whole or not at all."""
        file = self.directory / f"{port.name}.json"
        temporary = file.with_name(f".{file.name}.{self.pid}")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as out:
                json.dump(port.description(), out, indent=1)
            os.replace(temporary, file)
        except OSError as error:
            self.log.warning("cgu-lab serial: cannot describe %s: %s", port.name, error)

    def forget(self, port: BridgedPort) -> None:
        if self.ports.get(port.name) is port:
            del self.ports[port.name]
            with contextlib.suppress(OSError):
                (self.directory / f"{port.name}.json").unlink()

    def remove_stale(self) -> None:
        """Symlinks and descriptions no live server owns (a crash, a restart) go."""
        for entry in self.directory.glob("ttyWEB*"):
            name = entry.name.removesuffix(".json")
            if not NAME.fullmatch(name) or self._claimed_elsewhere(self.directory / f"{name}.json"):
                continue
            if entry.is_symlink() or entry.name.endswith(".json"):
                with contextlib.suppress(OSError):
                    entry.unlink()

    def close_all(self, reason: str) -> None:
        for port in list(self.ports.values()):
            with contextlib.suppress(Exception):
                port.close(reason)

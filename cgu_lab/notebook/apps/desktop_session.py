"""One Linux desktop session: TigerVNC's Xvnc on a unix socket, openbox, a terminal.

jupyter-server-proxy starts this module as the desktop app's one process
(`python -m cgu_lab.notebook.apps.desktop_session <socket>`), supervises it,
relays the browser's websocket to the socket, and stops it with the server.
This module is only what `xinit` or TigerVNC's `vncserver` script would be,
without their fixed display numbers and TCP ports:

- the X display number is Xvnc's choice (`-displayfd`: the first free one),
  so two notebooks, or two installations, on one host never pick the same;
- VNC is served only on the unix socket jupyter-server-proxy names, in a
  folder only this user can enter (`-rfbport -1`: no TCP port at all);
- X clients need a cookie (`-auth`, MIT-MAGIC-COOKIE-1) kept beside the
  socket: the X socket in /tmp/.X11-unix is reachable by every account on
  the host, the cookie only by this user;
- every connection is shared (`-AlwaysShared`): a second viewer never
  disconnects the first;
- /tmp/.X11-unix, where every desktop of the host puts its X socket, must be
  root's (or, on a host of one account, this account's) and sticky: the
  platform makes it so at its start (backends/local_host.py); a folder of
  another user could let them replace this desktop's socket, so the session
  refuses to start, saying why (`check_x11_dir`).

The session ends when Xvnc ends; a SIGTERM (the server stopping) ends Xvnc,
the window manager and the terminal, and the parent's death does the same
(PR_SET_PDEATHSIG), so nothing outlives the notebook.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from ...core.x11_sockets import X11_DIR, problem

GEOMETRY = "1280x800"
TERMINAL_GEOMETRY = "100x30+10+10"
PR_SET_PDEATHSIG = 1
READY_TIMEOUT = 20.0


def _die_with_parent() -> None:
    """Ask the kernel to send SIGTERM when the parent dies (Linux; a no-op elsewhere)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _xauth(authority: Path, display: str, cookie: str) -> None:
    subprocess.run(
        ["xauth", "-q", "-f", str(authority), "add", display, "MIT-MAGIC-COOKIE-1", cookie],
        check=True,
        stdin=subprocess.DEVNULL,
    )


def _read_display(fd: int) -> str:
    """The display number Xvnc writes on `-displayfd` once it accepts connections."""
    data = b""
    with os.fdopen(fd, "rb") as stream:
        while not data.endswith(b"\n"):
            chunk = stream.read(1)
            if not chunk:
                break
            data += chunk
    number = data.strip().decode()
    if not number.isdigit():
        raise RuntimeError("Xvnc ended before it chose a display")
    return f":{number}"


class UnsafeX11Dir(RuntimeError):
    """The folder of X sockets could let another user replace this desktop's socket."""


def check_x11_dir(path: Path | None = None) -> None:
    """Refuse (UnsafeX11Dir, with the sentence) a folder of X sockets that is not root's
    or ours, or not sticky. A missing one is Xvnc's to make: the platform makes it at
    its start on a shared host, so it is missing only where this account is alone."""
    try:
        info = os.lstat(path or X11_DIR)
    except FileNotFoundError:
        return
    owner = str(info.st_uid)
    with contextlib.suppress(KeyError):
        owner = pwd.getpwuid(info.st_uid).pw_name
    wrong = problem(info.st_mode, info.st_uid, {0, os.geteuid()}, owner)
    if wrong is not None:
        raise UnsafeX11Dir(f"the desktop did not start: {wrong}")


def start_session(socket_path: str, title: str) -> tuple[subprocess.Popen, list[subprocess.Popen]]:
    check_x11_dir()
    folder = Path(socket_path).parent
    authority = folder / "Xauthority"
    cookie = secrets.token_hex(16)
    authority.touch(mode=0o600)
    _xauth(authority, ":0", cookie)  # the server loads every entry; the number is a placeholder
    reader, writer = os.pipe()
    xvnc = subprocess.Popen(
        [
            "Xvnc",
            *("-displayfd", str(writer)),
            *("-rfbunixpath", socket_path, "-rfbunixmode", "0600", "-rfbport", "-1"),
            *("-SecurityTypes", "None", "-AlwaysShared", "-nolisten", "tcp"),
            *("-auth", str(authority), "-geometry", GEOMETRY, "-depth", "24"),
            *("-desktop", title),
        ],
        pass_fds=(writer,),
        stdin=subprocess.DEVNULL,
        preexec_fn=_die_with_parent,
    )
    os.close(writer)
    display = _read_display(reader)
    _xauth(authority, display, cookie)
    # Where the browser (web_browser.py) and the openbox menu find this display.
    (folder / "desktop.display").write_text(display + "\n")
    env = {**os.environ, "DISPLAY": display, "XAUTHORITY": str(authority)}
    env.pop("JUPYTER_SERVER_URL", None)
    home = os.environ.get("HOME", "/")
    # openbox starts the terminal once it manages windows (`--startup`): started beside it,
    # a terminal mapped while openbox is still starting is left undecorated and unseen.
    # The terminal sits at the top left, where a first click finds it.
    terminal = shlex.join([_terminal(), "-geometry", TERMINAL_GEOMETRY])
    clients = [
        subprocess.Popen(
            ["openbox", "--startup", terminal],
            env=env,
            cwd=home,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
    ]
    return xvnc, clients


def _terminal() -> str:
    for name in ("xterm", "x-terminal-emulator"):
        if shutil.which(name):
            return name
    return "xterm"


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m cgu_lab.notebook.apps.desktop_session SOCKET [TITLE]")
        return 2
    _die_with_parent()
    title = argv[2] if len(argv) > 2 else "cgu-lab desktop"
    try:
        xvnc, clients = start_session(argv[1], title)
    except UnsafeX11Dir as error:
        print(f"cgu-lab: {error}", file=sys.stderr)
        return 1

    def stop(signum, frame) -> None:
        for process in [*clients, xvnc]:
            if process.poll() is None:
                process.terminate()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    code = xvnc.wait()
    stop(None, None)
    for process in clients:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))

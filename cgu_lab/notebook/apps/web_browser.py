"""A web browser on the notebook's desktop: Debian's Chromium (or Firefox ESR).

Why a window on the desktop rather than an app of its own: a browser needs a screen,
and the desktop already is one that the owner uses and a read-only visitor may only
watch (rfb.py). The browser is started by the server (`POST cgu-lab/apps/browser`,
owner and editors only, handlers.py) as its child: it runs as the notebook's user,
in its cgroup and in its private network namespace, so it reaches exactly what the
notebook's kernels reach: the notebook's own apps on its loopback (a Streamlit app
the student runs, the database's web client), and the internet through the
notebook's NAT, never the host's loopback or another notebook. It shows on the
desktop that is running (desktop_session.py writes its display beside its socket);
with no desktop it does not start.

Its profile lives in the home (`~/.local/share/cgu-lab/browser`), so bookmarks and
history survive restarts; it never checks for updates, syncs or phones home.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from ...core.errors import Invalid
from ...core.x11_sockets import X11_DIR

DISPLAY_FILE = "desktop.display"
AUTHORITY_FILE = "Xauthority"
PROGRAMS = ("chromium", "chromium-browser", "firefox-esr", "firefox")
CHROMIUM_FLAGS = (
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--password-store=basic",
)


def program() -> str | None:
    named = os.environ.get("CGU_BROWSER", "")
    if named and os.access(named, os.X_OK):
        return named
    for name in PROGRAMS:
        found = shutil.which(name)
        if found:
            return found
    return None


def check_url(url: object) -> str:
    """A page to open: http(s) or about:blank (what the owner types in the address bar)."""
    if url in (None, ""):
        return "about:blank"
    if not isinstance(url, str) or len(url) > 2000:
        raise Invalid("the browser opens an http(s) address of at most 2000 characters")
    if url == "about:blank":
        return url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise Invalid(f"the browser opens http:// or https:// addresses, not {url[:60]!r}")
    return url


def desktop_display(folder: Path) -> str | None:
    """The running desktop's display (":N"), or None when no desktop runs."""
    with contextlib.suppress(OSError):
        display = (folder / DISPLAY_FILE).read_text().strip()
        number = display.lstrip(":")
        if number.isdigit() and (Path(X11_DIR) / f"X{number}").exists():
            return display
    return None


def command(browser: str, url: str, profile: Path) -> list[str]:
    if "firefox" in Path(browser).name:
        return [browser, "--profile", str(profile), "--new-window", url]
    return [browser, *CHROMIUM_FLAGS, *_sandbox(), f"--user-data-dir={profile}", url]


def _sandbox() -> tuple[str, ...]:
    """Chromium's own sandbox where it can have one: it refuses to run as root with it, and
    it needs user namespaces, which a host may not give. Without it the notebook's
    account, cgroup and network namespace still bound what a page can reach."""
    if os.geteuid() == 0:
        return ("--no-sandbox",)
    with contextlib.suppress(OSError, ValueError):
        if int(Path("/proc/sys/user/max_user_namespaces").read_text()) == 0:
            return ("--no-sandbox",)
    return ()


def launch(folder: Path, url: str) -> subprocess.Popen:
    """Open `url` in a browser window on the running desktop (OSError: no desktop)."""
    browser = program()
    if browser is None:
        raise FileNotFoundError("no browser is installed on this machine")
    display = desktop_display(folder)
    if display is None:
        raise ConnectionError("the desktop is not running")
    home = Path(os.environ.get("HOME", str(Path.home())))
    profile = home / ".local" / "share" / "cgu-lab" / "browser"
    profile.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = {**os.environ, "DISPLAY": display, "XAUTHORITY": str(folder / AUTHORITY_FILE)}
    env.pop("JUPYTER_SERVER_URL", None)
    return subprocess.Popen(
        command(browser, url, profile),
        env=env,
        cwd=home,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

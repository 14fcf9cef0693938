"""Which apps this notebook offers, as jupyter-server-proxy servers.

The backend hands the notebook its environment's list in `$CGU_APPS` (JSON,
checked again here with core/apps.py: an environment edited by hand in the
database must not become a crash at start); without it the built-ins are
offered. A built-in is offered only where its program is installed (Xvnc and
openbox for the desktop, code-server for VS Code), so the launcher never
shows an app that cannot start.

jupyter-server-proxy starts each app on first use as a child of this server
(so inside the notebook's cgroup and limits, as its user), proxies it under
`<base_url>/<name>/` on the notebook's own origin, and stops it with the
server. The desktop and VS Code listen on unix sockets in `Apps.folder`, a
folder only this user can enter, made once per server process; so does a
declared app whose command names `{unix_socket}`. Other declared apps listen
on a loopback port (jupyter-server-proxy's choice unless the admin fixed one),
which every account on the machine can reach (core/apps.listens_on_socket).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from ...core import apps as rules
from ...core.errors import Invalid
from . import database, database_mariadb, web_browser
from .voila_demos import VoilaDemos

ENV_APPS = "CGU_APPS"
ENV_CODE_SERVER = "CGU_CODE_SERVER"
ENV_DBGATE = "CGU_DBGATE"
DESKTOP_SOCKET = "desktop.sock"
VSCODE_SOCKET = "vscode.sock"
# Requests reach an app with the caller's headers; the proxy's secret is not for apps.
HIDDEN_HEADERS = {"X-Cgu-Proxy-Secret": ""}
START_TIMEOUT = 60
# The database apps (core/apps.DATABASES): an environment offers at most one.
DATABASES: dict[str, type[database.Database]] = {
    rules.POSTGRES: database.PostgreSQL,
    rules.MARIADB: database_mariadb.MariaDB,
}


def code_server() -> str | None:
    """The code-server program: $CGU_CODE_SERVER, else the one on PATH."""
    named = os.environ.get(ENV_CODE_SERVER, "")
    if named and os.access(named, os.X_OK):
        return named
    return shutil.which("code-server")


def dbgate() -> str | None:
    """DbGate's folder (with its node_modules), the database's web client: $CGU_DBGATE,
    else `lib/cgu-lab/dbgate` beside a `bin` on PATH (scripts/dbgate.sh puts it in the
    platform's venv, whose bin every environment's notebooks have on PATH)."""
    named = os.environ.get(ENV_DBGATE, "")
    places = [named] if named else []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if folder:
            places.append(str(Path(folder).parent / "lib" / "cgu-lab" / "dbgate"))
    for place in places:
        if (Path(place) / "node_modules" / "dbgate-api").is_dir() and shutil.which("node"):
            return place
    return None


def rsession_proxy() -> dict[str, Any] | None:
    """jupyter-rsession-proxy's server entry, where RStudio Server (`rserver`) is installed."""
    if not shutil.which("rserver") and not Path("/usr/lib/rstudio-server/bin/rserver").exists():
        return None
    try:
        from jupyter_rsession_proxy import setup_rserver
    except ImportError:
        return None
    return dict(setup_rserver())


def desktop_installed() -> bool:
    return bool(shutil.which("Xvnc") and shutil.which("openbox") and shutil.which("xauth"))


def parse_declared(text: str) -> list[dict[str, Any]]:
    """$CGU_APPS: the environment's checked list ("" or absent: the built-ins)."""
    if not text:
        return rules.default_apps()
    try:
        apps = rules.check_apps(json.loads(text))
    except (ValueError, Invalid) as error:
        raise Invalid(f"this notebook's app list is not valid: {error}") from None
    return rules.default_apps() if apps is None else apps


def installation_tag() -> str:
    """A short tag of the installation (its instance id), for names in shared folders."""
    instance = os.environ.get("CGU_LAB_INSTANCE", "")
    return "".join(c for c in instance if c.isalnum())[:12] or "local"


def common_entry() -> dict[str, Any]:
    """What every app's jupyter-server-proxy entry has: no launcher card of theirs, the
    proxy's secret kept from the app, the time it has to start."""
    return {
        "launcher_entry": {"enabled": False},
        "request_headers_override": dict(HIDDEN_HEADERS),
        "timeout": START_TIMEOUT,
    }


@dataclass
class Apps:
    """This server's apps: what is offered, where their sockets live."""

    offered: list[dict[str, Any]]
    folder: Path
    missing: dict[str, str] = field(default_factory=dict)  # built-in name -> why not here
    database: database.Database | None = None
    browsers: list = field(default_factory=list)  # browser windows started on the desktop
    voila: VoilaDemos | None = None  # notebooks shown as pages (voila_demos.py)

    @classmethod
    def create(cls, declared: str) -> Apps:
        # The server's own runtime folder where it has one (the local backend's, removed
        # when the notebook stops, even after a kill); else the shared temporary folder,
        # under a name that says whose installation left it.
        runtime = os.environ.get("XDG_RUNTIME_DIR", "")
        if runtime and os.access(runtime, os.W_OK):
            folder = Path(tempfile.mkdtemp(prefix="apps-", dir=runtime))
        else:
            prefix = f"cgu-lab-{installation_tag()}-apps-"
            folder = Path(tempfile.mkdtemp(prefix=prefix, dir=tempfile.gettempdir()))
        folder.chmod(0o700)
        offered, missing = [], {}
        for app in parse_declared(declared):
            reason = "" if app.get("command") else _missing(app["name"])
            if reason:
                missing[app["name"]] = reason
            else:
                offered.append(app)
        apps = cls(offered, folder, missing)
        for name, engine in DATABASES.items():
            if apps.offers(name):
                home = Path(os.environ.get("HOME", str(Path.home())))
                apps.database = engine(folder, home)
                # Kernels, terminals and the desktop inherit these from the server.
                os.environ.update(apps.database.client_environment())
                apps.database.bind()
                break
        return apps

    @property
    def desktop_socket(self) -> str:
        return str(self.folder / DESKTOP_SOCKET)

    def offers(self, name: str) -> bool:
        return any(a["name"] == name for a in self.offered)

    def servers(self) -> dict[str, dict[str, Any]]:
        """The `ServerProxy.servers` entries of the offered apps (our own launcher shows
        them, not theirs). The notebooks shown with Voilà are not among them: the server
        routes those itself (voila_demos.py), to take them away again when unpublished."""
        servers = {app["name"]: self._server(app) for app in self.offered}
        return {name: server for name, server in servers.items() if server is not None}

    def _server(self, app: dict[str, Any]) -> dict[str, Any] | None:
        common = common_entry()
        if app["name"] == rules.DESKTOP:
            return {
                **common,
                "command": [
                    sys.executable,
                    *("-m", "cgu_lab.notebook.apps.desktop_session"),
                    "{unix_socket}",
                    app["title"],
                ],
                "unix_socket": self.desktop_socket,
                "raw_socket_proxy": True,
            }
        if app["name"] == rules.VSCODE:
            home = os.environ.get("HOME", str(Path.home()))
            data = Path(home) / ".local" / "share" / "cgu-lab" / "code-server"
            return {
                **common,
                # Its folders made ready first, then code-server itself (vscode_session.py).
                "command": [
                    sys.executable,
                    *("-m", "cgu_lab.notebook.apps.vscode_session"),
                    str(code_server()),
                    str(data),
                    home,
                    "{unix_socket}",
                ],
                "unix_socket": str(self.folder / VSCODE_SOCKET),
                "new_browser_tab": True,
            }
        if app["name"] in DATABASES:
            client = dbgate()
            if client is None or self.database is None:
                return None  # the database itself still serves kernels and terminals
            return {
                **common,
                "command": [
                    sys.executable,
                    *("-m", "cgu_lab.notebook.apps.database_client"),
                    client,
                    "{unix_socket}",
                    f"{{base_url}}{app['name']}/",
                    self.database.engine,
                    str(self.database.socket_path),
                ],
                "unix_socket": str(self.folder / f"{app['name']}-web.sock"),
                "new_browser_tab": True,
                "absolute_url": True,
            }
        if app["name"] == rules.BROWSER:
            return None  # a window on the desktop, started by our own route (handlers.py)
        if app["name"] == rules.RSTUDIO and not app.get("command"):
            entry = rsession_proxy() or {}
            return {**entry, **common, "new_browser_tab": True}
        server = {**common, "command": list(app["command"]), "new_browser_tab": True}
        if rules.listens_on_socket(app["command"]):
            server["unix_socket"] = str(self.folder / f"{app['name']}.sock")
        elif app.get("port"):
            server["port"] = app["port"]
        return server

    def close(self) -> None:
        """Stop what still runs of the apps, then remove their sockets' folder.

        A server that exits has jupyter-server-proxy stop its processes; one that only
        stops its extensions (embedded in another process, as in tests) would leave them
        running. Ours are the children whose command line names this folder, and the
        Voilà of each notebook shown as a page (its base URL ends with the app's name).
        """
        if self.database is not None:
            self.database.close()
        folder = str(self.folder)
        ours = []
        for browser in self.browsers:
            with contextlib.suppress(psutil.Error):
                if browser.poll() is None:
                    ours.append(psutil.Process(browser.pid))
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if any(folder in argument for argument in child.cmdline()) or self._shows(child):
                    ours.append(child)
        for child in ours:
            with contextlib.suppress(psutil.Error):
                child.terminate()
        _, alive = psutil.wait_procs(ours, timeout=5)
        for child in alive:
            with contextlib.suppress(psutil.Error):
                child.kill()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _shows(self, child: psutil.Process) -> bool:
        """Whether a child process is the Voilà of one of this server's pages."""
        if self.voila is None or not self.voila.registered:
            return False
        ends = tuple(f"/{name}/" for name in self.voila.registered)
        return any(
            argument.startswith("--Voila.base_url=") and argument.endswith(ends)
            for argument in child.cmdline()
        )


def _missing(name: str) -> str:
    if name == rules.DESKTOP and not desktop_installed():
        return "Xvnc, openbox or xauth is not installed on this machine"
    if name == rules.VSCODE and not code_server():
        return "code-server is not installed on this machine"
    if name == rules.POSTGRES and not database.PostgreSQL.installed():
        return "PostgreSQL (Debian's postgresql) is not installed on this machine"
    if name == rules.MARIADB and not database_mariadb.MariaDB.installed():
        return (
            "MariaDB (Debian's mariadb-server-core and mariadb-client) is not installed "
            "on this machine"
        )
    if name == rules.BROWSER:
        if not desktop_installed():
            return "the browser opens on the desktop, and Xvnc, openbox or xauth is not installed"
        if not web_browser.program():
            return "neither Chromium nor Firefox ESR is installed on this machine"
    if name == rules.RSTUDIO and rsession_proxy() is None:
        return (
            "RStudio Server is not installed here (it is in no registry this platform reaches): "
            "an administrator's image with rserver and jupyter-rsession-proxy offers it"
        )
    return ""

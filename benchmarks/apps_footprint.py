"""What each app of a notebook costs: its start, its memory at idle, the disk it adds.

The figures issue 28's closing note asks for, measured the way a notebook runs the
apps: a real notebook server (jupyter_server with the cgu-lab extension and
jupyter-server-proxy, no controller: proxy_overhead.py measures the controller's
proxy) as an unprivileged account (`nobody`: PostgreSQL and MariaDB refuse root,
and a notebook never runs as root), its apps declared in `$CGU_APPS` as an
environment hands them over, each started by the request that starts it for a
user:

- desktop: the websocket to `desktop/` until Xvnc's first RFB bytes;
- Chromium on the desktop: `POST cgu-lab/apps/browser` with a page on the
  loopback (as a notebook's own app serves one) until Chromium asks for it;
- VS Code: `GET vscode/` until code-server answers;
- PostgreSQL / MariaDB: the first `psql -c` / `mariadb -e` on the notebook's
  socket until its answer (the engine starts on that first connection; a new
  cluster's initialisation included, as at a notebook's first use);
- DbGate: `GET postgres/` until its page (the database already running);
- R kernel: `POST api/kernels` for the `ir` kernel the R recipe writes
  (backends/local_environments.write_kernels) until its first cell's reply;
- Voilà page: `POST cgu-lab/apps/voila` and `GET voila-<name>/` until the
  rendered page (Voilà and its kernel start on that request).

Memory: the processes that appeared under the notebook server for the app (the
server's descendants after the start less those before), RSS and PSS (psutil)
after IDLE seconds of nobody using them. The notebook server itself is the peer row.

Disk: what the app needs beyond a notebook without it. Debian packages: the
app's packages and the dependencies they pull that Debian's required packages and
python3 do not (installed sizes from dpkg-query; Chromium's also beyond the
desktop's, which it needs). Python packages: their installed files, less what
cgu-lab itself requires. Folders (code-server, DbGate with node_modules): du.

Apps whose programs are not on this machine are listed as "not here", with why.
Run from the repository root: `.venv/bin/python benchmarks/apps_footprint.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.client
import http.server
import importlib.metadata
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import psutil
import websockets
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from cgu_lab.backends.local_environments import write_kernels
from cgu_lab.core import environments
from cgu_lab.notebook.apps import database, database_mariadb, registry, voila_demos, web_browser

SECRET = "bench-secret"
ACCOUNT = "nobody"
OWNER = {"X-Cgu-User": ACCOUNT, "X-Cgu-Access": "owner", "X-Cgu-Proxy-Secret": SECRET}
XSRF = {"X-XSRFToken": "x", "Cookie": "_xsrf=x"}
IDLE = 10.0  # seconds an app is left alone before its memory is read
VENV = Path(sys.prefix)
PIP_INSTALL = (sys.executable, "-m", "pip", "install", "--quiet", "--no-index")
WHEELHOUSE = Path(__file__).resolve().parent.parent / ".build" / "pip-cache" / "wheelhouse"
LESSON = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "lesson",
            "metadata": {},
            "outputs": [],
            "source": "print('rendered by voila:', 6 * 7)",
        }
    ],
    "metadata": {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}
# Debian packages each app installs (the recipes' and scripts/deps.sh's).
DEBIAN = {
    "desktop": ("tigervnc-standalone-server", "openbox", "xterm", "xauth"),
    "browser": ("chromium",),
    "postgres": environments.SYSTEM_PACKAGES["database"],
    "mariadb": environments.SYSTEM_PACKAGES["database-mariadb"],
    "r": environments.SYSTEM_PACKAGES["r"],
}


# -- the disk -------------------------------------------------------------------------


def _dpkg() -> dict[str, dict]:
    """Every installed Debian package: its size (KiB), dependencies, what it provides."""
    fields = "${Package}\t${Installed-Size}\t${Pre-Depends}, ${Depends}\t${Provides}\t"
    fields += "${Priority}\t${Essential}\t${db:Status-Abbrev}\n"
    try:
        text = subprocess.run(
            ["dpkg-query", "-W", "-f", fields], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    packages = {}
    for line in text.splitlines():
        name, size, depends, provides, priority, essential, status = line.split("\t")
        if not status.startswith("ii"):
            continue
        alternatives = [
            [re.split(r"[\s(:]", a.strip())[0] for a in group.split("|")]
            for group in depends.split(",")
            if group.strip()
        ]
        packages[name] = {
            "size": int(size or 0),
            "depends": alternatives,
            "provides": [re.split(r"[\s(]", p.strip())[0] for p in provides.split(",") if p],
            "base": priority == "required" or essential == "yes",
        }
    return packages


class Debian:
    """Closures of installed packages' dependencies (alternatives: the first installed)."""

    def __init__(self) -> None:
        self.packages = _dpkg()
        self.providers: dict[str, str] = {}
        for name, package in self.packages.items():
            for virtual in package["provides"]:
                self.providers.setdefault(virtual, name)
        base = [n for n, p in self.packages.items() if p["base"]] + ["python3"]
        self.base = self.closure(base)

    def _installed(self, name: str) -> str | None:
        if name in self.packages:
            return name
        return self.providers.get(name)

    def closure(self, names) -> set[str]:
        seen: set[str] = set()
        todo = [n for n in (self._installed(n) for n in names) if n]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            for group in self.packages[name]["depends"]:
                found = next((f for f in map(self._installed, group) if f), None)
                if found and found not in seen:
                    todo.append(found)
        return seen

    def missing(self, names) -> list[str]:
        return [n for n in names if self._installed(n) is None]

    def added(self, names, beyond=()) -> tuple[float, int]:
        """MB the packages add with the dependencies nothing in `beyond` or the base
        pulls, and how many packages that is."""
        extra = self.closure(names) - self.base - self.closure(beyond)
        return sum(self.packages[n]["size"] for n in extra) / 1024, len(extra)


def _requirements(name: str) -> list[str]:
    found = []
    for text in importlib.metadata.requires(name) or []:
        requirement = Requirement(text)
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            found.append(requirement.name)
    return found


def python_closure(roots, stop=()) -> set[str]:
    seen: set[str] = set()
    todo = [canonicalize_name(r) for r in roots]
    stop = {canonicalize_name(s) for s in stop}
    while todo:
        name = todo.pop()
        if name in seen or name in stop:
            continue
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        seen.add(name)
        todo.extend(canonicalize_name(r) for r in _requirements(name))
    return seen


def python_size(names) -> float:
    total = 0
    for name in names:
        distribution = importlib.metadata.distribution(name)
        for file in distribution.files or []:
            with contextlib.suppress(OSError):
                total += Path(distribution.locate_file(file)).stat().st_size
    return total / 2**20


def python_added(roots) -> tuple[float, list[str]]:
    """MB of the packages `roots` pull that cgu-lab's other requirements do not; and the
    roots found neither in this environment nor in the build's wheel cache.

    The recipes' packages (JupySQL, PyMySQL) are in the environments the platform builds,
    not in its own: those are installed from the wheel cache the builds fill
    (.build/pip-cache, as the tests' builds use it) into a folder of their own, as a
    build would, and measured there."""
    names = [Requirement(r).name for r in roots]
    base = python_closure(["cgu-lab"], stop=names)
    absent = [n for n in names if not python_closure([n])]
    if not absent:
        return python_size(python_closure(names) - base), []
    if not WHEELHOUSE.is_dir():
        return python_size(python_closure(names) - base), absent
    with tempfile.TemporaryDirectory(prefix="cgu-apps-bench-pip-") as target:
        done = subprocess.run(
            [*PIP_INSTALL, "--find-links", str(WHEELHOUSE), "--target", target, *roots],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            return python_size(python_closure(names) - base), absent
        total = 0
        for found in importlib.metadata.distributions(path=[target]):
            if canonicalize_name(found.metadata["Name"]) in base:
                continue
            for file in found.files or []:
                with contextlib.suppress(OSError):
                    total += Path(found.locate_file(file)).stat().st_size
        return total / 2**20, []


def folder_size(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total / 2**20


def disk(app: str, debian: Debian) -> str:
    """What the app adds to an environment or image, in words with figures."""
    parts = []
    if app in DEBIAN:
        beyond = DEBIAN["desktop"] if app == "browser" else ()
        size, count = debian.added(DEBIAN[app], beyond)
        parts.append(f"{size:.0f} MB deb ({count} pkgs)")
    if app in ("vscode", "dbgate"):
        folder = VENV / "lib" / "cgu-lab" / ("code-server" if app == "vscode" else "dbgate")
        parts.append(f"{folder_size(folder):.0f} MB {folder.name}/")
        node, count = debian.added(["nodejs"])
        parts.append(f"{node:.0f} MB nodejs deb")
    roots = {
        "postgres": [r.text for r in environments.recipe("database").packages],
        "mariadb": [r.text for r in environments.recipe("database-mariadb").packages],
        "voila": ("voila",),
    }.get(app)
    if roots:
        size, absent = python_added(roots)
        note = f", {'/'.join(absent)} not here" if absent else ""
        parts.append(f"{size:.0f} MB pip{note}")
    return " + ".join(parts) or "-"


# -- the notebook server ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port: int, method: str, path: str, body=None, timeout=120) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {**OWNER, **XSRF, "Content-Type": "application/json"}
    data = json.dumps(body) if body is not None else None
    connection.request(method, path, body=data, headers=headers)
    response = connection.getresponse()
    return response.status, response.read()


class Server:
    """A notebook server as `nobody`, offering `apps`; its home a folder of its own."""

    def __init__(self, apps: list) -> None:
        # As root, the notebook runs as `nobody`; otherwise as the account running this.
        root = os.geteuid() == 0
        self.account = pwd.getpwnam(ACCOUNT) if root else pwd.getpwuid(os.getuid())
        self.as_account = (
            {"user": self.account.pw_uid, "group": self.account.pw_gid, "extra_groups": []}
            if root
            else {}
        )
        self.home = Path(tempfile.mkdtemp(prefix="cgu-apps-bench-"))
        self.runtime = self.home / ".runtime"
        (self.home / "lesson.ipynb").write_text(json.dumps(LESSON))
        write_kernels(self.home / ".env", environments.recipe("r"))
        self.runtime.mkdir(mode=0o700)
        for path in [self.home, *self.home.rglob("*")]:
            if root:
                os.chown(path, self.account.pw_uid, self.account.pw_gid)
        self.home.chmod(0o700)
        self.port = free_port()
        # What the desktop's and the browser's starts leave open until the server stops.
        self.loop: asyncio.AbstractEventLoop | None = None
        self.desktop = None  # the desktop's websocket
        self.site: http.server.ThreadingHTTPServer | None = None  # the browser's page
        env = {
            "PATH": f"{VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "HOME": str(self.home),
            "USER": self.account.pw_name,
            "XDG_RUNTIME_DIR": str(self.runtime),
            "TMPDIR": str(self.runtime),
            "JUPYTER_PATH": str(self.home / ".env" / "share" / "jupyter"),
            "JUPYTER_CONFIG_DIR": str(self.home / ".jupyter"),
            "JUPYTER_RUNTIME_DIR": str(self.runtime / "jupyter"),
            "CGU_PROXY_SECRET": SECRET,
            "CGU_NOTEBOOK_OWNER": ACCOUNT,
            "CGU_APPS": json.dumps(apps),
        }
        command = [
            *(sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1"),
            f"--ServerApp.port={self.port}",
            f"--ServerApp.root_dir={self.home}",
            "--ServerApp.identity_provider_class=cgu_lab.notebook.identity.ProxyIdentityProvider",
            "--ServerApp.authorizer_class=cgu_lab.notebook.authorizer.ShareAuthorizer",
        ]
        self.log = open(self.home / "server.log", "wb")  # noqa: SIM115 - closed in stop()
        began = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            env=env,
            cwd=self.home,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            **self.as_account,
        )
        deadline = time.monotonic() + 90
        while True:
            with contextlib.suppress(OSError):
                if request(self.port, "GET", "/cgu-lab/apps", timeout=2)[0] == 200:
                    break
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError("the notebook server did not start")
            time.sleep(0.2)
        self.started_in = time.perf_counter() - began

    def descendants(self) -> set[int]:
        """The server's process tree, and what its apps started that left it (Chromium's
        crash handlers are reparented to init): the account's processes naming this home."""
        found = set()
        with contextlib.suppress(psutil.Error):
            found = {p.pid for p in psutil.Process(self.process.pid).children(recursive=True)}
        for process in psutil.process_iter(["uids", "cmdline"]):
            uids, cmdline = process.info["uids"], process.info["cmdline"] or []
            if uids and uids.real == self.account.pw_uid and str(self.home) in " ".join(cmdline):
                found.add(process.pid)
        found.discard(self.process.pid)
        return found

    def apps_folder(self) -> Path:
        return next(self.runtime.glob("apps-*"))

    def stop(self) -> None:
        tree = []
        for pid in self.descendants():
            with contextlib.suppress(psutil.Error):
                tree.append(psutil.Process(pid))
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(30)
        for process in tree:
            with contextlib.suppress(psutil.Error):
                process.kill()
        self.process.kill()
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)


def memory(pids) -> tuple[float, float, int]:
    """MB of RSS and PSS of the processes still alive, and how many there are."""
    rss = pss = count = 0
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            info = psutil.Process(pid).memory_full_info()
            rss, pss, count = rss + info.rss, pss + info.pss, count + 1
    return rss / 2**20, pss / 2**20, count


def measured(server: Server, start) -> tuple[float, tuple[float, float, int]]:
    """Seconds `start()` takes to its app's first answer, and the memory of the processes
    it added to the server's tree after IDLE seconds."""
    before = server.descendants()
    began = time.perf_counter()
    start()
    seconds = time.perf_counter() - began
    time.sleep(IDLE)
    return seconds, memory(server.descendants() - before)


# -- how each app is started ------------------------------------------------------------


def open_desktop(server: Server) -> None:
    async def first_bytes() -> None:
        url = f"ws://127.0.0.1:{server.port}/desktop/"
        server.desktop = await websockets.connect(url, additional_headers=OWNER, max_size=None)
        version = await server.desktop.recv()
        assert bytes(version if isinstance(version, bytes) else version.encode()).startswith(
            b"RFB"
        ), version

    server.loop = asyncio.new_event_loop()
    server.loop.run_until_complete(first_bytes())


def open_browser(server: Server) -> None:
    arrived = threading.Event()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            arrived.set()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<title>the notebook app</title><h1>the notebook app</h1>")

        def log_message(self, *args) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{site.server_address[1]}/"
    deadline = time.monotonic() + 60
    while True:  # the desktop's display is known once Xvnc has chosen it
        status, body = request(server.port, "POST", "/cgu-lab/apps/browser", {"url": url})
        if status == 202:
            break
        assert status == 409 and time.monotonic() < deadline, (status, body)
        time.sleep(0.1)
    assert arrived.wait(120), "Chromium never asked for the page"
    server.site = site


def open_path(path: str, expect: tuple[int, ...] = (200,)):
    def start(server: Server) -> None:
        status, body = request(server.port, "GET", path)
        assert status in expect, (path, status, body[:300])

    return start


def _answers_42(server: Server, argv: list[str]) -> None:
    """A database's own client, run as the notebook's account, asks it for 41 + 1."""
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        **server.as_account,
        env={"PATH": os.environ["PATH"], "HOME": str(server.home)},
        cwd=server.home,
        timeout=120,
    )
    assert done.stdout.strip() == "42", done


def psql(server: Server) -> None:
    folder, user = server.apps_folder(), server.account.pw_name
    _answers_42(
        server, ["psql", "-h", str(folder), "-U", user, "-d", user, "-Atc", "SELECT 41 + 1"]
    )


def mariadb(server: Server) -> None:
    folder, user = server.apps_folder(), server.account.pw_name
    client = shutil.which("mariadb") or "mysql"
    socket = f"--socket={folder / 'mysql.sock'}"
    _answers_42(server, [client, socket, "-u", user, "-N", "-e", "SELECT 41 + 1"])


def r_kernel(server: Server) -> None:
    status, body = request(server.port, "POST", "/api/kernels", {"name": "ir"})
    assert status == 201, body
    kernel = json.loads(body)["id"]

    async def first_cell() -> None:
        url = f"ws://127.0.0.1:{server.port}/api/kernels/{kernel}/channels"
        async with websockets.connect(url, additional_headers=OWNER) as ws:
            msg_id = uuid.uuid4().hex
            header = {"msg_id": msg_id, "username": ACCOUNT, "session": uuid.uuid4().hex}
            header.update({"date": "", "msg_type": "execute_request", "version": "5.3"})
            content = {"code": "cat(sum(1:10))", "silent": False, "store_history": False}
            content.update({"user_expressions": {}, "allow_stdin": False})
            message = {"header": header, "parent_header": {}, "metadata": {}}
            await ws.send(json.dumps({**message, "channel": "shell", "content": content}))
            while True:
                reply = json.loads(await ws.recv())
                if reply["parent_header"].get("msg_id") != msg_id:
                    continue
                if reply["msg_type"] == "stream":
                    assert reply["content"]["text"].strip() == "55", reply
                    return

    asyncio.run(first_cell())


def voila_page(server: Server) -> None:
    status, body = request(server.port, "POST", "/cgu-lab/apps/voila", {"notebook": "lesson.ipynb"})
    assert status == 200, body
    app = json.loads(body)["app"]
    status, page = request(server.port, "GET", f"/{app}")
    assert status == 200 and b"rendered by voila: 42" in page, (status, page[:300])


# -- the table --------------------------------------------------------------------------


def why_not(app: str) -> str:
    """Why an app cannot be measured on this machine ("" where it can)."""
    if app == "desktop" or app == "browser":
        if not registry.desktop_installed():
            return "Xvnc, openbox or xauth is not installed"
        if app == "browser" and not web_browser.program():
            return "neither Chromium nor Firefox ESR is installed"
    if app == "vscode" and not registry.code_server():
        return "code-server is not installed (scripts/code-server.sh)"
    if app == "postgres" and not database.PostgreSQL.installed():
        return "PostgreSQL is not installed (scripts/deps.sh --test)"
    if app == "dbgate" and (why_not("postgres") or registry.dbgate() is None):
        return "DbGate or PostgreSQL is not installed (scripts/dbgate.sh)"
    if app == "mariadb" and not database_mariadb.MariaDB.installed():
        return "MariaDB is not installed (scripts/deps.sh)"
    if app == "r" and not shutil.which("R"):
        return "R is not installed (scripts/deps.sh --test)"
    if app == "r":
        done = subprocess.run(["R", "--slave", "-e", "library(IRkernel)"], capture_output=True)
        if done.returncode:
            return "IRkernel (r-cran-irkernel) is not installed"
    if app == "voila" and voila_demos.voila_program() is None:
        return "Voilà is not installed in this environment"
    return ""


TITLES = {
    "server": "notebook server (peer)",
    "desktop": "Linux desktop",
    "browser": "Chromium on the desktop",
    "vscode": "VS Code",
    "postgres": "PostgreSQL",
    "dbgate": "DbGate (web client)",
    "mariadb": "MariaDB",
    "r": "R kernel",
    "voila": "Voilà page",
}
# The server's offered apps, and the order the apps start in (the browser on the desktop,
# DbGate on its running database).
FIRST = (
    ["desktop", "browser", "vscode", "postgres"],
    [
        ("desktop", open_desktop),
        ("browser", open_browser),
        ("vscode", open_path("/vscode/", (200, 302))),
        ("postgres", psql),
        ("dbgate", open_path("/postgres/")),
        ("r", r_kernel),
        ("voila", voila_page),
    ],
)
SECOND = (["mariadb"], [("mariadb", mariadb)])


def main() -> int:
    # The notebook's PATH: the platform's venv first (code-server, DbGate's folder beside it).
    os.environ["PATH"] = f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    debian = Debian()
    load = os.getloadavg()
    rows: dict[str, tuple] = {}
    for offered, steps in (FIRST, SECOND):
        server = Server(offered)
        try:
            if "server" not in rows:
                time.sleep(IDLE)
                with contextlib.suppress(psutil.Error):
                    info = psutil.Process(server.process.pid).memory_full_info()
                    rows["server"] = (server.started_in, (info.rss / 2**20, info.pss / 2**20, 1))
            for app, start in steps:
                reason = why_not(app)
                if reason:
                    rows[app] = reason
                    continue
                try:
                    rows[app] = measured(server, functools.partial(start, server))
                except (AssertionError, OSError, StopIteration, subprocess.SubprocessError) as e:
                    rows[app] = f"failed: {str(e)[:120]}"
                print(f"  measured {app}", file=sys.stderr, flush=True)
        finally:
            if server.site is not None:
                server.site.shutdown()
            if server.loop is not None and server.desktop is not None:
                with contextlib.suppress(websockets.WebSocketException, OSError):
                    server.loop.run_until_complete(server.desktop.close())
            server.stop()
    after = os.getloadavg()
    print(
        f"apps of a notebook, each started as a user's first request starts it; memory after "
        f"{IDLE:.0f} s idle; {os.cpu_count()} CPUs, load (1/5/15 min) before "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after {after[0]:.2f} {after[1]:.2f} "
        f"{after[2]:.2f}"
    )
    print(f"{'app':26s} {'start':>8s} {'RSS MB':>8s} {'PSS MB':>8s} {'procs':>5s}  disk it adds")
    for app, title in TITLES.items():
        row = rows.get(app, "not measured")
        if isinstance(row, str):
            print(f"{title:26s} {'not here' if not row.startswith('failed') else '':>8s}  {row}")
            continue
        seconds, (rss, pss, count) = row
        added = disk(app, debian) if app != "server" else "-"
        print(f"{title:26s} {seconds:7.2f}s {rss:8.0f} {pss:8.0f} {count:5d}  {added}")
    print(
        "start: to the first answer of a first use (the databases' first start makes their "
        "cluster); "
        "disk: Debian packages with the dependencies Debian's required packages and python3 do "
        "not pull (Chromium's: nor the desktop's); nodejs is shared by VS Code and DbGate; pip: "
        "installed files of the packages cgu-lab does not already require"
    )
    return 1 if any(isinstance(r, str) and r.startswith("failed") for r in rows.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

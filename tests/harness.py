"""Drive a real controller process, as tests and benchmarks both do.

The controller runs as `cgu-lab controller` in a subprocess with its own data
directory, exactly as a deployment would; clients log in through the login
form and talk to it over loopback. (tests/inprocess.py runs the same app in the
test's own process, with the same `Session` clients.)

`Logins` is the one way tests get a logged-in client (conftest's `login`);
`wait_state` / `wait_running` wait for a notebook and, when it does not get there,
fail with its last message and the tail of its server log.

For a notebook server in the test's own process (pytest-jupyter's `jp_serverapp`),
`extension_server_config` is the `jp_server_config` of one with the cgu_lab extension,
and `proxy_headers` names the caller as the controller's proxy does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import httpx

from cgu_lab.core.origins import notebook_slug

BIN = Path(sys.executable).parent
PASSWORD = "correct-horse-battery"
LOGS = Path(__file__).resolve().parent.parent / "artifacts" / "logs"
# Controller processes started by this test run, for conftest's report of a failed test.
STARTED: list[Controller] = []


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Controller:
    """A controller process with its data directory; restartable."""

    def __init__(
        self,
        data_dir: Path,
        db_url: str | None = None,
        env: dict | None = None,
        backend: str = "local",
    ) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db_url = db_url
        self.backend = backend
        self.env = {**os.environ, "CGU_LAB_START_TIMEOUT": "60", **(env or {})}
        self.process: subprocess.Popen | None = None
        self.stopped_at: float | None = None  # time.monotonic() of the last stop
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log = LOGS / f"controller-{self.port}.log"

    def cli(self, *args: str, stdin: str | None = None) -> str:
        return cli(self.data_dir, *args, stdin=stdin, db_url=self.db_url, env=self.env)

    def create_user(self, name: str, role: str = "student", group: str | None = None) -> None:
        args = ["admin", "create-user", name, "--role", role, "--password-stdin"]
        if group:
            args += ["--group", group]
        self.cli(*args, stdin=PASSWORD + "\n")

    def create_users(self, users) -> None:
        """Accounts (name, role) with the test password, by one `cgu-lab admin import`.

        The command runs in the test's own process (`in_this_process`): the same code on
        the same database, without a new Python importing the platform, which cost every
        module with a controller process seconds (2.0 s against 0.3 s at load 8 on the
        shared 2-core machine, 5.3 s against 1.3 s at load 18). `cli` runs a command as a
        process, for the tests of the command line itself."""
        roster = "username,role,password\n" + "".join(f"{n},{r},{PASSWORD}\n" for n, r in users)
        path = self.data_dir.parent / f"accounts-{uuid.uuid4().hex}.csv"
        path.write_text(roster)
        args = ["admin", "import", str(path), "--data-dir", str(self.data_dir)]
        try:
            in_this_process([*args, *(["--db-url", self.db_url] if self.db_url else [])], self.env)
        finally:
            path.unlink()

    def start(self) -> Controller:
        command = [
            str(BIN / "cgu-lab"),
            "controller",
            "--data-dir",
            str(self.data_dir),
            "--port",
            str(self.port),
        ]
        if self.db_url:
            command += ["--db-url", self.db_url]
        command += ["--backend", self.backend]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                command, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        if self not in STARTED:
            STARTED.append(self)
        deadline = time.monotonic() + 60  # a loaded CI machine imports slowly
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"controller exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)  # a process starting: nothing to wait on but its port
        raise RuntimeError("controller did not answer in 60 s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.stopped_at = time.monotonic()
        self.process = None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        return tail(self.log, lines)

    def client(self, name: str, password: str = PASSWORD) -> Session:
        """A client logged in through the login form (prefer conftest's `login`)."""
        return Session(self.url, name, password, site=self)

    def anonymous(self, address: str | None = None, **kwargs) -> httpx.Client:
        """A client that has not logged in (cookies and headers as given), connecting from
        `address` (a loopback address: what the login throttle counts by)."""
        if address is not None:
            kwargs["transport"] = httpx.HTTPTransport(local_address=address)
        return httpx.Client(base_url=self.url, **kwargs)

    def kill_notebooks(self) -> None:
        """Stop every notebook server of this installation (end of a test module)."""
        kill_notebooks(self.data_dir)


def cli(
    data_dir: Path,
    *args: str,
    stdin: str | None = None,
    db_url: str | None = None,
    env: dict | None = None,
) -> str:
    """`cgu-lab <args>` on the installation in `data_dir`, as its administrator runs it
    beside the controller (a process or an app in this one); its output, or a
    RuntimeError with what it printed on failing."""
    command = [str(BIN / "cgu-lab"), *args, "--data-dir", str(data_dir)]
    if db_url:
        command += ["--db-url", db_url]
    result = subprocess.run(
        command, input=stdin, capture_output=True, text=True, env=env, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"cgu-lab {' '.join(args)} failed: {result.stderr}")
    return result.stdout


# One command at a time in this process: the environment it reads is the process's, and
# Alembic's migration context is module state (two installations prepared at once,
# tests/security/test_host_names.py, would share it).
IN_THIS_PROCESS = threading.Lock()


def in_this_process(args: list[str], env: dict) -> None:
    """`cgu-lab <args>` run by the test's process, with `env`'s CGU_LAB_* settings as a
    process started with `env` would read them; a RuntimeError when it fails. On a thread
    of its own: the command's `asyncio.run` leaves the test's event loop alone."""
    from cgu_lab import cli as command

    given = {k: v for k, v in env.items() if k.startswith("CGU_LAB_")}
    with IN_THIS_PROCESS:
        saved = {k: os.environ.get(k) for k in given}
        os.environ.update(given)
        try:
            with concurrent.futures.ThreadPoolExecutor(1) as thread:
                code = thread.submit(command.main, args).result()
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    if code != 0:
        raise RuntimeError(f"cgu-lab {' '.join(args)} failed with exit code {code}")


def kill_notebooks(data_dir: Path) -> None:
    """Stop every notebook server of the installation in `data_dir`, and remove its cgroups
    (a controller process or an in-process app with the real local backend leaves them
    running when it stops, as a deployment's controller does)."""
    marker = (
        (data_dir / "instance-id").read_text().strip()
        if (data_dir / "instance-id").exists()
        else None
    )
    if not marker:
        return
    import psutil

    killed = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("CGU_LAB_INSTANCE") == marker:
                process.kill()
                killed.append(process)
        except (psutil.Error, OSError):
            continue
    psutil.wait_procs(killed, timeout=10)
    # ... and the installation's cgroups (cgu-lab/<instance>/nb-<id>, v1 or v2), with the
    # group its controller ran in (`platform`, left behind by a killed controller).
    for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory"):
        parent = Path(root) / "cgu-lab" / marker
        children = [*parent.glob("nb-*"), parent / "platform"] if parent.is_dir() else []
        for child in sorted(children):
            with contextlib.suppress(OSError):
                child.rmdir()
        with contextlib.suppress(OSError):
            parent.rmdir()
    forget_accounts(marker)


def forget_accounts(instance: str) -> None:
    """Remove the Unix accounts and groups the installation `instance` made.

    Every test installation makes its own (`cgu-<tag>-<user>`, its scorer, its storage
    groups), all system ids: left behind, a few full runs use up the host's ~900 and
    every later `useradd` fails. Only what names this installation is removed: an
    account's comment carries the installation id, a group's name its tag."""
    import grp
    import pwd

    from cgu_lab.backends.local_accounts import installation_tag

    if os.geteuid() != 0:
        return
    tag = installation_tag(instance)
    for entry in pwd.getpwall():
        if entry.pw_gecos.startswith(f"cgu-lab {instance} "):
            subprocess.run(["userdel", entry.pw_name], capture_output=True, check=False)
    for group in grp.getgrall():
        if group.gr_name.startswith((f"cgu-{tag}-", f"cgs-{tag}-")):
            subprocess.run(["groupdel", group.gr_name], capture_output=True, check=False)


def notebook_host(base_url: str, owner: str, name: str) -> str:
    """The Host of a notebook's own origin (`<slug>.localhost:<port>`, as browsers see it)."""
    port = httpx.URL(base_url).port
    return f"{notebook_slug(owner, name)}.localhost:{port}"


def set_cookies(response: httpx.Response) -> dict[str, str]:
    """The cookies a response sets, by name (an empty value: deleted)."""
    found = {}
    for line in response.headers.get_list("set-cookie"):
        pair = line.split(";", 1)[0]
        name, _, value = pair.partition("=")
        found[name.strip()] = value.strip()
    return found


def login_cookie(client: httpx.Client) -> dict[str, str]:
    """The controller's log-in cookie a logged-in client holds, {name: value}: its name
    is the installation's own (Settings.session_cookie), so tests never spell it."""
    found = {k: v for k, v in client.cookies.items() if "cgu-lab-session-" in k}
    assert len(found) == 1, f"expected one log-in cookie, found {sorted(client.cookies.keys())}"
    return found


def login_cookie_header(client: httpx.Client) -> str:
    """The log-in cookie as a Cookie header's value."""
    ((name, value),) = login_cookie(client).items()
    return f"{name}={value}"


class HandOffRefused(Exception):
    """The controller would not log this user in on that notebook's origin."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.text)
        self.response = response


class Session(httpx.Client):
    """An HTTP client logged in through the login form, sending the CSRF header.

    Paths below /notebook/<owner>/<name>/ are sent to that notebook's own origin
    (loopback with its Host header) with the cookie a browser gets there from
    the log-in hand-off, which `notebook_cookie` walks like a browser does.
    """

    def __init__(
        self,
        base_url: str,
        name: str,
        password: str,
        transport: httpx.BaseTransport | None = None,
        site=None,
    ) -> None:
        super().__init__(
            base_url=base_url, timeout=120, follow_redirects=False, transport=transport
        )
        self.name = name
        # The Controller (or tests/inprocess.InProcess) logged into: where notebook logs are.
        self.site = site
        self._origin_cookies: dict[tuple[str, str], str] = {}
        response = self.post(
            "/login", data={"name": name, "password": password, "next": "/notebooks"}
        )
        assert response.status_code == 303, response.text
        page = self.get("/account")
        self.csrf = re.search(r'name="csrf-token" content="([^"]*)"', page.text).group(1)
        self.headers["X-CSRF-Token"] = self.csrf

    def notebook_cookie(self, owner: str, name: str, fresh: bool = False) -> str:
        """`cgu-nb-<id>=<value>` for a notebook's origin, through the hand-off."""
        key = (owner, name)
        if key in self._origin_cookies and not fresh:
            return self._origin_cookies[key]
        host = notebook_host(str(self.base_url), owner, name)
        path = f"/notebook/{owner}/{name}/lab"
        start = super().request("GET", path, headers={"Host": host, "Accept": "text/html"})
        assert start.status_code == 303, f"hand-off did not start: {start.status_code} {start.text}"
        state = "; ".join(f"{k}={v}" for k, v in set_cookies(start).items())
        back = super().request("GET", start.headers["location"])
        if back.status_code != 303:
            raise HandOffRefused(back)
        callback = httpx.URL(back.headers["location"])
        done = super().request(
            "GET",
            callback.raw_path.decode(),
            headers={"Host": callback.netloc.decode(), "Cookie": state},
        )
        assert done.status_code == 303, f"hand-off failed: {done.status_code} {done.text}"
        cookie = next(f"{k}={v}" for k, v in set_cookies(done).items() if v and "state" not in k)
        self._origin_cookies[key] = cookie
        return cookie

    def notebook_headers(self, owner: str, name: str, **extra: str) -> dict[str, str]:
        """Host and cookie of a browser on the notebook's origin, plus `extra` headers."""
        host = notebook_host(str(self.base_url), owner, name)
        return {"Host": host, "Cookie": self.notebook_cookie(owner, name), **extra}

    def notebook_socket(self, path: str, cookie: str | None = None) -> tuple[str, dict, dict]:
        """(uri, headers, connect options) of a websocket a browser opens on a notebook's origin.

        `cookie` replaces the origin cookie (e.g. a controller session, to show it is refused).
        """
        owner, name = path.split("/")[2:4]
        host = notebook_host(str(self.base_url), owner, name)
        sent = cookie if cookie is not None else self.notebook_cookie(owner, name)
        headers = {"Cookie": sent, "Origin": f"http://{host}"}
        return f"ws://{host}{path}", headers, {"host": "127.0.0.1", "port": self.base_url.port}

    def request(self, method: str, url, **kwargs):
        path = str(url)
        if path.startswith("/notebook/") and not path.startswith("/notebook/auto-start/"):
            owner, name = path.split("/")[2:4]
            headers = dict(kwargs.pop("headers", None) or {})
            given = headers.pop("Cookie", "")
            try:
                mine = self.notebook_headers(owner, name)
            except HandOffRefused as refused:
                return refused.response  # what a browser lands on: the controller's refusal
            headers["Host"] = mine["Host"]
            headers["Cookie"] = "; ".join(c for c in (given, mine["Cookie"]) if c)
            # As JupyterLab does for state changes: the notebook's XSRF cookie and header.
            if method.upper() not in ("GET", "HEAD") and "X-XSRFToken" not in headers:
                headers["X-XSRFToken"] = "x"
                headers["Cookie"] += "; _xsrf=x"
            kwargs["headers"] = headers
        return super().request(method, url, **kwargs)

    def __enter__(self) -> Session:  # already opened by the login in __init__
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ok(self, method: str, url: str, status: int = 200, **kwargs):
        response = self.request(method, url, **kwargs)
        assert response.status_code == status, (
            f"{method} {url}: {response.status_code} {response.text}"
        )
        return response.json() if response.content else None


class Logins:
    """The one way tests get a logged-in client: `login(name)`, or `login(name, role)` for
    an account that does not exist yet (the administrator creates it through the API).

    Each user's session is made once and shared by the tests of a module; `password`
    logs in with another password (a one-time password, an account a test created).
    Works the same on a controller process and on an app in the test's process (`site`).
    """

    ADMIN = "root-admin"

    def __init__(self, site) -> None:
        self.site = site
        self.sessions: dict[str, Session] = {}

    def __call__(self, name: str, role: str | None = None, password: str = PASSWORD) -> Session:
        if name not in self.sessions:
            if role is not None:
                body = {"name": name, "role": role, "password": password}
                self(self.ADMIN).ok("POST", "/api/users", 201, json=body)
            self.sessions[name] = self.site.client(name, password)
        return self.sessions[name]

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()
        self.sessions.clear()


def tail(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a log file ("(no log at ...)" when there is none)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])


def notebook_log(site, owner: str, name: str) -> Path | None:
    """Where the local backend writes a notebook server's output (logs/<owner>/<name>.log)."""
    data_dir = getattr(site, "data_dir", None)
    return None if data_dir is None else Path(data_dir) / "logs" / owner / f"{name}.log"


def notebook_report(session: Session, owner: str, name: str, lines: int = 30) -> str:
    """The notebook as the API shows it (state, last message) and its server's log tail."""
    try:
        response = session.get(f"/api/notebooks/{owner}/{name}")
        shown = response.json() if response.status_code == 200 else response.text
    except (httpx.HTTPError, ValueError) as error:
        shown = f"(could not ask the controller: {error})"
    if isinstance(shown, dict):
        state, message = shown.get("state"), shown.get("message")
        shown = f"state {state!r}, last message: {message!r}"
    path = notebook_log(session.site, owner, name)
    log = tail(path, lines) if path is not None else "(the session knows no data directory)"
    return f"notebook {owner}/{name}: {shown}\n--- its server log ({path}) ---\n{log}"


def wait_state(session: Session, owner: str, name: str, wanted: str, seconds: float = 60) -> dict:
    """Wait for a notebook to reach `wanted` (e.g. "running", "stopped") and return it.

    On a controller process this polls; in the test's process (`session.site.settle`)
    it waits for the notebook's current start or stop to finish, with no sleep. A
    notebook that does not get there fails the test with its last message and the tail
    of its server log, not a bare `'stopped' == 'running'`.
    """
    settle = getattr(session.site, "settle", None)
    deadline = time.monotonic() + seconds
    while True:
        if settle is not None:
            settle(owner, name)
        response = session.get(f"/api/notebooks/{owner}/{name}")
        nb = response.json() if response.status_code == 200 else {}
        if nb.get("state") == wanted:
            return nb
        if settle is not None or time.monotonic() > deadline:
            raise AssertionError(
                f"notebook {owner}/{name} is {nb.get('state', response.status_code)!r}, "
                f"not {wanted!r}\n{notebook_report(session, owner, name)}"
            )
        time.sleep(0.3)  # a controller process decides on its own: ask it again


def wait_running(session: Session, owner: str, name: str, seconds: float = 60) -> dict:
    """`wait_state(..., "running")`."""
    return wait_state(session, owner, name, "running", seconds)


def wait_until(check, timeout: float = 60, interval: float = 0.3, what: str = "condition"):
    """`check()`'s first true value, asked every `interval` s; fails after `timeout` s.

    For what a controller process decides on its own clock (a culler pass, a queue
    turn, a dead server noticed): the test can only ask it again until it has.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)  # the process's clock, not ours, decides when
    raise AssertionError(f"timed out waiting for {what}")


def follow_changes(session: Session, path: str, last: tuple[str, str], ready) -> list[dict]:
    """The notebook changes streamed at `path` until `last` (owner, name) has stopped.

    `ready` (a threading.Event) is set once the stream is subscribed, so the caller
    acts only then. A stream that does not answer 200 fails with its answer. The
    session must reach the controller over HTTP (`http_client`).
    """
    changes = []
    with session.stream("GET", path) as stream:
        assert stream.status_code == 200, stream.read()
        for line in stream.iter_lines():
            if line.startswith("retry:"):  # sent once the stream is subscribed
                ready.set()
            elif line.startswith("data: "):
                change = json.loads(line[6:])
                changes.append(change)
                if (change["owner"], change["name"], change["state"]) == (*last, "stopped"):
                    return changes
    return changes


def http_client(site, name: str) -> Session:
    """`name` logged in on `site` over real HTTP (an in-process site serves it too), for
    streams: the in-process transport hands back whole answers, and a stream never ends."""
    url = site.serve() if hasattr(site, "serve") else site.url
    return Session(url, name, PASSWORD, site=site)


def follow_while(streams, act, seconds: float = 60) -> list[list[dict]]:
    """Follow every (session, path, last) of `streams` at once (`follow_changes`), run
    `act()` once all are subscribed, and return what each stream told, in order."""
    with concurrent.futures.ThreadPoolExecutor(len(streams)) as pool:
        ready = [threading.Event() for _ in streams]
        futures = [
            pool.submit(follow_changes, session, path, last, event)
            for (session, path, last), event in zip(streams, ready, strict=True)
        ]
        assert all(event.wait(30) for event in ready), "a stream did not subscribe in 30 s"
        act()
        return [future.result(timeout=seconds) for future in futures]


async def run_code(session: Session, owner: str, name: str, code: str, kernel: str = "") -> str:
    """Run `code` in a kernel of the notebook (a new one, or `kernel`'s id) through the
    proxy's websocket as JupyterLab does; its printed output, or the error's name and text.
    A kernel made here is shut down afterwards: left running, each call's kernel (35-80 MiB)
    counted against the notebook's memory, and a test's fifth call found its 512 MiB
    notebook killing kernels and its database (the memory cgroup's OOM killer)."""
    if kernel:
        return await _run_in_kernel(session, owner, name, code, kernel)
    kernels = f"/notebook/{owner}/{name}/api/kernels"
    made = session.ok("POST", kernels, 201, json={})["id"]
    try:
        output = await _run_in_kernel(session, owner, name, code, made)
    finally:  # also after a failure, whose own error is then the one raised
        gone = session.request("DELETE", f"{kernels}/{made}")
    assert gone.status_code in (204, 404), f"shutting the kernel down: {gone.status_code}"
    return output


async def overfill_memory(session: Session, owner: str, name: str, kernel: str, gib: int) -> None:
    """Have the notebook's kernel fill `gib` gigabytes, 64 MiB at a time (a bytearray is
    zero-filled: every page is touched), as JupyterLab sends a cell; for a notebook whose
    memory limit is smaller, the kernel's OOM killer stops the kernel and no reply comes."""
    import websockets

    code = f"blocks = [bytearray(64 * 2**20) for _ in range({16 * gib})]"
    url, headers, connect = session.notebook_socket(
        f"/notebook/{owner}/{name}/api/kernels/{kernel}/channels"
    )
    async with websockets.connect(url, additional_headers=headers, **connect) as ws:
        await ws.send(execute_request(code)[1])
        with contextlib.suppress(asyncio.TimeoutError, websockets.ConnectionClosed):
            while True:  # the kernel's status messages, until it is killed
                await asyncio.wait_for(ws.recv(), 5)


async def _run_in_kernel(session: Session, owner: str, name: str, code: str, kernel: str) -> str:
    import websockets

    url, headers, connect = session.notebook_socket(
        f"/notebook/{owner}/{name}/api/kernels/{kernel}/channels"
    )
    async with websockets.connect(url, additional_headers=headers, **connect) as ws:
        msg_id, message = execute_request(code)
        await ws.send(message)
        output = ""
        while True:
            reply = json.loads(await ws.recv())
            if reply["parent_header"].get("msg_id") != msg_id:
                continue
            kind = reply["msg_type"]
            if kind == "stream":
                output += reply["content"]["text"]
            elif kind == "error":
                output += f"{reply['content']['ename']}: {reply['content']['evalue']}"
            elif kind == "status" and reply["content"]["execution_state"] == "idle":
                return output


def execute_request(code: str, username: str = "tester") -> tuple[str, str]:
    """A kernel `execute_request` message for the channels websocket, and its id."""
    msg_id = uuid.uuid4().hex
    return msg_id, json.dumps(
        {
            "header": {
                "msg_id": msg_id,
                "username": username,
                "session": uuid.uuid4().hex,
                "date": "",
                "msg_type": "execute_request",
                "version": "5.3",
            },
            "parent_header": {},
            "metadata": {},
            "channel": "shell",
            "buffers": [],
            "content": {
                "code": code,
                "silent": False,
                "store_history": False,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
        }
    )


def reachable_dir() -> Path:
    """A fresh directory that notebook accounts may traverse (pytest's own is private)."""
    base = Path(tempfile.mkdtemp(prefix="cgu-lab-test-"))
    base.chmod(0o711)
    return base


@contextlib.contextmanager
def running_controller(users, env: dict[str, str] | None = None, db_url: str | None = None):
    """A controller process with `users` ((name, role) pairs, made in one CLI run) in a
    fresh reachable directory (its database there, or at `db_url`); on leaving, it is
    stopped, its notebooks killed (with the installation's Unix accounts) and the
    directory removed. A module's `controller` fixture is
    `with running_controller(...) as ctl: yield ctl`."""
    base = reachable_dir()
    ctl = Controller(base / "data", db_url=db_url, env=env)
    try:
        ctl.create_users(users)
        ctl.start()
        yield ctl
    finally:
        ctl.stop()
        ctl.kill_notebooks()
        shutil.rmtree(base, ignore_errors=True)


# -- a notebook server in the test's process (pytest-jupyter) ---------------------------

PROXY_SECRET = "the-proxy-secret"


def extension_server_config(
    identity: dict | None = None, *, share_aware_contents: bool = True, **sections: dict
) -> dict:
    """A `jp_server_config`: the cgu_lab extension, the proxy naming the caller (with
    `PROXY_SECRET`, for the owner alice), the share rules authorizing, and the share-aware
    contents manager (jupyter_server's own with `share_aware_contents=False`).

    `identity` replaces the ProxyIdentityProvider's settings; `sections` are further
    classes' settings (`SerialPorts={...}`).
    """
    from cgu_lab.notebook.authorizer import ShareAuthorizer
    from cgu_lab.notebook.contents import ShareAwareContentsManager
    from cgu_lab.notebook.identity import ProxyIdentityProvider

    server = {
        "jpserver_extensions": {"cgu_lab": True},
        "identity_provider_class": ProxyIdentityProvider,
        "authorizer_class": ShareAuthorizer,
    }
    if share_aware_contents:
        server["contents_manager_class"] = ShareAwareContentsManager
    return {
        "ServerApp": server,
        "ProxyIdentityProvider": identity or {"proxy_secret": PROXY_SECRET, "owner": "alice"},
        **sections,
    }


def code_notebook(source: str) -> dict:
    """A notebook (nbformat 4) of one code cell with `source`, on the Python 3 kernel."""
    return {
        "cells": [
            {
                "cell_type": "code",
                "source": source,
                "metadata": {},
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def proxy_headers(
    name: str,
    access: str | None = None,
    scope: str = "",
    *,
    secret: str = PROXY_SECRET,
    extra: dict | None = None,
) -> dict:
    """The headers the controller's proxy sends for `name` with this access (none: the
    owner's) and single-file `scope`; `extra` adds others. No `Authorization`: the server's
    own token must not be what lets a caller in."""
    headers = {"X-Cgu-User": name, "X-Cgu-Proxy-Secret": secret, **(extra or {})}
    if access:
        headers["X-Cgu-Access"] = access
    if scope:
        headers["X-Cgu-Scope"] = quote(json.dumps([scope]))
    headers["Authorization"] = ""
    return headers

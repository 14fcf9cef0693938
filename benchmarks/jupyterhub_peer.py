"""The peer for start and density figures: JupyterHub with local system accounts.

JupyterHub (latest from PyPI) with its LocalProcessSpawner, each user a Unix
account of this host, behind configurable-http-proxy (npm, as proxy_overhead.py
uses it), serving the same JupyterLab and Jupyter Server versions as the
platform's own environment. `setup()` installs it into `benchmarks/.peer/`
(ignored by git; nothing of JupyterHub is committed or copied here): a venv of
its own, because its single-user server must import `jupyterhub`, which the
platform's environment does not carry.

`Hub` runs one hub on loopback for a benchmark: a service token with admin
scopes creates users, starts and stops their servers and reaches them through
the proxy (`access:servers`), as a teacher's tooling would. Accounts are made
with `useradd` under a per-run prefix and removed (`userdel -r`) afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
PEER = HERE / ".peer"
VENV = PEER / "venv"
CHP = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
# Pinned to what the platform's own environment runs, so both serve the same JupyterLab.
SAME_AS_OURS = ("jupyterlab", "jupyter_server", "ipykernel", "jupyter_client", "tornado", "pyzmq")


def _ours() -> list[str]:
    from importlib.metadata import version

    pins = []
    for name in SAME_AS_OURS:
        with contextlib.suppress(Exception):
            pins.append(f"{name}=={version(name)}")
    return pins


def setup() -> Path:
    """Install JupyterHub (latest) and configurable-http-proxy once; the hub's venv."""
    marker = VENV / ".cgu-bench-ready"
    if not marker.exists():
        print("installing the peer: JupyterHub (latest) into benchmarks/.peer/venv ...", flush=True)
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        pip = [str(VENV / "bin" / "pip"), "install", "--quiet", "jupyterhub", *_ours()]
        subprocess.run(pip, check=True)
        marker.write_text("ok\n")
    if not CHP.exists():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=HERE, check=True
        )
    return VENV


def version() -> str:
    """The peer's version, or "not installed" (a run of cgu-lab alone needs no peer)."""
    if not (VENV / "bin" / "jupyterhub").exists():
        return "not installed"
    out = subprocess.run(
        [str(VENV / "bin" / "jupyterhub"), "--version"], capture_output=True, text=True, check=False
    )
    return out.stdout.strip() or "?"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


CONFIG = """
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = {bind!r}
c.JupyterHub.hub_bind_url = {hub!r}
c.JupyterHub.db_url = {db!r}
c.JupyterHub.cookie_secret_file = {cookie!r}
c.JupyterHub.pid_file = {pid!r}
c.ConfigurableHTTPProxy.command = [{chp!r}]
c.ConfigurableHTTPProxy.api_url = {proxy_api!r}
c.ConfigurableHTTPProxy.pid_file = {proxy_pid!r}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = {timeout}
c.Spawner.http_timeout = {timeout}
c.JupyterHub.concurrent_spawn_limit = 0
c.JupyterHub.cleanup_servers = True
c.JupyterHub.services = [{{"name": "bench", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{
    "name": "bench",
    "scopes": ["admin:users", "admin:servers", "access:servers", "read:users"],
    "services": ["bench"],
}}]
"""


class Hub:
    """One JupyterHub on loopback, driven through its REST API with a service token."""

    def __init__(self, start_timeout: float = 90) -> None:
        setup()
        self.dir = Path(tempfile.mkdtemp(prefix="cgu-bench-hub-"))
        self.dir.chmod(0o711)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(24)
        self.prefix = f"bh{os.getpid() % 100000}"
        self.users: list[str] = []
        config = CONFIG.format(
            bind=self.url + "/",
            hub=f"http://127.0.0.1:{_free_port()}",
            db=f"sqlite:///{self.dir}/jupyterhub.sqlite",
            cookie=str(self.dir / "cookie_secret"),
            pid=str(self.dir / "hub.pid"),
            chp=str(CHP),
            proxy_api=f"http://127.0.0.1:{_free_port()}",
            proxy_pid=str(self.dir / "proxy.pid"),
            singleuser=str(VENV / "bin" / "jupyterhub-singleuser"),
            timeout=int(start_timeout),
            token=self.token,
        )
        (self.dir / "jupyterhub_config.py").write_text(config)
        self.process: subprocess.Popen | None = None
        self.log = self.dir / "hub.log"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=self.headers(), timeout=180)

    def start(self) -> Hub:
        env = {**os.environ, "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(16)}
        env["PATH"] = f"{VENV / 'bin'}:{env.get('PATH', '')}"
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [str(VENV / "bin" / "jupyterhub"), "-f", str(self.dir / "jupyterhub_config.py")],
                cwd=self.dir,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyterhub exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/hub/api/", timeout=1).status_code == 200:
                    return self
            time.sleep(0.2)
        raise RuntimeError("jupyterhub did not answer in 90 s")

    def pids(self) -> list[int]:
        """The hub and its proxy: the platform's own processes."""
        pids = [self.process.pid] if self.process else []
        with contextlib.suppress(OSError, ValueError):
            pids.append(int((self.dir / "proxy.pid").read_text()))
        return pids

    def create_users(self, names: list[str]) -> list[str]:
        """Unix accounts (useradd -m) and hub users; returns their names."""
        made = [f"{self.prefix}-{n}" for n in names]
        for name in made:
            subprocess.run(
                ["useradd", "-m", "-s", "/usr/sbin/nologin", name],
                check=True,
                capture_output=True,
            )
            self.users.append(name)
        with self.client() as client:
            response = client.post("/hub/api/users", json={"usernames": made})
            assert response.status_code in (201, 409), response.text
        return made

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            with contextlib.suppress(httpx.HTTPError), self.client() as client:
                for user in self.users:
                    client.delete(f"/hub/api/users/{user}/server")
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        for pid_file in ("proxy.pid",):
            with contextlib.suppress(OSError, ValueError, ProcessLookupError):
                os.kill(int((self.dir / pid_file).read_text()), 15)
        for user in self.users:
            # Whatever a user left running goes with the account.
            subprocess.run(["pkill", "-KILL", "-u", user], check=False, capture_output=True)
            subprocess.run(["userdel", "-r", user], check=False, capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)

    # -- one user's server ----------------------------------------------------

    def start_server(self, client: httpx.Client, user: str) -> None:
        """POST the start, follow the spawn's progress until it is ready (or failed)."""
        response = client.post(f"/hub/api/users/{user}/server")
        if response.status_code not in (201, 202, 400):
            raise RuntimeError(f"start {user}: {response.status_code} {response.text}")
        with client.stream("GET", f"/hub/api/users/{user}/server/progress") as stream:
            for line in stream.iter_lines():
                if not line.startswith("data: "):
                    continue
                event = json.loads(line[6:])
                if event.get("failed"):
                    raise RuntimeError(f"start {user} failed: {event.get('message')}")
                if event.get("ready"):
                    return
        raise RuntimeError(f"start {user}: progress ended without ready")

    def stop_server(self, client: httpx.Client, user: str) -> None:
        client.delete(f"/hub/api/users/{user}/server")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            model = client.get(f"/hub/api/users/{user}").json()
            if not model.get("servers"):
                return
            time.sleep(0.2)

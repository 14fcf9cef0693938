"""Drive a real controller process, as tests and benchmarks both do.

The controller runs as `cgu-lab controller` in a subprocess with its own data
directory, exactly as a deployment would; clients log in through the login
form and talk to it over loopback.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent
PASSWORD = "correct-horse-battery"
LOGS = Path(__file__).resolve().parent.parent / "artifacts" / "logs"


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
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log = LOGS / f"controller-{self.port}.log"

    def cli(self, *args: str, stdin: str | None = None) -> str:
        command = [str(BIN / "cgu-lab"), *args, "--data-dir", str(self.data_dir)]
        if self.db_url:
            command += ["--db-url", self.db_url]
        result = subprocess.run(
            command, input=stdin, capture_output=True, text=True, env=self.env, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(f"cgu-lab {' '.join(args)} failed: {result.stderr}")
        return result.stdout

    def create_user(self, name: str, role: str = "student", group: str | None = None) -> None:
        args = ["admin", "create-user", name, "--role", role, "--password-stdin"]
        if group:
            args += ["--group", group]
        self.cli(*args, stdin=PASSWORD + "\n")

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
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"controller exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("controller did not answer in 30 s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def client(self, name: str, password: str = PASSWORD) -> Session:
        return Session(self.url, name, password)

    def kill_notebooks(self) -> None:
        """Stop every notebook server of this installation (end of a test module)."""
        marker = (
            (self.data_dir / "instance-id").read_text().strip()
            if (self.data_dir / "instance-id").exists()
            else None
        )
        if not marker:
            return
        import psutil

        for process in psutil.process_iter():
            try:
                if process.environ().get("CGU_LAB_INSTANCE") == marker:
                    process.kill()
            except (psutil.Error, OSError):
                continue


class Session(httpx.Client):
    """An HTTP client logged in through the login form, sending the CSRF header."""

    def __init__(self, base_url: str, name: str, password: str) -> None:
        super().__init__(base_url=base_url, timeout=120, follow_redirects=False)
        self.name = name
        response = self.post(
            "/login", data={"name": name, "password": password, "next": "/notebooks"}
        )
        assert response.status_code == 303, response.text
        page = self.get("/account")
        self.csrf = re.search(r'name="csrf-token" content="([^"]*)"', page.text).group(1)
        self.headers["X-CSRF-Token"] = self.csrf

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

"""A PostgreSQL database per notebook: started on the first connection, as the notebook's user.

Why it is made this way:

- **On demand, with no configuration.** The server puts `PGHOST` (the notebook's
  private apps folder), `PGUSER`, `PGDATABASE` and `DATABASE_URL` in its own
  environment while the extension is linked, so every kernel, terminal and desktop
  program it starts inherits them: `psql`, `pg_dump`, JupySQL's `%sql` and
  SQLAlchemy connect with no setting. Nothing runs until a client connects: the
  server listens on the socket PostgreSQL will use (`<folder>/.s.PGSQL.5432`) and,
  on the first connection, starts PostgreSQL there (the idea of systemd's socket
  activation, which PostgreSQL itself does not implement). PostgreSQL takes over
  the socket's name (it removes a stale socket file once it holds its lock file,
  before it binds), so only the connections that arrived while it started are
  relayed by the server; every later one goes to PostgreSQL directly. If
  PostgreSQL ends, the server listens again.
- **Nobody else can connect.** The socket is in the apps folder (0700, this
  account's); PostgreSQL listens on no TCP address at all (`listen_addresses=''`),
  and its `pg_hba.conf` admits only `peer` connections (the connecting process's
  own account) on the socket.
- **Inside the notebook's limits, its data in the home.** PostgreSQL is a child of
  the notebook server, so it runs in the notebook's cgroup as its user and ends
  with it (a fast shutdown when the server stops; the parent's death asks for the
  same); its cluster lives in `~/.local/share/cgu-lab/postgres/` and survives
  restarts. Small settings (16 MB of shared buffers, 20 connections, dynamic shared
  memory in files, not /dev/shm, 1 MB WAL segments) keep an idle database near 15 MB
  of memory and a new cluster near 35 MB of the home.
- **A teacher's template may seed it.** On the cluster's first start, each
  `~/database-seed/*.sql` (in name order) is run into the user's database with
  `psql -v ON_ERROR_STOP=1`; the outcome is written to the database's log. A
  submission copies the home, whose `database.sql` a student makes with `pg_dump`
  (the live cluster itself is not a file a TA can open).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import getpass
import glob
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

SOCKET_NAME = ".s.PGSQL.5432"
DATA_HOME = Path(".local") / "share" / "cgu-lab" / "postgres"
SEED_FOLDER = "database-seed"
START_TIMEOUT = 60.0
PR_SET_PDEATHSIG = 1
# Settings for a teaching database beside a notebook: small, private, quick to stop.
SETTINGS = {
    "listen_addresses": "",
    "unix_socket_permissions": "0700",
    "shared_buffers": "16MB",
    "max_connections": "20",
    "dynamic_shared_memory_type": "mmap",
    # WAL kept small (it counts against the home's allowance): 1 MB segments (initdb),
    # at most 64 MB between checkpoints, 32 MB recycled (twice a 16 MB segment, valid too
    # for a cluster made with PostgreSQL's default segments).
    "max_wal_size": "64MB",
    "min_wal_size": "32MB",
    "logging_collector": "off",
}


def postgres_bin() -> Path | None:
    """The newest PostgreSQL server's programs (Debian's /usr/lib/postgresql/<N>/bin)."""
    named = os.environ.get("CGU_POSTGRES_BIN", "")
    if named and (Path(named) / "postgres").exists():
        return Path(named)
    found = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/postgres")),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if found:
        return found[-1]
    on_path = shutil.which("postgres")
    return Path(on_path).parent if on_path else None


def installed() -> bool:
    return postgres_bin() is not None and shutil.which("psql", path=_search_path()) is not None


def _search_path() -> str:
    found = postgres_bin()
    return os.pathsep.join([*([str(found)] if found else []), os.environ.get("PATH", "")])


def client_environment(folder: Path, user: str) -> dict[str, str]:
    """What kernels and terminals need to find the database with no configuration."""
    return {
        "PGHOST": str(folder),
        "PGUSER": user,
        "PGDATABASE": user,
        # SQLAlchemy's form, which JupySQL reads when it loads.
        "DATABASE_URL": f"postgresql+psycopg://{user}@/{user}?host={folder}",
    }


def _die_with_parent() -> None:
    """The postmaster gets SIGINT (a fast shutdown) if the notebook server dies."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGINT)


class Database:
    """The notebook's PostgreSQL: the listening socket until it runs, then PostgreSQL itself."""

    def __init__(self, folder: Path, home: Path, user: str | None = None) -> None:
        self.folder = folder
        self.home = home
        self.user = user or getpass.getuser()
        self.data = home / DATA_HOME / "data"
        self.log_path = home / DATA_HOME / "postgres.log"
        self.socket_path = folder / SOCKET_NAME
        self.process: asyncio.subprocess.Process | None = None
        self.sock: socket.socket | None = None
        self.server: asyncio.AbstractServer | None = None
        self.starting: asyncio.Task | None = None
        self.started_in: float | None = None  # seconds the last start took
        self.watcher: asyncio.Future | None = None
        self.error = ""

    # -- listening until someone connects -------------------------------------------

    def bind(self) -> None:
        """Take PostgreSQL's socket name now, so a client that comes before the server's
        loop runs waits in the backlog; `serve` answers it once the loop runs."""
        if self.sock is not None or self.running:
            return
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o700)
        sock.listen(64)
        sock.setblocking(False)
        self.sock = sock

    async def serve(self) -> None:
        """Wait for the first client on the bound socket."""
        if self.sock is not None and self.server is None:
            self.server = await asyncio.start_unix_server(self._first_client, sock=self.sock)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def _first_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        """Start PostgreSQL (once, whoever came first), then relay this early client to it."""
        try:
            if self.starting is None or (self.starting.done() and not self.running):
                self.starting = asyncio.ensure_future(self.start())
            await asyncio.shield(self.starting)
            upstream_reader, upstream_writer = await asyncio.open_unix_connection(
                str(self.socket_path)
            )
        except Exception:  # the client sees the connection close; the log says why
            writer.close()
            return
        await asyncio.gather(
            _pump(reader, upstream_writer), _pump(upstream_reader, writer), return_exceptions=True
        )

    # -- PostgreSQL itself ------------------------------------------------------------

    async def start(self) -> None:
        """Make the cluster on a first start (and seed it), then run PostgreSQL on the socket."""
        began = time.monotonic()
        binaries = postgres_bin()
        if binaries is None:
            self.error = "PostgreSQL is not installed on this machine"
            raise RuntimeError(self.error)
        self.log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        first = not (self.data / "PG_VERSION").exists()
        if first:
            await self._run(
                str(binaries / "initdb"),
                *("-D", str(self.data), "-U", self.user, "-E", "UTF8", "--locale", "C.UTF-8"),
                *("--auth-local", "peer", "--auth-host", "reject", "--wal-segsize", "1"),
            )
        arguments = [f"--{k.replace('_', '-')}={v}" for k, v in SETTINGS.items()]
        with self._log() as log:
            self.process = await asyncio.create_subprocess_exec(
                str(binaries / "postgres"),
                *("-D", str(self.data), "-k", str(self.folder)),
                *arguments,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                preexec_fn=_die_with_parent,
            )
        # PostgreSQL removed our socket's name and bound its own: stop accepting.
        await self._wait_ready()
        self._stop_listening()
        if first:
            await self._run(str(binaries / "createdb"), "-h", str(self.folder), self.user)
            await self._seed()
        self.started_in = time.monotonic() - began
        self.watcher = asyncio.ensure_future(self._watch(self.process))

    async def _wait_ready(self) -> None:
        """Until the postmaster says it is ready (line 8 of postmaster.pid), without
        connecting: a connection made before PostgreSQL took the socket would reach us."""
        deadline = time.monotonic() + START_TIMEOUT
        pid_file = self.data / "postmaster.pid"
        while time.monotonic() < deadline:
            if not self.running:
                self.error = f"PostgreSQL ended at its start; see {self.log_path}"
                raise RuntimeError(self.error)
            with contextlib.suppress(OSError):
                lines = pid_file.read_text().splitlines()
                if len(lines) >= 8 and lines[7].strip() == "ready":
                    return
            await asyncio.sleep(0.05)
        self.error = f"PostgreSQL did not start within {START_TIMEOUT:.0f} s; see {self.log_path}"
        raise RuntimeError(self.error)

    async def _seed(self) -> None:
        """A teacher's schema and data, loaded once, at the cluster's first start."""
        for script in sorted((self.home / SEED_FOLDER).glob("*.sql")):
            with contextlib.suppress(RuntimeError):  # the log has psql's words
                await self._run(
                    "psql",
                    *("-h", str(self.folder), "-d", self.user, "-v", "ON_ERROR_STOP=1"),
                    *("-q", "-f", str(script)),
                )

    async def dump(self, target: Path) -> int:
        """The database as SQL (`pg_dump`, no owners), for a submission or a template;
        its size in bytes. Connecting starts the database where it is not running."""
        binaries = postgres_bin()
        if binaries is None:
            raise RuntimeError("PostgreSQL is not installed on this machine")
        partial = target.with_name(f".{target.name}.partial")
        await self._run(
            str(binaries / "pg_dump"),
            *("-h", str(self.folder), "-d", self.user, "--no-owner", "-f", str(partial)),
        )
        return await asyncio.to_thread(_settle, partial, target)

    @contextlib.contextmanager
    def _log(self):
        """The database's log, appended to (a descriptor its programs write to)."""
        fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            yield fd
        finally:
            os.close(fd)

    async def _run(self, *argv: str) -> None:
        env = {**os.environ, "PATH": _search_path()}
        with self._log() as log:
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env
            )
            code = await process.wait()
        if code != 0:
            self.error = f"{Path(argv[0]).name} failed (exit code {code}); see {self.log_path}"
            raise RuntimeError(self.error)

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        """Listen again when PostgreSQL ends (unless the server is stopping it)."""
        await process.wait()
        if self.process is process and not self.closing:
            with contextlib.suppress(OSError):
                self.bind()
                await self.serve()

    closing = False

    def _stop_listening(self) -> None:
        if self.server is not None:
            self.server.close()
        elif self.sock is not None:
            self.sock.close()
        self.server = self.sock = None

    def close(self) -> None:
        """A fast shutdown (clients disconnected, data safe), waited for a few seconds."""
        self.closing = True
        self._stop_listening()
        process = self.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGINT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                done, _ = os.waitpid(process.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if done:
                return
            time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signal.SIGQUIT)


def _settle(partial: Path, target: Path) -> int:
    """The finished dump under its name (never a half-written one); its size."""
    os.replace(partial, target)
    return os.path.getsize(target)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        with contextlib.suppress(OSError):
            writer.close()

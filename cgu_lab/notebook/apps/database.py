"""A database per notebook (PostgreSQL or MariaDB), started on the first connection,
as the notebook's user. This module holds what both engines share, and PostgreSQL;
database_mariadb.py holds MariaDB.

Why it is made this way:

- **On demand, with no configuration.** The server puts the engine's client settings
  in its own environment while the extension is linked (`PGHOST`, `PGUSER`,
  `PGDATABASE` for PostgreSQL; `MYSQL_UNIX_PORT` and an option file for MariaDB;
  `DATABASE_URL` for both), so every kernel, terminal and desktop program it starts
  inherits them: `psql`, `mariadb`, the dump programs, JupySQL's `%sql` and
  SQLAlchemy connect with no setting. Nothing runs until a client connects: the
  server listens on the socket the engine will use and, on the first connection,
  starts the engine there. MariaDB implements systemd's socket activation: it is
  handed the listening socket itself (`LISTEN_FDS`), so clients that come while it
  starts wait in that socket's backlog for it. PostgreSQL does not; it takes over the
  socket's name (it removes a stale socket file once it holds its lock file, before
  it binds). Either way only the connections the server accepted before the engine
  was ready are relayed by the server; every later one goes to the engine directly.
  If the engine ends, the server listens again.
- **Nobody else can connect.** The socket is in the apps folder (0700, this
  account's); neither engine listens on any TCP address (`listen_addresses=''`,
  `skip-networking`), and both admit only the connecting process's own account on
  the socket (PostgreSQL's `peer`, MariaDB's `unix_socket`): no password exists.
- **Inside the notebook's limits, its data in the home.** The engine is a child of
  the notebook server, so it runs in the notebook's cgroup as its user and ends with
  it (a clean shutdown when the server stops; the parent's death asks for the same);
  its data lives in `~/.local/share/cgu-lab/<engine>/` and survives restarts. Small
  settings keep an idle database small in memory and in the home.
- **A teacher's template may seed it.** On the first start, each
  `~/database-seed/*.sql` (in name order) is run into the user's database, stopping at
  its first error; the outcome is written to the database's log. A submission copies
  the home, whose `database.sql` a student makes with the dump route (the live data
  files themselves are not something a TA can open).

PostgreSQL, in particular: 16 MB of shared buffers, 20 connections, dynamic shared
memory in files (not /dev/shm) and 1 MB WAL segments keep an idle database near
15 MB of memory and a new cluster near 35 MB of the home. PostgreSQL does not
implement socket activation; it writes "ready" in its `postmaster.pid` once it
accepts connections, which the start waits for without connecting.
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
import sys
import time
from pathlib import Path

DATA_ROOT = Path(".local") / "share" / "cgu-lab"
SEED_FOLDER = "database-seed"
START_TIMEOUT = 60.0
PR_SET_PDEATHSIG = 1
LISTEN_FDS_START = 3  # where systemd's socket activation hands the first socket
# LISTEN_PID must be the engine's own process id, known only once it runs: a shell
# sets it and replaces itself with the engine (its arguments are never parsed by it).
WITH_LISTEN_PID = ("/bin/sh", "-c", 'LISTEN_PID=$$ exec "$0" "$@"')


def _child_setup(signum: int, listening: int | None):
    """For preexec_fn: the engine gets `signum` (its clean shutdown) if the server dies;
    the listening socket, if handed over, is at descriptor 3."""

    def arrange() -> None:
        if listening is not None and listening != LISTEN_FDS_START:
            os.dup2(listening, LISTEN_FDS_START)
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum)

    return arrange


class Database:
    """The notebook's database: the listening socket until the engine runs, then the engine.

    An engine's subclass says how to make its data folder, run its server, tell that it
    is ready, make the user's database, seed and dump it, and what clients need."""

    engine = ""  # as the status route names it
    title = ""
    socket_name = ""
    data_name = ""  # its folder under ~/.local/share/cgu-lab
    stop_signal = signal.SIGTERM  # the engine's clean, quick shutdown
    kill_signal = signal.SIGKILL  # when that took too long
    socket_activated = False  # the engine takes the listening socket (systemd's protocol)

    def __init__(self, folder: Path, home: Path, user: str | None = None) -> None:
        self.folder = folder
        self.home = home
        self.user = user or getpass.getuser()
        self.base = home / DATA_ROOT / self.data_name
        self.data = self.base / "data"
        self.log_path = self.base / f"{self.data_name}.log"
        self.socket_path = folder / self.socket_name
        self.process: asyncio.subprocess.Process | None = None
        self.sock: socket.socket | None = None
        self.server: asyncio.AbstractServer | None = None
        self.starting: asyncio.Task | None = None
        self.started_in: float | None = None  # seconds the last start took
        self.watcher: asyncio.Future | None = None
        self.error = ""

    # -- what an engine provides ------------------------------------------------------

    @classmethod
    def installed(cls) -> bool:
        raise NotImplementedError

    def client_environment(self) -> dict[str, str]:
        """What kernels and terminals need to find the database with no configuration."""
        raise NotImplementedError

    def initialised(self) -> bool:
        raise NotImplementedError

    async def initialise(self) -> None:
        """Make the data folder (a first start)."""
        raise NotImplementedError

    def server_command(self) -> list[str]:
        raise NotImplementedError

    def server_environment(self) -> dict[str, str] | None:
        return None  # the server's own

    def prepare_readiness(self) -> None:
        """Before the engine starts: whatever `ready` reads afterwards."""

    def ready(self) -> bool:
        """Whether the started engine accepts connections (never by connecting)."""
        raise NotImplementedError

    async def create_own_database(self) -> None:
        """The user's database, made on the first start."""
        raise NotImplementedError

    def seed_command(self, script: Path) -> tuple[list[str], Path | None]:
        """How to run one seed script: the command, and the file for its input if any."""
        raise NotImplementedError

    def dump_command(self, target: Path) -> list[str]:
        raise NotImplementedError

    # -- listening until someone connects -------------------------------------------

    def bind(self) -> None:
        """Take the engine's socket name now, so a client that comes before the server's
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
            # The socket's name is the engine's once it runs: never removed on closing.
            keep = {"cleanup_socket": False} if sys.version_info >= (3, 13) else {}
            self.server = await asyncio.start_unix_server(
                self._first_client, sock=self.sock, **keep
            )

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def _first_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        """Start the engine (once, whoever came first), then relay this early client to it."""
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

    # -- the engine itself ------------------------------------------------------------

    async def start(self) -> None:
        """Make the data folder on a first start (and seed it), then run the engine."""
        began = time.monotonic()
        if not self.installed():
            self.error = f"{self.title} is not installed on this machine"
            raise RuntimeError(self.error)
        self.base.mkdir(parents=True, exist_ok=True, mode=0o700)
        first = not self.initialised()
        if first:
            await self.initialise()
        self.prepare_readiness()
        argv, env = self.server_command(), self.server_environment()
        listening = None
        if self.socket_activated and self.sock is not None:
            listening = self.sock.fileno()
            argv = [*WITH_LISTEN_PID, *argv]
            env = {**(env or os.environ), "LISTEN_FDS": "1"}
        with self._log() as log:
            self.process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                preexec_fn=_child_setup(self.stop_signal, listening),
                pass_fds=() if listening is None else (LISTEN_FDS_START,),
            )
        # The engine accepts on the socket now (its own, or ours handed over): we stop.
        await self._wait_ready()
        self._stop_listening()
        if first:
            await self.create_own_database()
            await self._seed()
        self.started_in = time.monotonic() - began
        self.watcher = asyncio.ensure_future(self._watch(self.process))

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if not self.running:
                self.error = f"{self.title} ended at its start; see {self.log_path}"
                raise RuntimeError(self.error)
            if self.ready():
                return
            await asyncio.sleep(0.05)
        self.error = f"{self.title} did not start within {START_TIMEOUT:.0f} s; see {self.log_path}"
        raise RuntimeError(self.error)

    async def _seed(self) -> None:
        """A teacher's schema and data, loaded once, at the first start."""
        for script in sorted((self.home / SEED_FOLDER).glob("*.sql")):
            argv, stdin = self.seed_command(script)
            with contextlib.suppress(RuntimeError):  # the log has the client's words
                await self._run(*argv, stdin=stdin)

    async def dump(self, target: Path) -> int:
        """The database as SQL, for a submission or a template; its size in bytes.
        Connecting starts the database where it is not running."""
        if not self.installed():
            raise RuntimeError(f"{self.title} is not installed on this machine")
        partial = target.with_name(f".{target.name}.partial")
        await self._run(*self.dump_command(partial))
        return await asyncio.to_thread(_settle, partial, target)

    @contextlib.contextmanager
    def _log(self):
        """The database's log, appended to (a descriptor its programs write to)."""
        fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            yield fd
        finally:
            os.close(fd)

    def tool_path(self) -> str:
        """PATH for the engine's own programs."""
        return os.environ.get("PATH", "")

    async def _run(self, *argv: str, stdin: Path | None = None) -> None:
        env = {**os.environ, "PATH": self.tool_path()}
        with self._log() as log, _input(stdin) as given:
            process = await asyncio.create_subprocess_exec(
                *argv, stdin=given, stdout=log, stderr=log, env=env
            )
            code = await process.wait()
        if code != 0:
            self.error = f"{Path(argv[0]).name} failed (exit code {code}); see {self.log_path}"
            raise RuntimeError(self.error)

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        """Listen again when the engine ends (unless the server is stopping it)."""
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
        """A clean shutdown (clients disconnected, data safe), waited for a few seconds."""
        self.closing = True
        self._stop_listening()
        process = self.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, self.stop_signal)
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
            os.kill(process.pid, self.kill_signal)


# -- PostgreSQL ---------------------------------------------------------------------

# Settings for a teaching database beside a notebook: small, private, quick to stop.
POSTGRES_SETTINGS = {
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


def _postgres_path() -> str:
    found = postgres_bin()
    return os.pathsep.join([*([str(found)] if found else []), os.environ.get("PATH", "")])


class PostgreSQL(Database):
    """The notebook's PostgreSQL (Debian's), its cluster in ~/.local/share/cgu-lab/postgres."""

    engine = "postgresql"
    title = "PostgreSQL"
    socket_name = ".s.PGSQL.5432"
    data_name = "postgres"
    stop_signal = signal.SIGINT  # a fast shutdown
    kill_signal = signal.SIGQUIT  # an immediate one

    @classmethod
    def installed(cls) -> bool:
        found = shutil.which("psql", path=_postgres_path())
        return postgres_bin() is not None and found is not None

    def client_environment(self) -> dict[str, str]:
        return {
            "PGHOST": str(self.folder),
            "PGUSER": self.user,
            "PGDATABASE": self.user,
            # SQLAlchemy's form, which JupySQL reads when it loads.
            "DATABASE_URL": f"postgresql+psycopg://{self.user}@/{self.user}?host={self.folder}",
        }

    def tool_path(self) -> str:
        return _postgres_path()

    def initialised(self) -> bool:
        return (self.data / "PG_VERSION").exists()

    async def initialise(self) -> None:
        await self._run(
            str(postgres_bin() / "initdb"),
            *("-D", str(self.data), "-U", self.user, "-E", "UTF8", "--locale", "C.UTF-8"),
            *("--auth-local", "peer", "--auth-host", "reject", "--wal-segsize", "1"),
        )

    def server_command(self) -> list[str]:
        return [
            str(postgres_bin() / "postgres"),
            *("-D", str(self.data), "-k", str(self.folder)),
            *(f"--{k.replace('_', '-')}={v}" for k, v in POSTGRES_SETTINGS.items()),
        ]

    def ready(self) -> bool:
        """Line 8 of postmaster.pid says "ready" (a connection made before PostgreSQL
        took the socket would reach us, not it)."""
        with contextlib.suppress(OSError):
            lines = (self.data / "postmaster.pid").read_text().splitlines()
            return len(lines) >= 8 and lines[7].strip() == "ready"
        return False

    async def create_own_database(self) -> None:
        await self._run(str(postgres_bin() / "createdb"), "-h", str(self.folder), self.user)

    def seed_command(self, script: Path) -> tuple[list[str], Path | None]:
        return [
            "psql",
            *("-h", str(self.folder), "-d", self.user, "-v", "ON_ERROR_STOP=1"),
            *("-q", "-f", str(script)),
        ], None

    def dump_command(self, target: Path) -> list[str]:
        """`pg_dump`, without owners (the dump loads into anyone's database)."""
        return [
            str(postgres_bin() / "pg_dump"),
            *("-h", str(self.folder), "-d", self.user, "--no-owner", "-f", str(target)),
        ]


def _settle(partial: Path, target: Path) -> int:
    """The finished dump under its name (never a half-written one); its size."""
    os.replace(partial, target)
    return os.path.getsize(target)


@contextlib.contextmanager
def _input(path: Path | None):
    """A program's standard input: the file, or nothing."""
    if path is None:
        yield subprocess.DEVNULL
        return
    with open(path, "rb") as given:
        yield given


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    finally:
        with contextlib.suppress(OSError):
            writer.close()

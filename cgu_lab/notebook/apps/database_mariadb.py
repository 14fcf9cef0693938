"""The notebook's MariaDB, an administrator's choice beside PostgreSQL (Debian's 10.11).

What both engines share (started on the first connection, relayed until it runs,
seeded from `~/database-seed/*.sql`, dumped to `~/database.sql`, stopped with the
server) is database.py's. What MariaDB needs besides:

- **Only the server program.** `mariadbd`, `mariadb-install-db` (Debian's
  mariadb-server-core), `mariadb` and `mariadb-dump` (mariadb-client). Debian's
  `mariadb-server` package is the machine's service (its unit, init script,
  /var/lib/mysql, started when installed); no notebook needs that, so the platform
  installs only the two packages above and no machine-wide server exists.
- **Private.** `skip-networking` (no TCP port at all), its socket in the apps
  folder (0700). The data folder is made with two accounts, both identified by
  `unix_socket` (the connecting process's own account, as PostgreSQL's `peer`): the
  notebook's user, with every privilege on this server of its own, and root, which
  only the machine's root could be. No password exists.
- **Socket activation, as systemd does it.** mariadbd refuses to start on a socket
  name another process listens on, and the server listens there until it runs; but
  it takes a listening socket handed over as systemd does (`LISTEN_FDS`, the socket
  at descriptor 3; Debian builds it with libsystemd), which database.py does for it.
  It says when it accepts connections the same way (`READY=1` on `$NOTIFY_SOCKET`):
  the server hands it a datagram socket in the apps folder and waits for that word,
  without connecting.
- **Small.** A 16 MB InnoDB buffer pool, an 8 MB redo log (MariaDB's default 96 MB
  would count against the home's allowance), 20 connections, no performance schema,
  small MyISAM and Aria caches, temporary files in its own folder. Synchronous I/O:
  io_uring and native AIO are refused by some container runtimes' seccomp profiles
  and memlock limits, and a teaching database does not need them.
- **No configuration for clients.** `mariadb` and `mariadb-dump` read an option file
  the server writes in the apps folder (`$MARIADB_HOME/my.cnf`, also named by
  `$MYSQL_HOME` for older clients): the socket and the user, and for the `mariadb`
  shell the user's database. It is read after the machine's /etc/mysql files, whose
  socket it overrides, and before `~/.my.cnf`, which a user may still write.
  SQLAlchemy (JupySQL's `%sql`) gets `$DATABASE_URL` with PyMySQL (pure Python, a
  wheel on PyPI; mysqlclient has no Linux wheel and would need a compiler and
  MariaDB's headers at the build) and the socket.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from pathlib import Path
from urllib.parse import quote

from .database import Database

NOTIFY_SOCKET = "mariadb-notify.sock"
OPTIONS_FOLDER = "mariadb"
# Programs under their MariaDB names, then the names older releases and MySQL use.
PROGRAMS = {
    "server": ("mariadbd", "mysqld"),
    "install": ("mariadb-install-db", "mysql_install_db"),
    "client": ("mariadb", "mysql"),
    "dump": ("mariadb-dump", "mysqldump"),
}
# The server's settings, given at the data folder's making too (the redo log's size is
# chosen then).
SERVER_OPTIONS = (
    "--skip-name-resolve",
    "--max-connections=20",
    "--innodb-buffer-pool-size=16M",
    "--innodb-log-file-size=8M",
    "--innodb-log-buffer-size=2M",
    "--innodb-use-native-aio=OFF",
    "--innodb-buffer-pool-dump-at-shutdown=OFF",
    "--innodb-buffer-pool-load-at-startup=OFF",
    "--performance-schema=OFF",
    "--key-buffer-size=1M",
    "--aria-pagecache-buffer-size=1M",
    "--character-set-server=utf8mb4",
)


def program(role: str) -> str | None:
    """One of MariaDB's programs; the server is in /usr/sbin, not on a user's PATH."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    for name in PROGRAMS[role]:
        found = shutil.which(name, path=path)
        if found:
            return found
    return None


class MariaDB(Database):
    """The notebook's MariaDB, its data in ~/.local/share/cgu-lab/mariadb."""

    engine = "mariadb"
    title = "MariaDB"
    socket_name = "mysql.sock"
    data_name = "mariadb"
    socket_activated = True
    notify: socket.socket | None = None

    @classmethod
    def installed(cls) -> bool:
        return all(program(role) for role in PROGRAMS)

    @property
    def options_folder(self) -> Path:
        return self.folder / OPTIONS_FOLDER

    def client_environment(self) -> dict[str, str]:
        """The clients' option file (written here, in the apps folder) and the variables
        naming it and the socket."""
        self.options_folder.mkdir(mode=0o700, exist_ok=True)
        (self.options_folder / "my.cnf").write_text(
            "# Written by cgu-lab (notebook/apps/database_mariadb.py): this notebook's MariaDB.\n"
            f"[client]\nsocket = {self.socket_path}\nuser = {self.user}\n"
            f"[mysql]\ndatabase = {self.user}\n"
        )
        socket_path = quote(str(self.socket_path), safe="/")
        return {
            "MARIADB_HOME": str(self.options_folder),
            "MYSQL_HOME": str(self.options_folder),
            "MYSQL_UNIX_PORT": str(self.socket_path),
            # SQLAlchemy's form, which JupySQL reads when it loads.
            "DATABASE_URL": (
                f"mysql+pymysql://{quote(self.user, safe='')}@localhost/"
                f"{quote(self.user, safe='')}?unix_socket={socket_path}&charset=utf8mb4"
            ),
        }

    def initialised(self) -> bool:
        return (self.data / "mysql" / "global_priv.frm").exists()

    async def initialise(self) -> None:
        (self.base / "tmp").mkdir(mode=0o700, exist_ok=True)
        await self._run(
            str(program("install")),
            "--no-defaults",
            f"--datadir={self.data}",
            f"--tmpdir={self.base / 'tmp'}",
            "--auth-root-authentication-method=socket",
            f"--auth-root-socket-user={self.user}",
            "--skip-test-db",
            *SERVER_OPTIONS,
        )

    def server_command(self) -> list[str]:
        return [
            str(program("server")),
            "--no-defaults",
            f"--datadir={self.data}",
            f"--socket={self.socket_path}",
            "--skip-networking",
            f"--pid-file={self.base / 'mariadb.pid'}",
            f"--tmpdir={self.base / 'tmp'}",
            *SERVER_OPTIONS,
            # mariadbd refuses root unless told; a notebook as root is a developer's own.
            *(["--user=root"] if os.geteuid() == 0 else []),
        ]

    def server_environment(self) -> dict[str, str]:
        return {**os.environ, "NOTIFY_SOCKET": str(self.folder / NOTIFY_SOCKET)}

    def prepare_readiness(self) -> None:
        """The socket mariadbd says READY=1 on."""
        self._close_notify()
        path = self.folder / NOTIFY_SOCKET
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        (self.base / "tmp").mkdir(mode=0o700, exist_ok=True)
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(path))
        notify.setblocking(False)
        self.notify = notify

    def ready(self) -> bool:
        while self.notify is not None:
            try:
                message = self.notify.recv(4096)
            except BlockingIOError:
                return False
            if b"READY=1" in message.split(b"\n"):
                self._close_notify()
                return True
        return False

    def _close_notify(self) -> None:
        if self.notify is not None:
            self.notify.close()
            self.notify = None
            with contextlib.suppress(OSError):
                (self.folder / NOTIFY_SOCKET).unlink()

    def _connect(self) -> list[str]:
        """A client's arguments for this server, whatever option files say."""
        return ["--no-defaults", f"--socket={self.socket_path}", f"--user={self.user}"]

    async def create_own_database(self) -> None:
        name = self.user.replace("`", "``")
        await self._run(
            str(program("client")),
            *self._connect(),
            "--execute",
            f"CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4",
        )

    def seed_command(self, script: Path) -> tuple[list[str], Path | None]:
        """The script as the `mariadb` shell's input: in batch mode it stops at the first
        error, as PostgreSQL's ON_ERROR_STOP does."""
        return [str(program("client")), *self._connect(), f"--database={self.user}"], script

    def dump_command(self, target: Path) -> list[str]:
        """`mariadb-dump` of the user's database: one transaction, with its routines."""
        return [
            str(program("dump")),
            *self._connect(),
            "--single-transaction",
            "--routines",
            f"--result-file={target}",
            self.user,
        ]

    def close(self) -> None:
        super().close()
        self._close_notify()

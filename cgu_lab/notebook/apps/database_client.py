"""The database's web client: DbGate, on a unix socket, connected to the notebook's database.

jupyter-server-proxy starts this module as the database app's process
(`python -m cgu_lab.notebook.apps.database_client <dbgate> <socket> <web root> <engine>
<database socket>`); it replaces itself with Node running DbGate (`exec`), so
jupyter-server-proxy supervises and stops DbGate itself.

Why DbGate: it is a maintained web client (monthly releases) that shows a database's
tables, their data and structure, and runs queries, for PostgreSQL and MySQL/MariaDB
alike; it is on npm, which this platform reaches (pgweb's Go module is refused by the
Go proxy here, and pgAdmin 4's PyPI wheel cannot be resolved wheels-only). It is
configured entirely by its environment: one connection to the notebook's database
(database.py, database_mariadb.py), through the socket kernels use (PostgreSQL's
folder, `SERVER_pg`; MariaDB's socket, `SOCKET_PATH_mariadb`), as this user, with
the socket's own authentication (PostgreSQL's `peer`, MariaDB's `unix_socket`): no
password exists anywhere. DbGate's HTTP server would listen on a TCP port of every
interface; `dbgate_start.js` sends its `listen()` to the socket jupyter-server-proxy
names instead, in the notebook's private apps folder. The first query starts the
database.

DbGate's own log-in is off (`SKIP_ALL_AUTH`): by default its page takes an anonymous
token and sends it as `Authorization: Bearer`, a header the platform's proxy reads as
the platform's own API token (and never forwards), so every call of the page after the
first was refused. The token guarded nothing here: only the notebook's owner and
editors reach this socket (jupyter-server-proxy behind the notebook's own checks), and
anyone reaching DbGate could ask it for an anonymous token.

DbGate's cloud is off. Its page asks its server at start to refresh the cloud's public
files and its premium offer from api.dbgate.cloud; in a notebook without DNS or a route
out, that failed and the page showed an error, and its side bar showed the cloud's
widgets and a Premium offer with an Upgrade button, none of which a course's database
needs. Its own permissions setting (`PERMISSIONS`, `~` denies; everything else stays
allowed) hides those widgets, and `dbgate_start.js` answers the refresh without the
cloud, so the client never calls out.
"""

from __future__ import annotations

import getpass
import os
import shutil
import sys
from pathlib import Path

STARTER = Path(__file__).with_name("dbgate_start.js")
# DbGate's widgets of its cloud (public files, a user's own cloud) and its premium offer.
NO_CLOUD = "~widgets/cloud-public,~widgets/cloud-private,~widgets/premium"


def connection(engine: str, database_socket: str, user: str) -> dict[str, str]:
    """DbGate's one connection, for `engine` (database.py's `Database.engine`)."""
    if engine == "mariadb":
        return {
            "CONNECTIONS": "mariadb",
            "LABEL_mariadb": "This notebook's MariaDB",
            "ENGINE_mariadb": "mariadb@dbgate-plugin-mysql",
            "SOCKET_PATH_mariadb": database_socket,
            "USER_mariadb": user,
            "DATABASE_mariadb": user,
        }
    if engine == "postgresql":
        return {
            "CONNECTIONS": "pg",
            "LABEL_pg": "This notebook's PostgreSQL",
            "ENGINE_pg": "postgres@dbgate-plugin-postgres",
            "SERVER_pg": str(Path(database_socket).parent),
            "USER_pg": user,
            "DATABASE_pg": user,
        }
    raise ValueError(f"no web client for the database engine {engine!r}")


def environment(dbgate: str, web_root: str, engine: str, database_socket: str, user: str):
    """DbGate's settings: where to listen and serve from, and its one connection."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONNECTIONS", "LABEL_"))}
    env.update(
        {
            "NODE_PATH": str(Path(dbgate) / "node_modules"),
            "WEB_ROOT": web_root,
            "WORKSPACE_DIR": str(Path.home() / ".local" / "share" / "cgu-lab" / "dbgate"),
            "SKIP_ALL_AUTH": "1",
            "PERMISSIONS": NO_CLOUD,
            **connection(engine, database_socket, user),
        }
    )
    return env


def main(argv: list[str]) -> None:
    if len(argv) != 6:
        sys.exit("usage: database_client.py DBGATE SOCKET WEB_ROOT ENGINE DATABASE_SOCKET")
    dbgate, socket, web_root, engine, database_socket = argv[1:]
    node = shutil.which("node")
    if node is None:
        sys.exit("cgu-lab: the database's web client needs Node.js (node), which is not installed")
    try:
        env = environment(dbgate, web_root, engine, database_socket, getpass.getuser())
    except ValueError as error:
        sys.exit(f"cgu-lab: {error}")
    os.execve(node, [node, str(STARTER), socket], env)  # noqa: S606 - no shell; a fixed argv


if __name__ == "__main__":
    main(sys.argv)

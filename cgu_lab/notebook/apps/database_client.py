"""The database's web client: DbGate, on a unix socket, connected to the notebook's PostgreSQL.

jupyter-server-proxy starts this module as the `postgres` app's process
(`python -m cgu_lab.notebook.apps.database_client <dbgate> <socket> <web root>`);
it replaces itself with Node running DbGate (`exec`), so jupyter-server-proxy
supervises and stops DbGate itself.

Why DbGate: it is a maintained web client (monthly releases) that shows a database's
tables, their data and structure, and runs queries, for PostgreSQL and MySQL/MariaDB
alike; it is on npm, which this platform reaches (pgweb's Go module is refused by the
Go proxy here, and pgAdmin 4's PyPI wheel cannot be resolved wheels-only). It is
configured entirely by its environment: one connection, `SERVER_pg` the folder of
the notebook's PostgreSQL socket (the same `$PGHOST` kernels use), as this user, with
the `peer` authentication of that socket: no password exists anywhere. DbGate's HTTP
server would listen on a TCP port of every interface; `dbgate_start.js` sends its
`listen()` to the socket jupyter-server-proxy names instead, in the notebook's
private apps folder. The first query starts the database (database.py).
"""

from __future__ import annotations

import getpass
import os
import shutil
import sys
from pathlib import Path

STARTER = Path(__file__).with_name("dbgate_start.js")


def environment(dbgate: str, web_root: str, pghost: str, user: str) -> dict:
    """DbGate's settings: where to listen and serve from, and its one connection."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CONNECTIONS", "LABEL_"))}
    env.update(
        {
            "NODE_PATH": str(Path(dbgate) / "node_modules"),
            "WEB_ROOT": web_root,
            "WORKSPACE_DIR": str(Path.home() / ".local" / "share" / "cgu-lab" / "dbgate"),
            "CONNECTIONS": "pg",
            "LABEL_pg": "This notebook's PostgreSQL",
            "ENGINE_pg": "postgres@dbgate-plugin-postgres",
            "SERVER_pg": pghost,
            "USER_pg": user,
            "DATABASE_pg": user,
        }
    )
    return env


def main(argv: list[str]) -> None:
    if len(argv) != 4:
        sys.exit("usage: database_client.py DBGATE SOCKET WEB_ROOT")
    dbgate, socket, web_root = argv[1], argv[2], argv[3]
    node = shutil.which("node")
    if node is None:
        sys.exit("cgu-lab: the database's web client needs Node.js (node), which is not installed")
    pghost = os.environ.get("PGHOST") or str(Path(socket).parent)
    user = os.environ.get("PGUSER") or getpass.getuser()
    env = environment(dbgate, web_root, pghost, user)
    os.execve(node, [node, str(STARTER), socket], env)  # noqa: S606 - no shell; a fixed argv


if __name__ == "__main__":
    main(sys.argv)

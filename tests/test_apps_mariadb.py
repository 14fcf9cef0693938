"""A MariaDB per notebook, an administrator's choice beside PostgreSQL, in a real
environment built from the *database-mariadb* recipe.

An admin builds the recipe (JupySQL and PyMySQL from PyPI into the shared wheel cache,
MariaDB's server program and client from Debian: scripts/deps.sh); a teacher's seed is
in alice's home before her database first starts. Her notebook then has a MariaDB of
her own with no setting anywhere: `%sql` in a kernel (JupySQL connected by
`$DATABASE_URL`, PyMySQL on the socket) and `mariadb -e` from a kernel's shell both
work, the first connection starting it, the seed loaded; the web client (DbGate)
answers on the notebook's origin and shows her table; her data lives in her home,
is dumped to `database.sql`, and is there after a restart. Bob's kernel, another
account on the same machine, cannot connect to her database, and his own is empty.
The rules (one database per environment, the recipe's packages) are checked first,
without a server.
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from cgu_lab.core import apps as rules
from cgu_lab.core import environments
from cgu_lab.core.errors import Invalid
from cgu_lab.notebook.apps import database_mariadb, registry

from .harness import run_code, running_controller
from .test_apps_database import DBGATE, PIP_CACHE, SMALL, build

SKIP_WITHOUT_MARIADB = pytest.mark.skipif(
    not database_mariadb.MariaDB.installed(),
    reason="MariaDB is not installed (scripts/deps.sh installs mariadb-server-core)",
)


def end_to_end(test):
    """The tests with a controller process and notebook servers (the rules' run anywhere)."""
    marks = (pytest.mark.integration, pytest.mark.end_to_end, pytest.mark.timeout(600))
    for mark in (*marks, SKIP_WITHOUT_MARIADB):
        test = mark(test)
    return test


SEED = "CREATE TABLE courses (title varchar(40));\nINSERT INTO courses VALUES ('Database design');"


def test_an_environment_offers_one_database():
    assert [a["name"] for a in rules.check_apps(["desktop", "mariadb"])] == ["desktop", "mariadb"]
    with pytest.raises(Invalid, match="one database per notebook: postgres or mariadb"):
        rules.check_apps(["postgres", "mariadb"])
    with pytest.raises(Invalid, match="built in"):
        rules.check_app({"name": "mariadb", "command": ["mariadbd"]})


def test_the_mariadb_recipe_declares_its_apps_and_debian_packages():
    recipe = environments.recipe("database-mariadb")
    assert recipe.main_packages == ("jupysql", "pymysql")
    assert recipe.apps == ("desktop", "vscode", "mariadb", "browser")
    # The server program, not Debian's service package (which starts a server of its own).
    assert recipe.system_packages == ("mariadb-server-core", "mariadb-client")
    assert recipe.kind in environments.SQL_RECIPES
    assert environments.recipe_from_record(recipe.as_record()) == recipe


def test_clients_find_the_socket_with_no_setting(tmp_path):
    engine = database_mariadb.MariaDB(tmp_path, tmp_path / "home", "alice")
    env = engine.client_environment()
    socket = str(tmp_path / "mysql.sock")
    assert env["MYSQL_UNIX_PORT"] == socket
    assert env["DATABASE_URL"] == (
        f"mysql+pymysql://alice@localhost/alice?unix_socket={socket}&charset=utf8mb4"
    )
    options = (tmp_path / "mariadb" / "my.cnf").read_text()
    assert f"[client]\nsocket = {socket}\nuser = alice\n" in options
    assert "[mysql]\ndatabase = alice\n" in options
    assert env["MARIADB_HOME"] == env["MYSQL_HOME"] == str(tmp_path / "mariadb")


@pytest.fixture(scope="module")
def controller():
    PIP_CACHE.mkdir(parents=True, exist_ok=True)
    users = [("root-admin", "admin"), ("alice", "student"), ("bob", "student")]
    with running_controller(users, env={"CGU_LAB_PIP_CACHE": str(PIP_CACHE)}) as ctl:
        yield ctl


@pytest.fixture(scope="module")
def admin(controller):
    with controller.client("root-admin") as session:
        yield session


@pytest.fixture(scope="module")
def alice(controller):
    with controller.client("alice") as session:
        yield session


@pytest.fixture(scope="module")
def bob(controller):
    with controller.client("bob") as session:
        yield session


@pytest.fixture(scope="module")
def lab(admin, alice):
    """The 'databases-mariadb' environment, and alice's running notebook in it, with a
    teacher's seed in her home (nothing has connected to her database yet)."""
    started = time.monotonic()
    build(admin, {"recipe": "database-mariadb", "name": "databases-mariadb"})
    print(f"MariaDB environment built in {time.monotonic() - started:.1f} s")
    env = admin.ok("GET", "/api/environments/databases-mariadb")
    assert [a["name"] for a in env["apps"]] == ["desktop", "vscode", "mariadb", "browser"]
    body = {"name": "mdb", "environment": "databases-mariadb", **SMALL}
    alice.ok("POST", "/api/notebooks", 201, json=body)
    assert alice.ok("POST", "/api/notebooks/alice/mdb/start?wait=true", 202)["state"] == "running"
    contents = "/notebook/alice/mdb/api/contents/database-seed"
    alice.ok("PUT", contents, 201, json={"type": "directory"})
    seed = {"type": "file", "format": "text", "content": SEED}
    alice.ok("PUT", f"{contents}/01-courses.sql", 201, json=seed)
    status = alice.ok("GET", "/notebook/alice/mdb/cgu-lab/apps/mariadb")
    assert status["engine"] == "mariadb" and not status["running"], status
    return "mdb"


def code(session, owner: str, name: str, text: str) -> str:
    return asyncio.run(run_code(session, owner, name, text))


SQL = """
began = __import__("time").monotonic()
answer = %sql SELECT 41 + 1 AS answer
print("sql", answer.dict()["answer"][0], round(__import__("time").monotonic() - began, 2))
"""
MARIADB = """
import os, subprocess
done = subprocess.run(["mariadb", "-N", "-B", "-e", {command!r}], capture_output=True, text=True)
last = (done.stdout.strip().splitlines() or ["-"])[-1]
print("mariadb", done.returncode, last, "|", done.stderr.strip(), os.environ["MYSQL_UNIX_PORT"])
"""


def mariadb(command: str) -> str:
    """Kernel code running `mariadb -e command` (batch, no column names) in its shell."""
    return MARIADB.format(command=command)


@end_to_end
def test_sql_and_mariadb_work_from_a_kernel_with_no_setting(alice, lab):
    first = code(alice, "alice", lab, SQL).split()
    assert first[:2] == ["sql", "42"], first
    print(f"first %sql (MariaDB started on demand, made and seeded): {first[2]} s")
    seeded = code(alice, "alice", lab, mariadb("SELECT title FROM courses"))
    assert seeded.split("|")[0].split() == ["mariadb", "0", "Database", "design"], seeded
    made = code(
        alice,
        "alice",
        lab,
        mariadb(
            "CREATE TABLE grades (student varchar(20), mark int); "
            "INSERT INTO grades VALUES ('alice', 7); SELECT sum(mark) FROM grades"
        ),
    )
    assert made.split()[:3] == ["mariadb", "0", "7"], made
    status = alice.ok("GET", "/notebook/alice/mdb/cgu-lab/apps/mariadb")
    assert status["running"] and status["engine"] == "mariadb", status
    assert status["socket"].endswith("/mysql.sock"), status
    # The other engine's route says this notebook has none of that kind.
    other = alice.get("/notebook/alice/mdb/cgu-lab/apps/postgres")
    assert other.status_code == 404 and other.json()["code"] == "no_database", other.text
    print(f"MariaDB start: {status['started_in']:.2f} s")


@end_to_end
def test_the_web_client_shows_the_table(alice, lab):
    if registry.dbgate() is None and not (DBGATE / "node_modules").is_dir():
        pytest.skip("DbGate is not installed (scripts/dbgate.sh)")
    listed = alice.ok("GET", "/notebook/alice/mdb/cgu-lab/apps")
    assert "mariadb" in [a["name"] for a in listed["apps"]], listed
    began = time.monotonic()
    page = alice.get("/notebook/alice/mdb/mariadb/", timeout=90)
    assert page.status_code == 200 and "dbgate" in page.text.lower(), page.text[:300]
    print(f"DbGate first page: {time.monotonic() - began:.1f} s")
    # DbGate's own API, as its page calls it through the proxy: the table's rows, then the
    # tables it lists.
    root = "/notebook/alice/mdb/mariadb"
    # Her database is named after her account on this machine.
    database = alice.ok("GET", "/notebook/alice/mdb/cgu-lab/apps/mariadb")["database"]
    query = {"conid": "mariadb", "database": database, "sql": "SELECT student, mark FROM grades"}
    rows = alice.ok("POST", f"{root}/database-connections/query-data", json=query)
    assert rows.get("rows") and rows["rows"][0] in (["alice", 7], {"student": "alice", "mark": 7})
    tables: list = []
    for _ in range(60):  # DbGate reads the structure in the background after connecting
        structure = alice.ok(
            "POST",
            f"{root}/database-connections/structure",
            json={"conid": "mariadb", "database": database},
        )
        tables = [t["pureName"] for t in structure.get("tables") or []]
        if "grades" in tables:
            break
        time.sleep(1)
    assert {"grades", "courses"} <= set(tables), tables


@end_to_end
def test_the_data_survives_a_restart(alice, lab):
    code(alice, "alice", lab, mariadb("INSERT INTO grades VALUES ('bob', 5)"))
    # A dump in the home, which a submission carries (the data files themselves it never does).
    dumped = alice.ok("POST", "/notebook/alice/mdb/cgu-lab/apps/mariadb/dump")
    assert dumped["path"] == "database.sql" and dumped["size"] > 0, dumped
    sql = code(alice, "alice", lab, "print(open('database.sql').read())")
    assert "CREATE TABLE `grades`" in sql and "('bob',5)" in sql, sql[-400:]
    alice.ok("POST", "/api/notebooks/alice/mdb/stop?wait=true", 202)
    assert alice.ok("POST", "/api/notebooks/alice/mdb/start?wait=true", 202)["state"] == "running"
    again = code(alice, "alice", lab, mariadb("SELECT sum(mark) FROM grades"))
    assert again.split()[:3] == ["mariadb", "0", "12"], again


@end_to_end
@pytest.mark.skipif(os.geteuid() != 0, reason="per-user accounts need the controller as root")
def test_another_users_kernel_cannot_connect(alice, bob, lab):
    theirs = code(alice, "alice", lab, "import os; print(os.environ['MYSQL_UNIX_PORT'])").strip()
    body = {"name": "mdb", "environment": "databases-mariadb", **SMALL}
    bob.ok("POST", "/api/notebooks", 201, json=body)
    assert bob.ok("POST", "/api/notebooks/bob/mdb/start?wait=true", 202)["state"] == "running"
    probe = MARIADB.replace('["mariadb", "-N"', f'["mariadb", "--socket", {theirs!r}, "-N"')
    refused = code(bob, "bob", "mdb", probe.format(command="SELECT sum(mark) FROM alice.grades"))
    # The client's "can't connect through socket" with the system's errno: EACCES (her
    # private folder) or ENOENT (where the notebook's /tmp is its own).
    assert refused.startswith("mariadb 1 ") and "ERROR 2002" in refused, refused
    assert "(13)" in refused or "(2)" in refused, refused
    # His own database is his: an empty one, not hers.
    own = code(
        bob,
        "bob",
        "mdb",
        mariadb("SELECT count(*) FROM information_schema.tables WHERE table_name = 'grades'"),
    )
    assert own.split()[:3] == ["mariadb", "0", "0"], own

"""The whole controller on a real PostgreSQL: accounts, a notebook's lifecycle,
concurrent starts against a quota, and a restart that keeps everything."""

import concurrent.futures
import uuid

import psycopg
import pytest
from sqlalchemy.engine import make_url

from .conftest import postgres_url, requires_postgres
from .harness import running_controller

pytestmark = [
    requires_postgres,
    pytest.mark.postgres,
    pytest.mark.integration,
    pytest.mark.end_to_end,
]


@pytest.fixture(scope="module")
def pg_controller():
    server = make_url(postgres_url())
    name = f"cgu_ctl_{uuid.uuid4().hex[:12]}"
    admin_dsn = server.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin_dsn, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    users = [("pg-admin", "admin"), ("carol", "student")]
    database = server.set(database=name).render_as_string(hide_password=False)
    with running_controller(users, db_url=database) as ctl:
        yield ctl
    with psycopg.connect(admin_dsn, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def test_lifecycle_and_quota_on_postgres(pg_controller):
    with pg_controller.client("pg-admin") as admin, pg_controller.client("carol") as carol:
        admin.ok(
            "PUT",
            "/api/users/carol/quota",
            json={"cpu": 2, "memory": "4Gi", "gpus": {}, "notebooks": 1},
        )
        for name in ("a", "b"):
            carol.ok(
                "POST", "/api/notebooks", 201, json={"name": name, "cpu": 0.5, "memory": "512Mi"}
            )

        def start(name):
            return carol.post(f"/api/notebooks/carol/{name}/start?wait=true").status_code

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            assert sorted(pool.map(start, ["a", "b"])) == [202, 403]
        running = [nb["name"] for nb in carol.ok("GET", "/api/notebooks?state=running")]
        assert len(running) == 1
        assert carol.get(f"/notebook/carol/{running[0]}/api/status").status_code == 200
        assert {e["action"] for e in admin.ok("GET", "/api/audit?target=notebook:carol")} >= {
            "notebook.created",
            "notebook.started",
        }

    pg_controller.stop()
    pg_controller.start()
    with pg_controller.client("carol") as carol:
        assert carol.ok("GET", f"/api/notebooks/carol/{running[0]}")["state"] == "running"
        assert (
            carol.ok("POST", f"/api/notebooks/carol/{running[0]}/stop?wait=true", 202)["state"]
            == "stopped"
        )

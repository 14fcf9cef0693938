"""A database held by someone else: the API says so (503, Retry-After, a sentence), the
health check reports it, and running notebooks stay usable through the proxy.

The controller runs in the test's process on its real SQLite file, with a busy timeout
of half a second; another connection takes the file's write lock (`BEGIN EXCLUSIVE`) as
a long migration, a backup tool or a stuck transaction would. The notebook is a
loopback stand-in behind the real proxy (tests/inprocess.py).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time

import pytest

from cgu_lab.backends.kube_settings import KubeSettings
from cgu_lab.controller.accounts import auth

from .inprocess import ClusterlessKube, InProcess, LoopbackNotebook


@contextlib.contextmanager
def locked(path):
    """The database file's write lock, held by another connection inside the block."""
    other = sqlite3.connect(path, isolation_level=None, timeout=5)
    try:
        other.execute("BEGIN EXCLUSIVE")
        yield
        other.execute("ROLLBACK")
    finally:
        other.close()


def test_a_locked_database_is_a_503_and_running_notebooks_keep_working(tmp_path, monkeypatch):
    # Identities are fresh for 0.2 s instead of 10: the lock outlasts every cached answer.
    monkeypatch.setattr(auth, "CACHE_SECONDS", 0.2)
    with LoopbackNotebook() as upstream:
        backend = ClusterlessKube(KubeSettings(), upstream.url)
        app = InProcess(
            tmp_path / "data", backend=lambda _settings: backend, db_busy_timeout=0.5
        ).start()
        try:
            app.create_user("dana")
            with app.client("dana") as dana:
                body = {"name": "lab", "cpu": "0.5", "memory": "1Gi", "image": "jupyter/minimal"}
                dana.ok("POST", "/api/notebooks", 201, json=body)
                dana.ok("POST", "/api/notebooks/dana/lab/start?wait=true", 202)
                assert dana.get("/notebook/dana/lab/api/status").status_code == 200
                assert dana.ok("GET", "/api/health")["database"] == "ok"
                token = dana.ok("POST", "/api/me/tokens", 201, json={"name": "script"})["token"]
                script = app.anonymous(headers={"Authorization": f"Bearer {token}"})
                assert script.get("/notebook/dana/lab/api/status").status_code == 200

                with locked(tmp_path / "data" / "cgu-lab.sqlite"):
                    time.sleep(0.3)  # past the identities' freshness
                    # What only reads goes on (WAL: the last committed state) ...
                    listed = dana.get("/api/notebooks")
                    assert listed.status_code == 200 and listed.json()[0]["name"] == "lab"
                    # ... what writes waits its time, then says so.
                    answer = dana.post("/api/notebooks", json={**body, "name": "second"})
                    assert answer.status_code == 503, answer.text
                    assert answer.headers["retry-after"] == "5"
                    assert answer.json()["code"] == "database_busy"
                    assert "try again" in answer.json()["message"]

                    page = dana.get("/notebook/auto-start/dana/lab")
                    assert page.status_code == 503 and "retry-after" in page.headers
                    assert "try again" in page.text

                    health = dana.get("/api/health")
                    assert health.status_code == 503, health.text
                    assert health.json()["database"] == "busy"
                    assert "retry-after" in health.headers

                    # The running notebook: its route, its owner's last known identity.
                    served = dana.get("/notebook/dana/lab/api/status")
                    assert served.status_code == 200, served.text
                    assert served.json() == {"ok": True}
                    # What the proxy does not know yet is read from the last committed
                    # state, the writer's lock notwithstanding: no such notebook, not a 500.
                    unknown = script.get("/notebook/dana/other/api/status")
                    assert unknown.status_code == 404, unknown.text
                    assert unknown.json()["code"] == "not_found"

                assert dana.ok("GET", "/api/health")["database"] == "ok"
                assert dana.get("/api/notebooks").status_code == 200
        finally:
            app.stop()


@pytest.mark.parametrize(
    ("sqlstate", "kind"),
    [("55P03", "busy"), ("57014", "busy"), ("08006", "unreachable"), ("23505", None)],
)
def test_postgres_lock_timeouts_and_lost_connections_read_as_the_database_unavailable(
    sqlstate, kind
):
    """PostgreSQL's lock_timeout (55P03), a cancelled statement (57014) and a lost
    connection (class 08) are the same 503 as SQLite's lock; a unique violation is not."""
    from sqlalchemy.exc import OperationalError

    from cgu_lab.store.db import unavailable

    class DriverError(Exception):
        pass

    driver = DriverError("server said no")
    driver.sqlstate = sqlstate
    assert unavailable(OperationalError("SELECT 1", {}, driver)) == kind


def test_a_start_that_cannot_write_its_token_ends_stopped_with_why(tmp_path, monkeypatch):
    """A start whose preparation meets a database too busy to write the server's token
    ends: the notebook is stopped with the reason, its progress stream says so, and the
    next start goes through. (It stayed "starting" for ever, its task's failure unseen:
    2 of 30 in a busy burst, benchmarks/class_burst.py.) The fault is the writers' queue
    timing out, as `Database._turn` raises it."""
    with LoopbackNotebook() as upstream:
        backend = ClusterlessKube(KubeSettings(), upstream.url)
        app = InProcess(tmp_path / "data", backend=lambda _settings: backend).start()
        try:
            _start_after_a_busy_token(app, monkeypatch)
        finally:
            app.stop()


def _start_after_a_busy_token(app, monkeypatch) -> None:
    from sqlalchemy import exc

    app.create_user("dana")
    auth_service = app.platform.notebooks.lifecycle.auth
    real = auth_service.create_token

    async def busy(*args, **kwargs):
        raise exc.TimeoutError("no turn at the database within 30 s")

    with app.client("dana") as dana:
        body = {"name": "lab", "cpu": "0.5", "memory": "1Gi", "image": "jupyter/minimal"}
        dana.ok("POST", "/api/notebooks", 201, json=body)
        monkeypatch.setattr(auth_service, "create_token", busy)
        dana.ok("POST", "/api/notebooks/dana/lab/start?wait=true", 202)
        view = dana.ok("GET", "/api/notebooks/dana/lab")
        assert view["state"] == "stopped"
        assert "no turn at the database" in view["message"]
        assert dana.get("/notebook/dana/lab/api/status").status_code != 200

        monkeypatch.setattr(auth_service, "create_token", real)
        dana.ok("POST", "/api/notebooks/dana/lab/start?wait=true", 202)
        assert dana.ok("GET", "/api/notebooks/dana/lab")["state"] == "running"

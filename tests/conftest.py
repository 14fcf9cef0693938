"""Shared fixtures: the controller (a real process, or the app in the test's process),
logged-in HTTP clients, PostgreSQL; and what a failed test prints about the controllers.

`site` is where a module's API tests talk: a controller process (`controller`) unless
the module overrides `site` with the in-process app (`in_process`, tests/inprocess.py):

    @pytest.fixture(scope="module")
    def site(in_process):
        return in_process

`login(name)` (or `login(name, role)` to create the account first) gives a logged-in
client on the site; `admin`, `teacher`, `alice` and `bob` are its four standard users.
`process_login` is the same on the controller process, for the few tests of an
in-process module that need real notebook servers. (tests/security/test_copies.py has
a `site` fixture of its own, a controller with other accounts, and its own clients.)
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

# Argon2 at its lowest cost for every controller the tests run, in this process and in
# the controller processes (they inherit the environment): full cost is about a second
# of CPU per login on a loaded 2-core machine. Set before cgu_lab is imported below.
os.environ.setdefault("CGU_LAB_PASSWORD_HASH_COST", "test")

from . import harness  # (after the environment above)
from .harness import Controller, Logins, reachable_dir
from .inprocess import InProcess

pytest_plugins = ["pytest_jupyter.jupyter_server"]

# The accounts every site starts with.
STANDARD_USERS = (
    ("root-admin", "admin"),
    ("teacher", "teacher"),
    ("alice", "student"),
    ("bob", "student"),
)


@pytest.fixture(scope="module")
def controller():
    """A running controller process with an admin, a teacher and two students."""
    base = reachable_dir()
    ctl = Controller(base / "data")
    ctl.create_users(STANDARD_USERS)
    ctl.start()
    yield ctl
    ctl.stop()
    ctl.kill_notebooks()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def inprocess_settings() -> dict:
    """Settings for this module's `in_process` app beyond the defaults (a module overrides
    this fixture to change them, e.g. a session lifetime for a clock moved by weeks)."""
    return {}


@pytest.fixture(scope="module")
def in_process(inprocess_settings):
    """The controller app in this process (tests/inprocess.py), with the same accounts."""
    base = reachable_dir()
    app = InProcess(base / "data", **inprocess_settings).start()
    for name, role in STANDARD_USERS:
        app.create_user(name, role)
    yield app
    app.stop()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def site(controller):
    """Where this module's API tests talk; modules that run in process override it."""
    return controller


@pytest.fixture(scope="module")
def login(site):
    """`login(name)` / `login(name, role)`: a logged-in client on the module's site."""
    logins = Logins(site)
    yield logins
    logins.close()


@pytest.fixture(scope="module")
def process_login(controller):
    """`login`, on the controller process (tests that need real notebook servers)."""
    logins = Logins(controller)
    yield logins
    logins.close()


@pytest.fixture(scope="module")
def admin(login):
    return login("root-admin")


@pytest.fixture(scope="module")
def alice(login):
    return login("alice")


@pytest.fixture(scope="module")
def bob(login):
    return login("bob")


@pytest.fixture(scope="module")
def teacher(login):
    return login("teacher")


def postgres_url() -> str | None:
    return os.environ.get("CGU_TEST_POSTGRES_URL") or None


requires_postgres = pytest.mark.skipif(
    postgres_url() is None and os.environ.get("CI") != "true",
    reason="set CGU_TEST_POSTGRES_URL to run against PostgreSQL",
)


# -- a failed test shows the controllers' and notebooks' logs -------------------------------


# When the test's call began: time.monotonic() (controller stops) and time.time() (files).
CALL_BEGAN = pytest.StashKey[tuple[float, float]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    item.stash[CALL_BEGAN] = (time.monotonic(), time.time())
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call" and report.failed:
        _add_logs(item, report)
    return report


def _add_logs(item, report) -> None:
    """The tail of each controller's log, and of the notebook logs written during the test."""
    began, wall_began = item.stash.get(CALL_BEGAN, (0.0, 0.0))
    for ctl in harness.STARTED:
        # Those running now and those that stopped during the test.
        if not (ctl.running() or (ctl.stopped_at or 0) >= began):
            continue
        report.sections.append((f"controller log {ctl.log.name} (last lines)", ctl.log_tail(60)))
        logs = ctl.data_dir / "logs"
        written = sorted(
            (path for path in logs.glob("*/*.log") if _mtime(path) >= wall_began - 1),
            key=_mtime,
        )
        for path in [p for p in written if str(p) not in report.longreprtext][-3:]:
            # (those a failed `harness.wait_state` quoted already are not repeated)
            notebook = f"{path.parent.name}/{path.stem}"
            report.sections.append(
                (f"notebook {notebook} server log (last lines)", harness.tail(path, 30))
            )


def _mtime(path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0

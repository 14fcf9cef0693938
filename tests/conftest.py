"""Shared fixtures: the controller (the app in the test's process, or a real process),
logged-in HTTP clients, PostgreSQL; and what a failed test prints about the controllers.

The tests run in three layers; a module says which by its `pytestmark`:

- **in process** (the default): `site` is `in_process`, the real app with a real SQLite
  store in the test's own process (tests/inprocess.py), no sockets, the local backend
  with notebook servers left out, and a clock the test moves. API, pages, rules,
  refusals: most modules are here.
- **in process with real notebook servers** (`pytest.mark.notebook_servers`): the same
  app with the real local backend, served on its port over HTTP as well, so JupyterLab
  servers really start as their owners' accounts, reach the controller and are reached
  through its proxy (HTTP and websockets); they are killed when the module ends.
- **end to end** (`pytest.mark.end_to_end`): `site` is `controller`, `cgu-lab controller`
  in a process of its own, for what only a process shows: a restart and what it adopts,
  signals, the command line, its loops on wall-clock time. `pytest -m end_to_end` runs
  this layer (and the few tests marked so in other modules, on `process_login`),
  `-m "not end_to_end"` the others. A test that uses a controller process without the
  mark fails (tests/layers.py).

In process is the default, as JupyterHub's tests run a MockHub: a controller process
costs each module seconds of CPU to import and start on a shared 2-core runner, and its
clock cannot be moved, so its tests wait instead; the process layer is kept thin.

A module with other needs (other settings: override `inprocess_settings`; another
backend or accounts) defines its own `site`. `login(name)` (or `login(name, role)` to
create the account first) gives a logged-in client on the site; `admin`, `teacher`,
`alice` and `bob` are its four standard users. `process_login` is the same on the
controller process, for the few tests of an in-process module that need it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

# Argon2 at its lowest cost for every controller the tests run, in this process and in
# the controller processes (they inherit the environment): full cost is about a second
# of CPU per login on a loaded 2-core machine. Set before cgu_lab is imported below.
os.environ.setdefault("CGU_LAB_PASSWORD_HASH_COST", "test")

from cgu_lab.backends.local import LocalBackend  # (after the environment above)

from . import harness, inprocess
from .harness import Logins, kill_notebooks, reachable_dir, running_controller
from .inprocess import FakeLocalBackend, InProcess

# tests.layers fails a test that uses a controller process without the end_to_end mark;
# pytester runs pytest on made-up modules (test_layers.py checks that check with it).
pytest_plugins = ["pytest_jupyter.jupyter_server", "tests.layers", "pytester"]

# The accounts every site starts with.
STANDARD_USERS = (
    ("root-admin", "admin"),
    ("teacher", "teacher"),
    ("alice", "student"),
    ("bob", "student"),
)

END_TO_END = "end_to_end"
NOTEBOOK_SERVERS = "notebook_servers"


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        f"{END_TO_END}: the module's `site` is a controller process (conftest's `controller`)",
    )
    config.addinivalue_line(
        "markers",
        f"{NOTEBOOK_SERVERS}: the module's in-process `site` starts real notebook servers",
    )


def marked(request, name: str) -> bool:
    """Whether the requesting module (or a class or test above it) carries marker `name`."""
    return request.node.get_closest_marker(name) is not None


@pytest.fixture(scope="module")
def controller():
    """A running controller process with an admin, a teacher and two students."""
    with running_controller(STANDARD_USERS) as ctl:
        yield ctl


@pytest.fixture(scope="module")
def inprocess_settings() -> dict:
    """Settings for this module's `in_process` app beyond the defaults (a module overrides
    this fixture to change them, e.g. a session lifetime for a clock moved by weeks)."""
    return {}


@pytest.fixture(scope="module")
def in_process(request, inprocess_settings):
    """The controller app in this process (tests/inprocess.py), with the same accounts;
    real notebook servers, and the app served over HTTP for them, in a module marked
    `notebook_servers`."""
    servers = marked(request, NOTEBOOK_SERVERS)
    base = reachable_dir()
    backend = LocalBackend if servers else FakeLocalBackend
    app = InProcess(base / "data", backend=backend, **inprocess_settings).start()
    if servers:
        app.serve()  # the servers ask the controller; websockets go through its proxy
    for name, role in STANDARD_USERS:
        app.create_user(name, role)
    yield app
    app.stop()
    # Servers outlive the app, as they outlive a controller process; the installation's
    # Unix accounts too (the local backend makes them, started or not).
    kill_notebooks(app.data_dir)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def site(request):
    """Where this module's API tests talk: `in_process`, or `controller` in a module
    marked `end_to_end`."""
    if marked(request, END_TO_END):
        return request.getfixturevalue("controller")
    return request.getfixturevalue("in_process")


@pytest.fixture(scope="module")
def login(site):
    """`login(name)` / `login(name, role)`: a logged-in client on the module's site."""
    logins = Logins(site)
    yield logins
    logins.close()


@pytest.fixture(scope="module")
def process_login(controller):
    """`login`, on the controller process (the few tests of an in-process module that
    need it)."""
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
        _add_notebook_logs(ctl.data_dir, wall_began, report)
    for app in inprocess.RUNNING:  # an in-process app logs to the test's own output
        _add_notebook_logs(app.data_dir, wall_began, report)
    if "kube" in item.fixturenames:  # a test on the real cluster: what the node says
        report.sections.append(("test cluster (kube-cluster.sh diagnose)", _cluster_state()))


def _cluster_state() -> str:
    """The disk, the node's conditions and taints, pods not running and the latest warnings:
    a full disk or a tainted node fails every start the same way, and says so only here."""
    script = Path(__file__).resolve().parents[1] / "scripts" / "kube-cluster.sh"
    try:
        done = subprocess.run(
            [script, "diagnose"], capture_output=True, text=True, timeout=60, check=False
        )
    except subprocess.TimeoutExpired:
        return "(no answer in 60 s)"
    return (done.stdout + done.stderr).strip()


def _add_notebook_logs(data_dir, wall_began: float, report) -> None:
    """The last lines of the notebook server logs under `data_dir` written during the test."""
    logs = data_dir / "logs"
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

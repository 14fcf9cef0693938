"""Shared fixtures: a real controller process, logged-in HTTP clients, PostgreSQL."""

from __future__ import annotations

import os
import shutil

import pytest

from .harness import Controller, reachable_dir

pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture(scope="module")
def controller():
    """A running controller with an admin, a teacher and two students."""
    base = reachable_dir()
    ctl = Controller(base / "data")
    ctl.create_user("root-admin", "admin")
    ctl.create_user("teacher", "teacher")
    ctl.create_user("alice")
    ctl.create_user("bob")
    ctl.start()
    yield ctl
    ctl.stop()
    ctl.kill_notebooks()
    shutil.rmtree(base, ignore_errors=True)


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
def teacher(controller):
    with controller.client("teacher") as session:
        yield session


def postgres_url() -> str | None:
    return os.environ.get("CGU_TEST_POSTGRES_URL") or None


requires_postgres = pytest.mark.skipif(
    postgres_url() is None and os.environ.get("CI") != "true",
    reason="set CGU_TEST_POSTGRES_URL to run against PostgreSQL",
)

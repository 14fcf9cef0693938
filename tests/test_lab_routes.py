"""One URL space, two answerers: `<notebook>/cgu-lab/<x>` is the controller's when its API
declares `<x>` below /api/lab/{owner}/{name}, else the notebook's server extension's.

The proxy reads the controller's side from the API itself (proxy/forward.py
`answers_lab`), so the two can only disagree if both declare the same path; these
tests walk both tables and fail when they do, and check the proxy's reading.
"""

from __future__ import annotations

import re

import pytest

from cgu_lab.controller.api import lab
from cgu_lab.controller.app import create_app
from cgu_lab.controller.competitions import router as competitions_router
from cgu_lab.controller.help_queue import lab_router as help_lab
from cgu_lab.controller.proxy.forward import LAB_API_PREFIX, LAB_PATH
from cgu_lab.controller.publishing import lab_router as publishing_lab
from cgu_lab.controller.settings import Settings

from .harness import extension_server_config


@pytest.fixture
def jp_server_config():
    return extension_server_config()


def controller_lab_paths(tmp_path) -> tuple[object, list[str]]:
    """The controller's app and a sample `cgu-lab/` path for each route of the routers
    that answer JupyterLab (api/lab.py, the help queue's, the competitions', publishing's)."""
    app = create_app(Settings(data_dir=tmp_path / "data", backend="local", run_as="self"))
    samples = []
    for router in (
        lab.router,
        help_lab.router,
        competitions_router.lab_routes,
        publishing_lab.router,
    ):
        for route in router.routes:
            path = "/api" + route.path  # the routers sit under /api (controller/routes.py)
            assert path.startswith(LAB_API_PREFIX + "/"), path
            tail = re.sub(r"\{[^}]+\}", "1", path[len(LAB_API_PREFIX) :])
            samples.append(LAB_PATH + tail)
    return app, samples


def handler_patterns(router):
    """Every path pattern of a tornado application's routers, nested ones included."""
    for rule in router.rules:
        if hasattr(rule.matcher, "regex"):
            yield rule.matcher.regex
        if hasattr(rule.target, "rules"):
            yield from handler_patterns(rule.target)


def test_the_proxy_reads_the_lab_routes_from_the_api(tmp_path):
    app, samples = controller_lab_paths(tmp_path)
    assert len(samples) >= 15  # shares, resize, quota, templates, submit, help, competitions...
    for sample in samples:
        assert app.proxy.answers_lab(sample), sample
    for extension_path in ("/cgu-lab/info", "/cgu-lab/resources", "/cgu-lab/files/stat"):
        assert not app.proxy.answers_lab(extension_path)
    assert not app.proxy.answers_lab("/api/contents")


async def test_no_path_is_declared_by_both_the_controller_and_the_extension(jp_serverapp, tmp_path):
    _, samples = controller_lab_paths(tmp_path)
    base = jp_serverapp.base_url.rstrip("/")
    patterns = list(handler_patterns(jp_serverapp.web_app.default_router))
    extension = [p for p in patterns if "cgu-lab" in p.pattern]
    assert extension, "the server extension declares its cgu-lab/ routes"
    clashes = [
        (sample, p.pattern) for sample in samples for p in extension if p.match(base + sample)
    ]
    assert clashes == [], "declared by both; the proxy would hide the extension's"

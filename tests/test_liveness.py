"""A notebook whose server dies is marked stopped within seconds, with the reason.

A real JupyterLab process, killed behind the controller's back as a crash or the
memory limit would, and the controller in the test's process (conftest's
`notebook_servers` layer: no controller process to start).
"""

from __future__ import annotations

import pytest

from cgu_lab.controller.notebooks import liveness

from .harness import wait_until
from .test_notebooks import server_process

pytestmark = [pytest.mark.integration, pytest.mark.notebook_servers]


@pytest.fixture(scope="module")
def inprocess_settings() -> dict:
    return {"liveness_interval": 1}


@pytest.fixture(scope="module")
def watched(site):
    site.create_user("mia")
    return site


def test_a_dead_notebook_is_stopped_with_the_reason(watched):
    mia = watched.client("mia")
    mia.ok("POST", "/api/notebooks", 201, json={"name": "nb", "cpu": "0.5", "memory": "1Gi"})
    mia.ok("POST", "/api/notebooks/mia/nb/start?wait=true", 202)
    assert mia.get("/notebook/mia/nb/api/status").status_code == 200
    server_process("mia", "nb").kill()
    # The liveness check runs every second on the controller's clock: ask until it has.
    notebook = wait_until(
        lambda: (nb := mia.ok("GET", "/api/notebooks/mia/nb"))["state"] != "running" and nb,
        timeout=10,
        interval=0.2,
        what="the dead server to be noticed (still 'running' 10 s after it died)",
    )
    assert notebook["state"] == "stopped"
    assert "stopped by itself" in notebook["message"], notebook
    # The browser is offered the start page (which shows the reason), an API client a 503.
    page = mia.get("/notebook/mia/nb/lab", headers={"Accept": "text/html"})
    assert page.status_code == 303
    assert page.headers["location"].startswith(f"{watched.url}/notebook/auto-start/mia/nb?next=")
    start = mia.get(page.headers["location"])
    assert start.status_code == 200 and "stopped by itself" in start.text
    api = mia.get("/notebook/mia/nb/api/status")
    assert api.status_code == 503 and api.json()["code"] == "notebook_stopped"
    # It starts again from there.
    assert mia.ok("POST", "/api/notebooks/mia/nb/start?wait=true", 202)["state"] == "running"


def test_a_pass_keeps_specs_and_makes_a_restarted_notebooks_anew(watched):
    """The watch keeps each notebook's spec from pass to pass (liveness.check's `specs`:
    a spec costs a handful of queries) and makes it again for a new start, whose secret,
    devices and resources may differ, and which a dead server's stop must clean up."""
    mia = watched.client("mia")
    mia.ok("POST", "/api/notebooks", 201, json={"name": "nb2", "cpu": "0.5", "memory": "1Gi"})
    mia.ok("POST", "/api/notebooks/mia/nb2/start?wait=true", 202)
    notebooks = watched.platform.notebooks
    specs: dict = {}

    def nb2() -> tuple:
        return next(known for known in specs.values() if known[1].name == "nb2")

    assert watched.call(liveness.check, notebooks, {}, specs) == []
    first_start, first_spec = nb2()
    assert watched.call(liveness.check, notebooks, {}, specs) == []
    assert nb2()[1] is first_spec  # the second pass made none
    mia.ok("POST", "/api/notebooks/mia/nb2/stop?wait=true", 202)
    mia.ok("POST", "/api/notebooks/mia/nb2/start?wait=true", 202)
    assert watched.call(liveness.check, notebooks, {}, specs) == []
    assert nb2()[0] != first_start
    assert nb2()[1].proxy_secret != first_spec.proxy_secret
    assert mia.ok("GET", "/api/notebooks/mia/nb2")["state"] == "running"

"""Schemathesis holds a running controller to its own OpenAPI document.

The controller is the app in the test's process (tests/inprocess.py), served over
real HTTP on loopback as uvicorn serves it in a deployment: the same app, store and
routes as a controller process, without the process's start and the CLI runs that
made its accounts (about a minute of the module on a loaded 2-core runner). No test
here starts a notebook server, so the backend's stand-in for them changes nothing.
The document is the one the code generates, which is what the controller serves at
/api/openapi.json (checked before the run, and committed as docs/openapi.json).
Loading it at collection time gives one test per operation. As an administrator with
an API token (Authorization: Bearer), the test sends every operation generated
requests: boundary values from the schema (the coverage phase: 2^63 - 1, empty
strings, the longest names...), random valid ones and invalid ones (fuzzing,
positive and negative). Each answer must be

- no server error: 500 and unknown 5xx fail; 501 (a feature of the other
  backend) and 503 (no free GPU, cluster away) are documented answers of the
  platform and pass,
- documented: its status code is listed for the operation,
- shaped as documented: content type, headers and body match the schema
  (errors included: every refusal is an ErrorBody),
- a refusal of what the schema forbids (negative data is rejected with 4xx),
- a 405 with an Allow header naming the path's methods for undocumented ones.

Some data exists beforehand (a user, a group, a notebook, an assignment all
named "lab", owned by or open to the admin), and half of the generated path
parameters are replaced with those names, so requests reach the routes' logic
instead of stopping at 404.

Left out, because they would lock the administrator out or are too slow for a
2-core CI runner: changing the admin's own password (PUT /api/me/password),
requests aimed at the admin's own account (a path naming root-admin under
/api/users, which could delete it, demote it, deactivate it or reset its
password) or at the token the test uses, and starting JupyterLab processes
(POST .../start, and `start: true` on a new notebook is sent as false) or pip builds of
environments (POST /api/environments, .../rebuild: tests/test_environments.py builds one).
The run is bounded: a few examples per operation, no shrinking, no stateful
phase; about two minutes on two cores.
"""

from __future__ import annotations

import json

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from cgu_lab.controller.app import create_app

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

ADMIN = "root-admin"
FIXTURE = "lab"  # the user, group, notebook and assignment the requests may aim at
EXAMPLES = 25  # per operation and generation mode, on top of the coverage phase
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    unsupported_method,
    allow_header_conformance,
]
CONFIG = {
    "checks": {
        # 501 and 503 are the platform's documented answers, not crashes (see above).
        "not_a_server_error": {"expected-statuses": ["2xx", "3xx", "4xx", "501", "503"]},
    },
    "phases": {
        "examples": {"enabled": False},
        "coverage": {"enabled": True},
        "fuzzing": {"enabled": True},
        "stateful": {"enabled": False},
    },
    "generation": {"mode": "all", "max-examples": EXAMPLES, "no-shrink": True},
    "dictionaries": {
        "owners": {"values": [ADMIN]},
        "names": {"values": [FIXTURE]},
        "ids": {"values": [1]},
    },
    "parameters": {
        "path.owner": {"dictionary": "owners", "probability": 0.5},
        "path.name": {"dictionary": "names", "probability": 0.5},
        "path.group": {"dictionary": "names", "probability": 0.5},
        "path.user": {"dictionary": "names", "probability": 0.5},
        "path.assignment_id": {"dictionary": "ids", "probability": 0.5},
        "path.deployment_id": {"dictionary": "ids", "probability": 0.5},
        "path.submission_id": {"dictionary": "ids", "probability": 0.5},
    },
}


class Api:
    """The admin's token and the id of that token (which the run must not revoke)."""

    def __init__(self, token: str, token_ids: set[int]) -> None:
        self.token = token
        self.token_ids = token_ids
        self.headers = {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def site(in_process):
    """The controller app in this process, served over HTTP: schemathesis sends real requests."""
    in_process.serve()
    return in_process


@pytest.fixture(scope="module")
def api(site, admin) -> Api:
    served = httpx.get(f"{site.url}/api/openapi.json", timeout=30).json()
    assert served == json.loads(json.dumps(DOCUMENT)), "the controller serves another document"
    token = admin.ok("POST", "/api/me/tokens", 201, json={"name": "schemathesis"})["token"]
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=site.url, headers=headers, timeout=60) as client:

        def ok(method: str, path: str, **kwargs) -> dict:
            response = client.request(method, path, **kwargs)
            assert response.status_code < 300, (method, path, response.text)
            return response.json()

        ok("POST", "/api/users", json={"name": FIXTURE, "password": "lab-password-1"})
        ok("POST", "/api/groups", json={"name": FIXTURE, "display_name": "The lab"})
        ok("PUT", f"/api/groups/{FIXTURE}/members/{FIXTURE}", json={"manager": False})
        ok("PUT", f"/api/groups/{FIXTURE}/members/{ADMIN}", json={"manager": True})
        ok("POST", "/api/notebooks", json={"name": FIXTURE, "cpu": 0.5, "memory": "512Mi"})
        ok("POST", f"/api/groups/{FIXTURE}/assignments", json={"name": "hw1", "title": "HW 1"})
        token_ids = {t["id"] for t in ok("GET", "/api/me/tokens")}
    return Api(token, token_ids)


def aimed_at_the_admin(case, api: Api) -> bool:
    """Requests that could take the administrator's account or token away."""
    parameters = case.path_parameters or {}
    if case.path.startswith("/api/users/{name}") and parameters.get("name") == ADMIN:
        return True
    if parameters.get("user") == ADMIN:
        return True
    return case.path == "/api/me/tokens/{token_id}" and parameters.get("token_id") in api.token_ids


DOCUMENT = create_app().api.openapi()
schema = (
    schemathesis.openapi.from_dict(DOCUMENT, config=schemathesis.Config.from_dict(CONFIG))
    .exclude(method="PUT", path="/api/me/password")
    .exclude(method="POST", path_regex=r"/start$")
    .exclude(method="POST", path_regex=r"^/api/environments(/[^/]+/rebuild)?$")
    # Streams for minutes by design (tests/test_notebooks.py follows it).
    .exclude(method="GET", path="/api/notebooks/events")
    # The staff pages' streams (tests/test_admin_pages.py, tests/test_course_page.py).
    .exclude(method="GET", path="/api/users/notebooks/events")
    .exclude(method="GET", path="/api/groups/{group}/live/events")
)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_the_api_keeps_to_its_document(case, api, site):
    if aimed_at_the_admin(case, api):
        return
    if isinstance(case.body, dict) and case.body.get("start") is True:
        case.body["start"] = False  # no JupyterLab processes on the CI runner
    case.call_and_validate(base_url=site.url, headers=api.headers, checks=CHECKS)

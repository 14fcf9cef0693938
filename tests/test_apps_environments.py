"""Environments declare their apps: the API, who may change them, and what notebooks get.

An administrator chooses an environment's apps (built-ins by name, their own
with a command); the list is checked whole (a refused entry changes nothing),
shown to everyone who lists environments, and handed to the environment's
notebooks as `$CGU_APPS`. Students cannot change it.
"""

from __future__ import annotations

import json
import sys

import pytest

from cgu_lab.controller.environments import apps as environment_apps
from cgu_lab.store.models import Environment

RSTUDIO = {"name": "rstudio", "title": "RStudio", "command": ["rserver", "--www-port={port}"]}


@pytest.fixture(scope="module")
def environment(login):
    admin = login("root-admin")
    admin.ok("PUT", "/api/environments/apps-env", json={"local_prefix": sys.prefix})
    return "apps-env"


def test_an_environment_offers_the_built_ins_until_told_otherwise(login, environment):
    detail = login("alice").ok("GET", f"/api/environments/{environment}")
    assert [a["name"] for a in detail["apps"]] == ["desktop", "vscode"]
    assert detail["apps_declared"] is False


def test_an_admin_chooses_the_apps_and_can_go_back_to_the_built_ins(login, environment):
    admin = login("root-admin")
    body = {"apps": [{"name": "desktop"}, RSTUDIO]}
    detail = admin.ok("PUT", f"/api/environments/{environment}/apps", json=body)
    assert detail["apps_declared"] is True
    assert detail["apps"] == [
        {"name": "desktop", "title": "Linux desktop", "command": [], "port": None, "icon": ""},
        {**RSTUDIO, "port": None, "icon": ""},
    ]
    listed = {e["name"]: e for e in login("bob").ok("GET", "/api/environments")}
    assert [a["name"] for a in listed[environment]["apps"]] == ["desktop", "rstudio"]
    events = admin.ok("GET", "/api/audit?action=environment.apps")
    assert events[0]["target"] == f"environment:{environment}"
    assert events[0]["details"]["apps"] == ["desktop", "rstudio"]
    detail = admin.ok("PUT", f"/api/environments/{environment}/apps", json={"apps": None})
    assert detail["apps_declared"] is False


@pytest.mark.parametrize(
    "apps, words",
    [
        ([{"name": "shiny"}], "needs a command"),
        ([{"name": "lab", "command": ["x"]}], "taken by the notebook server"),
        ([{"name": "x1", "command": ["x", "{home}"]}], "only {port}"),
        ([{"name": "desktop"}, {"name": "desktop"}], "listed twice"),
        ([{"name": "x1", "command": ["x"], "icon": "<svg onload='a()'></svg>"}], "event handlers"),
    ],
)
def test_a_bad_list_is_refused_whole_with_words(login, environment, apps, words):
    admin = login("root-admin")
    admin.ok(
        "PUT",
        f"/api/environments/{environment}/apps",
        json={"apps": [{"name": "vscode"}]},
    )
    response = admin.put(f"/api/environments/{environment}/apps", json={"apps": apps})
    assert response.status_code in (400, 422), response.text
    assert words in response.json()["message"]
    detail = admin.ok("GET", f"/api/environments/{environment}")
    assert [a["name"] for a in detail["apps"]] == ["vscode"]


def test_students_cannot_choose_apps(login, environment):
    response = login("alice").put(f"/api/environments/{environment}/apps", json={"apps": [RSTUDIO]})
    assert response.status_code == 403
    assert response.json()["message"]


def test_unknown_environment_is_a_404(login):
    response = login("root-admin").put("/api/environments/nowhere/apps", json={"apps": None})
    assert response.status_code == 404


def test_what_a_notebook_is_given():
    assert environment_apps.notebook_setting(Environment(name="e", apps=None)) == ""
    given = environment_apps.notebook_setting(Environment(name="e", apps=[{"name": "desktop"}]))
    assert json.loads(given) == [{"name": "desktop"}]

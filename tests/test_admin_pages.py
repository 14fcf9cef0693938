"""The admin pages for GPUs, the idle culler and monitoring, and the Grafana dashboard.

Against a real controller (the `controller` fixture of conftest.py): each page renders for an
admin with its landmarks and the assets it loads, is refused to a student, and keeps the
pages' CSP habits (no inline script or style). The dashboard in deploy/grafana may only
query metrics that the controller's /api/metrics really exports.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.integration

DASHBOARD = Path(__file__).resolve().parent.parent / "deploy" / "grafana" / "cgu-lab-dashboard.json"

PAGES = {
    "/admin/gpus": {
        "title": "<h1>GPUs</h1>",
        "landmarks": ['id="gpu-types"', 'id="devices"', 'id="device-form"', 'id="type-dialog"'],
        "script": "/static/js/gpus.js",
    },
    "/admin/culling": {
        "title": "<h1>Idle culler</h1>",
        "landmarks": [
            'id="policy-form"',
            'id="group-policies"',
            'id="group-dialog"',
            "Keep running",
        ],
        "script": "/static/js/culling.js",
    },
    "/admin/monitoring": {
        "title": "<h1>Monitoring</h1>",
        "landmarks": [
            'id="chart-cpu"',
            'id="nodes"',
            'id="users-table"',
            'id="notebooks-table"',
            'id="chart-allocation"',
            'id="chart-stops"',
            "CGU_LAB_GPU_HELD_IDLE_WATTS",
            "CGU_LAB_GPU_PARKED_WATTS",
        ],
        "script": "/static/js/monitoring.js",
    },
}


def assets(html: str) -> list[str]:
    """The scripts and stylesheets a page loads from the controller itself."""
    return re.findall(r'<(?:script|link)\b[^>]*\b(?:src|href)="(/static/[^"]+)"', html)


@pytest.mark.parametrize("path", PAGES)
def test_admin_page_renders_with_its_landmarks_and_assets(admin, path):
    response = admin.get(path)
    assert response.status_code == 200, response.text
    html = response.text
    expected = PAGES[path]
    assert expected["title"] in html
    for landmark in expected["landmarks"]:
        assert landmark in html, landmark
    # The page's own nav link is marked as the current page.
    assert re.search(rf'<a href="{path}"\s+aria-current="page"', html)
    # Strict CSP: every script comes from a file, and no element carries a style attribute.
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    assert not re.search(r"<[a-z][^>]*\sstyle=", html)
    # Every label points at a field of the page.
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    assert set(re.findall(r'<label for="([^"]+)"', html)) <= ids
    # The assets exist: the page script, the shared helpers, the stylesheet (and Chart.js,
    # which `jlpm build` copies into static/vendor/).
    loaded = assets(html)
    assert expected["script"] in loaded and "/static/style.css" in loaded
    for asset in [*loaded, "/static/js/common.js"]:
        assert admin.get(asset).status_code == 200, asset


def test_monitoring_page_loads_the_vendored_chart_library(admin):
    html = admin.get("/admin/monitoring").text
    assert "/static/vendor/chart.umd.min.js" in assets(html)
    library = admin.get("/static/vendor/chart.umd.min.js")
    assert library.status_code == 200 and "Chart.js" in library.text[:400]
    # A classic script, before the page's module, so window.Chart exists when the module runs.
    assert html.index("/static/vendor/chart.umd.min.js") < html.index("/static/js/monitoring.js")


def test_admin_nav_links_show_for_admins_only(admin, alice):
    admin_home = admin.get("/notebooks").text
    student_home = alice.get("/notebooks").text
    for path in PAGES:
        assert f'<a href="{path}"' in admin_home
        assert f'<a href="{path}"' not in student_home


@pytest.mark.parametrize("path", PAGES)
def test_admin_pages_are_refused_to_students_and_need_a_login(controller, alice, path):
    refused = alice.get(path)
    assert refused.status_code == 403
    assert "for administrators" in refused.text
    anonymous = httpx.get(f"{controller.url}{path}", follow_redirects=False)
    assert anonymous.status_code == 303
    assert anonymous.headers["location"].startswith("/login?next=")


# Every page, by who may see it: "" anyone logged in, "manager" group managers, "admin".
WHO_SEES = {
    "/notebooks": "",
    "/account": "",
    "/templates": "",
    "/training": "",
    "/courses": "",
    "/admin/users": "manager",
    "/admin/groups": "manager",
    "/admin/quotas": "admin",
    "/admin/audit": "admin",
    "/admin/system": "admin",
    **dict.fromkeys(PAGES, "admin"),
}


@pytest.mark.parametrize("path", WHO_SEES)
def test_each_page_shows_to_whom_it_should(admin, alice, path):
    assert admin.get(path).status_code == 200
    seen = alice.get(path)
    if WHO_SEES[path]:
        assert seen.status_code == 403
        assert "for administrators" in seen.text
    else:
        assert seen.status_code == 200
        assert 'aria-current="page"' in seen.text


# -- the Grafana dashboard -------------------------------------------------------------------


def dashboard_queries(node, key: str = "") -> list[str]:
    """Every PromQL text in the dashboard: panel targets' `expr` and variables' `query`."""
    found: list[str] = []
    if isinstance(node, dict):
        for child_key, child in node.items():
            found += dashboard_queries(child, child_key)
    elif isinstance(node, list):
        for child in node:
            found += dashboard_queries(child, key)
    elif isinstance(node, str) and key in ("expr", "query", "definition"):
        found.append(node)
    return found


def exported_names(text: str) -> set[str]:
    """Sample names in a Prometheus text exposition, including families with no sample yet.

    A counter family `x` is stored by Prometheus as `x_total`; its TYPE line may name either.
    """
    names: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(maxsplit=3)
            if kind == "counter":
                names.add(name if name.endswith("_total") else f"{name}_total")
            else:
                names.add(name)
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{\s]", line, maxsplit=1)[0])
    return names


def test_grafana_dashboard_queries_only_exported_metrics(controller, admin, alice):
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["schemaVersion"] >= 36 and dashboard["panels"]
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["DS_PROMETHEUS"]["query"] == "prometheus"
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]
            assert panel["targets"], panel["title"]
    used = {
        name
        for query in dashboard_queries(dashboard)
        for name in re.findall(r"\bcgu_lab_[a-z0-9_]+", query)
    }
    # Scrape as the README says: an admin's API token as the bearer token.
    token = admin.ok("POST", "/api/me/tokens", 201, json={"name": "grafana-test"})["token"]
    response = httpx.get(
        f"{controller.url}/api/metrics", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200
    exported = exported_names(response.text)
    assert used, "the dashboard queries no cgu-lab metric"
    assert used <= exported, f"not exported by /api/metrics: {sorted(used - exported)}"
    # The panels the brief asks for are there: system, nodes, GPUs, users, allocation, culler.
    for name in (
        "cgu_lab_node_cpu_percent",
        "cgu_lab_gpu_utilization_percent",
        "cgu_lab_user_cpu_cores",
        "cgu_lab_gpus_allocated",
        "cgu_lab_gpu_type_capacity",
        "cgu_lab_notebook_stops_total",
        "cgu_lab_reclaimed_gpu_hours_total",
        "cgu_lab_energy_saved_kwh_total",
    ):
        assert name in used, name
    # A student's token cannot read the metrics.
    student = alice.ok("POST", "/api/me/tokens", 201, json={"name": "grafana-test"})["token"]
    refused = httpx.get(
        f"{controller.url}/api/metrics", headers={"Authorization": f"Bearer {student}"}
    )
    assert refused.status_code == 403

"""The admin pages for GPUs, the idle culler and monitoring, and the Grafana dashboard.

On the controller app in the test's process (conftest's `in_process`): each page renders for an
admin with its landmarks and the assets it loads, is refused to a student, and keeps the
pages' CSP habits (no inline script or style). The dashboard in deploy/grafana may only
query metrics that the controller's /api/metrics really exports. The last tests, which
open and stop a user's running JupyterLab, run on a controller process (`controller`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .harness import follow_while, http_client, wait_running

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
def test_admin_pages_are_refused_to_students_and_need_a_login(site, alice, path):
    refused = alice.get(path)
    assert refused.status_code == 403
    assert "for administrators" in refused.text
    with site.anonymous(follow_redirects=False) as client:
        anonymous = client.get(path)
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


def test_grafana_dashboard_queries_only_exported_metrics(site, admin, alice):
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
    with site.anonymous() as client:
        response = client.get("/api/metrics", headers={"Authorization": f"Bearer {token}"})
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
    with site.anonymous() as client:
        refused = client.get("/api/metrics", headers={"Authorization": f"Bearer {student}"})
    assert refused.status_code == 403


# -- navigation, tables and patterns ---------------------------------------------------------

TEMPLATES = Path(__file__).resolve().parent.parent / "cgu_lab" / "controller" / "templates"
# The templates of the admin's pages and the page frame (other pages have their own tests).
ADMIN_TEMPLATES = (
    "base.html",
    "users.html",
    "user.html",
    "notebooks.html",
    "audit.html",
    "gpus.html",
    "quotas.html",
    "monitoring.html",
    "culling.html",
)
ADMIN_MENU = [
    "/admin/users",
    "/admin/groups",
    "/admin/quotas",
    "/admin/gpus",
    "/admin/culling",
    "/admin/monitoring",
    "/admin/audit",
    "/admin/system",
]


def test_admin_pages_sit_in_one_admin_menu(admin, teacher, alice):
    html = admin.get("/admin/gpus").text
    nav = html[html.index('<nav aria-label="Main">') : html.index("</nav>")]
    menu = nav[nav.index('<details id="admin-menu">') : nav.index("</details>")]
    assert '<summary class="current">Admin' in menu
    assert re.findall(r'<a href="(/admin/[a-z]+)"', menu) == ADMIN_MENU
    # Outside the menu, the bar holds only the everyday pages.
    outside = nav.replace(menu, "")
    assert re.findall(r'<a href="([^"]+)"', outside) == [
        "/notebooks",
        "/storage",
        "/templates",
        "/courses",
        "/competitions",
        "/training",
    ]
    # On an everyday page the menu is there but not marked current.
    assert "<summary>Admin" in admin.get("/notebooks").text
    # Teachers (and students) get the Courses entry and no admin menu.
    for session in (teacher, alice):
        page = session.get("/notebooks").text
        assert 'href="/courses"' in page
        assert "admin-menu" not in page and 'href="/admin/' not in page


def test_every_table_of_the_admin_pages_is_named():
    for name in ADMIN_TEMPLATES:
        text = (TEMPLATES / name).read_text()
        for table in re.findall(r"<table\b[^>]*>(?:\s*<caption\b)?", text):
            named = "<caption" in table or "aria-label" in table
            assert named, f"{name}: {table[:80]}"
    # Tables the scripts build carry a caption too.
    script = (TEMPLATES.parent / "static" / "js" / "monitoring.js").read_text()
    assert "el('caption'" in script


def unescaped_dashes(pattern: str) -> list[str]:
    """Character classes with a '-' that Chromium's v-mode (unicodeSets) refuses."""
    problems = []
    for klass in re.findall(r"\[((?:\\.|[^\]\\])*)\]", pattern):
        rest = re.sub(r"\\.", "", klass)  # escapes, \- included, are fine
        rest = re.sub(r"[^-\\]-[^-\\]", "", rest)  # ranges like a-z
        if "-" in rest:
            problems.append(klass)
    return problems


def test_every_pattern_attribute_is_valid_in_unicode_sets_mode():
    seen = 0
    for template in TEMPLATES.glob("*.html"):
        for pattern in re.findall(r'\spattern="([^"]*)"', template.read_text()):
            seen += 1
            assert not unescaped_dashes(pattern), f"{template.name}: {pattern}"
            # And it still means what the server checks (names.LABEL_PATTERN).
            assert re.fullmatch(pattern, "ml-2026") and not re.fullmatch(pattern, "-x")
    assert seen >= 5
    assert unescaped_dashes("[a-z0-9-]") == ["a-z0-9-"]
    assert unescaped_dashes(r"[a-z0-9\-]") == []


# -- users: activity, the detail page, roles, notebooks --------------------------------------


def test_users_list_shows_login_activity_and_notebooks(admin, alice, bob):
    alice.ok("POST", "/api/notebooks", 201, json={"name": "essay", "cpu": 0.5, "memory": "512Mi"})
    users = {u["name"]: u for u in admin.ok("GET", "/api/users")}
    seen = users["alice"]
    assert seen["last_login"] and seen["last_activity"]
    assert seen["last_activity"] >= seen["last_login"]
    assert (seen["notebooks"], seen["running"], seen["queued"]) == (1, 0, 0)
    assert users["bob"]["notebooks"] == 0
    one = admin.ok("GET", "/api/users/alice")
    assert one["notebooks"] == 1 and one["last_login"] == seen["last_login"]
    # The page lists them with their columns, each name linking to the account's page.
    html = admin.get("/admin/users").text
    for heading in ("Last login", "Last activity", "Notebooks"):
        assert f'<th scope="col">{heading}</th>' in html
    script = admin.get("/static/js/users.js").text
    assert "/admin/users/${encodeURIComponent(user.name)}" in script


def test_user_page_for_admins_and_the_users_managers(admin, alice, teacher):
    page = admin.get("/admin/users/alice")
    assert page.status_code == 200
    html = page.text
    assert '<h1 id="user-title">User alice</h1>' in html
    for landmark in (
        'id="account-facts"',
        'id="role-form"',
        'id="quota-facts"',
        'id="user-groups-table"',
        'id="user-notebooks-table"',
        'id="user-audit-table"',
        'id="open-dialog"',
        "/static/js/user.js",
    ):
        assert landmark in html, landmark
    assert re.search(r'<a href="/admin/users"\s+aria-current="page"', html)
    assert admin.get("/admin/users/nobody").status_code == 404
    # A student may not; a teacher sees only members of the groups they manage.
    assert alice.get("/admin/users/alice").status_code == 403
    admin.ok("POST", "/api/groups", 201, json={"name": "pages-101"})
    admin.ok("PUT", "/api/groups/pages-101/members/teacher", json={"manager": True})
    assert teacher.get("/admin/users/alice").status_code == 404
    admin.ok("PUT", "/api/groups/pages-101/members/alice", json={"manager": False})
    managed = teacher.get("/admin/users/alice")
    assert managed.status_code == 200
    # Managers get no role form, notebooks or audit entries (those are the admin's).
    assert 'id="role-form"' not in managed.text and 'id="user-audit-table"' not in managed.text


def test_role_change_is_refused_to_managers_and_audited(admin, teacher):
    refused = teacher.patch("/api/users/alice", json={"role": "ta"})
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert admin.ok("PATCH", "/api/users/alice", json={"role": "ta"})["role"] == "ta"
    assert admin.ok("PATCH", "/api/users/alice", json={"role": "student"})["role"] == "student"
    events = admin.ok("GET", "/api/audit?user=alice&action=user.updated")
    changes = [e["details"]["changes"]["role"] for e in events if "role" in e["details"]["changes"]]
    assert changes[:2] == [["ta", "student"], ["student", "ta"]]
    # Bad input is a 400 with a message, never a 500.
    bad = admin.patch("/api/users/alice", json={"role": "wizard"})
    assert bad.status_code == 400 and bad.json()["message"]


def test_staff_follow_the_notebook_changes_of_the_accounts_they_see(
    site, admin, teacher, alice, bob
):
    """The Users list and an account's page reload on these events instead of a timer."""
    admin.ok("POST", "/api/groups", 201, json={"name": "watch-101"})
    admin.ok("PUT", "/api/groups/watch-101/members/teacher", json={"manager": True})
    admin.ok("PUT", "/api/groups/watch-101/members/alice", json={"manager": False})
    alice.ok("POST", "/api/notebooks", 201, json={"name": "watched", "cpu": 0.5, "memory": "512Mi"})
    bob.ok("POST", "/api/notebooks", 201, json={"name": "unseen", "cpu": 0.5, "memory": "512Mi"})
    # Refused as the lists are: students, and managers asking for someone not theirs.
    for session, path in (
        (bob, "/api/users/notebooks/events"),
        (alice, "/api/users/notebooks/events?user=bob"),
        (teacher, "/api/users/notebooks/events?user=bob"),
    ):
        refused = session.get(path)
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden", path
        assert refused.json()["message"]
    assert admin.get("/api/users/notebooks/events?user=nobody").status_code == 404
    # A stream never ends: the watchers reach the app over HTTP (tests/inprocess.py serve()).
    everyone, managed, one = (http_client(site, n) for n in ("root-admin", "teacher", "teacher"))
    streams = [
        (everyone, "/api/users/notebooks/events", ("alice", "watched")),
        (managed, "/api/users/notebooks/events", ("alice", "watched")),
        (one, "/api/users/notebooks/events?user=alice", ("alice", "watched")),
    ]

    def act() -> None:
        for owner, name in (("bob", "unseen"), ("alice", "watched")):
            session = bob if owner == "bob" else alice
            session.ok("POST", f"/api/notebooks/{owner}/{name}/start?wait=true", 202)
            session.ok("POST", f"/api/notebooks/{owner}/{name}/stop?wait=true", 202)

    with everyone, managed, one:
        admins, teachers, alices = follow_while(streams, act)
    # The admin hears of everyone's notebooks; alice's manager only of hers.
    assert {(c["owner"], c["name"]) for c in admins} == {("bob", "unseen"), ("alice", "watched")}
    for told in (teachers, alices):
        assert {(c["owner"], c["name"]) for c in told} == {("alice", "watched")}
        assert [c["state"] for c in told] == ["starting", "running", "stopping", "stopped"]
    alice.ok("DELETE", "/api/notebooks/alice/watched")
    bob.ok("DELETE", "/api/notebooks/bob/unseen")


def declare_gpus(admin) -> str:
    """One declared GPU, a whole-GPU type, and room in alice's quota for two of them."""
    admin.ok("POST", "/api/gpus", 201, json={"device_id": "GPU-pages-0", "model": "A5000"})
    admin.ok("PUT", "/api/gpu-types/premium", json={"display_name": "Whole GPU"})
    admin.ok(
        "PUT",
        "/api/users/alice/quota",
        json={"cpu": 4, "memory": "8Gi", "notebooks": 4, "gpus": {"premium": 2}},
    )
    return "premium"


@pytest.fixture(scope="module")
def gpu_setup(admin):
    return declare_gpus(admin)


def test_declared_gpus_are_on_this_host_and_types_use_their_resource(admin, gpu_setup):
    import socket

    gpus = {g["device_id"]: g for g in admin.ok("GET", "/api/gpus")}
    assert gpus["GPU-pages-0"]["node"] == socket.gethostname()
    types = {t["name"]: t for t in admin.ok("GET", "/api/gpu-types")}
    assert types["premium"]["resource_name"] == "nvidia.com/gpu"
    assert types["premium"]["capacity"] == 1
    # A MIG profile on the whole-GPU resource is refused, naming the right one.
    refused = admin.put(
        "/api/gpu-types/half", json={"mig_profile": "3g.20gb", "resource_name": "nvidia.com/gpu"}
    )
    assert refused.status_code == 400
    assert "nvidia.com/mig-3g.20gb" in refused.json()["message"]
    assert admin.put("/api/gpu-types/half", json={"mig_profile": "half"}).status_code == 400
    # Left out, the resource follows the kind of the type.
    half = admin.ok("PUT", "/api/gpu-types/half", json={"mig_profile": "3G.20GB"})
    assert (half["mig_profile"], half["resource_name"]) == ("3g.20gb", "nvidia.com/mig-3g.20gb")
    shared = admin.ok("PUT", "/api/gpu-types/shared", json={"share": 4})
    assert shared["resource_name"] == "nvidia.com/gpu.shared"
    for name in ("half", "shared"):
        admin.ok("DELETE", f"/api/gpu-types/{name}")


def test_monitoring_counts_detected_and_declared_gpus_per_node(site, admin, gpu_setup):
    import socket

    site.sample_monitor()  # the monitor's next pass, rather than waiting for it
    data = admin.ok("GET", "/api/monitoring")
    inventory = data["gpu_inventory"]
    assert inventory["declared"] == 1 and inventory["total"] == inventory["detected"] + 1
    here = next(n for n in data["nodes"] if n["node"] == socket.gethostname())
    assert here["declared"] == 1 and here["total"] >= 1 and "cpu_percent" in here
    metrics = admin.get("/api/metrics").text
    declared = f'cgu_lab_node_gpus{{node="{socket.gethostname()}",source="declared"}} 1.0'
    assert declared in metrics


# -- on a controller process: a user's JupyterLab really runs -----------------------------


@pytest.fixture(scope="module")
def running(process_login):
    """admin, alice and teacher on a controller process, with the GPUs declared there."""
    admin, alice, teacher = (process_login(n) for n in ("root-admin", "alice", "teacher"))
    declare_gpus(admin)
    return admin, alice, teacher


@pytest.mark.integration
@pytest.mark.end_to_end
def test_admin_opens_a_users_notebook_as_themself(running):
    admin, alice, teacher = running
    alice.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "helpme", "cpu": 0.5, "memory": "512Mi", "gpu_type": "premium", "gpus": 1},
    )
    alice.ok("POST", "/api/notebooks/alice/helpme/start?wait=true", 202)
    wait_running(alice, "alice", "helpme")
    # Without a grant the admin cannot reach it: admins are not owners.
    assert admin.get("/notebook/alice/helpme/cgu-lab/info").status_code == 404
    for who, status in ((teacher, 403), (alice, 403)):
        response = who.post("/api/notebooks/alice/helpme/admin-access", json={})
        assert response.status_code == status and response.json()["code"] == "forbidden"
    bad = admin.post("/api/notebooks/alice/helpme/admin-access", json={"minutes": 0})
    assert bad.status_code == 400
    granted = admin.ok(
        "POST",
        "/api/notebooks/alice/helpme/admin-access",
        json={"access": "read", "minutes": 30, "reason": "help request in class"},
    )
    assert granted["url"] == "/notebook/alice/helpme/lab" and granted["access"] == "read"
    assert granted["state"] == "running"
    # The admin acts as themself, with the access granted: the notebook server says so.
    info = admin.ok("GET", "/notebook/alice/helpme/cgu-lab/info")
    assert info["user"]["name"] == "root-admin" and info["access"] == "read"
    # The owner sees the grant among the notebook's shares; asking again replaces it.
    admin.ok(
        "POST",
        "/api/notebooks/alice/helpme/admin-access",
        json={"access": "edit", "reason": "still stuck"},
    )
    shares = alice.ok("GET", "/api/notebooks/alice/helpme/shares")
    mine = [s for s in shares if s["grantee"]["name"] == "root-admin"]
    assert [(s["access"], s["note"]) for s in mine] == [("edit", "administrator access")]
    opened = admin.ok("GET", "/api/audit?action=notebook.admin_opened&target=notebook:alice/")
    assert opened[0]["actor"] == "root-admin" and opened[0]["details"]["access"] == "edit"
    assert opened[1]["details"]["reason"] == "help request in class"
    # The admin's own notebook is opened from My notebooks, not through a grant.
    admin.ok("POST", "/api/notebooks", 201, json={"name": "own", "cpu": 0.5, "memory": "512Mi"})
    own = admin.post("/api/notebooks/root-admin/own/admin-access", json={})
    assert own.status_code == 400


@pytest.mark.integration
@pytest.mark.end_to_end
def test_a_queued_notebook_is_counted_cancelled_and_deleted(running):
    admin, alice, _ = running
    alice.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "later", "cpu": 0.5, "memory": "512Mi", "gpu_type": "premium", "gpus": 1},
    )
    assert alice.ok("POST", "/api/notebooks/alice/later/start", 202)["state"] == "queued"
    row = next(u for u in admin.ok("GET", "/api/users") if u["name"] == "alice")
    assert (row["running"], row["queued"]) == (1, 1)
    # What the notebooks page does for Delete on a queued notebook: leave the queue, delete.
    assert alice.ok("POST", "/api/notebooks/alice/later/stop", 202)["state"] == "stopped"
    alice.ok("DELETE", "/api/notebooks/alice/later")
    assert alice.get("/api/notebooks/alice/later").status_code == 404


@pytest.mark.integration
@pytest.mark.end_to_end
def test_admin_stops_all_notebooks_of_a_user(running):
    admin, _, teacher = running
    refused = teacher.post("/api/users/alice/notebooks/stop")
    assert refused.status_code == 403
    stopped = admin.ok("POST", "/api/users/alice/notebooks/stop")
    assert stopped["stopped"] == ["helpme"]
    admin.ok("POST", "/api/notebooks/alice/helpme/stop?wait=true", 202)
    assert admin.ok("GET", "/api/users/alice")["running"] == 0
    again = admin.ok("POST", "/api/users/alice/notebooks/stop")
    assert again["stopped"] == [] and "no notebook running" in again["message"]
    events = admin.ok("GET", "/api/audit?user=alice&action=notebook.stop")
    assert any(e["actor"] == "root-admin" for e in events)

"""Kubeflow's conventions on the controller's side (issue 27): a notebook server at Kubeflow's
`/notebook/<namespace>/<name>/` reached through the real proxy, profile namespaces that two
users never share, and an environment's CPU architecture placing its notebooks.

The proxy runs in a real controller app with the real KubernetesBackend (ClusterlessKube: the
cluster left out, the notebook's pod stood in for by a loopback HTTP server that records the
path it was asked for), so what is tested is the proxy's routing and rewriting, not a cluster.
"""

from __future__ import annotations

import sys

import httpx
import pytest

from cgu_lab.backends import kube_names as names
from cgu_lab.backends import kube_namespaces as namespaces
from cgu_lab.backends import kube_objects as objects
from cgu_lab.backends.kube_settings import KubeSettings

from .harness import notebook_host, set_cookies
from .inprocess import ClusterlessKube, InProcess, LoopbackNotebook
from .test_kube_objects import UPSTREAM, validate

KUBEFLOW = KubeSettings.from_env(
    {"CGU_LAB_KUBE_NAMESPACE_NAMING": "kubeflow", "CGU_LAB_KUBE_NOTEBOOK_PATHS": "kubeflow"}
)


@pytest.fixture
def kubeflow_app(tmp_path):
    """A controller on the Kubernetes backend in Kubeflow mode; kiri's notebook 'lab' runs."""
    with LoopbackNotebook() as upstream:
        backend = ClusterlessKube(KUBEFLOW, upstream.url)
        app = InProcess(tmp_path / "data", backend=lambda _settings: backend)
        app.start()
        try:
            app.create_user("kiri")
            app.create_user("bob")
            with app.client("kiri") as kiri:
                body = {"name": "lab", "cpu": "0.5", "memory": "1Gi", "image": "jupyter/minimal"}
                kiri.ok("POST", "/api/notebooks", 201, json=body)
                kiri.ok("POST", "/api/notebooks/kiri/lab/start?wait=true", 202)
                yield app, kiri, upstream
        finally:
            app.stop()


def test_the_servers_kubeflow_path_reaches_its_notebook_through_the_proxy(kubeflow_app):
    app, kiri, upstream = kubeflow_app
    server_path = "/notebook/kubeflow-kiri/lab/"
    assert app.backend.notebook_path("kiri", "lab") == server_path

    # A browser's log-in on the notebook's origin, from the portal's link (the controller's
    # path): the origin's cookie is set on both paths, for JupyterLab's own links (the
    # server's base URL is Kubeflow's path) would not carry one of the controller's path.
    host = notebook_host(app.url, "kiri", "lab")
    transport = app.transport()
    with httpx.Client(base_url=app.url, transport=transport) as browser:
        start = browser.get("/notebook/kiri/lab/lab", headers={"Host": host, "Accept": "text/html"})
        assert start.status_code == 303, start.text
        state = "; ".join(f"{k}={v}" for k, v in set_cookies(start).items())
        back = kiri.get(start.headers["location"])
        assert back.status_code == 303, back.text
        callback = httpx.URL(back.headers["location"])
        done = browser.get(
            callback.raw_path.decode(), headers={"Host": callback.netloc.decode(), "Cookie": state}
        )
        assert done.status_code == 303, done.text
        lines = [
            line
            for line in done.headers.get_list("set-cookie")
            if line.startswith("cgu-nb-") and "state" not in line.split("=", 1)[0]
        ]
        assert sorted(line.split("Path=")[1].split(";")[0] for line in lines) == [
            "/notebook/kiri/lab/",
            server_path,
        ]
        cookie = next(f"{k}={v}" for k, v in set_cookies(done).items() if v and "state" not in k)
        browser.cookies.clear()  # from here on, only the cookies each request names

        # The first page, at the controller's path, reaches the server under its own path.
        page = {"Host": host, "Cookie": cookie}
        first = browser.get("/notebook/kiri/lab/lab?reset", headers=page)
        assert first.status_code == 200, first.text
        assert upstream.paths[-1] == "/notebook/kubeflow-kiri/lab/lab?reset"
        # The pages after it, at the server's path (JupyterLab's links), reach the same one.
        after = browser.get(
            "/notebook/kubeflow-kiri/lab/api/contents/hw.ipynb?content=1",
            headers={"Host": host, "Cookie": cookie},
        )
        assert after.status_code == 200, after.text
        assert upstream.paths[-1] == "/notebook/kubeflow-kiri/lab/api/contents/hw.ipynb?content=1"

        # Without the origin's cookie the server's path asks for a log-in, as the other does.
        anonymous = browser.get("/notebook/kubeflow-kiri/lab/api/status", headers={"Host": host})
        assert anonymous.status_code == 401
        # On another notebook's origin the path is not served (sent where it belongs).
        elsewhere = browser.get(
            "/notebook/kubeflow-kiri/lab/api/status",
            headers={"Host": notebook_host(app.url, "bob", "lab"), "Cookie": cookie},
        )
        assert elsewhere.status_code != 200
        # A Kubeflow-style link on the controller's origin goes to the notebook's origin.
        sent = browser.get("/notebook/kubeflow-kiri/lab/lab")
        assert sent.status_code == 303
        assert httpx.URL(sent.headers["location"]).netloc.decode() == host
        # A path naming no notebook is not forwarded anywhere.
        unknown = browser.get("/notebook/kubeflow-nobody/lab/api/status", headers=page)
        assert unknown.status_code != 200
        seen = len(upstream.paths)

        # Someone else starting a log-in at the server's path is refused by the controller.
        start = browser.get(
            "/notebook/kubeflow-kiri/lab/lab", headers={"Host": host, "Accept": "text/html"}
        )
        assert start.status_code == 303, start.text
        with app.client("bob") as bob:
            refused = bob.get(start.headers["location"])
            assert refused.status_code in (403, 404), refused.text
    assert len(upstream.paths) == seen


def test_default_paths_are_forwarded_unchanged(tmp_path):
    """Without notebook_paths "kubeflow" the server answers at the controller's path, which
    the proxy forwards as it came, and no second path leads to the notebook."""
    with LoopbackNotebook() as upstream:
        kube = KubeSettings.from_env({"CGU_LAB_KUBE_NAMESPACE_NAMING": "kubeflow"})
        app = InProcess(tmp_path / "data", backend=lambda _s: ClusterlessKube(kube, upstream.url))
        app.start()
        try:
            app.create_user("kiri")
            with app.client("kiri") as kiri:
                body = {"name": "lab", "cpu": "0.5", "memory": "1Gi", "image": "jupyter/minimal"}
                kiri.ok("POST", "/api/notebooks", 201, json=body)
                kiri.ok("POST", "/api/notebooks/kiri/lab/start?wait=true", 202)
                assert kiri.get("/notebook/kiri/lab/api/status").status_code == 200
                assert upstream.paths == ["/notebook/kiri/lab/api/status"]
                assert app.backend.notebook_path("kiri", "lab") is None
        finally:
            app.stop()


def test_two_users_whose_profile_names_meet_never_share_a_namespace():
    """jane.doe and jane-doe both map to kubeflow-jane-doe, as in Kubeflow: the namespace
    belongs to whoever it was made for, and the other is refused it."""
    naming = names.Naming(kubeflow=True)
    assert naming.user_namespace("jane.doe") == naming.user_namespace("jane-doe")
    made = namespaces.namespace("kubeflow-jane-doe", "jane.doe", KUBEFLOW)
    assert namespaces.usable_by(made, "jane.doe", KUBEFLOW)
    assert not namespaces.usable_by(made, "jane-doe", KUBEFLOW)
    # Kubeflow's own profile namespace of the user (owner annotation) is used as it is.
    profile = {"metadata": {"name": "kubeflow-jane-doe", "annotations": {"owner": "jane.doe"}}}
    assert namespaces.usable_by(profile, "jane.doe", KUBEFLOW)
    assert not namespaces.usable_by(profile, "jane-doe", KUBEFLOW)
    # A namespace of ours made for a group is not a user's.
    group = namespaces.namespace("cgu-g-jane-doe", "jane.doe", KUBEFLOW, group=True)
    assert namespaces.usable_by(group, "jane.doe", KUBEFLOW, group=True)
    assert not namespaces.usable_by(group, "jane.doe", KUBEFLOW)


@UPSTREAM
def test_an_environments_architecture_places_its_notebooks(tmp_path):
    """An environment built for arm64 (the System page's CPU field, PUT /api/environments)
    gives its notebooks required node affinity on kubernetes.io/arch; one for any
    architecture (every environment before the field) none. The objects pass Kubeflow's
    Notebook CRD and Kubernetes' own schemas."""
    backend = ClusterlessKube(KUBEFLOW, "http://127.0.0.1:9")
    app = InProcess(tmp_path / "data", backend=lambda _settings: backend).start()
    try:
        app.create_user("ada", role="admin")
        with app.client("ada") as ada:
            body = {"image": "cgu-lab/notebook:arm64", "local_prefix": sys.prefix, "arch": "arm64"}
            saved = ada.put("/api/environments/jetson", json=body)
            assert saved.status_code in (200, 201), saved.text
            assert ada.get("/api/environments/jetson").json()["arch"] == "arm64"
            wrong = ada.put("/api/environments/jetson", json={**body, "arch": "sparc"})
            assert 400 <= wrong.status_code < 500 and wrong.json()["message"], wrong.text
            assert ada.get("/api/environments/jetson").json()["arch"] == "arm64"
            for name, environment in (("edge", "jetson"), ("plain", None)):
                notebook = {"name": name, "cpu": "0.5", "memory": "1Gi"}
                ada.ok("POST", "/api/notebooks", 201, json={**notebook, "environment": environment})

        async def built(name: str) -> dict:
            platform = app.platform
            async with platform.db.session() as session:
                nb, _ = await platform.notebooks.load(session, "ada", name)
                spec = await platform.notebooks.specs.spec(session, nb, "ada")
            return objects.notebook(backend.naming.notebook("ada", name), spec, KUBEFLOW)

        edge = app.call(built, "edge")
        validate(edge)
        pod = edge["spec"]["template"]["spec"]
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        expressions = terms["nodeSelectorTerms"][0]["matchExpressions"]
        assert {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]} in expressions
        plain = app.call(built, "plain")
        validate(plain)
        assert "affinity" not in plain["spec"]["template"]["spec"]
    finally:
        app.stop()

"""Shares as the controller decides them: expiry on the platform's clock, the refusals of
a bad or foreign share, and the directory a sharer searches.

None of these needs a JupyterLab: whether a share still lets its grantee in is the
controller's answer (the sharing service and its proxy), so the controller runs in the
test's process (tests/inprocess.py) with a loopback stand-in for the notebook's server
(`LoopbackNotebook`, reached through the clusterless Kubernetes backend's route). A
share runs out by moving the platform's clock past its end, and past the access cache's
freshness, instead of waiting for either. What needs a real notebook server (reading
and writing files, kernels, collaboration rooms, the server extension) is in
tests/test_sharing.py.
"""

import shutil

import pytest

from cgu_lab.backends.kube_settings import KubeSettings

from .conftest import STANDARD_USERS
from .harness import reachable_dir
from .inprocess import ClusterlessKube, InProcess, LoopbackNotebook

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def site():
    """The controller in this process; every notebook's server is one loopback stand-in."""
    base = reachable_dir()
    with LoopbackNotebook() as upstream:
        backend = ClusterlessKube(KubeSettings(), upstream.url)
        app = InProcess(base / "data", backend=lambda _settings: backend).start()
        for name, role in STANDARD_USERS:
            app.create_user(name, role)
        yield app
        app.stop()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def lab(site, alice, admin):
    """alice's running notebook "lab"; alice and bob in the group tutors."""
    admin.ok("POST", "/api/groups", 201, json={"name": "tutors"})
    admin.ok("PUT", "/api/groups/tutors/members/alice", json={"manager": False})
    admin.ok("PUT", "/api/groups/tutors/members/bob", json={"manager": False})
    body = {"name": "lab", "cpu": 1, "memory": "1Gi", "image": "jupyter/minimal"}
    alice.ok("POST", "/api/notebooks", 201, json=body)
    alice.ok("POST", "/api/notebooks/alice/lab/start?wait=true", 202)


def share(session, **body):
    return session.ok("POST", "/api/notebooks/alice/lab/shares", 201, json=body)


def test_expired_share_stops_working(site, lab, alice, bob):
    share(alice, grantee="bob", access="read", expires_in_minutes=5)
    assert bob.get("/notebook/alice/lab/api/contents").status_code == 200
    # The share's five minutes pass on the platform's clock, and with them the few
    # seconds the controller caches an access answer for.
    site.clock.advance(minutes=5, seconds=1)
    assert bob.get("/notebook/alice/lab/api/contents").status_code == 404
    assert bob.ok("GET", "/api/shared-with-me") == []
    assert alice.ok("GET", "/api/notebooks/alice/lab/shares") == []


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        ({"grantee": "nobody-here", "access": "read"}, 404, "no user 'nobody-here'"),
        ({"grantee": "alice", "access": "read"}, 400, "owner already has full access"),
        ({"grantee": "bob", "access": "owner"}, 400, "access"),
        (
            {"grantee": "bob", "access": "read", "path": "../../etc/passwd"},
            400,
            "must not contain '..'",
        ),
        ({"grantee": "bob", "access": "read", "path": "/etc/passwd"}, 400, "relative"),
        ({"grantee": "bob", "access": "read", "expires_in_minutes": 0}, 400, "at least 1 minute"),
        ({"grantee": "ml-2099", "kind": "group", "access": "read"}, 404, "no group"),
        ({"grantee": "bob", "kind": "robot", "access": "read"}, 400, "kind"),
    ],
)
def test_bad_shares_are_refused(lab, alice, body, status, text):
    response = alice.post("/api/notebooks/alice/lab/shares", json=body)
    assert response.status_code == status, response.text
    assert text in response.json()["message"]


def test_sharing_with_a_group_one_is_not_in_is_refused(site, lab, admin, alice):
    admin.ok("POST", "/api/groups", 201, json={"name": "strangers"})
    response = alice.post(
        "/api/notebooks/alice/lab/shares",
        json={"grantee": "strangers", "kind": "group", "access": "read"},
    )
    assert response.status_code == 403 and "groups you belong to" in response.json()["message"]


def test_directory_finds_people_but_never_lists_everyone(lab, alice):
    found = alice.ok("GET", "/api/directory?q=bo")
    assert [u["name"] for u in found["users"]] == ["bob"]
    assert [g["name"] for g in alice.ok("GET", "/api/directory?q=tut")["groups"]] == ["tutors"]
    assert alice.get("/api/directory?q=b").status_code == 400

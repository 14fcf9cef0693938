"""Kubeflow mode end to end on the real one-node cluster (issue 27, point 4).

A controller with `CGU_LAB_KUBE_NAMESPACE_NAMING=kubeflow`, `..._NOTEBOOK_PATHS=kubeflow`
and `..._INGRESS_HEADER=kubeflow-userid` starts a student's notebook as a real pod:
it runs in the profile namespace Kubeflow would name (`kubeflow-<user, every other
character a '-'>`, annotated with its owner as Kubeflow's profiles are), with Kubeflow's
`NB_PREFIX` and base URL `/notebook/<namespace>/<name>/`, and its JupyterLab answers at
that URL through the controller's proxy.

Identity, as a school running Kubeflow has it: in this mode the notebook server holds no
proxy secret and believes the `kubeflow-userid` header, which Kubeflow's Istio ingress sets
to the user's e-mail address after its own log-in; the NetworkPolicy lets only the ingress
gateway and the controller reach port 8888. The test plays the ingress from the host
(the test cluster's network plugin does not enforce NetworkPolicies, so the policy is
checked as an object): a user known to the notebook only by that header is asked about
at the controller, with the notebook's own token, and gets what the controller says
(owner, a read-only share, or a 403 `{message, code}`); a request without the header is
nobody. The controller's proxy, the other way in, takes no one's word from a header: it
drops a client's copy and sends the identity it authenticated itself.

A profile Kubeflow's profile controller made beforehand is used as it is (the shipped
admission policy let the controller bind itself only in namespaces it made, so such a start
failed with the policy's refusal).

The cluster is test_kube_cluster.py's (started once for every kube module); the controller
is this module's own, in Kubeflow mode, with an installation of its own.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import time

import httpx
import pytest

from cgu_lab.backends import kube_names

from . import test_kube_cluster as cluster
from .harness import PASSWORD, HandOffRefused, notebook_host
from .test_kube_cluster import CPU, RUN, start

# The cluster module's fixtures and marks, used here under the same names.
pytestmark = cluster.pytestmark
kube, admin = cluster.kube, cluster.admin

HEADER = "kubeflow-userid"  # what Kubeflow's Istio ingress names the user in
OWNER, OWNER_EMAIL = f"ana.kf{RUN}", f"ana.kf{RUN}@example.com"
OTHER, OTHER_EMAIL = f"bo.kf{RUN}", f"bo.kf{RUN}@example.com"
# Kubeflow's profile name of the owner: the '.' a '-', as user@example.com gives
# kubeflow-user-example-com (the run's id keeps a reused cluster's old one apart).
NAMESPACE = f"kubeflow-ana-kf{RUN}"
NAME = "lab"
KUBEFLOW_PATH = f"/notebook/{NAMESPACE}/{NAME}"


@pytest.fixture(scope="module")
def kubeflow_controller(kube, admin, tmp_path_factory):
    ctl = cluster.host_controller(
        kube,
        admin,
        tmp_path_factory,
        {
            "CGU_LAB_KUBE_NAMESPACE_NAMING": "kubeflow",
            "CGU_LAB_KUBE_NOTEBOOK_PATHS": "kubeflow",
            "CGU_LAB_KUBE_INGRESS_HEADER": HEADER,
            "CGU_LAB_KUBE_INSTALLATION": f"kf-{RUN}",
            "CGU_LAB_KUBE_COURSES_SIZE": "1Gi",
        },
    )
    base = ctl.data_dir.parent
    # Both accounts in one CLI run (each costs up to a minute on a loaded runner), with the
    # e-mail addresses Kubeflow's ingress names them by.
    roster = base / "accounts.csv"
    roster.write_text(
        "username,role,password,email\n"
        f"{OWNER},student,{PASSWORD},{OWNER_EMAIL}\n{OTHER},student,{PASSWORD},{OTHER_EMAIL}\n"
    )
    ctl.cli("admin", "import", str(roster))
    ctl.start()
    yield ctl
    ctl.stop()
    shutil.rmtree(base, ignore_errors=True)
    # Not one of the cluster module's prefixes: this run's profile namespace goes here.
    if admin.get("v1", "Namespace", NAMESPACE) is not None:
        admin.resource("v1", "Namespace").delete(name=NAMESPACE)


def refusal(response: httpx.Response, *statuses: int) -> dict:
    """The `{message, code}` of a refusal answered with one of `statuses`."""
    assert response.status_code in statuses, (response.status_code, response.text[:500])
    body = response.json()
    assert body["message"] and body["code"], body
    return body


def page_config(page: str) -> dict:
    """JupyterLab's page config (the `jupyter-config-data` script) of an HTML page."""
    found = re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S
    )
    assert found, page[:500]
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.timeout(900)  # a pod's start on a loaded runner, two logins, a share
def test_a_notebook_in_kubeflow_mode_lives_and_answers_where_kubeflow_expects(
    kube, admin, kubeflow_controller
):
    ctl = kubeflow_controller
    with ctl.client(OWNER) as ana, ctl.client(OTHER) as bo:
        body = {"name": NAME, "image": kube["CGU_NOTEBOOK_IMAGE"], "cpu": CPU, "memory": "1Gi"}
        ana.ok("POST", "/api/notebooks", 201, json=body)
        start(ana, NAME, owner=OWNER)  # JupyterLab answers at the portal's link

        # The profile namespace Kubeflow names and annotates, the pod running in it.
        assert kube_names.kubeflow_profile(OWNER) == NAMESPACE
        meta = admin.get("v1", "Namespace", NAMESPACE)["metadata"]
        assert meta["annotations"]["owner"] == OWNER
        assert meta["labels"]["app.kubernetes.io/part-of"] == "kubeflow-profile"
        assert admin.get("kubeflow.org/v1", "Notebook", NAME, NAMESPACE) is not None
        pod = admin.get("v1", "Pod", f"{NAME}-0", NAMESPACE)
        assert pod["status"]["phase"] == "Running"
        assert pod["spec"]["nodeName"] == kube["CGU_KUBE_NODE"]
        container = pod["spec"]["containers"][0]
        env = {item["name"]: item for item in container["env"]}
        assert env["NB_PREFIX"]["value"] == KUBEFLOW_PATH  # as Kubeflow's controller sets it
        assert "CGU_PROXY_SECRET" not in env  # the ingress's header, not a secret
        line = container.get("command", []) + container.get("args", [])
        assert f"--ServerApp.base_url={KUBEFLOW_PATH}/" in line, line
        assert f"--ProxyIdentityProvider.trusted_header={HEADER}" in line, line
        # Only the controller (its pods; here, outside the cluster, its address) and Istio's
        # ingress gateway may reach port 8888.
        policy = admin.get("networking.k8s.io/v1", "NetworkPolicy", "cgu-lab-notebooks", NAMESPACE)
        peers = policy["spec"]["ingress"][0]["from"]
        selected = [peer for peer in peers if "namespaceSelector" in peer]
        namespaces = [peer["namespaceSelector"]["matchLabels"] for peer in selected]
        assert {"kubernetes.io/metadata.name": "istio-system"} in namespaces, peers
        assert {"app": "istio-ingressgateway"} in [
            p["podSelector"]["matchLabels"] for p in selected
        ]
        assert {"ipBlock": {"cidr": f"{kube['CGU_KUBE_HOST_IP']}/32"}} in peers, peers

        # Through the controller's proxy at Kubeflow's URL, on the notebook's origin.
        host = notebook_host(ctl.url, OWNER, NAME)
        mine = {"Host": host, "Cookie": ana.notebook_cookie(OWNER, NAME)}
        with ctl.anonymous(timeout=60) as browser:
            lab = browser.get(f"{KUBEFLOW_PATH}/lab", headers=mine)
            assert lab.status_code == 200, lab.text[:500]
            assert page_config(lab.text)["baseUrl"] == f"{KUBEFLOW_PATH}/"
            status = browser.get(f"{KUBEFLOW_PATH}/api/status", headers=mine)
            assert status.status_code == 200, status.text[:500]
            assert "started" in status.json()  # jupyter-server's own answer
            # A client's own identity header never passes: the proxy sends who it logged in.
            me = browser.get(f"{KUBEFLOW_PATH}/api/me", headers={**mine, HEADER: OTHER_EMAIL})
            assert me.status_code == 200, me.text[:500]
            assert me.json()["identity"]["username"] == OWNER

            # The header alone, or with another user's log-in, is nobody to the proxy.
            alone = browser.get(
                f"{KUBEFLOW_PATH}/api/status", headers={"Host": host, HEADER: OWNER}
            )
            refusal(alone, 401)
            bos = "; ".join(f"{k}={v}" for k, v in bo.cookies.items())
            forged = {"Host": host, "Cookie": bos, HEADER: OWNER_EMAIL}
            refusal(browser.get(f"{KUBEFLOW_PATH}/api/status", headers=forged), 401, 403)
            # The second user is refused the notebook: with a script's API token (and the
            # owner's e-mail in the header for good measure) as with a browser, whose
            # log-in hand-off on the notebook's origin says no.
            token = bo.ok("POST", "/api/me/tokens", 201, json={"name": "kf"})["token"]
            scripted = {"Host": host, "Authorization": f"Bearer {token}", HEADER: OWNER_EMAIL}
            refusal(browser.get(f"{KUBEFLOW_PATH}/api/status", headers=scripted), 403, 404)
        with pytest.raises(HandOffRefused) as refused:
            bo.notebook_cookie(OWNER, NAME)
        assert refused.value.response.status_code in (403, 404)

        # The way in Kubeflow has: Istio's ingress gateway sends the request, as its route
        # does, to the pod at Kubeflow's URL with the user's e-mail in the header.
        pod_url = f"http://{pod['status']['podIP']}:8888{KUBEFLOW_PATH}"
        with httpx.Client(timeout=60) as ingress:
            as_owner = {HEADER: OWNER_EMAIL}
            lab = ingress.get(f"{pod_url}/lab", headers=as_owner)
            assert lab.status_code == 200, lab.text[:500]
            assert page_config(lab.text)["baseUrl"] == f"{KUBEFLOW_PATH}/"
            status = ingress.get(f"{pod_url}/api/status", headers=as_owner)
            assert status.status_code == 200 and "started" in status.json(), status.text[:500]
            # The controller said whose e-mail that is: the notebook's owner by name.
            me = ingress.get(f"{pod_url}/api/me", headers=as_owner)
            assert me.json()["identity"]["username"] == OWNER, me.text[:500]

            other = ingress.get(f"{pod_url}/api/status", headers={HEADER: OTHER_EMAIL})
            refusal(other, 403)
            stranger = ingress.get(f"{pod_url}/api/status", headers={HEADER: "x@example.com"})
            refusal(stranger, 403)
            assert refusal(ingress.get(f"{pod_url}/api/status"), 403)["code"] == "unauthenticated"

            # A read-only share reaches the server the same way: bo reads, runs nothing.
            share = {"grantee": OTHER, "access": "read"}
            ana.ok("POST", f"/api/notebooks/{OWNER}/{NAME}/shares", 201, json=share)
            as_other = {HEADER: OTHER_EMAIL}
            deadline = time.monotonic() + 60  # the server reuses its last answer a while
            while time.monotonic() < deadline:
                read = ingress.get(f"{pod_url}/api/contents", headers=as_other)
                if read.status_code == 200:
                    break
                time.sleep(0.5)
            assert read.status_code == 200, read.text[:500]
            run = ingress.post(
                f"{pod_url}/api/kernels",
                json={},
                headers={**as_other, "X-XSRFToken": "x", "Cookie": "_xsrf=x"},
            )
            assert refusal(run, 403)["code"] == "read_only"

        ana.ok("POST", f"/api/notebooks/{OWNER}/{NAME}/stop?wait=true", 202)
        assert admin.get("v1", "Pod", f"{NAME}-0", NAMESPACE) is None
        ana.ok("DELETE", f"/api/notebooks/{OWNER}/{NAME}")


@pytest.mark.timeout(900)
def test_a_kubeflow_profile_made_before_is_used_as_it_is(kube, admin, kubeflow_controller):
    """A profile Kubeflow's profile controller made for the user (its labels, the owner
    annotation) holds their notebooks as it is: the controller binds itself there (the
    admission policy lets it in a namespace labelled as a Kubeflow profile) and leaves
    the namespace Kubeflow's. Its owner here is the user's name, as where the ingress names
    users by name; where it names them by e-mail see the report of issue 27."""
    profile = kube_names.kubeflow_profile(OTHER)
    labels = {"app.kubernetes.io/part-of": "kubeflow-profile", "istio-injection": "enabled"}
    meta = {"name": profile, "labels": labels, "annotations": {"owner": OTHER}}
    admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
    try:
        with kubeflow_controller.client(OTHER) as bo:
            body = {"name": "p", "image": kube["CGU_NOTEBOOK_IMAGE"], "cpu": CPU, "memory": "1Gi"}
            bo.ok("POST", "/api/notebooks", 201, json=body)
            start(bo, "p", owner=OTHER)
            pod = admin.get("v1", "Pod", "p-0", profile)
            assert pod["status"]["phase"] == "Running"
            env = {item["name"]: item for item in pod["spec"]["containers"][0]["env"]}
            assert env["NB_PREFIX"]["value"] == f"/notebook/{profile}/p"
            assert admin.get(
                "rbac.authorization.k8s.io/v1", "RoleBinding", "cgu-lab-controller", profile
            )
            kept = admin.get("v1", "Namespace", profile)["metadata"]
            assert "app.kubernetes.io/managed-by" not in kept.get("labels", {})  # Kubeflow's still
            bo.ok("POST", f"/api/notebooks/{OTHER}/p/stop?wait=true", 202)
            bo.ok("DELETE", f"/api/notebooks/{OTHER}/p")
    finally:
        admin.resource("v1", "Namespace").delete(name=profile)

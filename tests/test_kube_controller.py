"""The controller itself with `--backend kubernetes`, against the real API server.

The controller runs as the shipped ServiceAccount (only the shipped RBAC), and
the test plays scheduler, kubelet and KubeVirt through the API (nothing can
really run here). Over the REST API: a notebook starts and stops as a
Kubeflow Notebook, a VM notebook as a KubeVirt VirtualMachine, a custom image
is listed for the dropdown, the quota is mirrored, a training job becomes a
PyTorchJob, and what the kubernetes backend does not offer says so.
"""

import shutil
import time

import pytest

from .harness import Controller, reachable_dir
from .test_kubernetes_backend import (  # noqa: F401 - fixtures shared with the backend's tests
    BUILT,
    GROUP_PREFIX,
    USER_PREFIX,
    cluster,
    controller_kubeconfig,
    nodes,
    pod_default,
)

NAMESPACE = f"{USER_PREFIX}kim"

pytestmark = [pytest.mark.integration, pytest.mark.end_to_end, BUILT]


@pytest.fixture(scope="module")
def kube_controller(cluster, controller_kubeconfig, nodes):  # noqa: F811
    base = reachable_dir()
    ctl = Controller(
        base / "data",
        backend="kubernetes",
        env={
            "CGU_LAB_KUBE_KUBECONFIG": controller_kubeconfig,
            "CGU_LAB_KUBE_START_TIMEOUT": "60",
            "CGU_LAB_KUBE_REACHABLE_WAIT": "0",  # stand-in pods: nothing listens
            # the namespaces the test's stand-in nodes serve
            "CGU_LAB_KUBE_USER_PREFIX": USER_PREFIX,
            "CGU_LAB_KUBE_GROUP_PREFIX": GROUP_PREFIX,
        },
    )
    ctl.env["CGU_LAB_KUBE_CONTROLLER_URL"] = ctl.url
    ctl.create_user("kadmin", "admin")
    ctl.create_user("kim")
    ctl.start()
    yield ctl
    ctl.stop()
    shutil.rmtree(base, ignore_errors=True)


def wait_state(session, path, wanted, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = session.ok("GET", path)["state"]
        if state == wanted:
            return
        time.sleep(0.3)
    raise AssertionError(f"{path} did not become {wanted}")


def test_notebooks_vms_images_quota_and_training_on_kubernetes(kube_controller, cluster):  # noqa: F811
    _, admin_api = cluster
    with kube_controller.client("kim") as kim, kube_controller.client("kadmin") as kadmin:
        assert kadmin.ok("GET", "/api/version")["backend"]["name"] == "kubernetes"
        kim.ok("POST", "/api/notebooks", 201, json={"name": "lab", "cpu": 0.5, "memory": "1Gi"})
        started = kim.ok("POST", "/api/notebooks/kim/lab/start?wait=true", 202)
        assert started["state"] == "running", started["message"]
        notebook = admin_api.get("kubeflow.org/v1", "Notebook", "lab", NAMESPACE)
        assert notebook["metadata"]["annotations"]["notebooks.kubeflow.org/creator"] == "kim"
        quota = admin_api.get("v1", "ResourceQuota", "kf-resource-quota", NAMESPACE)
        assert quota["spec"]["hard"]["requests.cpu"] in ("4", "4000m")
        kim.ok("POST", "/api/notebooks/kim/lab/stop?wait=true", 202)
        stopped = admin_api.get("kubeflow.org/v1", "Notebook", "lab", NAMESPACE)
        assert "kubeflow-resource-stopped" in stopped["metadata"]["annotations"]

        custom = kim.ok(
            "POST",
            "/api/notebooks",
            201,
            json={"name": "custom", "image": "registry.example.edu/ml/torch:2027", "memory": "1Gi"},
        )
        assert custom["image"] == "registry.example.edu/ml/torch:2027"
        kim.ok("POST", "/api/notebooks/kim/custom/start?wait=true", 202)
        assert "registry.example.edu/ml/torch:2027" in kim.ok("GET", "/api/images")["used"]
        kim.ok("POST", "/api/notebooks/kim/custom/stop?wait=true", 202)

        vm = kim.ok(
            "POST", "/api/notebooks", 201, json={"name": "desktop", "kind": "vm", "memory": "2Gi"}
        )
        assert vm["kind"] == "vm"
        kim.ok("POST", "/api/notebooks/kim/desktop/start", 202)
        wait_state(kim, "/api/notebooks/kim/desktop", "running")
        machine = admin_api.get("kubevirt.io/v1", "VirtualMachine", "desktop", NAMESPACE)
        assert machine["spec"]["runStrategy"] == "Always"
        kim.ok("POST", "/api/notebooks/kim/desktop/stop?wait=true", 202)
        assert (
            admin_api.get("kubevirt.io/v1", "VirtualMachine", "desktop", NAMESPACE)["spec"][
                "runStrategy"
            ]
            == "Halted"
        )

        job = kim.ok(
            "POST",
            "/api/training",
            201,
            json={
                "name": "resnet",
                "image": "registry.example.edu/ml/torch:2027",
                "command": "python train.py --epochs 2",
                "workers": 2,
                "cpu": 1,
                "memory": "1Gi",
            },
        )
        assert job["state"] == "submitted"
        pytorchjob = admin_api.get("kubeflow.org/v1", "PyTorchJob", "resnet", NAMESPACE)
        assert pytorchjob["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
        assert kim.ok("GET", "/api/training/kim/resnet")["name"] == "resnet"
        over = kim.post(
            "/api/training",
            json={
                "name": "huge",
                "image": "x/y:1",
                "command": "python t.py",
                "workers": 10,
                "cpu": 2,
                "memory": "1Gi",
            },
        )
        assert over.status_code == 403 and "your quota allows 4 CPUs" in over.json()["message"]
        kim.ok("DELETE", "/api/training/kim/resnet")

        kadmin.ok("POST", "/api/groups", 201, json={"name": "k8s-course"})
        kadmin.ok("PUT", "/api/groups/k8s-course/members/kim", json={"manager": False})
        # (File copies run in pods, which only a real kubelet runs: test_kube_cluster.py.)

        # A changed quota reaches the namespace at once, not at the owner's next start;
        # a group's budget goes to the group's namespace.
        kadmin.ok("PUT", "/api/users/kim/quota", json={"cpu": 2, "notebooks": 1})
        hard = admin_api.get("v1", "ResourceQuota", "kf-resource-quota", NAMESPACE)["spec"]["hard"]
        assert hard == {"requests.cpu": "2", "pods": "1"}
        kadmin.ok("PUT", "/api/groups/k8s-course/quota", json={"memory": "16Gi"})
        course = admin_api.get(
            "v1", "ResourceQuota", "kf-resource-quota", f"{GROUP_PREFIX}k8s-course"
        )
        assert course["spec"]["hard"] == {"requests.memory": "16Gi"}

        # Back on the platform default, which then changes: the namespace follows within
        # a pass of the quota mirror, though nobody starts anything.
        kadmin.ok("DELETE", "/api/users/kim/quota")
        kadmin.ok("PUT", "/api/quotas/default", json={"cpu": 3, "memory": "6Gi", "notebooks": 2})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            quota = admin_api.get("v1", "ResourceQuota", "kf-resource-quota", NAMESPACE)
            if quota["spec"]["hard"].get("requests.cpu") == "3":
                break
            time.sleep(0.5)
        assert quota["spec"]["hard"] == {"requests.cpu": "3", "requests.memory": "6Gi", "pods": "2"}


def test_configurations_are_offered_chosen_and_put_on_the_notebook(kube_controller, cluster):  # noqa: F811
    """Kubeflow's PodDefaults of kim's namespace on the notebook form: offered by their desc,
    the chosen ones' labels on the Notebook and its pod; one of someone else's namespace is
    refused with a 400 kim can act on, and a resize chooses again."""
    _, admin_api = cluster
    with kube_controller.client("kim") as kim, kube_controller.client("kadmin") as kadmin:
        # A quota mirrored makes kim's namespace (it may be made already). Room for the
        # restart's pod: nothing here lowers a quota's use when a pod goes (no
        # controller-manager), so each start counts for good.
        kadmin.ok("PUT", "/api/users/kim/quota", json={"notebooks": 20})
        assert kim.ok("GET", "/api/pod-defaults") == []
        gcp = {"matchLabels": {"add-gcp-secret": "true"}}
        admin_api.create(pod_default(NAMESPACE, "gcp-secret", gcp, "Add the GCP secret"))
        other = f"{USER_PREFIX}kadmin"
        admin_api.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
        staff = {"matchLabels": {"staff-tools": "true"}}
        admin_api.create(pod_default(other, "staff-only", staff, "Staff tools"))

        assert kim.ok("GET", "/api/pod-defaults") == [
            {"name": "gcp-secret", "desc": "Add the GCP secret"}
        ]
        assert kadmin.ok("GET", "/api/pod-defaults?owner=kim") == [
            {"name": "gcp-secret", "desc": "Add the GCP secret"}
        ]
        assert kim.get("/api/pod-defaults?owner=kadmin").status_code == 403

        refused = kim.post(
            "/api/notebooks",
            json={"name": "sneaky", "memory": "1Gi", "pod_defaults": ["staff-only"]},
        )
        assert refused.status_code == 400, refused.text
        assert "no configuration 'staff-only'" in refused.json()["message"]
        assert "'gcp-secret'" in refused.json()["message"]
        assert kim.get("/api/notebooks/kim/sneaky").status_code == 404

        body = {"name": "gcp", "cpu": 0.5, "memory": "1Gi", "pod_defaults": ["gcp-secret"]}
        assert kim.ok("POST", "/api/notebooks", 201, json=body)["pod_defaults"] == ["gcp-secret"]
        kim.ok("POST", "/api/notebooks/kim/gcp/start?wait=true", 202)
        notebook = admin_api.get("kubeflow.org/v1", "Notebook", "gcp", NAMESPACE)
        assert notebook["metadata"]["labels"]["add-gcp-secret"] == "true"
        pod = admin_api.get("v1", "Pod", "gcp-0", NAMESPACE)
        assert pod["metadata"]["labels"]["add-gcp-secret"] == "true"

        patch = "/api/notebooks/kim/gcp?wait=true"
        foreign = kim.patch(patch, json={"pod_defaults": ["staff-only"]})
        assert foreign.status_code == 400 and "staff-only" in foreign.json()["message"]
        # Choosing none restarts the running notebook without the label.
        changed = kim.ok("PATCH", patch, json={"pod_defaults": []})
        assert changed["pod_defaults"] == [] and changed["state"] == "running", changed["message"]
        notebook = admin_api.get("kubeflow.org/v1", "Notebook", "gcp", NAMESPACE)
        assert "add-gcp-secret" not in notebook["metadata"]["labels"]
        kim.ok("POST", "/api/notebooks/kim/gcp/stop?wait=true", 202)
        kadmin.ok("DELETE", "/api/users/kim/quota")

"""The kubernetes backend against a real kube-apiserver (scripts/kube-apiserver.sh).

Only the API server and etcd run: no scheduler, controller-manager or kubelet.
`FakeNodes` plays those parts through the API, as they would: it creates a
StatefulSet's pod (or, in Kubeflow mode, a Notebook's), marks it scheduled or
Unschedulable ("Insufficient nvidia.com/gpu"), posts the events they post and
patches pod status Running/Ready with an IP (the status subresource, like a
kubelet); it records the StatefulSet controller's FailedCreate event when
quota admission refuses a pod; it moves VirtualMachine status as KubeVirt's
controller would. Everything else is real: RBAC (the backend runs with a
token of the shipped ServiceAccount, bound by the shipped ClusterRoles),
admission (ResourceQuota, ServiceAccount, PodSecurity, the shipped
ValidatingAdmissionPolicy), server-side apply, watches.

In CI (CI=true) the module must run; elsewhere it is skipped only when the
kube-apiserver binary has not been built (`scripts/kube-apiserver.sh build`).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import os
import secrets
import subprocess
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

from cgu_lab.backends import kube_names as names
from cgu_lab.backends.base import (
    BackendError,
    EnvironmentSpec,
    NotebookSpec,
    QuotaSpec,
    TrainingSpec,
)
from cgu_lab.backends.kube_settings import KubeSettings
from cgu_lab.backends.kubernetes import KubernetesBackend
from cgu_lab.core.errors import Conflict, NotFound
from cgu_lab.core.quota import Limits

from . import kube_crds

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "kube-apiserver.sh"
BINARY = ROOT / ".build" / "kube" / "kube-apiserver"
DEPLOY = ROOT / "deploy" / "kubernetes"
RUN = secrets.token_hex(2)  # a reused server keeps Terminating namespaces: names are per run
USER_PREFIX, GROUP_PREFIX = f"t{RUN}u-", f"t{RUN}g-"
CONTROLLER_SA = "system:serviceaccount:cgu-lab:cgu-lab-controller"
OURS = "app.kubernetes.io/managed-by=cgu-lab"
UNSCHEDULABLE = (
    "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are "
    "available: 3 No preemption victims found for incoming pod."
)

CRDS_NOTE = kube_crds.crds_for_tests()[1]


def strict() -> list[tuple[str, str]]:
    """Field validation Strict (a fresh list: the client appends to it)."""
    return [("fieldValidation", "Strict")]


BUILT = pytest.mark.skipif(
    not BINARY.exists() and os.environ.get("CI") != "true",
    reason="kube-apiserver is not built (scripts/kube-apiserver.sh build)",
)
pytestmark = BUILT


# -- the server, the shipped manifests, a token of the controller's ServiceAccount ----------


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Admin:
    """Cluster-admin access for setting the scene and checking results."""

    def __init__(self, kubeconfig: str, headers: dict[str, str] | None = None) -> None:
        configuration = client.Configuration()
        config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
        self.api_client = client.ApiClient(configuration)
        for header, value in (headers or {}).items():
            self.api_client.set_default_header(header, value)
        self.dynamic = DynamicClient(self.api_client)

    def resource(self, api_version: str, kind: str):
        return self.dynamic.resources.get(api_version=api_version, kind=kind)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None):
        try:
            return self.resource(api_version, kind).get(name=name, namespace=namespace).to_dict()
        except ApiException as error:
            if error.status == 404:
                return None
            raise

    def apply(self, obj: dict) -> dict:
        resource = self.resource(obj["apiVersion"], obj["kind"])
        return resource.server_side_apply(
            body=obj,
            namespace=obj["metadata"].get("namespace"),
            field_manager="test-admin",
            force_conflicts=True,
            query_params=strict(),
        ).to_dict()

    def create(self, obj: dict) -> dict:
        resource = self.resource(obj["apiVersion"], obj["kind"])
        return resource.create(
            body=obj, namespace=obj["metadata"].get("namespace"), query_params=strict()
        ).to_dict()

    def patch_status(self, api_version: str, kind: str, name: str, namespace: str, patch: dict):
        self.resource(api_version, kind).status.patch(
            body=patch,
            name=name,
            namespace=namespace,
            content_type="application/merge-patch+json",
        )

    def event(self, involved: dict, reason: str, message: str, kind: str = "Normal") -> None:
        meta = involved["metadata"]
        self.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
                "involvedObject": {
                    "apiVersion": involved["apiVersion"],
                    "kind": involved["kind"],
                    "name": meta["name"],
                    "namespace": meta["namespace"],
                    "uid": meta["uid"],
                },
                "reason": reason,
                "message": message,
                "type": kind,
                "source": {"component": "fake-nodes"},
                "firstTimestamp": _now(),
                "lastTimestamp": _now(),
                "count": 1,
            }
        )


def _documents(*paths: Path) -> list[dict]:
    return [doc for path in paths for doc in yaml.safe_load_all(path.read_text()) if doc]


def install(kubeconfig: str, skip: tuple[str, ...] = ()) -> Admin:
    """Apply the shipped base manifests and the CRDs of tests/kube_crds.py (the upstream
    ones when at hand, else the project's Notebook CRD and the test stand-ins; also used
    by scripts/kube-test.sh for a manual check); return admin access that knows the CRDs.
    Every object is written with field validation Strict; kinds in `skip` are left out."""
    admin = Admin(kubeconfig)
    base = sorted((DEPLOY / "base").rglob("*.yaml"))
    manifests = _documents(*[p for p in base if p.name != "kustomization.yaml"])
    manifests = [doc for doc in manifests if doc["kind"] != "CustomResourceDefinition"]
    crds, _ = kube_crds.crds_for_tests()
    manifests = crds + manifests
    for doc in crds:
        admin.apply(doc)
    deadline = time.monotonic() + 30
    for doc in crds:
        while True:
            crd = admin.get("apiextensions.k8s.io/v1", doc["kind"], doc["metadata"]["name"])
            # A CRD just made may not have its conditions yet.
            status = crd.get("status") or {}
            conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
            if conditions.get("Established") == "True":
                break
            assert time.monotonic() < deadline, f"{doc['metadata']['name']} not established"
            time.sleep(0.1)
    admin.api_client.close()
    admin = Admin(kubeconfig)  # discovery that knows the new CRDs
    rest = [doc for doc in manifests if doc["kind"] not in ("CustomResourceDefinition", *skip)]
    for doc in sorted(rest, key=lambda doc: doc["kind"] != "Namespace"):
        admin.apply(doc)
    return admin


@pytest.fixture(scope="module")
def cluster():
    """The API server with the shipped base manifests and the test stand-in CRDs applied."""
    was_running = subprocess.run([SCRIPT, "status"], capture_output=True).returncode == 0
    started = subprocess.run([SCRIPT, "start"], capture_output=True, text=True, check=False)
    assert started.returncode == 0, started.stderr
    kubeconfig = started.stdout.strip().splitlines()[-1]
    admin = install(kubeconfig)
    yield kubeconfig, admin
    admin.api_client.close()
    if not was_running:
        subprocess.run([SCRIPT, "stop"], check=False)


def token_kubeconfig(kubeconfig: str, admin: Admin, account: str, path: Path) -> str:
    """A kubeconfig holding a real token (TokenRequest) of ServiceAccount cgu-lab/<account>."""
    core = client.CoreV1Api(admin.api_client)
    request = core.create_namespaced_service_account_token(
        account, "cgu-lab", {"spec": {"expirationSeconds": 3600}}
    )
    document = yaml.safe_load(Path(kubeconfig).read_text())
    document["users"] = [{"name": account, "user": {"token": request.status.token}}]
    document["contexts"][0]["context"]["user"] = account
    path.write_text(yaml.safe_dump(document))
    path.chmod(0o600)
    return str(path)


@pytest.fixture(scope="module")
def controller_kubeconfig(cluster, tmp_path_factory):
    """The backend runs as the shipped ServiceAccount, with only the shipped RBAC."""
    kubeconfig, admin = cluster
    path = tmp_path_factory.mktemp("kube") / "controller.kubeconfig"
    return token_kubeconfig(kubeconfig, admin, "cgu-lab-controller", path)


# -- the parts of a cluster that are not running ---------------------------------------------


class FakeNodes(threading.Thread):
    """StatefulSet controller, scheduler, kubelet and KubeVirt, played through the API."""

    def __init__(self, admin: Admin, prefixes: tuple[str, ...] = (USER_PREFIX, GROUP_PREFIX)):
        super().__init__(name="fake-nodes", daemon=True)
        self.admin = admin
        self.prefixes = prefixes  # the namespaces it plays in
        self.gpus_free = {"nvidia.com/gpu": 4}
        self.kubeflow_namespaces: set[str] = set()  # where we play the notebook-controller
        self.pull_seconds = 0.3
        self.stopping = threading.Event()
        self.failures: list[str] = []
        self._refused: set[str] = set()
        self._pulling: dict[str, float] = {}
        self._pods = admin.resource("v1", "Pod")
        self._ip = 10

    def run(self) -> None:
        while not self.stopping.wait(0.05):
            try:
                self.tick()
            except Exception as error:  # report, keep playing
                self.failures.append(repr(error))

    def tick(self) -> None:
        def ours(item: dict) -> bool:
            return item["metadata"]["namespace"].startswith(self.prefixes)

        quotas = self.admin.resource("v1", "ResourceQuota").get(label_selector=OURS).to_dict()
        for quota in filter(ours, quotas["items"]):
            self.quota_controller(quota)
        sets = self.admin.resource("apps/v1", "StatefulSet").get(label_selector=OURS).to_dict()
        for sts in filter(ours, sets["items"]):
            spec = sts["spec"]
            self.want_pod(sts, spec["replicas"], spec["template"], "statefulset-controller")
        notebooks = self.admin.resource("kubeflow.org/v1", "Notebook").get(label_selector=OURS)
        for notebook in notebooks.to_dict()["items"]:
            if notebook["metadata"]["namespace"] in self.kubeflow_namespaces:
                stopped = names.STOPPED in (notebook["metadata"].get("annotations") or {})
                # Kubeflow's notebook-controller gives the pod the Notebook's labels.
                template = json.loads(json.dumps(notebook["spec"]["template"]))
                labels = dict(notebook["metadata"]["labels"])
                labels[names.STATEFULSET] = notebook["metadata"]["name"]
                template["metadata"] = {"labels": labels}
                self.want_pod(notebook, 0 if stopped else 1, template, "notebook-controller")
        for pod in filter(ours, self._pods.get(label_selector=OURS).to_dict()["items"]):
            self.kubelet(pod)
        vms = self.admin.resource("kubevirt.io/v1", "VirtualMachine").get(label_selector=OURS)
        for vm in vms.to_dict()["items"]:
            self.virt_controller(vm)

    def quota_controller(self, quota: dict) -> None:
        """Fill in a new quota's status, as kube-controller-manager would: without it the
        quota admission plugin refuses every pod of the namespace."""
        if (quota.get("status") or {}).get("hard") == quota["spec"].get("hard"):
            return
        used = (quota.get("status") or {}).get("used") or {
            key: "0" for key in quota["spec"]["hard"]
        }
        meta = quota["metadata"]
        self.admin.patch_status(
            "v1",
            "ResourceQuota",
            meta["name"],
            meta["namespace"],
            {"status": {"hard": quota["spec"]["hard"], "used": used}},
        )

    def want_pod(self, owner: dict, replicas: int, template: dict, who: str) -> None:
        meta = owner["metadata"]
        name, namespace = f"{meta['name']}-0", meta["namespace"]
        pod = self.admin.get("v1", "Pod", name, namespace)
        if replicas and pod is None:
            body = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {
                        **template["metadata"]["labels"],
                        "statefulset.kubernetes.io/pod-name": name,
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": owner["apiVersion"],
                            "kind": owner["kind"],
                            "name": meta["name"],
                            "uid": meta["uid"],
                            "controller": True,
                        }
                    ],
                },
                "spec": template["spec"],
            }
            try:
                self.admin.create(body)
            except ApiException as error:
                attempt = f"{meta['uid']}/{meta['resourceVersion']}"
                if error.status == 403 and attempt not in self._refused:
                    self._refused.add(attempt)
                    message = json.loads(error.body)["message"]
                    self.admin.event(
                        owner,
                        "FailedCreate",
                        f"create Pod {name} in {owner['kind']} {meta['name']} failed error: "
                        f"{message}",
                        "Warning",
                    )
        elif not replicas and pod is not None:
            self._pods.delete(name=name, namespace=namespace, body={"gracePeriodSeconds": 0})

    def kubelet(self, pod: dict) -> None:
        meta, status = pod["metadata"], pod.get("status", {})
        if meta.get("deletionTimestamp") or status.get("phase") == "Running":
            return
        conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
        if not conditions:
            for container in pod["spec"]["containers"]:
                for resource, amount in container["resources"].get("limits", {}).items():
                    if resource.startswith("nvidia.com/") and int(amount) > self.gpus_free.get(
                        resource, 0
                    ):
                        return self.unschedulable(pod)
            self.set_status(pod, {"phase": "Pending", "conditions": [self.true("PodScheduled")]})
            self.admin.event(pod, "Scheduled", f"Successfully assigned {meta['name']} to gpu-1")
            image = pod["spec"]["containers"][0]["image"]
            self.admin.event(pod, "Pulling", f'Pulling image "{image}"')
            self._pulling[meta["uid"]] = time.monotonic()
        elif conditions.get("PodScheduled") == "True":
            if time.monotonic() - self._pulling.get(meta["uid"], 0) < self.pull_seconds:
                return
            self._ip += 1
            containers = [
                {
                    "name": container["name"],
                    "image": container["image"],
                    "imageID": "",
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": _now()}},
                }
                for container in pod["spec"]["containers"]
            ]
            ready = [self.true(kind) for kind in ("PodScheduled", "Initialized")]
            ready += [self.true("ContainersReady"), self.true("Ready")]
            self.set_status(
                pod,
                {
                    "phase": "Running",
                    "podIP": f"10.244.0.{self._ip}",
                    "conditions": ready,
                    "containerStatuses": containers,
                },
            )
            self.admin.event(pod, "Started", "Started container")

    def unschedulable(self, pod: dict) -> None:
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": UNSCHEDULABLE,
            "lastTransitionTime": _now(),
        }
        self.set_status(pod, {"phase": "Pending", "conditions": [condition]})
        self.admin.event(pod, "FailedScheduling", UNSCHEDULABLE, "Warning")

    @staticmethod
    def true(kind: str) -> dict:
        return {"type": kind, "status": "True", "lastTransitionTime": _now()}

    def set_status(self, pod: dict, status: dict) -> None:
        meta = pod["metadata"]
        self.admin.patch_status("v1", "Pod", meta["name"], meta["namespace"], {"status": status})

    def virt_controller(self, vm: dict) -> None:
        running = vm["spec"].get("runStrategy") == "Always"
        status = vm.get("status") or {}
        if running and not status.get("ready"):
            patch = {"printableStatus": "Running", "ready": True, "created": True}
        elif not running and status.get("printableStatus", "Stopped") != "Stopped":
            patch = {"printableStatus": "Stopped", "ready": False, "created": False}
        else:
            return
        meta = vm["metadata"]
        self.admin.patch_status(
            "kubevirt.io/v1", "VirtualMachine", meta["name"], meta["namespace"], {"status": patch}
        )


@pytest.fixture(scope="module")
def nodes(cluster):
    fake = FakeNodes(cluster[1])
    fake.start()
    yield fake
    fake.stopping.set()
    fake.join(timeout=5)
    assert not fake.failures, fake.failures


@pytest.fixture(scope="module")
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


class Harness:
    """Opens backends (as the controller's ServiceAccount) and runs coroutines for tests."""

    def __init__(self, loop, kubeconfig: str, admin: Admin, nodes: FakeNodes) -> None:
        self.loop, self.kubeconfig, self.admin, self.nodes = loop, kubeconfig, admin, nodes
        self.ids = iter(range(100, 1000))

    def run(self, coroutine):
        return self.loop.run_until_complete(asyncio.wait_for(coroutine, 60))

    def backend(self, **changes) -> KubernetesBackend:
        kube = KubeSettings(
            kubeconfig=self.kubeconfig,
            user_prefix=USER_PREFIX,
            group_prefix=GROUP_PREFIX,
            start_timeout=20,
            stop_timeout=10,
            watch_timeout=30,
            controller_url="http://cgu-lab-controller.cgu-lab.svc.cluster.local:8000",
            reachable_wait=0,  # the pods here are written by the test; nothing listens
        )
        backend = KubernetesBackend(kube.replace(**changes))
        self.run(backend.open())
        return backend

    def close(self, backend: KubernetesBackend) -> None:
        self.run(backend.close())

    def spec(self, owner: str, name: str, **changes) -> NotebookSpec:
        spec = NotebookSpec(
            id=next(self.ids),
            owner=owner,
            name=name,
            base_path=f"/notebook/{owner}/{name}/",
            environment=EnvironmentSpec("pytorch", "registry.example.edu/cgu-lab/notebook:0.1"),
            cpu_milli=1000,
            memory=2 * 2**30,
            gpu_type="premium",
            gpus=1,
            proxy_secret=secrets.token_urlsafe(16),
            controller_url="http://127.0.0.1:8000",
            api_token=secrets.token_urlsafe(16),
            node_selector={"nvidia.com/gpu.product": "NVIDIA-RTX-A5000"},
        )
        return dataclasses.replace(spec, **changes)

    def start(self, backend, spec, start=None):
        messages: list[str] = []

        async def progress(percent: int, message: str) -> None:
            messages.append(message)

        state = self.run((start or backend.start)(spec, progress))
        return state, messages

    def get(self, kind: str, name: str, namespace: str, api_version: str = "v1"):
        return self.admin.get(api_version, kind, name, namespace)


@pytest.fixture(scope="module")
def h(loop, controller_kubeconfig, cluster, nodes):
    return Harness(loop, controller_kubeconfig, cluster[1], nodes)


def notebook_of(h: Harness, ref: names.ObjectRef) -> dict:
    return h.get("Notebook", ref.name, ref.namespace, "kubeflow.org/v1")


def secret_value(h: Harness, ref: names.ObjectRef, key: str) -> str:
    secret = h.get("Secret", ref.secret, ref.namespace)
    return base64.b64decode(secret["data"][key]).decode()


# -- the lifecycle through the Backend interface -----------------------------------------------


def test_start_stop_start_and_resize(h):
    backend = h.backend()
    try:
        spec = h.spec("john.doe", "hw1")
        ref = backend.naming.notebook(spec.owner, spec.name)
        state, messages = h.start(backend, spec)
        pod_uid = h.get("Pod", f"{ref.name}-0", ref.namespace)["metadata"]["uid"]
        assert state == {
            "kind": "jupyter",
            "namespace": ref.namespace,
            "name": "hw1",
            "url": f"http://hw1.{ref.namespace}.svc.cluster.local:80",
            "server": pod_uid,  # a pod made behind the controller's back is another server
        }
        assert backend.endpoint(state) == state["url"]
        assert any(m.startswith("Pulling image registry.example.edu") for m in messages)
        assert messages[-1] == "JupyterLab is answering"
        assert h.run(backend.observe(spec, state)).ready

        namespace = h.get("Namespace", ref.namespace, None)
        assert namespace["metadata"]["labels"][names.MANAGED_BY] == "cgu-lab"
        binding = h.get(
            "RoleBinding", "cgu-lab-controller", ref.namespace, "rbac.authorization.k8s.io/v1"
        )
        assert binding["roleRef"]["name"] == "cgu-lab-namespace-manager"
        assert h.get("NetworkPolicy", "cgu-lab-notebooks", ref.namespace, "networking.k8s.io/v1")
        notebook = notebook_of(h, ref)
        assert names.STOPPED not in notebook["metadata"]["annotations"]
        uid = notebook["metadata"]["uid"]
        sts = h.get("StatefulSet", "hw1", ref.namespace, "apps/v1")
        assert sts["spec"]["replicas"] == 1
        assert sts["metadata"]["ownerReferences"][0]["uid"] == uid
        assert (
            h.get("Service", "hw1", ref.namespace)["metadata"]["ownerReferences"][0]["uid"] == uid
        )
        secret = h.get("Secret", ref.secret, ref.namespace)
        assert secret["metadata"]["ownerReferences"][0]["uid"] == uid
        assert secret_value(h, ref, "proxy-secret") == spec.proxy_secret
        assert h.get("PersistentVolumeClaim", ref.home, ref.namespace)
        assert h.get("Pod", f"{ref.name}-0", ref.namespace)["status"]["phase"] == "Running"

        h.run(backend.stop(spec, state))
        assert names.STOPPED in notebook_of(h, ref)["metadata"]["annotations"]
        assert h.get("StatefulSet", "hw1", ref.namespace, "apps/v1")["spec"]["replicas"] == 0
        assert h.get("Pod", f"{ref.name}-0", ref.namespace) is None
        assert h.get("Secret", ref.secret, ref.namespace) is None
        assert h.get("PersistentVolumeClaim", ref.home, ref.namespace)  # the home stays
        observed = h.run(backend.observe(spec, state))
        assert not observed.alive and "stopped" in observed.detail

        again = dataclasses.replace(spec, proxy_secret="second-secret")
        state, _ = h.start(backend, again)
        assert secret_value(h, ref, "proxy-secret") == "second-secret"
        assert notebook_of(h, ref)["metadata"]["uid"] == uid  # the same Notebook, restarted

        # Resize: the controller stops and starts with the new resources.
        h.run(backend.stop(again, state))
        smaller = dataclasses.replace(
            again, cpu_milli=2000, gpus=0, gpu_type=None, node_selector={}
        )
        state, _ = h.start(backend, smaller)
        template = notebook_of(h, ref)["spec"]["template"]["spec"]
        assert template["containers"][0]["resources"]["limits"] == {"cpu": "2", "memory": "2Gi"}
        assert "nodeSelector" not in template and "tolerations" not in template
        pod = h.get("Pod", f"{ref.name}-0", ref.namespace)
        assert pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "2"
        h.run(backend.stop(smaller, state))

        h.run(backend.remove_storage(spec.owner, spec.name))
        assert notebook_of(h, ref) is None
        assert h.get("Secret", ref.secret, ref.namespace) is None
        # The home is deleted; its kubernetes.io/pvc-protection finalizer is lifted by the
        # controller-manager, which does not run here, so it stays Terminating.
        home = h.get("PersistentVolumeClaim", ref.home, ref.namespace)
        assert home is None or home["metadata"]["deletionTimestamp"]
    finally:
        h.close(backend)


def test_a_server_that_dies_is_not_alive_while_its_pod_is_remade(h):
    """Deleted behind the controller's back: its StatefulSet remakes the pod at once,
    but until that pod runs JupyterLab the notebook has no server (liveness stops it)."""
    backend = h.backend()
    try:
        spec = h.spec("paul", "dies", gpus=0, gpu_type=None, node_selector={})
        ref = backend.naming.notebook(spec.owner, spec.name)
        state, _ = h.start(backend, spec)
        assert h.run(backend.observe(spec, state)).alive
        h.admin.resource("v1", "Pod").delete(name=f"{ref.name}-0", namespace=ref.namespace)

        async def down():
            for _ in range(250):
                observed = await backend.observe(spec, state)
                if not observed.alive:
                    return observed.detail
                await asyncio.sleep(0.02)
            return None

        assert h.run(down()) in (
            "its pod is gone",
            "its pod was deleted",
            "its pod was replaced and is not running yet (Pending)",
        )

        async def remade():  # the StatefulSet's new pod runs: still not the server we started
            for _ in range(500):
                pod = h.get("Pod", f"{ref.name}-0", ref.namespace)
                observed = await backend.observe(spec, state)
                # the watch cache may see the Running pod a moment after the API server does
                if (
                    pod
                    and pod["status"].get("phase") == "Running"
                    and "Pending" not in observed.detail
                ):
                    return observed
                await asyncio.sleep(0.02)
            return None

        observed = h.run(remade())
        assert not observed.alive
        assert observed.detail == "its pod was replaced behind the controller's back"
        h.run(backend.stop(spec, state))
    finally:
        h.close(backend)


def test_pending_reason_and_start_timeout(h):
    backend = h.backend(start_timeout=3)
    h.nodes.gpus_free["nvidia.com/gpu"] = 0
    try:
        spec = h.spec("alice", "needs-gpu", gpus=2)
        ref = backend.naming.notebook(spec.owner, spec.name)
        messages: list[str] = []

        async def progress(percent: int, message: str) -> None:
            messages.append(message)

        async def scenario():
            start = asyncio.ensure_future(backend.start(spec, progress))
            reason = ""
            for _ in range(100):
                reason = await backend.pending_reason(spec, {})
                if "Insufficient" in reason:
                    break
                await asyncio.sleep(0.05)
            with pytest.raises(BackendError) as refused:
                await start
            return reason, str(refused.value)

        reason, error = h.run(scenario())
        assert reason == f"Waiting for a node: {UNSCHEDULABLE}"
        assert f"Waiting for a node: {UNSCHEDULABLE}" in messages
        assert error.startswith("the notebook did not start within 3 s: Waiting for a node: 0/3")
        # Nothing keeps running: the Notebook is held stopped and its secrets are gone.
        assert names.STOPPED in notebook_of(h, ref)["metadata"]["annotations"]
        assert h.get("StatefulSet", ref.name, ref.namespace, "apps/v1")["spec"]["replicas"] == 0
        assert h.get("Secret", ref.secret, ref.namespace) is None
    finally:
        h.nodes.gpus_free["nvidia.com/gpu"] = 4
        h.close(backend)


def test_quota_is_mirrored_and_enforced_by_admission(h):
    backend = h.backend()
    try:
        quota = QuotaSpec(
            Limits(cpu_milli=4000, memory=8 * 2**30, gpus={"premium": 1}, notebooks=2),
            {"premium": "nvidia.com/gpu", "standard": "nvidia.com/gpu.shared"},
        )
        h.run(backend.sync_quota("carol", quota))
        namespace = backend.naming.user_namespace("carol")
        mirrored = h.get("ResourceQuota", "kf-resource-quota", namespace)
        hard = {
            "requests.cpu": "4",
            "requests.memory": "8Gi",
            "requests.nvidia.com/gpu": "1",
            "requests.nvidia.com/gpu.shared": "0",
            "pods": "2",
        }
        assert mirrored["spec"]["hard"] == hard
        # Play the quota controller: publish the totals admission enforces against.
        used = dict.fromkeys(hard, "0")
        h.admin.patch_status(
            "v1",
            "ResourceQuota",
            "kf-resource-quota",
            namespace,
            {"status": {"hard": hard, "used": used}},
        )

        spec = h.spec("carol", "too-big", gpus=2, quota=quota)
        with pytest.raises(BackendError) as refused:
            h.start(backend, spec)
        assert str(refused.value) == (
            "The cluster quota of your namespace (kf-resource-quota) does not allow this: it "
            "asks for nvidia.com/gpu=2 while nvidia.com/gpu=0 is in use of a limit of "
            "nvidia.com/gpu=1. Stop another notebook or ask for a larger quota."
        )
        ref = backend.naming.notebook("carol", "too-big")
        assert names.STOPPED in notebook_of(h, ref)["metadata"]["annotations"]

        fits = h.spec("carol", "fits", gpus=1, quota=quota)
        state, _ = h.start(backend, fits)
        used = h.get("ResourceQuota", "kf-resource-quota", namespace)["status"]["used"]
        assert used["requests.nvidia.com/gpu"] == "1" and used["pods"] == "1"  # admission counted
        h.run(backend.stop(fits, state))

        # Lowered limits replace the old ones (server-side apply drops removed keys).
        h.run(backend.sync_quota("carol", QuotaSpec(Limits(notebooks=1))))
        assert h.get("ResourceQuota", "kf-resource-quota", namespace)["spec"]["hard"] == {
            "pods": "1"
        }
    finally:
        h.close(backend)


def test_kubeflow_mode_creates_only_the_notebook(h):
    backend = h.backend(notebook_controller="kubeflow", endpoint="pod-ip")
    try:
        spec = h.spec("dave", "kf", gpus=0, gpu_type=None)
        ref = backend.naming.notebook(spec.owner, spec.name)
        h.nodes.kubeflow_namespaces.add(ref.namespace)
        state, _ = h.start(backend, spec)
        assert h.run(backend.observe(spec, state)).ready
        pod_ip = h.get("Pod", f"{ref.name}-0", ref.namespace)["status"]["podIP"]
        assert backend.endpoint(state) == f"http://{pod_ip}:8888"
        assert h.get("StatefulSet", ref.name, ref.namespace, "apps/v1") is None
        assert h.get("Service", ref.name, ref.namespace) is None
        h.run(backend.stop(spec, state))
        assert h.get("Pod", f"{ref.name}-0", ref.namespace) is None
    finally:
        h.close(backend)


def pod_default(namespace: str, name: str, selector: dict, desc: str = "") -> dict:
    """A Kubeflow PodDefault, as a profile's owner or an administrator writes one."""
    spec: dict = {"selector": selector, "env": [{"name": "CONFIGURED_BY", "value": name}]}
    if desc:
        spec["desc"] = desc
    return {
        "apiVersion": "kubeflow.org/v1alpha1",
        "kind": "PodDefault",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def test_pod_defaults_of_the_owners_namespace_are_offered_and_their_labels_reach_the_pod(h):
    """Kubeflow's web app offers a namespace's PodDefaults by their desc and puts the chosen
    ones' selector labels on the Notebook, whose pod carries them to Kubeflow's webhook."""
    backend = h.backend()
    try:
        namespace = backend.naming.user_namespace("gina")
        assert h.run(backend.pod_defaults("gina")) == []  # no namespace yet, and none made
        assert h.get("Namespace", namespace, None) is None
        spec = h.spec("gina", "conf", gpus=0, gpu_type=None, node_selector={})
        state, _ = h.start(backend, spec)
        h.run(backend.stop(spec, state))
        assert h.run(backend.pod_defaults("gina")) == []
        gcp = {"matchLabels": {"add-gcp-secret": "true"}}
        h.admin.create(pod_default(namespace, "add-gcp-secret", gcp, "Add the GCP secret"))
        h.admin.create(pod_default(namespace, "no-desc", {"matchLabels": {"mlflow": "true"}}))
        by_expression = {"matchExpressions": [{"key": "team", "operator": "Exists"}]}
        h.admin.create(pod_default(namespace, "by-expression", by_expression))
        # Another user's namespace is not offered to gina.
        other = f"t{RUN}-other"
        h.admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
        h.admin.create(pod_default(other, "staff-only", {"matchLabels": {"staff": "true"}}))
        assert h.run(backend.pod_defaults("gina")) == [
            {
                "name": "add-gcp-secret",
                "desc": "Add the GCP secret",
                "labels": {"add-gcp-secret": "true"},
            },
            {"name": "no-desc", "desc": "no-desc", "labels": {"mlflow": "true"}},
        ]

        chosen = dataclasses.replace(spec, pod_labels={"add-gcp-secret": "true", "app": "x"})
        state, _ = h.start(backend, chosen)
        ref = backend.naming.notebook(spec.owner, spec.name)
        labels = notebook_of(h, ref)["metadata"]["labels"]
        assert labels["add-gcp-secret"] == "true"
        assert labels["app"] == ref.name  # the platform's own labels win
        pod = h.get("Pod", f"{ref.name}-0", ref.namespace)
        assert pod["metadata"]["labels"]["add-gcp-secret"] == "true"
        h.run(backend.stop(chosen, state))
    finally:
        h.close(backend)


def test_sweep_stops_unknown_notebooks_of_this_installation(h):
    backend = h.backend()
    try:
        known = h.spec("erin", "known", gpus=0)
        orphan = h.spec("erin", "orphan", gpus=0)
        known_state, _ = h.start(backend, known)
        h.start(backend, orphan)
        assert h.run(backend.sweep({known.id})) == [orphan.id]
        erin = backend.naming.user_namespace("erin")
        annotations = notebook_of(h, names.ObjectRef(erin, "orphan"))["metadata"]["annotations"]
        assert names.STOPPED in annotations
        assert h.run(backend.observe(known, known_state)).ready
        assert h.run(backend.sweep({known.id})) == []  # already stopped: left alone
        h.run(backend.stop(known, known_state))
    finally:
        h.close(backend)


def test_images_lists_every_notebook_image_in_the_namespace(h):
    backend = h.backend()
    try:
        spec = h.spec("frank", "one", gpus=0)
        state, _ = h.start(backend, spec)
        h.run(backend.stop(spec, state))
        namespace = backend.naming.user_namespace("frank")
        h.admin.create(  # a Notebook made elsewhere (e.g. Kubeflow's web app) counts too
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "Notebook",
                "metadata": {"name": "by-hand", "namespace": namespace},
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "by-hand", "image": "custom/lab:2"}]}
                    }
                },
            }
        )
        images = h.run(backend.images("frank"))
        assert images == ["custom/lab:2", "registry.example.edu/cgu-lab/notebook:0.1"]
        assert h.run(backend.images("nobody-here")) == []
    finally:
        h.close(backend)


def test_culling_annotations_are_read_and_written(h):
    backend = h.backend()
    try:
        spec = h.spec("gina", "idle", gpus=0)
        state, _ = h.start(backend, spec)
        assert h.run(backend.last_activity(spec, state)) is None
        when = datetime(2025, 5, 4, 3, 2, 1, tzinfo=timezone.utc)
        h.run(backend.record_activity(spec, state, when))
        ref = backend.naming.notebook("gina", "idle")
        annotations = notebook_of(h, ref)["metadata"]["annotations"]
        assert annotations[names.LAST_ACTIVITY] == "2025-05-04T03:02:01Z"

        async def seen(expected):
            for _ in range(100):
                if await backend.last_activity(spec, state) == expected:
                    return True
                await asyncio.sleep(0.02)
            return False

        assert h.run(seen(when))
        # Kubeflow's culler writes the same annotation; the backend reads its value.
        patch = {"metadata": {"annotations": {names.LAST_ACTIVITY: "2025-06-01T00:00:00Z"}}}
        h.admin.resource("kubeflow.org/v1", "Notebook").patch(
            body=patch,
            name=ref.name,
            namespace=ref.namespace,
            content_type="application/merge-patch+json",
        )
        assert h.run(seen(datetime(2025, 6, 1, tzinfo=timezone.utc)))
        h.run(backend.stop(spec, state))
    finally:
        h.close(backend)


def test_vm_notebook_starts_and_stops_by_run_strategy(h):
    backend = h.backend()
    try:
        spec = h.spec("hana", "vm1", gpus=1, gpu_resource="nvidia.com/GA102GL_A10")
        ref = backend.naming.notebook(spec.owner, spec.name)
        state, messages = h.start(backend, spec, start=backend.start_vm)
        assert state["kind"] == "vm" and messages[-1].startswith("JupyterLab in the virtual")
        vm = h.get("VirtualMachine", ref.name, ref.namespace, "kubevirt.io/v1")
        assert vm["spec"]["runStrategy"] == "Always"
        assert vm["spec"]["template"]["spec"]["domain"]["devices"]["gpus"][0]["deviceName"] == (
            "nvidia.com/GA102GL_A10"
        )
        assert "#cloud-config" in secret_value(h, ref, "userdata")
        service = h.get("Service", ref.name, ref.namespace)
        assert service["metadata"]["ownerReferences"][0]["kind"] == "VirtualMachine"
        assert h.run(backend.observe(spec, state)).ready

        h.run(backend.stop(spec, state))
        vm = h.get("VirtualMachine", ref.name, ref.namespace, "kubevirt.io/v1")
        assert (
            vm["spec"]["runStrategy"] == "Halted" and vm["status"]["printableStatus"] == "Stopped"
        )
        assert not h.run(backend.observe(spec, state)).alive

        state, _ = h.start(backend, spec, start=backend.start_vm)  # runs again after a halt
        vm = h.get("VirtualMachine", ref.name, ref.namespace, "kubevirt.io/v1")
        assert vm["spec"]["runStrategy"] == "Always"
        h.run(backend.stop(spec, state))
        h.run(backend.remove_storage(spec.owner, spec.name))
        assert h.get("VirtualMachine", ref.name, ref.namespace, "kubevirt.io/v1") is None
    finally:
        h.close(backend)


def test_training_job_submission_status_logs_and_deletion(h):
    backend = h.backend()
    try:
        job = TrainingSpec(
            owner="ivan",
            name="resnet",
            image="registry.example.edu/train:1",
            command=("torchrun", "--nnodes=3", "train.py"),
            workers=2,
            gpus=1,
            group="ai-lab",
        )
        where = h.run(backend.submit_training(job))
        assert where["namespace"] == f"{GROUP_PREFIX}ai-lab"
        with pytest.raises(Conflict):
            h.run(backend.submit_training(job))
        built = h.get("PyTorchJob", where["name"], where["namespace"], "kubeflow.org/v1")
        replicas = built["spec"]["pytorchReplicaSpecs"]
        assert replicas["Worker"]["replicas"] == 2
        assert replicas["Master"]["template"]["spec"]["containers"][0]["name"] == "pytorch"
        assert h.run(backend.training_status("ivan", "resnet", "ai-lab")).phase == "Pending"

        # Play the training operator: conditions and replica counts, then the master pod.
        h.admin.patch_status(
            "kubeflow.org/v1",
            "PyTorchJob",
            where["name"],
            where["namespace"],
            {
                "status": {
                    "conditions": [
                        {"type": "Created", "status": "True", "message": "created"},
                        {"type": "Running", "status": "True", "message": "job is running"},
                    ],
                    "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 2}},
                }
            },
        )
        status = h.run(backend.training_status("ivan", "resnet", "ai-lab"))
        assert (status.phase, status.message) == ("Running", "job is running")
        assert status.replicas["Worker"]["active"] == 2

        with pytest.raises(BackendError, match="master 0 of training job 'resnet' has no pod"):
            h.run(backend.training_logs("ivan", "resnet", "ai-lab"))
        template = replicas["Master"]["template"]
        labels = {
            **template["metadata"]["labels"],
            names.JOB_NAME: where["name"],
            names.REPLICA_TYPE: "master",
            names.REPLICA_INDEX: "0",
        }
        h.admin.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"{where['name']}-master-0",
                    "namespace": where["namespace"],
                    "labels": labels,
                },
                "spec": template["spec"],
            }
        )

        async def logs():
            for _ in range(100):  # until the pod watch has delivered the pod
                try:
                    return await backend.training_logs("ivan", "resnet", "ai-lab")
                except BackendError as error:
                    if "has no pod" not in str(error):
                        raise
                await asyncio.sleep(0.02)
            return None

        # No kubelet ever ran the pod, so the API server has no line of log to give.
        assert h.run(logs()) == ""

        h.run(backend.delete_training("ivan", "resnet", "ai-lab"))
        with pytest.raises(NotFound):
            h.run(backend.training_status("ivan", "resnet", "ai-lab"))
        h.run(backend.delete_training("ivan", "resnet", "ai-lab"))  # gone is fine
    finally:
        h.close(backend)


def test_inventory_reads_gpus_from_nodes(h):
    for name, labels, allocatable in (
        (f"t{RUN}-a5000", {"nvidia.com/gpu.product": "NVIDIA-RTX-A5000"}, {"nvidia.com/gpu": "2"}),
        (f"t{RUN}-a30", {"nvidia.com/gpu.product": "NVIDIA-A30"}, {"nvidia.com/mig-1g.6gb": "4"}),
    ):
        h.admin.create(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}
        )
        h.admin.patch_status(
            "v1",
            "Node",
            name,
            None,
            {"status": {"capacity": allocatable, "allocatable": allocatable}},
        )
    backend = h.backend()
    try:
        devices = [d for d in h.run(backend.inventory()) if d.node.startswith(f"t{RUN}-")]
        assert sorted(d.id for d in devices) == [f"t{RUN}-a30/mig-1g.6gb-{i}" for i in range(4)] + [
            f"t{RUN}-a5000/gpu-{i}" for i in range(2)
        ]
    finally:
        h.close(backend)


# -- RBAC: what the shipped roles do not allow ---------------------------------------------


def test_the_controller_cannot_reach_beyond_its_namespaces(h, cluster):
    kubeconfig, admin = cluster
    backend = h.backend()
    try:  # a namespace of ours, prepared by the backend
        h.run(backend.sync_quota("kim", QuotaSpec(Limits(notebooks=1))))
        ours = backend.naming.user_namespace("kim")
    finally:
        h.close(backend)
    controller = Admin(kubeconfig, {"Impersonate-User": CONTROLLER_SA})

    def secret(namespace):
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"probe-{RUN}", "namespace": namespace},
        }

    def binding(name: str, namespace: str, role: str = "cgu-lab-namespace-manager"):
        return {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": name, "namespace": namespace},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": role,
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": "cgu-lab-controller", "namespace": "cgu-lab"}
            ],
        }

    controller.create(secret(ours))  # allowed where it bound its role
    # A Kubeflow profile's namespace, as Kubeflow's profile controller labels it: namespace
    # naming "kubeflow" uses it as it is, so the controller may bind its role there.
    profile = f"kubeflow-probe-{RUN}"
    labels = {"app.kubernetes.io/part-of": "kubeflow-profile"}
    meta = {"name": profile, "labels": labels, "annotations": {"owner": "probe@example.com"}}
    admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
    controller.create(binding("cgu-lab-controller", profile))
    refusals = {
        "a secret in another namespace": lambda: controller.create(secret("default")),
        "reading secrets": lambda: controller.get("v1", "Secret", f"probe-{RUN}", ours),
        "deleting a namespace": lambda: controller.resource("v1", "Namespace").delete(name=ours),
        "creating pods": lambda: controller.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": ours},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            }
        ),
        "an unlabelled namespace": lambda: controller.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"evil-{RUN}"}}
        ),
        "a namespace labelled only as a Kubeflow profile": lambda: controller.create(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": f"kf-{RUN}", "labels": labels},
            }
        ),
        "binding its role elsewhere": lambda: controller.create(binding(f"grab-{RUN}", "default")),
        "binding a stronger role": lambda: controller.create(
            binding(f"admin-{RUN}", ours, "cluster-admin")
        ),
        "binding a stronger role in a profile": lambda: controller.create(
            binding(f"admin-{RUN}", profile, "cluster-admin")
        ),
    }
    messages = {}
    for what, attempt in refusals.items():
        with pytest.raises(ApiException) as refused:
            attempt()
        assert refused.value.status == 403, what
        messages[what] = json.loads(refused.value.body)["message"]
    assert "may only create namespaces labelled" in messages["an unlabelled namespace"]
    only_profile = messages["a namespace labelled only as a Kubeflow profile"]
    assert "may only create namespaces labelled" in only_profile
    assert "may only bind roles in namespaces it manages" in messages["binding its role elsewhere"]
    controller.api_client.close()


def test_without_its_rbac_the_backend_says_so_at_open(h, cluster, tmp_path):
    kubeconfig, admin = cluster
    admin.apply(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": f"nobody-{RUN}", "namespace": "cgu-lab"},
        }
    )
    path = token_kubeconfig(kubeconfig, admin, f"nobody-{RUN}", tmp_path / "nobody.kubeconfig")
    backend = KubernetesBackend(
        KubeSettings(kubeconfig=path, user_prefix=USER_PREFIX, group_prefix=GROUP_PREFIX)
    )
    with pytest.raises(
        BackendError,
        match=r"cannot watch Pod objects \(the controller may not list Pod: pods is forbidden",
    ):
        h.run(backend.open())


def test_an_environment_without_an_image_is_refused_before_anything_is_made(h):
    backend = h.backend()
    try:
        spec = h.spec("lena", "nb", environment=EnvironmentSpec("default", "", "/opt/env"))
        with pytest.raises(BackendError, match="environment 'default' has no container image"):
            h.start(backend, spec)
        assert h.get("Namespace", backend.naming.user_namespace("lena"), None) is None
    finally:
        h.close(backend)


def test_a_foreign_namespace_with_our_prefix_is_refused(h):
    foreign = f"{USER_PREFIX}mallory"
    h.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": foreign}})
    backend = h.backend()
    try:
        with pytest.raises(BackendError, match="exists but does not belong to this platform"):
            h.start(backend, h.spec("mallory", "nb", gpus=0))
    finally:
        h.close(backend)

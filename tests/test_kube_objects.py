"""The kubernetes backend's pure parts, without a cluster.

Every built object is validated against the Kubernetes OpenAPI schema
(kubernetes-validate, strict: unknown fields fail) or, for custom resources,
against the openAPIV3Schema of the CRD we ship, with embedded pod templates
validated as Kubernetes PodTemplates. The shipped manifests are validated the
same way, their kustomizations checked for completeness, and the RBAC they
grant compared with the calls the backend makes (kube_api.PERMISSIONS).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cgu_lab.backends import create_backend, kube_training
from cgu_lab.backends import kube_companions as companions
from cgu_lab.backends import kube_names as names
from cgu_lab.backends import kube_namespaces as namespaces
from cgu_lab.backends import kube_objects as objects
from cgu_lab.backends import kube_status as status
from cgu_lab.backends.base import (
    BackendError,
    EnvironmentSpec,
    NotebookSpec,
    QuotaSpec,
    TrainingSpec,
)
from cgu_lab.backends.kube_api import (
    BIND_ROLE,
    CLUSTER,
    KINDS,
    MANAGED,
    PERMISSIONS,
    KubeApi,
    KubeError,
    together,
)
from cgu_lab.backends.kube_nodes import gpu_devices
from cgu_lab.backends.kube_settings import KubeSettings
from cgu_lab.backends.kube_watch import Source, WatchCache
from cgu_lab.backends.kubernetes import KubernetesBackend
from cgu_lab.backends.local import LocalBackend
from cgu_lab.controller.settings import Settings
from cgu_lab.core.errors import NotSupported
from cgu_lab.core.quota import Limits

from . import kube_crds

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy" / "kubernetes"
KUBERNETES_VERSION = "1.34"
DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
KUBE = KubeSettings(
    storage_class="fast",
    home_size="5Gi",
    controller_url="http://cgu-lab-controller.cgu-lab.svc.cluster.local:8000",
)
NAMING = names.Naming()
UID = "0b7c5d1e-0000-4000-8000-000000000001"


def make_spec(**changes) -> NotebookSpec:
    spec = NotebookSpec(
        id=7,
        owner="john.doe",
        name="hw1",
        base_path="/notebook/john.doe/hw1/",
        environment=EnvironmentSpec(
            "pytorch", "registry.example.edu/cgu-lab/notebook:0.1.0", apps='["desktop"]'
        ),
        cpu_milli=1500,
        memory=4 * 2**30,
        gpu_type="premium",
        gpus=1,
        proxy_secret="proxy-s3cret-value",
        controller_url="http://127.0.0.1:8000",
        api_token="api-t0ken-value",
        gpu_resource="nvidia.com/gpu",
        node_selector={"nvidia.com/gpu.product": "NVIDIA-RTX-A5000"},
    )
    return dataclasses.replace(spec, **changes)


def created(obj: dict) -> dict:
    """`obj` as the API server returns it after creation (with a uid)."""
    return {**obj, "metadata": {**obj["metadata"], "uid": UID}}


CRD_SCHEMAS = kube_crds.schemas_by_kind(kube_crds.project_crds())
UPSTREAM_SCHEMAS = kube_crds.schemas_by_kind(kube_crds.upstream_crds())
UPSTREAM = pytest.mark.skipif(
    not UPSTREAM_SCHEMAS, reason="no upstream CRDs (../shared/upstream-crds or CGU_UPSTREAM_CRDS)"
)


def pod_templates(obj: dict) -> list[dict]:
    if obj["kind"] == "Notebook":
        return [obj["spec"]["template"]]
    if obj["kind"] == "PyTorchJob":
        return [replica["template"] for replica in obj["spec"]["pytorchReplicaSpecs"].values()]
    return []


HOST_IDENTITY = ("hostNetwork", "hostPID", "hostIPC", "hostPort")


def host_identity(obj, where: str = "") -> list[str]:
    """Where an object would let a pod share a node's identity: its network (cookies ignore
    ports: a pod answering on the node's address, which may be the controller's host name,
    would receive users' log-ins), its processes or its IPC."""
    found = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in HOST_IDENTITY and value:
                found.append(f"{where}.{key}")
            found += host_identity(value, f"{where}.{key}")
    elif isinstance(obj, list):
        for index, item in enumerate(obj):
            found += host_identity(item, f"{where}[{index}]")
    return found


def validate(obj: dict) -> None:
    """Built-in kinds against Kubernetes' schema; custom ones against our CRDs' schemas,
    with the pod templates inside them checked as Kubernetes PodTemplates. No object
    shares a node's network, processes or IPC."""
    assert host_identity(obj) == [], f"{obj['kind']} shares the node's identity"
    if obj["kind"] in CRD_SCHEMAS:
        jsonschema.validate(obj, CRD_SCHEMAS[obj["kind"]])
        # What jsonschema lets through and the API server refuses (Strict, server-side apply).
        assert list(kube_crds.unknown_fields(obj, CRD_SCHEMAS[obj["kind"]])) == []
        if obj["kind"] in UPSTREAM_SCHEMAS:
            assert list(kube_crds.unknown_fields(obj, UPSTREAM_SCHEMAS[obj["kind"]])) == []
        for template in pod_templates(obj):
            kubernetes_validate.validate(
                {
                    "apiVersion": "v1",
                    "kind": "PodTemplate",
                    "metadata": {"name": "template"},
                    "template": template,
                },
                KUBERNETES_VERSION,
                strict=True,
            )
        return
    kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def env_of(container: dict) -> dict[str, dict | str]:
    return {item["name"]: item.get("value", item.get("valueFrom")) for item in container["env"]}


# -- names -------------------------------------------------------------------------


def test_slug_keeps_valid_names_and_hashes_the_rest():
    assert names.slug("alice") == "alice"
    assert names.slug("hw-1") == "hw-1"
    changed = names.slug("john.doe")
    assert changed.startswith("john-doe--") and DNS_LABEL.match(changed)
    assert names.slug("john_doe") != names.slug("john.doe") != names.slug("john-doe")
    assert names.slug("410123456").startswith("x410123456--")  # Services need a letter first
    assert names.slug("410123456", letter_first=False) == "410123456"
    assert names.slug("a--b") != "a--b"  # `--` is reserved for hashed names
    assert len(names.slug("n" * 80, 52)) == 52


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=90), min_size=2, max_size=8, unique=True),
    st.integers(16, 63),
    st.booleans(),
)
def test_slug_is_always_a_valid_label_and_never_collides(texts, max_length, letter_first):
    slugs = [names.slug(text, max_length, letter_first=letter_first) for text in texts]
    for value in slugs:
        assert DNS_LABEL.match(value) and len(value) <= max_length
        assert value[0].isalpha() or not letter_first
    assert len(set(slugs)) == len(slugs)


def test_namespaces_and_object_names():
    assert NAMING.user_namespace("alice") == "cgu-u-alice"
    assert NAMING.group_namespace("ai-2025") == "cgu-g-ai-2025"
    long_user = "a" * 64
    assert len(NAMING.user_namespace(long_user)) <= 63
    ref = NAMING.notebook("john.doe", "hw1")
    assert ref.namespace.startswith("cgu-u-john-doe--") and ref.name == "hw1"
    assert (ref.secret, ref.home) == ("hw1-secrets", "hw1-home")
    assert NAMING.managed(ref.namespace) and not NAMING.managed("kube-system")
    # Group jobs carry their owner; "a-b"+"c" and "a"+"b-c" must not meet.
    assert NAMING.training("a-b", "c", "g") != NAMING.training("a", "b-c", "g")
    assert NAMING.training("alice", "run1").namespace == "cgu-u-alice"


# -- settings ------------------------------------------------------------------------


def test_settings_from_environment():
    kube = KubeSettings.from_env(
        {
            "CGU_LAB_KUBE_NOTEBOOK_CONTROLLER": "kubeflow",
            "CGU_LAB_KUBE_START_TIMEOUT": "120",
            "CGU_LAB_KUBE_INGRESS_POD_LABELS": "app=gw, istio=ingressgateway",
            "CGU_LAB_KUBE_USER_PREFIX": "lab-u-",
        }
    )
    assert kube.notebook_controller == "kubeflow" and not kube.builtin
    assert kube.start_timeout == 120.0
    assert kube.ingress_pod_labels == {"app": "gw", "istio": "ingressgateway"}
    assert kube.user_prefix == "lab-u-"


@pytest.mark.parametrize(
    ("environ", "complaint"),
    [
        ({"CGU_LAB_KUBE_NOTEBOOK_CONTROLLER": "argo"}, "notebook_controller must be one of"),
        ({"CGU_LAB_KUBE_USER_PREFIX": "Users"}, "namespace prefix"),
        ({"CGU_LAB_KUBE_GROUP_PREFIX": "cgu-u-"}, "must not overlap"),
        ({"CGU_LAB_KUBE_STOP_TIMEOUT": "soon"}, "must be a number"),
        ({"CGU_LAB_KUBE_INGRESS_POD_LABELS": "app"}, "not a list of labels"),
        ({"CGU_LAB_KUBE_INSTALLATION": "-bad-"}, "not a valid label value"),
    ],
)
def test_settings_refuse_nonsense(environ, complaint):
    with pytest.raises(BackendError, match=complaint):
        KubeSettings.from_env(environ)


# -- a user's namespace -----------------------------------------------------------------


def test_namespace_objects():
    ns = namespaces.namespace("cgu-u-alice", "alice", KUBE)
    validate(ns)
    labels = ns["metadata"]["labels"]
    assert labels[names.MANAGED_BY] == "cgu-lab" and labels[names.USER] == "alice"
    assert labels["app.kubernetes.io/part-of"] == "kubeflow-profile"
    assert ns["metadata"]["annotations"]["owner"] == "alice"
    assert objects.is_ours(ns, KUBE)
    assert not objects.is_ours(ns, KUBE.replace(installation="other"))
    group = namespaces.namespace("cgu-g-ai", "ai", KUBE, group=True)
    assert group["metadata"]["labels"][names.GROUP] == "ai"

    binding = namespaces.controller_role_binding("cgu-u-alice", KUBE)
    validate(binding)
    assert binding["roleRef"]["name"] == BIND_ROLE == namespaces.NAMESPACE_ROLE
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "cgu-lab-controller", "namespace": "cgu-lab"}
    ]

    account = namespaces.notebook_service_account("cgu-u-alice", KUBE)
    validate(account)
    assert account["automountServiceAccountToken"] is False


def test_network_policy_admits_only_the_controller_or_the_ingress():
    policy = namespaces.network_policy("cgu-u-alice", KUBE)
    validate(policy)
    (rule,) = policy["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8888}]
    assert [peer["namespaceSelector"]["matchLabels"] for peer in rule["from"]] == [
        {"kubernetes.io/metadata.name": "cgu-lab"}
    ]
    selects = policy["spec"]["podSelector"]["matchExpressions"][0]
    assert selects["values"] == ["notebook", "vm"]  # not training pods: workers talk to each other

    ingress = namespaces.network_policy("cgu-u-alice", KUBE.replace(ingress_header="x"))
    validate(ingress)
    peers = ingress["spec"]["ingress"][0]["from"]
    assert peers[1]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "istio-system"
    }
    assert peers[1]["podSelector"]["matchLabels"] == {"app": "istio-ingressgateway"}

    # a controller outside the cluster: its addresses, beside its pods
    outside = KUBE.replace(endpoint="pod-ip", controller_cidrs="10.1.255.1/32,192.168.4.0/24")
    admitted = namespaces.network_policy("cgu-u-alice", outside)
    validate(admitted)
    peers = admitted["spec"]["ingress"][0]["from"]
    assert peers[1:] == [
        {"ipBlock": {"cidr": "10.1.255.1/32"}},
        {"ipBlock": {"cidr": "192.168.4.0/24"}},
    ]
    with pytest.raises(BackendError, match=re.escape("'10.1.255.1/24' is not a network")):
        KUBE.replace(controller_cidrs="10.1.255.1/24")  # host bits set: a typo, said so


def test_quota_mirrors_platform_limits():
    quota = QuotaSpec(
        Limits(cpu_milli=4500, memory=8 * 2**30, gpus={"premium": 1, "v100": 2}, notebooks=2),
        {
            "premium": "nvidia.com/gpu",
            "v100": "nvidia.com/gpu",
            "standard": "nvidia.com/gpu.shared",
            "quarter": "nvidia.com/mig-1g.6gb",
        },
    )
    built = namespaces.resource_quota("cgu-u-alice", quota, KUBE)
    validate(built)
    assert built["metadata"]["name"] == "kf-resource-quota"
    assert built["spec"]["scopes"] == ["NotTerminating"]  # file-copy pods are not notebooks
    assert built["spec"]["hard"] == {
        "requests.cpu": "4500m",
        "requests.memory": "8Gi",
        "requests.nvidia.com/gpu": "3",  # premium and v100 share the resource
        "requests.nvidia.com/gpu.shared": "0",  # a type missing from the limits allows none
        "requests.nvidia.com/mig-1g.6gb": "0",
        "pods": "2",
    }
    unlimited = namespaces.resource_quota("cgu-u-bob", QuotaSpec(Limits()), KUBE)
    validate(unlimited)
    assert unlimited["spec"]["hard"] == {}


# -- one notebook --------------------------------------------------------------------------


def test_notebook_is_kubeflow_compatible_and_keeps_secrets_out():
    spec = make_spec()
    ref = NAMING.notebook(spec.owner, spec.name)
    notebook = objects.notebook(ref, spec, KUBE)
    validate(notebook)
    meta = notebook["metadata"]
    assert notebook["apiVersion"] == "kubeflow.org/v1" and meta["namespace"] == ref.namespace
    assert meta["annotations"][names.CREATOR] == "john.doe"
    assert meta["annotations"][names.SERVER_TYPE] == "jupyter"
    # Kubeflow's Istio route /notebook/<namespace>/<name>/ is rewritten to our base URL.
    assert meta["annotations"][names.HTTP_REWRITE_URI] == spec.base_path
    assert names.STOPPED not in meta["annotations"]
    assert meta["labels"]["app"] == meta["labels"][names.NOTEBOOK_NAME] == "hw1"
    assert meta["labels"][names.NOTEBOOK_ID] == "7"

    pod = notebook["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["name"] == "hw1" and container["image"] == spec.environment.image
    for arg in (
        "--ServerApp.base_url=/notebook/john.doe/hw1/",
        "--ServerApp.ip=0.0.0.0",
        "--ServerApp.port=8888",
        "--ServerApp.allow_remote_access=True",
        "--ServerApp.identity_provider_class=cgu_lab.notebook.identity.ProxyIdentityProvider",
        "--ServerApp.authorizer_class=cgu_lab.notebook.authorizer.ShareAuthorizer",
        "--ServerApp.contents_manager_class=cgu_lab.notebook.contents.ShareAwareContentsManager",
    ):
        assert arg in container["args"]
    env = env_of(container)
    assert env["CGU_CONTROLLER_URL"] == KUBE.controller_url  # pods reach the Service
    assert (env["CGU_NOTEBOOK_OWNER"], env["CGU_NOTEBOOK_NAME"], env["CGU_NOTEBOOK_ID"]) == (
        "john.doe",
        "hw1",
        "7",
    )
    assert (env["CGU_CPU_LIMIT"], env["CGU_MEM_LIMIT"], env["CGU_GPU_TYPE"]) == (
        "1.5",
        str(4 * 2**30),
        "premium",
    )
    assert env["CGU_APPS"] == '["desktop"]'  # the environment's apps, as on one machine
    assert env["CGU_PROXY_SECRET"] == {
        "secretKeyRef": {"name": "hw1-secrets", "key": "proxy-secret"}
    }
    assert env["CGU_API_TOKEN"] == {"secretKeyRef": {"name": "hw1-secrets", "key": "api-token"}}
    text = json.dumps(notebook)
    assert spec.proxy_secret not in text and spec.api_token not in text

    assert container["resources"] == {
        "requests": {"cpu": "1500m", "memory": "4Gi", "nvidia.com/gpu": "1"},
        "limits": {"cpu": "1500m", "memory": "4Gi", "nvidia.com/gpu": "1"},
    }
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-RTX-A5000"}
    assert pod["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 1000
    assert pod["automountServiceAccountToken"] is False
    assert {"name": "home", "mountPath": "/home/jovyan"} in container["volumeMounts"]
    assert {"name": "home", "persistentVolumeClaim": {"claimName": "hw1-home"}} in pod["volumes"]

    held = objects.notebook(ref, spec, KUBE, stopped_at="2025-01-01T00:00:00Z")
    validate(held)
    assert objects.is_stopped(held) and not objects.is_stopped(notebook)


def test_cpu_notebooks_and_mig_notebooks_ask_for_what_they_need():
    cpu_only = objects.notebook(
        NAMING.notebook("alice", "plain"),
        make_spec(gpus=0, gpu_type=None, node_selector={}, cpu_milli=2000, memory=3 * 2**20 + 1),
        KUBE,
    )
    validate(cpu_only)
    pod = cpu_only["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"] == {"cpu": "2", "memory": str(3 * 2**20 + 1)}
    assert "nodeSelector" not in pod and "tolerations" not in pod

    mig = objects.notebook(
        NAMING.notebook("alice", "mig"),
        make_spec(gpus=1, gpu_resource="nvidia.com/mig-1g.6gb"),
        KUBE,
    )
    validate(mig)
    assert mig["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"][
        "nvidia.com/mig-1g.6gb"
    ] == ("1")


def test_ingress_header_mode_drops_the_proxy_secret():
    kube = KUBE.replace(ingress_header="kubeflow-userid")
    spec = make_spec()
    ref = NAMING.notebook(spec.owner, spec.name)
    notebook = objects.notebook(ref, spec, kube)
    validate(notebook)
    (container,) = notebook["spec"]["template"]["spec"]["containers"]
    assert "--ProxyIdentityProvider.trusted_header=kubeflow-userid" in container["args"]
    assert "CGU_PROXY_SECRET" not in env_of(container)
    secret = objects.notebook_secret(ref, spec, kube, owner=created(notebook))
    assert set(secret["data"]) == {"api-token"}


def test_secret_and_home_volume():
    spec = make_spec()
    ref = NAMING.notebook(spec.owner, spec.name)
    owner = created(objects.notebook(ref, spec, KUBE))
    secret = objects.notebook_secret(ref, spec, KUBE, owner=owner)
    validate(secret)
    decoded = {key: base64.b64decode(value).decode() for key, value in secret["data"].items()}
    assert decoded == {"proxy-secret": spec.proxy_secret, "api-token": spec.api_token}
    owner_ref = {"apiVersion": "kubeflow.org/v1", "kind": "Notebook", "name": "hw1", "uid": UID}
    assert secret["metadata"]["ownerReferences"] == [{**owner_ref, "controller": True}]

    claim = objects.home_claim(ref, spec, KUBE)
    validate(claim)
    assert claim["spec"]["resources"]["requests"]["storage"] == "5Gi"
    assert claim["spec"]["storageClassName"] == "fast"
    assert "ownerReferences" not in claim["metadata"]  # a deleted Notebook keeps its home
    default_class = objects.home_claim(ref, spec, KUBE.replace(storage_class=""))
    assert "storageClassName" not in default_class["spec"]


def test_builtin_statefulset_and_service_follow_the_notebook():
    spec = make_spec()
    ref = NAMING.notebook(spec.owner, spec.name)
    notebook = created(objects.notebook(ref, spec, KUBE))
    sts = companions.statefulset(notebook)
    validate(sts)
    assert sts["spec"]["replicas"] == 1
    assert sts["spec"]["selector"] == {"matchLabels": {"statefulset": "hw1"}}
    labels = sts["spec"]["template"]["metadata"]["labels"]
    assert labels["statefulset"] == "hw1" and labels[names.NOTEBOOK_NAME] == "hw1"
    assert sts["spec"]["template"]["spec"] == notebook["spec"]["template"]["spec"]
    assert sts["metadata"]["ownerReferences"][0]["uid"] == UID
    assert set(notebook["spec"]["template"]) == {"spec"}  # Kubeflow's NotebookTemplateSpec
    assert labels.items() >= notebook["metadata"]["labels"].items()  # the Notebook's labels

    stopped = created(objects.notebook(ref, spec, KUBE, stopped_at="2025-01-01T00:00:00Z"))
    assert companions.statefulset(stopped)["spec"]["replicas"] == 0

    service = companions.service(notebook)
    validate(service)
    assert service["spec"]["ports"] == [
        {"name": "http-hw1", "port": 80, "targetPort": 8888, "protocol": "TCP"}
    ]
    assert service["spec"]["selector"] == {names.NOTEBOOK_NAME: "hw1"}
    assert service["metadata"]["ownerReferences"][0]["kind"] == "Notebook"


def test_patches():
    assert objects.stop_patch("T") == {"metadata": {"annotations": {names.STOPPED: "T"}}}
    assert objects.activity_patch("T") == {"metadata": {"annotations": {names.LAST_ACTIVITY: "T"}}}
    assert objects.scale_patch(0) == {"spec": {"replicas": 0}}
    assert objects.run_strategy_patch("Halted") == {"spec": {"runStrategy": "Halted"}}


# -- VM notebooks and training jobs ---------------------------------------------------------


def test_virtual_machine_notebook():
    spec = make_spec(kind="vm", gpus=2, gpu_resource="nvidia.com/GA102GL_A10", cpu_milli=2500)
    ref = NAMING.notebook(spec.owner, spec.name)
    vm = objects.virtual_machine(ref, spec, KUBE, running=True)
    validate(vm)
    assert vm["apiVersion"] == "kubevirt.io/v1" and vm["spec"]["runStrategy"] == "Always"
    template = vm["spec"]["template"]
    domain = template["spec"]["domain"]
    assert domain["cpu"] == {"cores": 3} and domain["memory"] == {"guest": "4Gi"}
    assert domain["devices"]["gpus"] == [
        {"name": "gpu0", "deviceName": "nvidia.com/GA102GL_A10"},
        {"name": "gpu1", "deviceName": "nvidia.com/GA102GL_A10"},
    ]
    volumes = {volume["name"]: volume for volume in template["spec"]["volumes"]}
    assert volumes["rootdisk"]["containerDisk"]["image"] == spec.environment.image
    assert volumes["home"]["persistentVolumeClaim"]["claimName"] == "hw1-home"
    assert volumes["cloudinit"]["cloudInitNoCloud"] == {"secretRef": {"name": "hw1-secrets"}}
    assert template["metadata"]["labels"][names.COMPONENT] == "vm"
    halted = objects.virtual_machine(ref, spec, KUBE, running=False)
    validate(halted)
    assert objects.is_stopped(halted) and not objects.is_stopped(vm)

    secret = objects.notebook_secret(ref, spec, KUBE, owner=created(vm))
    validate(secret)
    user_data = base64.b64decode(secret["data"]["userdata"]).decode()
    assert user_data.startswith("#cloud-config\n")
    config = yaml.safe_load(user_data)
    files = {item["path"]: item for item in config["write_files"]}
    env_file = files["/etc/cgu-lab/notebook.env"]
    assert env_file["permissions"] == "0600"
    assert f'CGU_PROXY_SECRET="{spec.proxy_secret}"' in env_file["content"]
    assert (
        "--ServerApp.base_url=/notebook/john.doe/hw1/"
        in (files["/etc/systemd/system/cgu-lab-notebook.service"]["content"])
    )
    assert config["mounts"][0][1] == "/home/jovyan"


def test_pytorch_job():
    job = TrainingSpec(
        owner="alice",
        name="resnet",
        image="registry.example.edu/train:1",
        command=("torchrun", "train.py"),
        workers=3,
        gpus=2,
        gpu_resource="nvidia.com/gpu",
        env={"EPOCHS": "10"},
        node_selector={"nvidia.com/gpu.product": "Tesla-V100"},
        clean_pod_policy="All",
    )
    ref = NAMING.training(job.owner, job.name)
    built = kube_training.pytorch_job(ref, job, KUBE)
    validate(built)
    replicas = built["spec"]["pytorchReplicaSpecs"]
    assert (replicas["Master"]["replicas"], replicas["Worker"]["replicas"]) == (1, 3)
    # A rank exiting non-zero is retried a bounded number of times, then the job fails.
    assert built["spec"]["runPolicy"] == {"cleanPodPolicy": "All", "backoffLimit": 3}
    assert {replica["restartPolicy"] for replica in replicas.values()} == {"OnFailure"}
    for replica in replicas.values():
        (container,) = replica["template"]["spec"]["containers"]
        assert container["name"] == "pytorch" and container["command"] == ["torchrun", "train.py"]
        assert container["resources"]["limits"]["nvidia.com/gpu"] == "2"
        assert env_of(container) == {"EPOCHS": "10"}
        assert replica["template"]["metadata"]["labels"][names.COMPONENT] == "training"
    single = kube_training.pytorch_job(ref, dataclasses.replace(job, workers=0), KUBE)
    validate(single)
    assert set(single["spec"]["pytorchReplicaSpecs"]) == {"Master"}


def test_crd_schemas_catch_malformed_objects():
    spec = make_spec()
    notebook = objects.notebook(NAMING.notebook("a", "b"), spec, KUBE)
    del notebook["spec"]["template"]["spec"]["containers"][0]["image"]
    with pytest.raises(jsonschema.ValidationError):
        validate(notebook)
    vm = objects.virtual_machine(NAMING.notebook("a", "b"), spec, KUBE, running=True)
    vm["spec"]["runStrategy"] = "Sometimes"
    with pytest.raises(jsonschema.ValidationError):
        validate(vm)
    secret = objects.notebook_secret(NAMING.notebook("a", "b"), spec, KUBE, created(vm))
    secret["stringDatum"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(secret)


def test_unknown_fields_are_found_as_the_api_server_finds_them():
    spec = make_spec()
    notebook = objects.notebook(NAMING.notebook("a", "b"), spec, KUBE)
    # What cgu-lab once wrote and Kubeflow's CRD refuses: template metadata.
    notebook["spec"]["template"]["metadata"] = {"labels": {"app": "b"}}
    notebook["spec"]["templates"] = {}
    assert list(kube_crds.unknown_fields(notebook, CRD_SCHEMAS["Notebook"])) == [
        ".spec.template.metadata",
        ".spec.templates",
    ]
    job = kube_training.pytorch_job(
        NAMING.training("a", "j"),
        TrainingSpec(owner="a", name="j", image="i:1", command=("x",)),
        KUBE,
    )
    job["spec"]["runPolicy"]["cleanupPolicy"] = "All"
    assert list(kube_crds.unknown_fields(job, CRD_SCHEMAS["PyTorchJob"])) == [
        ".spec.runPolicy.cleanupPolicy"
    ]


@UPSTREAM
@pytest.mark.parametrize("kind", ["Notebook", "PyTorchJob", "VirtualMachine"])
def test_project_crds_declare_only_what_upstream_declares(kind):
    """So the suite means the same on a clone without the upstream files: an object our
    CRDs accept is accepted by Kubeflow's and KubeVirt's own."""
    assert kube_crds.undeclared_upstream(CRD_SCHEMAS[kind], UPSTREAM_SCHEMAS[kind]) == []


@UPSTREAM
def test_upstream_refuses_what_cgu_lab_once_wrote():
    notebook = objects.notebook(NAMING.notebook("a", "b"), make_spec(), KUBE)
    notebook["spec"]["template"]["metadata"] = {"labels": {"app": "b"}}
    assert list(kube_crds.unknown_fields(notebook, UPSTREAM_SCHEMAS["Notebook"])) == [
        ".spec.template.metadata"
    ]


# -- reading status ----------------------------------------------------------------------------


def pod(phase="Pending", conditions=(), containers=(), deleting=False, node=""):
    meta = {"name": "hw1-0", "uid": "pod-uid"}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "spec": {"nodeName": node} if node else {},
        "status": {
            "phase": phase,
            "podIP": "10.1.2.3",
            "conditions": [
                {"type": kind, "status": state, "reason": reason, "message": message}
                for kind, state, reason, message in conditions
            ],
            "containerStatuses": list(containers),
        },
    }


def event(reason, message, time="2025-01-01T00:00:01Z"):
    return {"reason": reason, "message": message, "lastTimestamp": time}


UNSCHEDULABLE = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
QUOTA = (
    'create Pod hw1-0 in StatefulSet hw1 failed error: pods "hw1-0" is forbidden: exceeded '
    "quota: kf-resource-quota, requested: requests.nvidia.com/gpu=2, used: "
    "requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=1"
)
SCHEDULED = ("PodScheduled", "True", "", "")


@pytest.mark.parametrize(
    ("the_pod", "events", "percent", "message", "ready", "failed"),
    [
        (None, [], 15, "Creating the notebook's pod", False, False),
        (None, [event("FailedCreate", QUOTA)], 100, "does not allow this", False, True),
        (
            None,
            [event("FailedCreate", "status unknown for quota: kf-resource-quota")],
            15,
            "Creating",
            False,
            False,
        ),
        (pod(deleting=True), [], 15, "previous server", False, False),
        (
            pod(conditions=[("PodScheduled", "False", "Unschedulable", UNSCHEDULABLE)]),
            [],
            30,
            "Waiting for a node: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
            False,
            False,
        ),
        (pod(), [], 20, "Waiting for a node", False, False),
        (
            pod(conditions=[SCHEDULED], node="gpu-1"),
            [event("Pulling", 'Pulling image "cgu/nb:1"')],
            50,
            "Pulling image cgu/nb:1",
            False,
            False,
        ),
        (
            pod(conditions=[SCHEDULED], node="gpu-1"),
            [
                event("Pulling", "x", "2025-01-01T00:00:01Z"),
                event("Pulled", "y", "2025-01-01T00:09Z"),
            ],
            65,
            "Image pulled",
            False,
            False,
        ),
        (pod(conditions=[SCHEDULED], node="gpu-1"), [], 40, "on gpu-1", False, False),
        (
            pod(conditions=[SCHEDULED], containers=[{"state": {"running": {}}}]),
            [],
            80,
            "Starting JupyterLab",
            False,
            False,
        ),
        (
            pod("Running", [SCHEDULED, ("Ready", "True", "", "")]),
            [],
            95,
            "JupyterLab is answering",
            True,
            False,
        ),
        (
            pod(
                conditions=[SCHEDULED],
                containers=[
                    {
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        "lastState": {"terminated": {"reason": "OOMKilled"}},
                    }
                ],
            ),
            [],
            100,
            "ran out of memory",
            False,
            True,
        ),
        (
            pod(
                conditions=[SCHEDULED],
                containers=[
                    {
                        "image": "nope:1",
                        "state": {"waiting": {"reason": "ImagePullBackOff", "message": "404"}},
                    }
                ],
            ),
            [],
            100,
            "The image nope:1 cannot be pulled",
            False,
            True,
        ),
        (
            pod(
                conditions=[SCHEDULED],
                containers=[
                    {
                        "state": {
                            "waiting": {
                                "reason": "CreateContainerConfigError",
                                "message": "failed to sync secret cache: timed out waiting "
                                "for the condition",
                            }
                        }
                    }
                ],
            ),
            [],
            60,
            "Waiting for the node to read the notebook's settings",
            False,
            False,
        ),
        (
            pod(
                conditions=[SCHEDULED],
                containers=[
                    {
                        "state": {
                            "waiting": {
                                "reason": "CreateContainerConfigError",
                                "message": 'secret "nb-secrets" not found',
                            }
                        }
                    }
                ],
            ),
            [],
            100,
            "cannot start (CreateContainerConfigError)",
            False,
            True,
        ),
        (pod("Failed"), [], 100, "exited", False, True),
    ],
)
def test_notebook_progress(the_pod, events, percent, message, ready, failed):
    view = status.notebook_progress(the_pod, events)
    assert (view.percent, view.ready, view.failed) == (percent, ready, failed)
    assert message in view.message
    if ready:
        assert view.address == "10.1.2.3"


RUNNING = {"name": "hw1", "state": {"running": {}}}


@pytest.mark.parametrize(
    "the_pod, down",
    [
        (pod("Running", [("Ready", "True", "", "")], [RUNNING]), ""),
        (pod("Running", [("Ready", "False", "", "")], [RUNNING]), ""),  # a missed probe
        (None, "its pod is gone"),
        (pod("Running", [], [RUNNING], deleting=True), "its pod was deleted"),
        (pod("Pending"), "its pod was replaced and is not running yet (Pending)"),
        (pod("Failed"), "its pod ended (Failed)"),
        (
            pod("Running", [], [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}]),
            "JupyterLab's container is not running (CrashLoopBackOff)",
        ),
        (
            pod("Running", [], [{"state": {"terminated": {"reason": "OOMKilled"}}}]),
            "JupyterLab's container is not running (OOMKilled)",
        ),
    ],
)
def test_a_running_notebook_without_its_server_is_down(the_pod, down):
    assert status.notebook_down(the_pod) == down


def test_quota_refusal_reads_plainly():
    text = status.quota_refusal(QUOTA)
    assert text == (
        "The cluster quota of your namespace (kf-resource-quota) does not allow this: it asks "
        "for nvidia.com/gpu=2 while nvidia.com/gpu=0 is in use of a limit of nvidia.com/gpu=1. "
        "Stop another notebook or ask for a larger quota."
    )
    assert status.quota_refusal("something else") is None
    assert "refuses" in status.refusal([event("FailedCreate", 'pods "x" is forbidden: violates')])


def test_vm_progress_and_halt():
    def vm(**state):
        return {"metadata": {"name": "hw1"}, "spec": {"runStrategy": "Always"}, "status": state}

    assert status.vm_progress(None, []).message == "Creating the virtual machine"
    assert status.vm_progress(vm(ready=True), []).ready
    unschedulable = vm(
        printableStatus="ErrorUnschedulable",
        conditions=[{"type": "Ready", "status": "False", "message": UNSCHEDULABLE}],
    )
    assert status.vm_progress(unschedulable, []).message == f"Waiting for a node: {UNSCHEDULABLE}"
    assert status.vm_progress(vm(printableStatus="ImagePullBackOff"), []).failed
    assert "booting" in status.vm_progress(vm(printableStatus="Running"), []).message
    assert status.vm_progress(vm(), [event("FailedCreate", QUOTA)]).failed
    assert status.vm_halted(vm(printableStatus="Stopped")) and status.vm_halted(None)
    assert not status.vm_halted(vm(printableStatus="Running", ready=True))


def test_training_status_images_and_times():
    job = {
        "status": {
            "conditions": [
                {"type": "Created", "status": "True", "message": "created"},
                {"type": "Running", "status": "True", "message": "running"},
                {"type": "Succeeded", "status": "False"},
            ],
            "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 2, "failed": 1}},
        }
    }
    state = status.training_status(job)
    assert (state.phase, state.message) == ("Running", "running")
    assert state.replicas["Worker"] == {"active": 2, "succeeded": 0, "failed": 1}
    assert status.training_status({}).phase == "Pending"

    notebooks = [
        {"spec": {"template": {"spec": {"containers": [{"image": "b:1"}, {"image": "a:2"}]}}}},
        {"spec": {"template": {"spec": {"containers": [{"image": "b:1"}]}}}},
    ]
    assert status.images(notebooks) == ["a:2", "b:1"]

    when = datetime(2025, 3, 1, 12, 30, 5, tzinfo=timezone.utc)
    assert status.format_time(when) == "2025-03-01T12:30:05Z"
    assert status.parse_time("2025-03-01T12:30:05Z") == when
    assert status.parse_time("yesterday") is None and status.parse_time(None) is None


# -- GPU inventory from nodes ----------------------------------------------------------------------


def node(name, labels, allocatable, cordoned=False):
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"unschedulable": True} if cordoned else {},
        "status": {"allocatable": allocatable},
    }


def test_gpu_devices_from_node_labels_and_resources():
    devices = gpu_devices(
        [
            node(
                "a5000-1",
                {"nvidia.com/gpu.product": "NVIDIA-RTX-A5000", "nvidia.com/gpu.memory": "24564"},
                {"cpu": "32", "nvidia.com/gpu": "2"},
            ),
            node(  # time-sliced x4 and renamed: 8 advertised slots on 2 GPUs
                "p4000-1",
                {"nvidia.com/gpu.product": "Quadro-P4000", "nvidia.com/gpu.replicas": "4"},
                {"nvidia.com/gpu": "0", "nvidia.com/gpu.shared": "8"},
            ),
            node(  # MIG mixed: one GPU whole, one split into instances
                "a30-1",
                {"nvidia.com/gpu.product": "NVIDIA-A30", "nvidia.com/gpu.count": "2"},
                {"nvidia.com/gpu": "1", "nvidia.com/mig-1g.6gb": "4"},
            ),
            node(  # MIG single
                "a100-1",
                {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"},
                {"nvidia.com/gpu": "7"},
            ),
            node("cpu-1", {}, {"cpu": "64"}),
            node("cordoned", {"nvidia.com/gpu.product": "V100"}, {"nvidia.com/gpu": "4"}, True),
        ]
    )
    by_node: dict[str, list] = {}
    for device in devices:
        by_node.setdefault(device.node, []).append(device)
    assert [d.id for d in by_node["a5000-1"]] == ["a5000-1/gpu-0", "a5000-1/gpu-1"]
    assert by_node["a5000-1"][0].memory == 24564 * 2**20
    assert len(by_node["p4000-1"]) == 2
    assert (
        sorted((d.mig_profile, d.memory) for d in by_node["a30-1"])
        == [("", 0)] + [("1g.6gb", 6 * 10**9)] * 4
    )
    assert {d.mig_profile for d in by_node["a100-1"]} == {"1g.5gb"} and len(by_node["a100-1"]) == 7
    assert "cpu-1" not in by_node and "cordoned" not in by_node


# -- the watch cache, fed by a scripted source ------------------------------------------------
# Provoking a real 410 needs a watch older than the API server's watch-cache window, which a
# short test cannot wait for; the relist path is therefore driven by a scripted stream here
# (the watches themselves run against the real server in test_kubernetes_backend.py).


def obj(name: str, version: str) -> dict:
    return {"metadata": {"namespace": "ns", "name": name, "resourceVersion": version}}


class ScriptedSource:
    """Answers list and watch calls from a script, recording the versions watched from."""

    def __init__(self, lists, watches) -> None:
        self.lists, self.watches, self.watched_from = list(lists), list(watches), []
        self.idle = asyncio.Event()  # the script has run out

    async def list(self):
        return self.lists.pop(0)

    async def watch(self, version, timeout):
        self.watched_from.append(version)
        if not self.watches:
            self.idle.set()
            await asyncio.sleep(timeout)  # a quiet watch, until the cache stops it
            return
        for event in self.watches.pop(0):
            yield event


def test_watch_cache_resumes_from_the_last_version_and_relists_after_410_gone():
    script = ScriptedSource(
        lists=[([obj("a", "5")], "5"), ([obj("a", "8"), obj("b", "9")], "9")],
        watches=[
            [
                {"type": "ADDED", "object": obj("c", "6")},
                {"type": "ERROR", "object": {"code": 410, "message": "too old resource version"}},
            ],
            [{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "12"}}}],
            [{"type": "DELETED", "object": obj("b", "13")}],
        ],
    )
    cache = WatchCache([Source("Thing", script.list, script.watch)], watch_timeout=5)

    async def scenario():
        await cache.start()
        await asyncio.wait_for(script.idle.wait(), 5)
        names_now = sorted(o["metadata"]["name"] for o in cache.objects("Thing"))
        version = cache.version
        await cache.stop()
        return names_now, version

    names_now, version = asyncio.run(scenario())
    # Resumed from each event's version (bookmarks too); listed again after the 410.
    assert script.watched_from == ["5", "9", "12", "13"]
    assert names_now == ["a"]  # c vanished with the relist, b with its DELETED event
    assert version >= 3


def gpu_node(name: str, version: str, gpus: int, beat: str = "") -> dict:
    """A GPU node as the Node watch brings it; `beat` stands for its kubelet's heartbeat."""
    return {
        "metadata": {
            "name": name,
            "resourceVersion": version,
            "labels": {"nvidia.com/gpu.product": "NVIDIA-RTX-A5000"},
        },
        "status": {
            "allocatable": {"nvidia.com/gpu": str(gpus)},
            "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": beat}],
        },
    }


def test_node_heartbeats_pass_nothing_on_and_device_changes_pass_the_fleets_devices():
    """The backend follows the Node watch node by node (a heartbeat is read for its node
    alone): its followers hear of a node's devices changing, joining or leaving, with
    the whole fleet's devices, and never of a heartbeat."""
    script = ScriptedSource(
        lists=[([gpu_node("a", "1", 2), gpu_node("b", "2", 4)], "2")],
        watches=[
            [
                {"type": "MODIFIED", "object": gpu_node("a", "3", 2, beat="10:00:10")},
                {"type": "MODIFIED", "object": gpu_node("b", "4", 4, beat="10:00:11")},
                {"type": "MODIFIED", "object": gpu_node("b", "5", 3)},  # a GPU fell off
                {"type": "ADDED", "object": gpu_node("c", "6", 1)},
                {"type": "MODIFIED", "object": gpu_node("c", "7", 1, beat="10:00:12")},
                {"type": "DELETED", "object": gpu_node("a", "8", 2)},
            ]
        ],
    )
    backend = KubernetesBackend(KUBE)
    heard: list[list[str]] = []
    backend.follow_inventory(lambda devices: heard.append(sorted(d.id for d in devices)))
    source = Source("Node", script.list, script.watch, changed=backend._nodes_changed)
    backend.cluster.watch = WatchCache([source], watch_timeout=5)

    async def scenario():
        await backend.cluster.watch.start()
        await asyncio.wait_for(script.idle.wait(), 5)
        await backend.cluster.watch.stop()

    asyncio.run(scenario())
    b = [f"b/gpu-{i}" for i in range(3)]
    assert heard == [
        ["a/gpu-0", "a/gpu-1", *b],  # b's fourth GPU is gone (the listing itself: nothing)
        ["a/gpu-0", "a/gpu-1", *b, "c/gpu-0"],  # c joined
        [*b, "c/gpu-0"],  # a left
    ]
    assert sorted(d.id for d in backend._devices) == [*b, "c/gpu-0"]


def test_watch_cache_reads_one_namespace_without_the_others():
    """Objects are kept by namespace: a start's wait reads its own namespace's Events,
    and a relist, an update or a deletion keeps each namespace's own."""

    def thing(namespace: str, name: str, version: str) -> dict:
        return {"metadata": {"namespace": namespace, "name": name, "resourceVersion": version}}

    script = ScriptedSource(
        lists=[([thing("u1", "a", "1"), thing("u2", "a", "2"), thing("u2", "b", "3")], "3")],
        watches=[
            [
                {"type": "MODIFIED", "object": thing("u1", "a", "4")},
                {"type": "DELETED", "object": thing("u2", "a", "5")},
                {"type": "ADDED", "object": thing("u3", "c", "6")},
            ]
        ],
    )
    cache = WatchCache([Source("Thing", script.list, script.watch)], watch_timeout=5)

    async def scenario():
        await cache.start()
        await asyncio.wait_for(script.idle.wait(), 5)
        seen = {
            namespace: sorted(o["metadata"]["name"] for o in cache.objects("Thing", namespace))
            for namespace in ("u1", "u2", "u3", "u4")
        }
        everything = sorted(
            (o["metadata"]["namespace"], o["metadata"]["name"]) for o in cache.objects("Thing")
        )
        got = cache.get("Thing", "u1", "a")
        await cache.stop()
        return seen, everything, got

    seen, everything, got = asyncio.run(scenario())
    assert seen == {"u1": ["a"], "u2": ["b"], "u3": ["c"], "u4": []}
    assert everything == [("u1", "a"), ("u2", "b"), ("u3", "c")]
    assert got["metadata"]["resourceVersion"] == "4"


def test_watch_cache_reports_a_source_it_cannot_list():
    from kubernetes.aio.client.exceptions import ApiException

    async def refuse():
        raise ApiException(status=403, reason="Forbidden")

    async def never(version, timeout):
        return
        yield

    cache = WatchCache([Source("Secret", refuse, never)])

    async def scenario():
        await cache.start(timeout=5)
        error = cache.error("Secret")
        await cache.stop()
        return error

    assert asyncio.run(scenario()) == "403 Forbidden"


# -- the backend interface, without a cluster --------------------------------------------


def test_other_backends_refuse_kubernetes_features_by_name(tmp_path):
    local = LocalBackend(Settings(data_dir=tmp_path, use_cgroups=False))
    spec = make_spec()
    calls = [
        local.pending_reason(spec, {}),
        local.sync_quota("alice", QuotaSpec(Limits())),
        local.images("alice"),
        local.last_activity(spec, {}),
        local.record_activity(spec, {}, datetime.now(timezone.utc)),
    ]
    refusal = "need the kubernetes backend; this platform runs the local backend"
    for call in calls:
        with pytest.raises(NotSupported, match=refusal):
            asyncio.run(call)


def test_create_backend_knows_kubernetes(monkeypatch):
    monkeypatch.setenv("CGU_LAB_KUBE_NOTEBOOK_CONTROLLER", "kubeflow")
    backend = create_backend("kubernetes", Settings())
    assert isinstance(backend, KubernetesBackend)
    assert backend.describe()["notebook_controller"] == "kubeflow"


class RecordingApi:
    """What the backend's pieces write, recorded; every object is new to the cluster."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    async def create(self, obj: dict, exist_ok: bool = False) -> dict:
        self.calls.append(("create", obj["kind"], obj["metadata"]["name"]))
        return obj

    async def apply(self, obj: dict) -> dict:
        self.calls.append(("apply", obj["kind"], obj["metadata"]["name"]))
        return obj


def test_the_backends_pieces_share_its_connection_namespaces_and_tool_pods():
    """The pieces cut from the backend (storage page, home files, kinds of server) are
    given its connection, which it fills when it opens, and share one Namespaces and one
    PodTool: a namespace the storage page made ready is not made again for its quota."""
    backend = KubernetesBackend(KUBE.replace(files_image="registry.example.edu/nb:1"))
    place = backend.storage.place("ana", None, "ana", True)
    with pytest.raises(AssertionError, match=r"open\(\) the backend first"):
        asyncio.run(place)
    api = RecordingApi()
    backend.cluster.client = api  # what open() does, without a cluster
    sources = ("Pod", "Event", "Notebook", "VirtualMachine")
    backend.cluster.watch = WatchCache([Source(name, list=None, watch=None) for name in sources])
    place = asyncio.run(backend.storage.place("ana", None, "ana", True))
    assert place.namespace == NAMING.user_namespace("ana")
    asyncio.run(backend.sync_quota("ana", QuotaSpec(Limits())))
    assert [call for call in api.calls if call[1] == "Namespace"] == [
        ("create", "Namespace", place.namespace)
    ]
    assert ("create", "PersistentVolumeClaim", "cgu-storage") in api.calls
    assert api.calls[-1] == ("apply", "ResourceQuota", names.QUOTA_NAME)
    assert backend.storage.tools.image_for(place.namespace, "ana") == "registry.example.edu/nb:1"
    assert backend.describe()["vm_notebooks"] is True


def test_every_call_must_be_in_the_permission_table():
    from kubernetes.aio import client

    api = KubeApi(client.ApiClient(client.Configuration()), NAMING.managed)
    api.require("Secret", "create", "cgu-u-alice")
    api.require("Pod", "watch", None)
    api.require("Pod", "get", "cgu-u-alice", subresource="log")
    with pytest.raises(RuntimeError, match="not in PERMISSIONS"):
        api.require("Secret", "create", "kube-system")  # writes only in our namespaces
    with pytest.raises(RuntimeError, match="not in PERMISSIONS"):
        api.require("Secret", "get", "cgu-u-alice")  # never reads secrets
    with pytest.raises(RuntimeError, match="not in PERMISSIONS"):
        api.require("Namespace", "delete", None)
    asyncio.run(api.close())


# -- shipped manifests ----------------------------------------------------------------------------


def documents(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kustomizations() -> list[Path]:
    return sorted(DEPLOY.rglob("kustomization.yaml"))


def listed_files(path: Path) -> tuple[set[Path], set[Path]]:
    """The resources and the patch files a kustomization names (each must exist)."""
    kustomization = yaml.safe_load(path.read_text())
    resources, patches = set(), set()
    for entry in kustomization.get("resources", []):
        resources.add((path.parent / entry).resolve())
    for patch in kustomization.get("patches", []):
        if "path" in patch:
            patches.add((path.parent / patch["path"]).resolve())
    for target in resources | patches:
        assert target.exists(), f"{path} names {target}, which does not exist"
    return resources, patches


PATCH_FILES = {patch for path in kustomizations() for patch in listed_files(path)[1]}


def manifest_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*.yaml") if p.name != "kustomization.yaml")


@pytest.mark.parametrize(
    "path",
    [p for p in manifest_files() if p.resolve() not in PATCH_FILES],  # patches: see overlays
    ids=lambda p: str(p.relative_to(DEPLOY)),
)
def test_manifests_validate_against_the_kubernetes_schema(path):
    for doc in documents(path):
        validate(doc)


def test_every_manifest_belongs_to_a_kustomization():
    named = set()
    for path in kustomizations():
        resources, patches = listed_files(path)
        named |= resources | patches
    unlisted = [p for p in manifest_files() if p.resolve() not in named]
    assert not unlisted, f"not in any kustomization.yaml: {unlisted}"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_the_notebook_crd_is_created_apart_never_applied():
    built = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY / "crds")], check=True, capture_output=True, text=True
    ).stdout
    (crd,) = [doc for doc in yaml.safe_load_all(built) if doc]
    assert crd["metadata"]["name"] == "notebooks.kubeflow.org"
    assert crd["metadata"]["labels"]["app.kubernetes.io/part-of"] == "cgu-lab"
    assert (
        "kubectl create -k deploy/kubernetes/crds"
        in (DEPLOY / "crds" / "kustomization.yaml").read_text()
    )


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.parametrize("overlay", ["example", "kubeflow"])
def test_overlays_build_and_validate(overlay):
    built = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY / "overlays" / overlay)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    docs = [doc for doc in yaml.safe_load_all(built) if doc]
    for doc in docs:
        validate(doc)
    kinds = {doc["kind"] for doc in docs}
    assert {"Deployment", "ClusterRole", "ValidatingAdmissionPolicy", "NetworkPolicy"} <= kinds
    # Neither carries the Notebook CRD: applied, it would replace Kubeflow's; it is created
    # apart (deploy/kubernetes/crds), which refuses where one exists.
    assert "CustomResourceDefinition" not in kinds
    (deployment,) = [doc for doc in docs if doc["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["command"] + container["args"][:3] == [
        "cgu-lab",
        "controller",
        "--backend",
        "kubernetes",
    ]
    env = env_of(container)
    assert env["CGU_LAB_DB_URL"] == {"secretKeyRef": {"name": "cgu-lab-database", "key": "url"}}
    mode = "kubeflow" if overlay == "kubeflow" else "builtin"
    assert env["CGU_LAB_KUBE_NOTEBOOK_CONTROLLER"] == mode


def granted(role: dict) -> dict[tuple[str, str], set[str]]:
    """(apiGroup, resource) -> verbs of a ClusterRole, resourceNames rules left out."""
    grants: dict[tuple[str, str], set[str]] = {}
    for rule in role["rules"]:
        if rule.get("resourceNames"):
            continue
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                grants.setdefault((group, resource), set()).update(rule["verbs"])
    return grants


def needed(scope: str) -> dict[tuple[str, str], set[str]]:
    table = {}
    for (kind, subresource), verbs in PERMISSIONS[scope].items():
        resource = KINDS[kind].plural + (f"/{subresource}" if subresource else "")
        table[(KINDS[kind].group, resource)] = set(verbs)
    return table


def test_rbac_grants_exactly_what_the_backend_calls():
    roles = {
        doc["metadata"]["name"]: doc
        for doc in documents(DEPLOY / "base" / "rbac.yaml")
        if doc["kind"] == "ClusterRole"
    }
    assert granted(roles["cgu-lab-controller"]) == needed(CLUSTER)
    assert granted(roles[BIND_ROLE]) == needed(MANAGED)
    (bind,) = [rule for rule in roles["cgu-lab-controller"]["rules"] if rule.get("resourceNames")]
    assert bind == {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterroles"],
        "resourceNames": [BIND_ROLE],
        "verbs": ["bind"],
    }
    (binding,) = [
        doc
        for doc in documents(DEPLOY / "base" / "rbac.yaml")
        if doc["kind"] == "ClusterRoleBinding"
    ]
    assert binding["subjects"][0]["name"] == KUBE.controller_service_account


def test_together_sends_at_once_waits_for_all_and_raises_the_first_failure():
    """A start's independent objects go in one round trip's wait (kube_api.together); a
    failure still surfaces as the BackendError the lifecycle catches, and only once every
    call has ended, so the clean-up after it finds nothing still being created."""
    ended: list[str] = []

    async def scenario():
        started: list[str] = []
        everyone = asyncio.Event()

        async def call(name: str, error: str = "", after: str = "") -> str:
            started.append(name)
            if len(started) % 3 == 0:
                everyone.set()
            await everyone.wait()  # sent one after another, the first would wait forever
            if after:
                while after not in ended:
                    await asyncio.sleep(0)
            ended.append(name)
            if error:
                raise KubeError(error, 409)
            return name

        sent = together(call("a"), call("b"), call("c"))
        assert await asyncio.wait_for(sent, 30) == ["a", "b", "c"]
        everyone.clear()
        with pytest.raises(KubeError, match="refused") as raised:
            await together(call("d", "refused"), call("e", after="f"), call("f", "later"))
        return raised.value

    error = asyncio.run(scenario())
    # e ended last (after f): the failures waited for it; d's is the first in call order
    assert sorted(ended[3:]) == ["d", "e", "f"] and ended[-1] == "e" and error.status == 409

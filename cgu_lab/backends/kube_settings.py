"""Settings of the kubernetes backend, from `CGU_LAB_KUBE_*` environment variables.

They live apart from the controller's `Settings` because only this backend
reads them, and in the environment because the controller runs as a container
configured by its Deployment (see deploy/kubernetes/base/deployment.yaml).
Every value is checked here, once, so that a typo stops the controller at
start with a sentence instead of producing objects the API server refuses.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .base import BackendError

NOTEBOOK_CONTROLLERS = ("builtin", "kubeflow")
ENDPOINTS = ("service", "pod-ip")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_PREFIX = re.compile(r"^[a-z][a-z0-9-]{0,18}-$")
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$")
ENV_PREFIX = "CGU_LAB_KUBE_"
_NFS_SHARE = re.compile(r"^[A-Za-z0-9.-]+:/\S*$")

# Labels are written as the Deployment's env would have them, 'k=v,k2=v2', not JSON.
Labels = Annotated[dict[str, str], NoDecode]
# Networks likewise: '10.1.0.5/32,192.168.4.0/24'.
Networks = Annotated[tuple[str, ...], NoDecode]


def _labels(text: str) -> dict[str, str]:
    """'k=v,k2=v2' -> {'k': 'v', 'k2': 'v2'}."""
    pairs = [item.split("=", 1) for item in text.split(",") if item.strip()]
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"'{text}' is not a list of labels; write key=value,key2=value2")
    return {key.strip(): value.strip() for key, value in pairs}


def _sentence(error: ValidationError) -> str:
    """pydantic's report as the sentence an operator reads in the controller's log."""
    parts = []
    for item in error.errors():
        name = ".".join(map(str, item["loc"])) or "settings"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] in ("float_parsing", "int_parsing", "float_type", "int_type"):
            message = f"{ENV_PREFIX}{name.upper()} must be a number; got '{item['input']}'"
        parts.append(message)
    return "; ".join(parts)


class KubeSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="ignore")

    # Where the API server is: a kubeconfig file, or empty for the in-cluster
    # service account (then ~/.kube/config when not in a cluster).
    kubeconfig: str = ""
    # Namespaces ("profiles"): cgu-u-<user>, cgu-g-<group>.
    user_prefix: str = "cgu-u-"
    group_prefix: str = "cgu-g-"
    # "kubeflow": a user's namespace is named as Kubeflow names profiles
    # (kubeflow-<identity with every other character a '-'>: user@example.com ->
    # kubeflow-user-example-com) and a Profile's existing namespace owned by the user
    # is used as is; "cgu": user_prefix + the user name (the default, unchanged).
    namespace_naming: Literal["cgu", "kubeflow"] = "cgu"
    # "kubeflow": the server's base URL and NB_PREFIX are Kubeflow's
    # /notebook/<namespace>/<name>/, which Kubeflow's Istio route and web app open
    # (its links work past the first page); "cgu": /notebook/<owner>/<name>/, the path
    # the controller's proxy serves (the default, unchanged).
    notebook_paths: Literal["cgu", "kubeflow"] = "cgu"
    # Tells this platform's objects from another one's in the same cluster.
    installation: str = "default"
    # "kubeflow": Kubeflow's notebook-controller turns Notebooks into pods;
    # "builtin": we create the StatefulSet and Service it would have created.
    notebook_controller: str = "builtin"
    storage_class: str = ""  # of home volumes; empty for the cluster's default
    home_size: str = "10Gi"
    # Each user's course folders (lab files from teachers), mounted at ~/courses in all
    # of their notebooks: ReadWriteMany where notebooks run on several nodes.
    courses_size: str = "2Gi"
    courses_access_mode: Literal["ReadWriteOnce", "ReadWriteMany"] = "ReadWriteOnce"
    # Each user's personal storage, mounted at ~/storage (kube_storage says why and how).
    storage_size: str = "10Gi"
    storage_access_mode: Literal["ReadWriteOnce", "ReadWriteMany"] = "ReadWriteOnce"
    # Course storage: "server:/export" of an NFS share; empty: none is mounted.
    course_storage_nfs: str = ""
    # The image of the short-lived pods that copy files in and out of homes, when the
    # owner has no notebook to take it from (any cgu-lab notebook image holds the tool).
    files_image: str = ""
    # How notebook pods reach the controller's API (its Service), e.g.
    # http://cgu-lab-controller.cgu-lab.svc.cluster.local:8000
    controller_url: str = ""
    controller_namespace: str = "cgu-lab"
    controller_service_account: str = "cgu-lab-controller"
    controller_pod_labels: Labels = {"app.kubernetes.io/name": "cgu-lab-controller"}
    image_pull_policy: str = "IfNotPresent"
    # Kubeflow/Istio mode: notebooks trust this header (e.g. kubeflow-userid)
    # from the ingress gateway instead of the controller's proxy secret. Only
    # safe because the NetworkPolicy lets nothing else reach port 8888.
    ingress_header: str = ""
    ingress_namespace: str = "istio-system"
    ingress_pod_labels: Labels = {"app": "istio-ingressgateway"}
    # How the controller's proxy reaches a notebook: its Service's DNS name, or
    # the pod's IP (when the controller runs outside the cluster's DNS).
    endpoint: str = "service"
    # A controller outside the cluster: the addresses its requests come from, as the
    # pods see them. The NetworkPolicy admits them to port 8888 beside the controller's
    # pods; without them a cluster that enforces NetworkPolicies drops the controller's
    # own requests, and every start ends unreachable.
    controller_cidrs: Networks = ()
    cluster_domain: str = "cluster.local"
    start_timeout: float = 600.0  # image pulls of multi-GB CUDA images take minutes
    # Seconds a Ready notebook's address (its Service) may take to accept connections
    # before the start goes on without it; 0 skips the check.
    reachable_wait: float = 30.0
    stop_timeout: float = 30.0
    watch_timeout: int = 300  # seconds one watch request lasts before it is renewed
    # Seconds an idle tool pod (kube_pod_tool) waits for the next request on its volume
    # (the storage page's next chunk, folder or zip) before it is deleted.
    tool_pod_idle: float = Field(30.0, ge=0)
    # Restarts of a training job's failing containers (all its ranks together) before the
    # training operator marks the job Failed (its runPolicy.backoffLimit): a rank that
    # exits non-zero is retried a few times, never forever.
    training_backoff_limit: int = Field(3, ge=0, le=100)
    # Who queues training jobs: "kueue" (Kueue's ClusterQueues hold each course's GPU
    # budget, see kube_queues), "none" (the controller's own queue), or "auto": Kueue
    # where the cluster serves its API, which the backend asks once.
    training_queues: Literal["auto", "kueue", "none"] = "auto"
    notebook_uid: int = 1000  # jovyan in Jupyter's images
    notebook_gid: int = 100

    def __init__(self, **values: Any) -> None:
        """Checked once: a typo stops the controller with a sentence (a BackendError)."""
        try:
            super().__init__(**values)
        except ValidationError as error:
            raise BackendError(_sentence(error)) from None

    @field_validator("controller_pod_labels", "ingress_pod_labels", mode="before")
    @classmethod
    def _parse_labels(cls, value: Any) -> Any:
        return _labels(value) if isinstance(value, str) else value

    @field_validator("controller_cidrs", mode="before")
    @classmethod
    def _networks(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [item.strip() for item in value.split(",") if item.strip()]
        found = []
        for item in value:
            try:
                found.append(str(ipaddress.ip_network(item, strict=True)))
            except ValueError:
                raise ValueError(
                    f"{ENV_PREFIX}CONTROLLER_CIDRS: '{item}' is not a network; write an "
                    "address with its prefix length, e.g. 10.0.0.5/32 or 192.168.4.0/24"
                ) from None
        return tuple(found)

    @field_validator("course_storage_nfs")
    @classmethod
    def _nfs_share(cls, value: str) -> str:
        if value and not _NFS_SHARE.match(value):
            raise ValueError(
                f"{ENV_PREFIX}COURSE_STORAGE_NFS '{value}' is not an NFS share; "
                "write server:/export, e.g. nfs.school.edu:/exports/cgu-lab"
            )
        return value

    @field_validator("user_prefix", "group_prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        if not _PREFIX.match(value):
            raise ValueError(
                f"the namespace prefix '{value}' must be 2-20 lower-case "
                "letters, digits or '-', start with a letter and end with '-'"
            )
        return value

    @field_validator("installation")
    @classmethod
    def _installation(cls, value: str) -> str:
        if not _LABEL_VALUE.match(value):
            raise ValueError(f"installation '{value}' is not a valid label value")
        return value

    @model_validator(mode="after")
    def _choices(self) -> KubeSettings:
        if self.user_prefix.startswith(self.group_prefix) or self.group_prefix.startswith(
            self.user_prefix
        ):
            raise ValueError("user and group namespace prefixes must not overlap")
        for name, allowed in (
            ("notebook_controller", NOTEBOOK_CONTROLLERS),
            ("endpoint", ENDPOINTS),
            ("image_pull_policy", PULL_POLICIES),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f"{name} must be one of {', '.join(allowed)}; got '{getattr(self, name)}'"
                )
        return self

    @property
    def builtin(self) -> bool:
        """Whether we create StatefulSets and Services ourselves."""
        return self.notebook_controller == "builtin"

    def replace(self, **changes: Any) -> KubeSettings:
        """A copy with some values changed, checked like the original."""
        return type(self)(**{**self.model_dump(), **changes})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> KubeSettings:
        """Read CGU_LAB_KUBE_<FIELD> for every field set in `environ` (default: the process's)."""
        if environ is None:
            return cls()
        values = {
            name: environ[f"{ENV_PREFIX}{name.upper()}"]
            for name in cls.model_fields
            if f"{ENV_PREFIX}{name.upper()}" in environ
        }
        return cls(**values)

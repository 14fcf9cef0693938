"""What a user's or group's namespace (Kubeflow's "profile") holds besides its notebooks.

Made once per controller run for each namespace a start, a copy of files, the
storage page, a training job or a quota needs, by pure functions like those of
kube_objects:
- the Namespace, labelled as this installation's and annotated with its owner
  as Kubeflow's profiles are;
- a RoleBinding that lets the controller manage it (and nothing elsewhere);
- the ServiceAccount notebook pods run as, which mounts no API token;
- a NetworkPolicy by which only the controller, or the ingress gateway, reaches
  port 8888 of notebook servers;
- the ResourceQuota `kf-resource-quota` mirroring the platform quota.

`Namespaces` sends them: the one place that knows which namespaces this
controller run has prepared. The backend, its home files (kube_files) and its
storage page (kube_storage_files) all need a namespace ready before they write
in it, so each is given the backend's one `Namespaces`, which is given the
connection (kube_connection) and the settings, nothing else.
"""

from __future__ import annotations

import asyncio
import time

from ..core.quota import Limits
from . import kube_names as names
from . import kube_objects as objects
from . import kube_parts as parts
from .base import BackendError, QuotaSpec
from .kube_api import KubeError, together
from .kube_connection import Connection
from .kube_parts import Obj
from .kube_settings import KubeSettings

NETWORK_POLICY = "cgu-lab-notebooks"
CONTROLLER_BINDING = "cgu-lab-controller"
NAMESPACE_ROLE = "cgu-lab-namespace-manager"  # the ClusterRole in deploy/kubernetes/base
RBAC_SETTLE_SECONDS = 10.0


def namespace(name: str, subject: str, settings: KubeSettings, group: bool = False) -> Obj:
    """A profile namespace; `owner` is the annotation Kubeflow's profiles carry."""
    labels = parts.platform_labels(settings)
    labels[names.GROUP if group else names.USER] = names.slug(subject, 63)
    labels[names.PROFILE_PART_OF[0]] = names.PROFILE_PART_OF[1]
    # Notebook images run as a fixed non-root user; KubeVirt's launcher pods need
    # what `baseline` allows, so that is enforced and `restricted` only warned of.
    labels["pod-security.kubernetes.io/enforce"] = "baseline"
    labels["pod-security.kubernetes.io/warn"] = "restricted"
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": parts.object_meta(name, None, labels, annotations={"owner": subject}),
    }


def kubeflow_profile_of(existing: Obj, subject: str, settings: KubeSettings) -> bool:
    """Whether an existing namespace is the Kubeflow profile of `subject` (namespace naming
    "kubeflow"): Kubeflow's profile controller made it and annotated it with its owner.
    Used as it is, so that Kubeflow's web app and cgu-lab see the same notebooks; a
    profile of someone else is never taken, even where the names meet."""
    if settings.namespace_naming != "kubeflow":
        return False
    annotations = existing.get("metadata", {}).get("annotations") or {}
    return annotations.get("owner") == subject


def usable_by(existing: Obj, subject: str, settings: KubeSettings, group: bool = False) -> bool:
    """Whether an existing namespace may serve `subject` (a user, or a group): one this
    installation made for that very subject, or the user's Kubeflow profile. Being ours is
    not enough, for names meet (jane.doe and jane-doe both give kubeflow-jane-doe, as in
    Kubeflow) and two people must never share a namespace's notebooks and secrets."""
    if not objects.is_ours(existing, settings):
        return not group and kubeflow_profile_of(existing, subject, settings)
    meta = existing.get("metadata", {})
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    return annotations.get("owner") == subject and labels.get(
        names.GROUP if group else names.USER
    ) == names.slug(subject, 63)


def controller_role_binding(namespace_name: str, settings: KubeSettings) -> Obj:
    """Grants the controller the namespace-manager ClusterRole in this namespace only."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": parts.object_meta(
            CONTROLLER_BINDING, namespace_name, parts.platform_labels(settings)
        ),
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": NAMESPACE_ROLE,
        },
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": settings.controller_service_account,
                "namespace": settings.controller_namespace,
            }
        ],
    }


def notebook_service_account(namespace_name: str, settings: KubeSettings) -> Obj:
    """Notebook pods run as this account, which mounts no API token: students' code
    has no business with the Kubernetes API."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": parts.object_meta(
            objects.NOTEBOOK_SERVICE_ACCOUNT, namespace_name, parts.platform_labels(settings)
        ),
        "automountServiceAccountToken": False,
    }


def network_policy(namespace_name: str, settings: KubeSettings) -> Obj:
    """Only the controller's pods or addresses (and, in ingress-header mode, the ingress
    gateway) reach notebook servers. This is what makes the identity headers trustworthy:
    nothing else can send a request to port 8888 at all. Training pods are not
    selected, so their workers still reach one another."""
    peers: list[Obj] = [
        {
            "namespaceSelector": {
                "matchLabels": {"kubernetes.io/metadata.name": settings.controller_namespace}
            },
            "podSelector": {"matchLabels": dict(settings.controller_pod_labels)},
        }
    ]
    if settings.ingress_header:
        peers.append(
            {
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": settings.ingress_namespace}
                },
                "podSelector": {"matchLabels": dict(settings.ingress_pod_labels)},
            }
        )
    # a controller outside the cluster (KubeSettings.controller_cidrs)
    peers += [{"ipBlock": {"cidr": cidr}} for cidr in settings.controller_cidrs]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": parts.object_meta(
            NETWORK_POLICY, namespace_name, parts.platform_labels(settings)
        ),
        "spec": {
            "podSelector": {
                "matchLabels": {names.MANAGED_BY: names.PLATFORM},
                "matchExpressions": [
                    {"key": names.COMPONENT, "operator": "In", "values": ["notebook", "vm"]}
                ],
            },
            "policyTypes": ["Ingress"],
            "ingress": [
                {"from": peers, "ports": [{"protocol": "TCP", "port": objects.NOTEBOOK_PORT}]}
            ],
        },
    }


def quota_hard(quota: QuotaSpec) -> dict[str, str]:
    """The platform limits as ResourceQuota keys. Extended resources (GPUs) take
    only `requests.` keys; GPU types sharing a resource name add up; a running
    notebook is one pod."""
    limits: Limits = quota.limits
    hard: dict[str, str] = {}
    if limits.cpu_milli is not None:
        hard["requests.cpu"] = parts.cpu_quantity(limits.cpu_milli)
    if limits.memory is not None:
        hard["requests.memory"] = parts.memory_quantity(limits.memory)
    if limits.gpus is not None:
        per_resource: dict[str, int] = {}
        for gpu_type, resource in quota.gpu_resources.items():
            per_resource[resource] = per_resource.get(resource, 0) + (
                limits.gpu_limit(gpu_type) or 0
            )
        for resource, count in sorted(per_resource.items()):
            hard[f"requests.{resource}"] = str(count)
    if limits.notebooks is not None:
        hard["pods"] = str(limits.notebooks)
    return hard


def resource_quota(namespace_name: str, quota: QuotaSpec, settings: KubeSettings) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": parts.object_meta(
            names.QUOTA_NAME, namespace_name, parts.platform_labels(settings)
        ),
        # Only long-running pods count (notebooks, their servers, training workers): the
        # pods that copy files (kube_files) carry a deadline, and a student whose notebooks
        # use the whole quota must still be able to submit. Copies are bounded on their own.
        "spec": {"hard": quota_hard(quota), "scopes": ["NotTerminating"]},
    }


class Namespaces:
    """The namespaces this controller run has made ready (given the connection and the
    settings): each is made ours and usable once, its quota mirrored whenever asked."""

    def __init__(self, cluster: Connection, settings: KubeSettings) -> None:
        self.cluster = cluster
        self.settings = settings
        self._ready: set[str] = set()  # prepared since this controller started

    async def ensure(
        self, name: str, subject: str, group: bool = False, quota: QuotaSpec | None = None
    ) -> None:
        """Make the namespace `name` ours and usable once per controller run; mirror `quota`."""
        api, settings = self.cluster.api, self.settings
        if name not in self._ready:
            built = namespace(name, subject, settings, group)
            if await api.create(built, True) is None:
                existing = await api.get("Namespace", name) or {}
                if objects.is_ours(existing, settings) and not usable_by(
                    existing, subject, settings, group
                ):
                    owner = (existing.get("metadata", {}).get("annotations") or {}).get("owner")
                    raise BackendError(
                        f"the namespace {name} is {owner or 'someone else'}'s: their name "
                        f"and {subject} give the same namespace; an administrator renames one"
                    )
                if not usable_by(existing, subject, settings, group):
                    raise BackendError(
                        f"the namespace {name} exists but does not belong to this platform "
                        f"(installation '{settings.installation}'); rename it or change the prefix"
                    )
                if existing.get("status", {}).get("phase") == "Terminating":
                    raise BackendError(f"the namespace {name} is being deleted; try later")
            await api.create(controller_role_binding(name, settings), True)
            # The namespace's objects, sent at once once the binding lets us write there.
            first = [notebook_service_account(name, settings), network_policy(name, settings)]
            if quota is not None:
                first.append(resource_quota(name, quota, settings))
            await together(*(self._apply_when_permitted(obj) for obj in first))
            self._ready.add(name)
        elif quota is not None:
            await api.apply(resource_quota(name, quota, settings))

    async def _apply_when_permitted(self, obj: Obj) -> None:
        """The first write after binding our role waits for RBAC to see the binding."""
        deadline = time.monotonic() + RBAC_SETTLE_SECONDS
        while True:
            try:
                await self.cluster.api.apply(obj)
                return
            except KubeError as error:
                if error.status != 403 or time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.1)

"""Kubernetes objects of the platform, built by pure functions.

Like kubespawner's objects.py: every function takes plain values and returns
the object as the dict the API server receives (camelCase, no client models),
so each one is unit-tested and schema-validated without a cluster and the
backend only decides which to send when.

What a notebook is made of, in its owner's namespace ("profile"):
- Namespace + RoleBinding (lets the controller manage it) + ServiceAccount
  for notebook pods (no API token mounted) + NetworkPolicy (only the
  controller, or the ingress gateway, reaches port 8888) + ResourceQuota
  `kf-resource-quota` mirroring the platform quota;
- a Kubeflow `Notebook` (kubeflow.org/v1) whose pod template runs JupyterLab
  with the platform's identity provider, authorizer and contents manager;
- its Secret (proxy secret and API token, read by the pod as env vars, never
  written into the template) and its home PersistentVolumeClaim;
- without Kubeflow's notebook-controller: the StatefulSet and Service that
  controller would make from the Notebook, owned by it;
- or, for a VM notebook, a KubeVirt VirtualMachine booting an image that runs
  JupyterLab, configured by cloud-init from the same Secret.
A training job is a Kubeflow PyTorchJob.

Stopping follows Kubeflow: the annotation `kubeflow-resource-stopped` scales
the notebook to zero and keeps everything else, above all the home volume.
"""

from __future__ import annotations

import base64
import copy
import math
from collections.abc import Mapping
from typing import Any

import yaml

from ..core.quota import Limits
from . import kube_names as names
from .base import NotebookSpec, QuotaSpec, TrainingSpec
from .kube_settings import KubeSettings
from .local import AUTHORIZER, CONTENTS_MANAGER, IDENTITY_PROVIDER

NOTEBOOK_PORT = 8888
SERVICE_PORT = 80
HOME = "/home/jovyan"
SHM = "/dev/shm"  # noqa: S108 - a mount point inside the pod, for PyTorch's DataLoader workers
NOTEBOOK_SERVICE_ACCOUNT = "cgu-notebook"
NETWORK_POLICY = "cgu-lab-notebooks"
CONTROLLER_BINDING = "cgu-lab-controller"
NAMESPACE_ROLE = "cgu-lab-namespace-manager"  # the ClusterRole in deploy/kubernetes/base
SECRET_KEYS = {"CGU_PROXY_SECRET": "proxy-secret", "CGU_API_TOKEN": "api-token"}
Obj = dict[str, Any]


# -- quantities and small parts ---------------------------------------------------


def cpu_quantity(milli: int) -> str:
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


def memory_quantity(size: int) -> str:
    for unit, factor in (("Gi", 2**30), ("Mi", 2**20)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def _metadata(name: str, namespace: str | None, labels: Mapping[str, str], **extra: Any) -> Obj:
    meta: Obj = {"name": name, "labels": dict(labels)}
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update({key: value for key, value in extra.items() if value})
    return meta


def platform_labels(settings: KubeSettings, component: str | None = None) -> dict[str, str]:
    """The labels that make an object this installation's (what watches select on)."""
    labels = {names.MANAGED_BY: names.PLATFORM, names.INSTALLATION: settings.installation}
    if component:
        labels[names.COMPONENT] = component
    return labels


def owner_reference(owner: Obj) -> Obj:
    """Makes the object garbage-collected with `owner` (which must have been created)."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }


def _resources(cpu_milli: int, memory: int, gpus: int, gpu_resource: str) -> Obj:
    """Requests equal to limits: what the quota counts is what the pod holds."""
    amounts = {"cpu": cpu_quantity(cpu_milli), "memory": memory_quantity(memory)}
    if gpus:
        amounts[gpu_resource] = str(gpus)
    return {"requests": dict(amounts), "limits": dict(amounts)}


def _gpu_tolerations() -> list[Obj]:
    """GPU nodes are commonly tainted nvidia.com/gpu:NoSchedule to keep CPU pods off."""
    return [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def _quoted_env(env: Mapping[str, str]) -> str:
    """An environment file systemd reads (EnvironmentFile=), values quoted."""
    lines = []
    for key, value in env.items():
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'{key}="{escaped}"')
    return "\n".join(lines) + "\n"


# -- a user's or group's namespace -------------------------------------------------


def namespace(name: str, subject: str, settings: KubeSettings, group: bool = False) -> Obj:
    """A profile namespace; `owner` is the annotation Kubeflow's profiles carry."""
    labels = platform_labels(settings)
    labels[names.GROUP if group else names.USER] = names.slug(subject, 63)
    labels[names.PROFILE_PART_OF[0]] = names.PROFILE_PART_OF[1]
    # Notebook images run as a fixed non-root user; KubeVirt's launcher pods need
    # what `baseline` allows, so that is enforced and `restricted` only warned of.
    labels["pod-security.kubernetes.io/enforce"] = "baseline"
    labels["pod-security.kubernetes.io/warn"] = "restricted"
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": _metadata(name, None, labels, annotations={"owner": subject}),
    }


def is_ours(obj: Obj, settings: KubeSettings) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    return (
        labels.get(names.MANAGED_BY) == names.PLATFORM
        and labels.get(names.INSTALLATION) == settings.installation
    )


def controller_role_binding(namespace_name: str, settings: KubeSettings) -> Obj:
    """Grants the controller the namespace-manager ClusterRole in this namespace only."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": _metadata(CONTROLLER_BINDING, namespace_name, platform_labels(settings)),
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
        "metadata": _metadata(NOTEBOOK_SERVICE_ACCOUNT, namespace_name, platform_labels(settings)),
        "automountServiceAccountToken": False,
    }


def network_policy(namespace_name: str, settings: KubeSettings) -> Obj:
    """Only the controller's pods (and, in ingress-header mode, the ingress gateway)
    reach notebook servers. This is what makes the identity headers trustworthy:
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
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _metadata(NETWORK_POLICY, namespace_name, platform_labels(settings)),
        "spec": {
            "podSelector": {
                "matchLabels": {names.MANAGED_BY: names.PLATFORM},
                "matchExpressions": [
                    {"key": names.COMPONENT, "operator": "In", "values": ["notebook", "vm"]}
                ],
            },
            "policyTypes": ["Ingress"],
            "ingress": [{"from": peers, "ports": [{"protocol": "TCP", "port": NOTEBOOK_PORT}]}],
        },
    }


def quota_hard(quota: QuotaSpec) -> dict[str, str]:
    """The platform limits as ResourceQuota keys. Extended resources (GPUs) take
    only `requests.` keys; GPU types sharing a resource name add up; a running
    notebook is one pod."""
    limits: Limits = quota.limits
    hard: dict[str, str] = {}
    if limits.cpu_milli is not None:
        hard["requests.cpu"] = cpu_quantity(limits.cpu_milli)
    if limits.memory is not None:
        hard["requests.memory"] = memory_quantity(limits.memory)
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
        "metadata": _metadata(names.QUOTA_NAME, namespace_name, platform_labels(settings)),
        "spec": {"hard": quota_hard(quota)},
    }


# -- one notebook --------------------------------------------------------------------


def notebook_labels(
    ref: names.ObjectRef, spec: NotebookSpec, settings: KubeSettings, component: str
) -> dict[str, str]:
    labels = platform_labels(settings, component)
    labels.update(
        {
            names.NOTEBOOK_ID: str(spec.id),
            names.USER: names.slug(spec.owner, 63),
            "app": ref.name,
            names.NOTEBOOK_NAME: ref.name,
        }
    )
    return labels


def _notebook_annotations(spec: NotebookSpec, server_type: str) -> dict[str, str]:
    return {
        names.CREATOR: spec.owner,
        names.SERVER_TYPE: server_type,
        names.OWNER: spec.owner,
        names.NOTEBOOK: spec.name,
    }


def notebook_args(spec: NotebookSpec, settings: KubeSettings) -> list[str]:
    """JupyterLab's command line: the same platform classes as the local backend's."""
    args = [
        "--no-browser",
        "--ServerApp.ip=0.0.0.0",
        f"--ServerApp.port={NOTEBOOK_PORT}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.base_url={spec.base_path}",
        f"--ServerApp.root_dir={HOME}",
        "--ServerApp.allow_remote_access=True",
        f"--ServerApp.identity_provider_class={IDENTITY_PROVIDER}",
        f"--ServerApp.authorizer_class={AUTHORIZER}",
        f"--ServerApp.contents_manager_class={CONTENTS_MANAGER}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if settings.ingress_header:
        args.append(f"--ProxyIdentityProvider.trusted_header={settings.ingress_header}")
    return args


def notebook_env(spec: NotebookSpec, settings: KubeSettings) -> dict[str, str]:
    """The local backend's notebook environment, less what belongs to one machine
    (paths, CUDA_VISIBLE_DEVICES: the device plugin assigns GPUs here) and less
    the secrets, which `secret_env` takes from the Secret."""
    return {
        "HOME": HOME,
        "NB_PREFIX": spec.base_path.rstrip("/"),  # what Kubeflow's images expect
        "CGU_NOTEBOOK_ID": str(spec.id),
        "CGU_NOTEBOOK_OWNER": spec.owner,
        "CGU_NOTEBOOK_NAME": spec.name,
        "CGU_CONTROLLER_URL": settings.controller_url or spec.controller_url,
        "CGU_PUBLIC_URL": spec.public_url,
        "CGU_CPU_LIMIT": str(spec.cpu_milli / 1000),
        "CGU_MEM_LIMIT": str(spec.memory),
        "CGU_GPU_TYPE": spec.gpu_type or "",
    }


def _secret_values(spec: NotebookSpec, settings: KubeSettings) -> dict[str, str]:
    """Environment name -> value of the notebook's secrets. In ingress-header mode
    there is no proxy secret: the notebook then trusts the ingress header instead."""
    values = {"CGU_API_TOKEN": spec.api_token}
    if not settings.ingress_header:
        values["CGU_PROXY_SECRET"] = spec.proxy_secret
    return values


def secret_env(ref: names.ObjectRef, spec: NotebookSpec, settings: KubeSettings) -> list[Obj]:
    return [
        {
            "name": env_name,
            "valueFrom": {"secretKeyRef": {"name": ref.secret, "key": SECRET_KEYS[env_name]}},
        }
        for env_name in _secret_values(spec, settings)
    ]


def notebook_pod_spec(ref: names.ObjectRef, spec: NotebookSpec, settings: KubeSettings) -> Obj:
    env = [{"name": key, "value": value} for key, value in notebook_env(spec, settings).items()]
    container = {
        # Kubeflow's notebook-controller reports the container named like the Notebook.
        "name": ref.name,
        "image": spec.environment.image,
        "imagePullPolicy": settings.image_pull_policy,
        "command": ["jupyter", "lab"],
        "args": notebook_args(spec, settings),
        "workingDir": HOME,
        "env": env + secret_env(ref, spec, settings),
        "ports": [{"name": "notebook-port", "containerPort": NOTEBOOK_PORT, "protocol": "TCP"}],
        "resources": _resources(spec.cpu_milli, spec.memory, spec.gpus, spec.gpu_resource),
        # /api/status needs the proxy secret, which a probe cannot carry; a listening
        # port is what "JupyterLab is up" means to the controller's proxy anyway.
        "readinessProbe": {
            "tcpSocket": {"port": NOTEBOOK_PORT},
            "periodSeconds": 2,
            "failureThreshold": 3,
        },
        "volumeMounts": [
            {"name": "home", "mountPath": HOME},
            {"name": "dshm", "mountPath": SHM},
        ],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
    }
    pod: Obj = {
        "serviceAccountName": NOTEBOOK_SERVICE_ACCOUNT,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": settings.notebook_uid,
            "runAsGroup": settings.notebook_gid,
            "fsGroup": settings.notebook_gid,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": [
            {"name": "home", "persistentVolumeClaim": {"claimName": ref.home}},
            {"name": "dshm", "emptyDir": {"medium": "Memory"}},
        ],
    }
    if spec.node_selector:
        pod["nodeSelector"] = dict(spec.node_selector)
    if spec.gpus:
        pod["tolerations"] = _gpu_tolerations()
    return pod


def notebook(
    ref: names.ObjectRef,
    spec: NotebookSpec,
    settings: KubeSettings,
    stopped_at: str | None = None,
) -> Obj:
    """The Kubeflow Notebook; with `stopped_at` it is created (or held) stopped.

    Only what Kubeflow's own CRD declares: its NotebookTemplateSpec has a pod
    `spec` and no `metadata` (server-side apply refuses any other field), and
    its notebook-controller gives the pod the Notebook's own labels, as
    `statefulset()` does in builtin mode. So one Notebook serves both modes."""
    labels = notebook_labels(ref, spec, settings, "notebook")
    annotations = _notebook_annotations(spec, "jupyter")
    if stopped_at:
        annotations[names.STOPPED] = stopped_at
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "Notebook",
        "metadata": _metadata(ref.name, ref.namespace, labels, annotations=annotations),
        "spec": {"template": {"spec": notebook_pod_spec(ref, spec, settings)}},
    }


def is_stopped(obj: Obj) -> bool:
    """A Notebook carrying Kubeflow's stop annotation, or a halted VirtualMachine
    (objects from list calls carry no `kind`, so the VM is known by its spec)."""
    if "runStrategy" in obj.get("spec", {}):
        return obj["spec"]["runStrategy"] == "Halted"
    return names.STOPPED in (obj.get("metadata", {}).get("annotations") or {})


def stop_patch(when: str) -> Obj:
    """Merge patch that stops a Notebook the way Kubeflow's culler does."""
    return {"metadata": {"annotations": {names.STOPPED: when}}}


def resume_patch() -> Obj:
    """Merge patch that removes the stop annotation, whoever wrote it."""
    return {"metadata": {"annotations": {names.STOPPED: None}}}


def activity_patch(when: str) -> Obj:
    return {"metadata": {"annotations": {names.LAST_ACTIVITY: when}}}


def scale_patch(replicas: int) -> Obj:
    return {"spec": {"replicas": replicas}}


def run_strategy_patch(strategy: str) -> Obj:
    return {"spec": {"runStrategy": strategy}}


def notebook_secret(
    ref: names.ObjectRef, spec: NotebookSpec, settings: KubeSettings, owner: Obj
) -> Obj:
    """The notebook's secrets; a VM's also carry its cloud-init user data."""
    values = {
        SECRET_KEYS[env_name]: value for env_name, value in _secret_values(spec, settings).items()
    }
    if spec.kind == "vm":
        values["userdata"] = vm_user_data(spec, settings)
    metadata = _metadata(
        ref.secret,
        ref.namespace,
        notebook_labels(ref, spec, settings, "secrets"),
        ownerReferences=[owner_reference(owner)],
    )
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": metadata,
        # `data`, not `stringData`: server-side apply tracks `data` keys exactly.
        "data": {key: base64.b64encode(value.encode()).decode() for key, value in values.items()},
    }


def home_claim(ref: names.ObjectRef, spec: NotebookSpec, settings: KubeSettings) -> Obj:
    """The home volume. Not owned by the Notebook: deleting a Notebook by hand must
    not take the student's files with it; only `remove_storage` deletes it."""
    claim: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": _metadata(
            ref.home,
            ref.namespace,
            notebook_labels(ref, spec, settings, "home"),
            annotations={names.OWNER: spec.owner, names.NOTEBOOK: spec.name},
        ),
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": settings.home_size}},
        },
    }
    if settings.storage_class:
        claim["spec"]["storageClassName"] = settings.storage_class
    return claim


def statefulset(notebook_obj: Obj) -> Obj:
    """What Kubeflow's notebook-controller makes of a Notebook: one replica
    (zero while stopped), pods carrying the Notebook's labels plus
    statefulset=<name>, owned by the Notebook."""
    meta = notebook_obj["metadata"]
    name = meta["name"]
    labels = dict(meta.get("labels") or {})
    labels.update({names.STATEFULSET: name, names.NOTEBOOK_NAME: name})
    template = {
        "metadata": {"labels": labels},
        "spec": copy.deepcopy(notebook_obj["spec"]["template"]["spec"]),
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _metadata(
            name,
            meta["namespace"],
            meta.get("labels", {}),
            ownerReferences=[owner_reference(notebook_obj)],
        ),
        "spec": {
            "replicas": 0 if is_stopped(notebook_obj) else 1,
            "selector": {"matchLabels": {names.STATEFULSET: name}},
            "serviceName": name,
            "template": template,
        },
    }


def service(owner: Obj) -> Obj:
    """Port 80 to the server's 8888, as Kubeflow names it (`http-<name>`); selects
    the notebook-name label that notebook pods and VM launcher pods both carry."""
    meta = owner["metadata"]
    name = meta["name"]
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(
            name,
            meta["namespace"],
            meta.get("labels", {}),
            ownerReferences=[owner_reference(owner)],
        ),
        "spec": {
            "type": "ClusterIP",
            "selector": {names.NOTEBOOK_NAME: name},
            "ports": [
                {
                    "name": f"http-{name}",
                    "port": SERVICE_PORT,
                    "targetPort": NOTEBOOK_PORT,
                    "protocol": "TCP",
                }
            ],
        },
    }


# -- VM notebooks (KubeVirt) ----------------------------------------------------------


def vm_user_data(spec: NotebookSpec, settings: KubeSettings) -> str:
    """cloud-init for a VM notebook: format and mount the home disk once, write the
    environment (secrets included, mode 0600) and a systemd unit running JupyterLab
    as jovyan with the same command line as a pod. The image needs only JupyterLab,
    cgu_lab and a jovyan account."""
    env = dict(notebook_env(spec, settings))
    env.update(_secret_values(spec, settings))
    unit = "\n".join(
        [
            "[Unit]",
            "Description=cgu-lab notebook server",
            "After=network-online.target home-jovyan.mount",
            "[Service]",
            "User=jovyan",
            f"WorkingDirectory={HOME}",
            "EnvironmentFile=/etc/cgu-lab/notebook.env",
            "ExecStart=/usr/bin/env jupyter lab " + " ".join(notebook_args(spec, settings)),
            "Restart=on-failure",
            "[Install]",
            "WantedBy=multi-user.target",
            "",
        ]
    )
    config = {
        "fs_setup": [
            {
                "label": "home",
                "filesystem": "ext4",
                "device": "/dev/disk/by-id/virtio-home",
                "overwrite": False,
            }
        ],
        "mounts": [["LABEL=home", HOME, "ext4", "defaults,nofail", "0", "2"]],
        "write_files": [
            {
                "path": "/etc/cgu-lab/notebook.env",
                "permissions": "0600",
                "content": _quoted_env(env),
            },
            {"path": "/etc/systemd/system/cgu-lab-notebook.service", "content": unit},
        ],
        "runcmd": [
            ["chown", f"{settings.notebook_uid}:{settings.notebook_gid}", HOME],
            ["systemctl", "daemon-reload"],
            ["systemctl", "enable", "--now", "cgu-lab-notebook.service"],
        ],
    }
    return "#cloud-config\n" + yaml.safe_dump(config, sort_keys=False)


def virtual_machine(
    ref: names.ObjectRef, spec: NotebookSpec, settings: KubeSettings, running: bool
) -> Obj:
    """A KubeVirt VM notebook: runStrategy Always to run, Halted to stop; the image
    is a containerDisk, the home a second disk on the same PVC a pod would use,
    GPUs passed through by resource name; ready when JupyterLab listens."""
    labels = notebook_labels(ref, spec, settings, "vm")
    cpu = cpu_quantity(spec.cpu_milli)
    memory = memory_quantity(spec.memory)
    devices: Obj = {
        "disks": [
            {"name": "rootdisk", "disk": {"bus": "virtio"}},
            {"name": "home", "disk": {"bus": "virtio"}, "serial": "home"},
            {"name": "cloudinit", "disk": {"bus": "virtio"}},
        ],
        "interfaces": [{"name": "default", "masquerade": {}}],
    }
    if spec.gpus:
        devices["gpus"] = [
            {"name": f"gpu{index}", "deviceName": spec.gpu_resource} for index in range(spec.gpus)
        ]
    template_spec: Obj = {
        "domain": {
            "cpu": {"cores": max(1, math.ceil(spec.cpu_milli / 1000))},
            "memory": {"guest": memory},
            "resources": {"requests": {"cpu": cpu, "memory": memory}},
            "devices": devices,
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [
            {
                "name": "rootdisk",
                "containerDisk": {
                    "image": spec.environment.image,
                    "imagePullPolicy": settings.image_pull_policy,
                },
            },
            {"name": "home", "persistentVolumeClaim": {"claimName": ref.home}},
            {"name": "cloudinit", "cloudInitNoCloud": {"secretRef": {"name": ref.secret}}},
        ],
        "readinessProbe": {
            "tcpSocket": {"port": NOTEBOOK_PORT},
            "initialDelaySeconds": 10,
            "periodSeconds": 5,
        },
    }
    if spec.node_selector:
        template_spec["nodeSelector"] = dict(spec.node_selector)
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": _metadata(
            ref.name, ref.namespace, labels, annotations=_notebook_annotations(spec, "vm")
        ),
        "spec": {
            "runStrategy": "Always" if running else "Halted",
            "template": {"metadata": {"labels": labels}, "spec": template_spec},
        },
    }


# -- training jobs (Kubeflow PyTorchJob) ------------------------------------------------


def pytorch_job(ref: names.ObjectRef, job: TrainingSpec, settings: KubeSettings) -> Obj:
    """One Master and `workers` Workers, each a container named `pytorch` (the
    training operator looks for that name) with the job's resources."""
    labels = platform_labels(settings, "training")
    labels[names.USER] = names.slug(job.owner, 63)

    def replica(count: int) -> Obj:
        container = {
            "name": "pytorch",
            "image": job.image,
            "imagePullPolicy": settings.image_pull_policy,
            "command": list(job.command),
            "env": [{"name": key, "value": value} for key, value in job.env.items()],
            "resources": _resources(job.cpu_milli, job.memory, job.gpus, job.gpu_resource),
            "volumeMounts": [{"name": "dshm", "mountPath": SHM}],
            "securityContext": {"allowPrivilegeEscalation": False},
        }
        pod: Obj = {
            "serviceAccountName": NOTEBOOK_SERVICE_ACCOUNT,
            "automountServiceAccountToken": False,
            "containers": [container],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
        }
        if job.node_selector:
            pod["nodeSelector"] = dict(job.node_selector)
        if job.gpus:
            pod["tolerations"] = _gpu_tolerations()
        return {
            "replicas": count,
            "restartPolicy": "OnFailure",
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        }

    replicas = {"Master": replica(1)}
    if job.workers:
        replicas["Worker"] = replica(job.workers)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": _metadata(
            ref.name,
            ref.namespace,
            labels,
            annotations={names.OWNER: job.owner, "cgu-lab.io/job": job.name},
        ),
        "spec": {
            "runPolicy": {"cleanPodPolicy": job.clean_pod_policy},
            "pytorchReplicaSpecs": replicas,
        },
    }

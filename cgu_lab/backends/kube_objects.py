"""Kubernetes objects of a notebook, built by pure functions.

Like kubespawner's objects.py: every function takes plain values and returns
the object as the dict the API server receives (camelCase, no client models),
so each one is unit-tested and schema-validated without a cluster and the
backend only decides which to send when. The namespace a notebook lives in is
built by kube_namespaces, its Service (and StatefulSet) by kube_companions, a
training job by kube_training, its storage mounts by kube_storage; the small
parts they all share (metadata, labels, claims, security) by kube_parts, one
floor below every one of them.

What a notebook is made of, in its owner's namespace ("profile"):
- a Kubeflow `Notebook` (kubeflow.org/v1) whose pod template runs JupyterLab
  with the platform's identity provider, authorizer and contents manager;
- its Secret (proxy secret and API token, read by the pod as env vars, never
  written into the template) and its home PersistentVolumeClaim;
- or, for a VM notebook, a KubeVirt VirtualMachine booting an image that runs
  JupyterLab, configured by cloud-init from the same Secret.

Stopping follows Kubeflow: the annotation `kubeflow-resource-stopped` scales
the notebook to zero and keeps everything else, above all the home volume.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import Any

import yaml

from . import kube_names as names
from . import kube_parts as parts
from . import kube_storage
from .base import (
    AUTHORIZER,
    CONTENTS_MANAGER,
    IDENTITY_PROVIDER,
    NotebookSpec,
    kernel_culling_args,
)
from .kube_settings import KubeSettings

NOTEBOOK_PORT = 8888
SERVICE_PORT = 80
HOME = "/home/jovyan"
SHM = "/dev/shm"  # noqa: S108 - a mount point inside the pod, for PyTorch's DataLoader workers
NOTEBOOK_SERVICE_ACCOUNT = "cgu-notebook"
SECRET_KEYS = {"CGU_PROXY_SECRET": "proxy-secret", "CGU_API_TOKEN": "api-token"}
Obj = dict[str, Any]


# -- quantities and small parts ---------------------------------------------------


def is_ours(obj: Obj, settings: KubeSettings) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    return (
        labels.get(names.MANAGED_BY) == names.PLATFORM
        and labels.get(names.INSTALLATION) == settings.installation
    )


def _quoted_env(env: Mapping[str, str]) -> str:
    """An environment file systemd reads (EnvironmentFile=), values quoted."""
    lines = []
    for key, value in env.items():
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'{key}="{escaped}"')
    return "\n".join(lines) + "\n"


# -- one notebook --------------------------------------------------------------------


def notebook_labels(
    ref: names.ObjectRef, spec: NotebookSpec, settings: KubeSettings, component: str
) -> dict[str, str]:
    labels = parts.platform_labels(settings, component)
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


def kubeflow_path(owner: str, name: str, settings: KubeSettings) -> str | None:
    """Kubeflow's `/notebook/<namespace>/<name>/` (with the Kubeflow object name) when
    notebook_paths is "kubeflow"; None where the server answers at the controller's path.
    Kubeflow's Istio route sends that path as is, and JupyterLab's own links stay under
    it, where a rewrite to another base URL let only the first page load."""
    if settings.notebook_paths != "kubeflow":
        return None
    ref = names.Naming(
        settings.user_prefix,
        settings.group_prefix,
        kubeflow=settings.namespace_naming == "kubeflow",
    ).notebook(owner, name)
    return f"/notebook/{ref.namespace}/{ref.name}/"


def server_path(spec: NotebookSpec, settings: KubeSettings) -> str:
    """The path the notebook server answers at (its base URL and NB_PREFIX): Kubeflow's
    (kubeflow_path) or the controller's `/notebook/<owner>/<name>/`, which its proxy
    forwards unchanged."""
    return kubeflow_path(spec.owner, spec.name, settings) or spec.base_path


def notebook_args(spec: NotebookSpec, settings: KubeSettings) -> list[str]:
    """JupyterLab's command line: the same platform classes as the local backend's."""
    args = [
        "--no-browser",
        "--ServerApp.ip=0.0.0.0",
        f"--ServerApp.port={NOTEBOOK_PORT}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.base_url={server_path(spec, settings)}",
        f"--ServerApp.root_dir={HOME}",
        "--ServerApp.allow_remote_access=True",
        f"--ServerApp.identity_provider_class={IDENTITY_PROVIDER}",
        f"--ServerApp.authorizer_class={AUTHORIZER}",
        f"--ServerApp.contents_manager_class={CONTENTS_MANAGER}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        *kernel_culling_args(spec.kernel_culling),
    ]
    if settings.ingress_header:
        args.append(f"--ProxyIdentityProvider.trusted_header={settings.ingress_header}")
    return args


def notebook_env(spec: NotebookSpec, settings: KubeSettings) -> dict[str, str]:
    """The local backend's notebook environment, less what belongs to one machine
    (paths, CUDA_VISIBLE_DEVICES: the device plugin assigns GPUs here) and less
    the secrets, which `secret_env` takes from the Secret."""
    disk = spec.quota.limits.disk if spec.quota is not None else None
    return {
        "HOME": HOME,
        # What Kubeflow's images and web app expect: the path the server answers at.
        "NB_PREFIX": server_path(spec, settings).rstrip("/"),
        "CGU_NOTEBOOK_ID": str(spec.id),
        "CGU_NOTEBOOK_OWNER": spec.owner,
        "CGU_NOTEBOOK_NAME": spec.name,
        "CGU_CONTROLLER_URL": settings.controller_url or spec.controller_url,
        "CGU_PUBLIC_URL": spec.public_url,
        "CGU_CPU_LIMIT": str(spec.cpu_milli / 1000),
        "CGU_MEM_LIMIT": str(spec.memory),
        "CGU_GPU_TYPE": spec.gpu_type or "",
        # The apps beside JupyterLab (cgu_lab/notebook/apps): the environment's list.
        "CGU_APPS": spec.environment.apps,
        # The owner's disk allowance in bytes ("": none); uploads past it are refused.
        "CGU_DISK_ALLOWANCE": "" if disk is None else str(disk),
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
        "resources": parts.container_resources(
            spec.cpu_milli, spec.memory, spec.gpus, spec.gpu_resource
        ),
        # /api/status needs the proxy secret, which a probe cannot carry; a listening
        # port is what "JupyterLab is up" means to the controller's proxy anyway.
        "readinessProbe": {
            "tcpSocket": {"port": NOTEBOOK_PORT},
            "periodSeconds": 2,
            "failureThreshold": 3,
        },
        "volumeMounts": [
            {"name": "home", "mountPath": HOME},
            {"name": "courses", "mountPath": f"{HOME}/courses"},
            {"name": "dshm", "mountPath": SHM},
        ],
        "securityContext": parts.container_security(),
    }
    pod: Obj = {
        "serviceAccountName": NOTEBOOK_SERVICE_ACCOUNT,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": parts.pod_security(settings),
        "containers": [container],
        "volumes": [
            {"name": "home", "persistentVolumeClaim": {"claimName": ref.home}},
            {"name": "courses", "persistentVolumeClaim": {"claimName": names.COURSES_CLAIM}},
            {"name": "dshm", "emptyDir": {"medium": "Memory"}},
        ],
    }
    volumes, mounts = kube_storage.mounts(spec, settings, HOME)  # ~/storage, course storage
    container["volumeMounts"] += mounts
    pod["volumes"] += volumes
    if spec.node_selector:
        pod["nodeSelector"] = dict(spec.node_selector)
    affinity = parts.node_affinity(spec.node_affinity, spec.environment.arch)
    if affinity:
        pod["affinity"] = affinity
    if spec.gpus:
        pod["tolerations"] = parts.gpu_tolerations()
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
    # The chosen PodDefaults' selector labels first: the platform's own labels win.
    labels = {**spec.pod_labels, **notebook_labels(ref, spec, settings, "notebook")}
    annotations = _notebook_annotations(spec, "jupyter")
    # Kubeflow's notebook-controller routes /notebook/<namespace>/<name>/ through Istio to
    # the pod, rewritten to this path; the server answers at server_path (the same one
    # in notebook_paths "kubeflow", where no rewrite happens at all).
    annotations[names.HTTP_REWRITE_URI] = server_path(spec, settings)
    if stopped_at:
        annotations[names.STOPPED] = stopped_at
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "Notebook",
        "metadata": parts.object_meta(ref.name, ref.namespace, labels, annotations=annotations),
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
    metadata = parts.object_meta(
        ref.secret,
        ref.namespace,
        notebook_labels(ref, spec, settings, "secrets"),
        ownerReferences=[parts.owner_reference(owner)],
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
    return parts.volume_claim(
        ref.home,
        ref.namespace,
        notebook_labels(ref, spec, settings, "home"),
        {names.OWNER: spec.owner, names.NOTEBOOK: spec.name},
        settings.home_size,
        settings,
    )


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
    cpu = parts.cpu_quantity(spec.cpu_milli)
    memory = parts.memory_quantity(spec.memory)
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
    affinity = parts.node_affinity(spec.node_affinity, spec.environment.arch)
    if affinity:
        template_spec["affinity"] = affinity
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": parts.object_meta(
            ref.name, ref.namespace, labels, annotations=_notebook_annotations(spec, "vm")
        ),
        "spec": {
            "runStrategy": "Always" if running else "Halted",
            "template": {"metadata": {"labels": labels}, "spec": template_spec},
        },
    }

"""A multi-node training job as a Kubeflow PyTorchJob, built by a pure function.

Like kube_objects: the object as the dict the API server receives, unit-tested
and schema-validated without a cluster. The job runs in its owner's (or its
group's) namespace, against that namespace's quota, as the notebook service
account; its pods are not notebooks, so the namespace's NetworkPolicy leaves
its workers free to reach one another. A failing rank is restarted at most
`training_backoff_limit` times before the job is Failed (training jobs once
restarted forever).
"""

from __future__ import annotations

from . import kube_names as names
from . import kube_objects as objects
from . import kube_parts as parts
from .base import TrainingSpec
from .kube_parts import Obj
from .kube_settings import KubeSettings


def pytorch_job(ref: names.ObjectRef, job: TrainingSpec, settings: KubeSettings) -> Obj:
    """One Master and `workers` Workers, each a container named `pytorch` (the
    training operator looks for that name) with the job's resources."""
    labels = parts.platform_labels(settings, "training")
    labels[names.USER] = names.slug(job.owner, 63)

    def replica(count: int) -> Obj:
        container = {
            "name": "pytorch",
            "image": job.image,
            "imagePullPolicy": settings.image_pull_policy,
            "command": list(job.command),
            "env": [{"name": key, "value": value} for key, value in job.env.items()],
            "resources": parts.container_resources(
                job.cpu_milli, job.memory, job.gpus, job.gpu_resource
            ),
            "volumeMounts": [{"name": "dshm", "mountPath": objects.SHM}],
            "securityContext": {"allowPrivilegeEscalation": False},
        }
        pod: Obj = {
            "serviceAccountName": objects.NOTEBOOK_SERVICE_ACCOUNT,
            "automountServiceAccountToken": False,
            "containers": [container],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
        }
        if job.node_selector:
            pod["nodeSelector"] = dict(job.node_selector)
        if job.gpus:
            pod["tolerations"] = parts.gpu_tolerations()
        # OnFailure: the kubelet restarts a rank in place, and the operator counts those
        # restarts against runPolicy.backoffLimit (it counts only OnFailure and Always
        # replicas), so a rank that keeps failing ends the job Failed.
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
        "metadata": parts.object_meta(
            ref.name,
            ref.namespace,
            labels,
            annotations={names.OWNER: job.owner, "cgu-lab.io/job": job.name},
        ),
        "spec": {
            "runPolicy": {
                "cleanPodPolicy": job.clean_pod_policy,
                "backoffLimit": settings.training_backoff_limit,
            },
            "pytorchReplicaSpecs": replicas,
        },
    }


def ended(job: Obj) -> str:
    """ "Succeeded" or "Failed" once the training operator ended the job, else ""."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Succeeded", "Failed") and condition.get("status") == "True":
            return condition["type"]
    return ""


def no_pod(job: Obj, replica: str, name: str) -> str:
    """Why a replica has no pod to read a log from. When the job ends, the operator
    deletes the pods still running then (cleanPodPolicy Running: a worker the master
    did not wait for), their logs with them; before it starts, there is none yet."""
    outcome = ended(job)
    if outcome:
        policy = (job.get("spec", {}).get("runPolicy") or {}).get("cleanPodPolicy", "Running")
        return (
            f"the pod of {replica} of training job '{name}' was removed when the job ended "
            f"({outcome}; cleanPodPolicy {policy} removes the ranks still running then), "
            "and its log with it"
        )
    if (job.get("spec", {}).get("runPolicy") or {}).get("suspend"):
        return f"{replica} of training job '{name}' has no pod yet: the job waits in its queue"
    return f"{replica} of training job '{name}' has no pod yet"

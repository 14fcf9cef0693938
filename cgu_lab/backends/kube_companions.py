"""What serves a notebook's server besides the object holding it, built by pure functions.

The Service every notebook gets (port 80 to JupyterLab's 8888, whether a pod
or a VM's launcher pod serves it) and, on clusters without Kubeflow's
notebook-controller ("builtin" mode), the StatefulSet that controller would
make from a Notebook. Both are owned by the object they serve, so deleting it
deletes them.
"""

from __future__ import annotations

import copy

from . import kube_names as names
from . import kube_objects as objects
from . import kube_parts as parts
from .kube_parts import Obj


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
        "metadata": parts.object_meta(
            name,
            meta["namespace"],
            meta.get("labels", {}),
            ownerReferences=[parts.owner_reference(notebook_obj)],
        ),
        "spec": {
            "replicas": 0 if objects.is_stopped(notebook_obj) else 1,
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
        "metadata": parts.object_meta(
            name,
            meta["namespace"],
            meta.get("labels", {}),
            ownerReferences=[parts.owner_reference(owner)],
        ),
        "spec": {
            "type": "ClusterIP",
            "selector": {names.NOTEBOOK_NAME: name},
            "ports": [
                {
                    "name": f"http-{name}",
                    "port": objects.SERVICE_PORT,
                    "targetPort": objects.NOTEBOOK_PORT,
                    "protocol": "TCP",
                }
            ],
        },
    }

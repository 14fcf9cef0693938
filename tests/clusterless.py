"""The Kubernetes backend with the cluster left out (`ClusterlessKube`), for in-process
controllers whose notebooks a loopback stand-in serves (tests/inprocess.py's
`LoopbackNotebook`).

Its own module, imported only when a test asks `tests.inprocess` for it (that module's
`__getattr__`): the Kubernetes backend's imports (the kubernetes client, its schema
validation and their grammars) cost about a CPU-second, which every module that imports
tests/inprocess.py, conftest among them, would otherwise pay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cgu_lab.backends.base import NotebookSpec, Observation, ProgressCallback
from cgu_lab.backends.kube_settings import KubeSettings
from cgu_lab.backends.kubernetes import KubernetesBackend


class ClusterlessKube(KubernetesBackend):
    """The kubernetes backend, built from its real settings, with the cluster left out: a
    start creates nothing and points the notebook's route at `upstream` (a
    `LoopbackNotebook` standing in for the notebook's pod). What the controller and its
    proxy read of the backend (`endpoint`, `ingress_header`, `describe`) is the real
    backend's."""

    def __init__(self, kube: KubeSettings, upstream: str) -> None:
        super().__init__(kube)
        self.upstream = upstream

    async def open(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def start(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        return {"url": self.upstream, "namespace": f"cgu-u-{spec.owner}", "name": spec.name}

    async def stop(self, spec: NotebookSpec, state: Mapping[str, Any]) -> None:
        pass

    async def observe(self, spec: NotebookSpec, state: Mapping[str, Any]) -> Observation:
        return Observation(alive=True, ready=True)

    async def sweep(self, keep: set[int]) -> list[int]:
        return []

    async def sync_quota(self, owner, quota, group=False) -> None:
        pass

    async def inventory(self) -> list:
        return []

    async def cluster_nodes(self) -> list:
        return []

    async def last_activity(self, spec, state):
        return None

    async def record_activity(self, spec, state, when) -> None:
        pass

"""The kubernetes backend's line to the cluster: its API client and its watch cache.

Both exist only between the backend's `open()` and `close()` (the client needs
the kubeconfig read, the cache its first lists), while the pieces that use them
(the kinds of server in kube_workloads, the namespaces of kube_namespaces, the
tool pods of kube_pod_tool, the home files of kube_files, the storage page of
kube_storage_files) are made with the backend, before it opens. So the backend
makes one Connection, gives it to each piece at construction, and fills it when
it opens: a piece reads `api` and `cache` when it acts, and asking before the
backend opened is a programming error said as such. It knows nothing of the
pieces or of the backend.
"""

from __future__ import annotations

from .kube_api import KubeApi
from .kube_watch import WatchCache


class Connection:
    """The API client (kube_api) and the watch cache (kube_watch) of one backend; `client`
    and `watch` are None until the backend opens, `api` and `cache` insist they are not."""

    def __init__(self) -> None:
        self.client: KubeApi | None = None
        self.watch: WatchCache | None = None

    @property
    def api(self) -> KubeApi:
        assert self.client is not None, "open() the backend first"
        return self.client

    @property
    def cache(self) -> WatchCache:
        assert self.watch is not None, "open() the backend first"
        return self.watch

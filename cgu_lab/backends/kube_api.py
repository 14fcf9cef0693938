"""The slice of the Kubernetes API the backend uses, and the permissions it needs.

Every call goes through `KubeApi`, which checks it against `PERMISSIONS`
before sending it. That table is therefore the complete list of what the
backend does, and deploy/kubernetes/base/rbac.yaml grants exactly it (a test
compares the two): reads and namespace creation cluster-wide, through the
ClusterRole `cgu-lab-controller`; writes only inside the platform's own
namespaces, through the ClusterRole `cgu-lab-namespace-manager` that the
controller binds in each namespace it creates. A call missing from the table
fails loudly in tests instead of with a 403 in a school's cluster.

Requests use the official client's asyncio flavour (`kubernetes.aio`, the
same generated client on aiohttp, as kubespawner uses kubernetes_asyncio) and
its dynamic client with the resources named here, so there is one code path
for built-in kinds and CRDs alike, no discovery round-trips, and no thread per
call or per watch: the backend's waits are the event loop's. Failures become
`KubeError`, a BackendError whose message says what was refused and why.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from kubernetes.aio import client, config
from kubernetes.aio.client.exceptions import ApiException
from kubernetes.aio.dynamic import DynamicClient
from kubernetes.aio.dynamic.resource import Resource
from kubernetes.aio.stream import WsApiClient
from kubernetes.aio.watch import Watch

from .base import BackendError

Obj = dict[str, Any]
FIELD_MANAGER = "cgu-lab"
# Exec's websocket protocol. Version 5 adds the signal that closes the command's stdin,
# which a copy needs (its tool reads to the end); the API server speaks it since 1.30.
EXEC_PROTOCOL = "v5.channel.k8s.io"


def _json(_client: Any, data: Any) -> Any:
    """The answer as the API server's JSON: the dynamic client's default wraps it in
    ResourceInstance objects, field by field, which `_call` then turned back into the same
    dicts (2.5% of the controller's samples in a burst of 300 starts)."""
    return data


def _strict() -> list[tuple[str, str]]:
    """Writes refuse a field the API server does not know (a CRD of another version,
    a typo) instead of dropping it with a warning nobody reads."""
    return [("fieldValidation", "Strict")]


@dataclass(frozen=True)
class Kind:
    kind: str
    api_version: str
    plural: str
    namespaced: bool = True
    provider: str = ""  # what installs this API where a cluster lacks it

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]


KINDS: dict[str, Kind] = {
    kind.kind: kind
    for kind in (
        Kind("Namespace", "v1", "namespaces", namespaced=False),
        Kind("Node", "v1", "nodes", namespaced=False),
        Kind("Pod", "v1", "pods"),
        Kind("Event", "v1", "events"),
        Kind("Secret", "v1", "secrets"),
        Kind("ServiceAccount", "v1", "serviceaccounts"),
        Kind("Service", "v1", "services"),
        Kind("PersistentVolumeClaim", "v1", "persistentvolumeclaims"),
        Kind("ResourceQuota", "v1", "resourcequotas"),
        Kind("StatefulSet", "apps/v1", "statefulsets"),
        Kind("NetworkPolicy", "networking.k8s.io/v1", "networkpolicies"),
        Kind("RoleBinding", "rbac.authorization.k8s.io/v1", "rolebindings"),
        Kind(
            "Notebook",
            "kubeflow.org/v1",
            "notebooks",
            provider="Kubeflow, or the Notebook CRD: kubectl create -k deploy/kubernetes/crds",
        ),
        Kind("VirtualMachine", "kubevirt.io/v1", "virtualmachines", provider="KubeVirt"),
        Kind(
            "PodDefault",
            "kubeflow.org/v1alpha1",
            "poddefaults",
            provider="Kubeflow's admission webhook (PodDefaults)",
        ),
        Kind(
            "PyTorchJob",
            "kubeflow.org/v1",
            "pytorchjobs",
            provider="the Kubeflow training operator",
        ),
        # Kueue, where it queues training jobs (kube_queues)
        *(
            Kind(kind, "kueue.x-k8s.io/v1beta2", plural, namespaced=namespaced, provider="Kueue")
            for kind, plural, namespaced in (
                ("ResourceFlavor", "resourceflavors", False),
                ("ClusterQueue", "clusterqueues", False),
                ("LocalQueue", "localqueues", True),
                ("Workload", "workloads", True),
            )
        ),
    )
}

CLUSTER = "cluster"  # ClusterRole cgu-lab-controller, bound cluster-wide
MANAGED = "managed"  # ClusterRole cgu-lab-namespace-manager, bound per managed namespace

# (kind, subresource) -> verbs, per scope. Server-side apply needs create and patch.
PERMISSIONS: dict[str, dict[tuple[str, str], frozenset[str]]] = {
    CLUSTER: {
        ("Namespace", ""): frozenset({"get", "create"}),
        ("Node", ""): frozenset({"list", "watch"}),  # the GPU inventory, nodes lost
        ("Pod", ""): frozenset({"list", "watch"}),
        ("Event", ""): frozenset({"list", "watch"}),
        ("Notebook", ""): frozenset({"list", "watch"}),
        ("VirtualMachine", ""): frozenset({"list", "watch"}),
        ("RoleBinding", ""): frozenset({"create"}),
        # Kueue's cluster-wide objects: a flavor per GPU product, a queue per course
        # (kube_queues); LocalQueues and Workloads read to tell a job's place in line.
        ("ResourceFlavor", ""): frozenset({"create", "patch"}),
        ("ClusterQueue", ""): frozenset({"get", "create", "patch"}),
        ("LocalQueue", ""): frozenset({"list"}),
        ("Workload", ""): frozenset({"list"}),
    },
    MANAGED: {
        ("ServiceAccount", ""): frozenset({"create", "patch"}),
        ("NetworkPolicy", ""): frozenset({"create", "patch"}),
        ("ResourceQuota", ""): frozenset({"create", "patch"}),
        ("Secret", ""): frozenset({"create", "patch", "delete"}),
        ("PersistentVolumeClaim", ""): frozenset({"create", "get", "delete"}),
        ("Notebook", ""): frozenset({"create", "patch", "delete"}),
        ("StatefulSet", ""): frozenset({"create", "patch"}),
        ("Service", ""): frozenset({"create", "patch"}),
        ("VirtualMachine", ""): frozenset({"create", "patch", "delete"}),
        ("PyTorchJob", ""): frozenset({"create", "get", "delete"}),
        ("LocalQueue", ""): frozenset({"create", "patch"}),
        # Kubeflow's "configurations", offered on the notebook form (read only)
        ("PodDefault", ""): frozenset({"list"}),
        ("Pod", "log"): frozenset({"get"}),
        # kube_files: a pod per copy, the file tool run in it through exec (a websocket
        # upgrade of a GET, authorized as `create` since Kubernetes 1.31, `get` before)
        ("Pod", ""): frozenset({"create", "get", "delete"}),
        ("Pod", "exec"): frozenset({"create", "get"}),
    },
}
# Never called, yet needed: the API server lets the controller create the
# RoleBinding to cgu-lab-namespace-manager only if it may `bind` that role.
BIND_ROLE = "cgu-lab-namespace-manager"


class KubeError(BackendError):
    """A refused or failed API call; `status` is the HTTP status (0: no answer)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


async def together(*calls: Awaitable[Any]) -> list[Any]:
    """Send independent calls at once and wait for all: a start's objects that need not
    follow one another (its secret and claims, its Service and StatefulSet) cost one round
    trip's wait instead of one each, which a class's burst of starts pays many times over.
    Every call ends before this does (none is left running behind a failure); the first
    failure in the order given is then raised as itself, as sending them one by one would
    have."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


async def load_client(kubeconfig: str = "") -> client.ApiClient:
    """An API client from a kubeconfig file, else the pod's service account, else
    the user's default kubeconfig. The global default configuration is untouched."""
    configuration = client.Configuration()
    if kubeconfig:
        await config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    else:
        try:
            config.load_incluster_config(client_configuration=configuration)
        except config.ConfigException:
            await config.load_kube_config(client_configuration=configuration)
    # Watches hold connections for minutes; leave room for the calls beside them.
    configuration.connection_pool_maxsize = 32
    _skip_needless_proxy_lookups(configuration)
    return client.ApiClient(configuration)


def _skip_needless_proxy_lookups(configuration: client.Configuration) -> None:
    """Stop the client's session from looking the environment up before every request (in
    a thread, ~/.netrc included: 5.3% of the controller's samples in a burst of 300
    starts) where the environment names no proxy for the API server, which is the usual
    case. Where it names one, or the kubeconfig does, the session keeps looking: the exec
    websocket takes no proxy argument and finds it only that way."""
    url = urllib.parse.urlsplit(configuration.host)
    if configuration.proxy or not url.hostname:
        return
    if _bypassed(url.hostname) or not urllib.request.getproxies_environment().get(url.scheme):
        configuration.client_session_kwargs = {"trust_env": False}


def _bypassed(host: str) -> bool:
    """Whether NO_PROXY spares `host`: Python's rule (names, suffixes, '*'), and an
    address inside a network NO_PROXY names (10.0.0.0/8), as kubectl reads it."""
    if urllib.request.proxy_bypass_environment(host):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    spared = urllib.request.getproxies_environment().get("no", "")
    for entry in spared.split(","):
        with contextlib.suppress(ValueError):
            if address in ipaddress.ip_network(entry.strip(), strict=False):
                return True
    return False


def _status_message(error: ApiException) -> str:
    try:
        return json.loads(error.body)["message"]
    except (TypeError, ValueError, KeyError):
        return ""


class KubeApi:
    """Typed-by-table access to the API; every verb is a coroutine."""

    def __init__(self, api_client: client.ApiClient, managed: Callable[[str], bool]) -> None:
        self.api_client = api_client
        self.managed = managed
        # Every resource is named in KINDS: the dynamic client is never awaited, so it
        # never runs its discovery.
        self.dynamic = DynamicClient(api_client)
        self._core = client.CoreV1Api(api_client)
        self._resources = {
            name: Resource(
                prefix="api" if not kind.group else "apis",
                group=kind.group,
                api_version=kind.api_version.rpartition("/")[2],
                kind=kind.kind,
                namespaced=kind.namespaced,
                name=kind.plural,
                client=self.dynamic,
            )
            for name, kind in KINDS.items()
        }

    async def close(self) -> None:
        await self.api_client.close()

    # -- the permission check -------------------------------------------------

    def require(self, kind: str, verb: str, namespace: str | None, subresource: str = "") -> None:
        """Refuse a call missing from PERMISSIONS (or a write outside our namespaces)."""
        key = (kind, subresource)
        if verb in PERMISSIONS[CLUSTER].get(key, ()):
            return
        if namespace and self.managed(namespace) and verb in PERMISSIONS[MANAGED].get(key, ()):
            return
        where = f"in namespace {namespace}" if namespace else "cluster-wide"
        raise RuntimeError(
            f"kube_api: '{verb}' on {kind}{'/' + subresource if subresource else ''} {where} is "
            "not in PERMISSIONS; add it there and to deploy/kubernetes/base/rbac.yaml"
        )

    def _fail(
        self, error: Exception, verb: str, kind: Kind, name: str, namespace: str | None
    ) -> KubeError:
        target = f"{kind.kind} {namespace + '/' if namespace else ''}{name}".rstrip()
        if isinstance(error, ApiException):
            message = _status_message(error)
            if error.status == 404 and not message:
                return KubeError(
                    f"the cluster has no {kind.plural}.{kind.group or 'core'} API; "
                    f"install {kind.provider or 'it'}",
                    404,
                )
            if error.status == 403:
                return KubeError(f"the controller may not {verb} {target}: {message}", 403)
            return KubeError(
                f"Kubernetes refused to {verb} {target}: {message or error.reason}", error.status
            )
        return KubeError(f"cannot reach the Kubernetes API server ({verb} {target}): {error}")

    async def _call(
        self,
        verb: str,
        kind_name: str,
        name: str,
        namespace: str | None,
        send: Callable[[Resource], Awaitable[Any]],
        missing_ok: bool = False,
    ) -> Any:
        kind = KINDS[kind_name]
        if verb == "apply":
            for needed in ("create", "patch"):
                self.require(kind_name, needed, namespace)
        else:
            self.require(kind_name, verb, namespace)
        try:
            result = await send(self._resources[kind_name])
        except ApiException as error:
            if missing_ok and error.status == 404 and _status_message(error):
                return None
            raise self._fail(error, verb, kind, name, namespace) from error
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as error:
            raise self._fail(error, verb, kind, name, namespace) from error
        return result

    # -- verbs ------------------------------------------------------------------

    async def get(self, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        """The object, or None when there is none."""
        return await self._call(
            "get",
            kind,
            name,
            namespace,
            lambda res: self.dynamic.get(res, serializer=_json, name=name, namespace=namespace),
            missing_ok=True,
        )

    async def list(
        self, kind: str, namespace: str | None = None, label_selector: str | None = None
    ) -> tuple[list[Obj], str]:
        """The objects (all namespaces when `namespace` is None) and the list's resourceVersion."""
        listed = await self._call(
            "list",
            kind,
            "",
            namespace,
            lambda res: self.dynamic.get(
                res, serializer=_json, namespace=namespace, label_selector=label_selector
            ),
        )
        return listed.get("items") or [], listed["metadata"].get("resourceVersion", "")

    async def watch(
        self,
        kind: str,
        resource_version: str,
        timeout: int,
        label_selector: str | None = None,
    ) -> AsyncIterator[Obj]:
        """Change events from `resource_version` on, in all namespaces, for `timeout` s.

        An expired resourceVersion surfaces as ApiException 410, for the caller to relist.
        """
        self.require(kind, "watch", None)
        async with Watch() as watcher:
            async for event in watcher.stream(
                self._resources[kind].get,
                label_selector=label_selector,
                resource_version=resource_version,
                timeout_seconds=timeout,
                # (the dynamic client has no argument for it)
                query_params=[("allowWatchBookmarks", "true")],
                serialize=False,
                # the server ends the watch after `timeout`; the client waits a little longer
                _request_timeout=timeout + 30,
            ):
                yield event

    async def create(self, obj: Obj, exist_ok: bool = False) -> Obj | None:
        """Create `obj`; with exist_ok, None when it already exists."""
        meta = obj["metadata"]
        try:
            return await self._call(
                "create",
                obj["kind"],
                meta["name"],
                meta.get("namespace"),
                lambda res: self.dynamic.create(
                    res,
                    serializer=_json,
                    body=obj,
                    namespace=meta.get("namespace"),
                    query_params=_strict(),
                ),
            )
        except KubeError as error:
            if exist_ok and error.status == 409:
                return None
            raise

    async def apply(self, obj: Obj) -> Obj:
        """Server-side apply: create or update to exactly the fields we set; fields we
        set before and no longer send are removed, others' fields are left alone."""
        meta = obj["metadata"]
        return await self._call(
            "apply",
            obj["kind"],
            meta["name"],
            meta.get("namespace"),
            lambda res: self.dynamic.server_side_apply(
                res,
                serializer=_json,
                body=obj,
                namespace=meta.get("namespace"),
                field_manager=FIELD_MANAGER,
                force_conflicts=True,
                query_params=_strict(),
            ),
        )

    async def patch(self, kind: str, name: str, namespace: str, patch: Obj) -> Obj | None:
        """JSON merge patch; None when the object does not exist."""
        return await self._call(
            "patch",
            kind,
            name,
            namespace,
            lambda res: self.dynamic.patch(
                res,
                serializer=_json,
                body=patch,
                name=name,
                namespace=namespace,
                content_type="application/merge-patch+json",
                field_manager=FIELD_MANAGER,
                query_params=_strict(),
            ),
            missing_ok=True,
        )

    async def delete(self, kind: str, name: str, namespace: str) -> bool:
        """Delete (in the background); False when it was already gone."""
        return (
            await self._call(
                "delete",
                kind,
                name,
                namespace,
                lambda res: self.dynamic.delete(
                    res,
                    serializer=_json,
                    name=name,
                    namespace=namespace,
                    body={"propagationPolicy": "Background"},
                ),
                missing_ok=True,
            )
            is not None
        )

    async def pod_log(self, namespace: str, name: str, container: str, tail_lines: int) -> str:
        self.require("Pod", "get", namespace, subresource="log")
        try:
            text = await self._core.read_namespaced_pod_log(
                name=name, namespace=namespace, container=container, tail_lines=tail_lines
            )
        except ApiException as error:
            raise KubeError(
                f"cannot read the log of pod {namespace}/{name}: "
                f"{_status_message(error) or error.reason}",
                error.status,
            ) from error
        return text or ""  # a pod that has not run yet has an empty log

    @contextlib.asynccontextmanager
    async def exec(
        self, namespace: str, name: str, container: str, argv: list[str], stdin: bool
    ) -> AsyncIterator[aiohttp.ClientWebSocketResponse]:
        """A websocket to `argv` run in the pod's container, in binary frames whose first
        byte is the channel (0 stdin, 1 stdout, 2 stderr, 3 the exit status, 255 close).
        Its own client: the websocket is a connection of its own, closed with it."""
        self.require("Pod", "create", namespace, subresource="exec")
        async with WsApiClient(self.api_client.configuration) as ws_client:
            try:
                connecting = await client.CoreV1Api(
                    ws_client
                ).connect_get_namespaced_pod_exec_without_preload_content(
                    name,
                    namespace,
                    command=argv,
                    container=container,
                    stdin=stdin,
                    stdout=True,
                    stderr=True,
                    tty=False,
                    _headers={"sec-websocket-protocol": EXEC_PROTOCOL},
                )
                async with connecting as socket:
                    yield socket
            except aiohttp.WSServerHandshakeError as error:
                raise KubeError(
                    f"cannot run {argv[0]} in pod {namespace}/{name}: {error.message}",
                    error.status,
                ) from error

"""A platform tool run as the notebooks' user in a short-lived pod: the controller's hands
on volumes it cannot mount.

Homes, course folders and personal storage are volumes in the users'
namespaces; the controller (a pod of its own, or a host process) cannot mount
them. When it must read or write one (a template's files, a submission, the
storage page), it runs the same tool the local backend runs as the files'
owner, in a pod made for that one job, as `kubectl cp` would:

- the notebook image (it holds cgu_lab, hence the tools), the notebooks' user
  (uid/gid of KubeSettings, never root), no service account token, no
  privilege escalation, small resource limits (the namespace's quota counts
  it), a deadline of its own;
- the volume mounted where notebooks see their home, read-only when the
  request may only read (the kernel then refuses writes, whatever the tool
  does);
- its command only waits; the tool runs through the pod's `exec` subresource,
  its stdin and stdout streamed over the websocket in binary frames, stdin
  closed with the v5 protocol's close signal, all on the event loop (kube_api's
  asyncio client): a job holds a connection, not a thread;
- the pod is awaited through the backend's pod watch (it carries the
  platform's labels); a one-off copy's is deleted when it ends, while the
  storage page's is kept for `tool_pod_idle` seconds after its last job, so
  the next request on the same volume (the next chunk of an upload, the
  folder it opens next) runs at once instead of waiting a second or two for a
  new pod; then deleted, and swept at the controller's start if a
  crash left one behind. Jobs share a warm pod only when everything the pod
  is made of (namespace, volume, mode, image, owner) is the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import IO, Any

import aiohttp

from . import kube_names as names
from . import kube_parts as parts
from .base import BackendError
from .kube_api import KubeError
from .kube_connection import Connection
from .kube_settings import KubeSettings

log = logging.getLogger("cgu_lab.kubernetes")

Obj = dict[str, Any]
COMPONENT = "files"
MOUNT = "/home/jovyan"
CHUNK = 256 * 1024
READY_TIMEOUT = 180.0  # an image pull on a fresh node; the notebook image is usually there
IMAGE_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
JOB_TIMEOUT = 3600  # the pod's own deadline: nothing it does should take an hour
# Exec's channels: the first byte of every websocket frame (v5.channel.k8s.io).
STDIN, STDOUT, STDERR, STATUS, CLOSE = 0, 1, 2, 3, 255


def claim_volume(claim: str) -> Obj:
    return {"name": "files", "persistentVolumeClaim": {"claimName": claim}}


def tool_pod(
    namespace: str,
    volume: Obj,
    image: str,
    settings: KubeSettings,
    owner: str,
    read_only: bool = False,
) -> Obj:
    """The pod a tool runs in (see the module's notes); `volume` is mounted at MOUNT."""
    name = f"cgu-files-{secrets.token_hex(4)}"
    labels = {
        **parts.platform_labels(settings, COMPONENT),
        names.USER: names.slug(owner, 63),
    }
    resources = {"cpu": "500m", "memory": "256Mi", "ephemeral-storage": "64Mi"}
    mount = {"name": volume["name"], "mountPath": MOUNT}
    if read_only:
        mount["readOnly"] = True
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": {names.OWNER: owner},
        },
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "activeDeadlineSeconds": JOB_TIMEOUT,
            "terminationGracePeriodSeconds": 1,
            "securityContext": parts.pod_security(settings),
            "containers": [
                {
                    "name": "files",
                    "image": image,
                    "imagePullPolicy": settings.image_pull_policy,
                    "command": ["sleep", str(JOB_TIMEOUT)],
                    "workingDir": MOUNT,
                    "env": [{"name": "HOME", "value": MOUNT}],
                    "resources": {"requests": resources, "limits": resources},
                    "volumeMounts": [mount],
                    "securityContext": parts.container_security(),
                }
            ],
            "volumes": [volume],
        },
    }


def notebook_image(notebook: Obj | None) -> str:
    containers = (
        ((notebook or {}).get("spec") or {}).get("template", {}).get("spec", {}).get("containers")
    )
    return (containers or [{}])[0].get("image", "")


def exit_code(status: bytes) -> int:
    """The exit code the status channel reports (a metav1.Status); 1 when it says
    nothing usable, as when the connection ended before the command did."""
    try:
        reported = json.loads(status)
    except ValueError:
        return 1
    if reported.get("status") == "Success":
        return 0
    for cause in (reported.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode":
            try:
                return int(cause.get("message", ""))
            except ValueError:
                break
    return 1


def json_lines(raw: bytes) -> list[dict]:
    found = []
    for text in raw.splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if isinstance(line, dict):
            found.append(line)
    return found


@dataclass
class _Warm:
    """A running tool pod, the jobs in it, and the timer that deletes it once idle."""

    namespace: str
    name: str
    jobs: int = 0
    expiry: asyncio.TimerHandle | None = None


class PodTool:
    """Tool pods of one backend: made, awaited, run in, kept warm a while, deleted, swept.

    Given the backend's connection (its API client for the pods and their `exec`, its
    watch cache to await them and to find the owner's notebook images), its settings
    and its naming (which namespaces are this configuration's). The home files
    (kube_files) and the storage page (kube_storage_files) are given the one PodTool,
    so that warm pods are shared and all are deleted when the backend closes."""

    def __init__(self, cluster: Connection, settings: KubeSettings, naming: names.Naming) -> None:
        self.cluster = cluster
        self.settings = settings
        self.naming = naming
        self._warm: dict[str, _Warm] = {}
        self._made: dict[str, asyncio.Lock] = {}  # one pod made per key at a time
        self._deleting: set[asyncio.Task] = set()

    @contextlib.asynccontextmanager
    async def pod(
        self,
        namespace: str,
        volume: Obj,
        image: str,
        owner: str,
        read_only: bool = False,
        keep: bool = False,
    ) -> AsyncIterator[str]:
        """A running tool pod's name, for as long as the block lasts. With `keep` (the
        storage page, whose requests come in series) it stays warm for the next job on
        the same volume; without (a one-off copy), it goes at once: a pod counts against
        its namespace's quota, and a student's next start must not wait for it."""
        if not keep:
            made = await self._make(namespace, volume, image, owner, read_only)
            try:
                yield made.name
            finally:
                await asyncio.shield(self._delete(made))
            return
        key = json.dumps([namespace, volume, image, owner, read_only], sort_keys=True)
        async with self._made.setdefault(key, asyncio.Lock()):
            warm = self._warm.get(key)
            if warm is None or not self._running(warm):
                if warm is not None:
                    self._forget(key)
                warm = await self._make(namespace, volume, image, owner, read_only)
                self._warm[key] = warm
            warm.jobs += 1
            if warm.expiry is not None:
                warm.expiry.cancel()
                warm.expiry = None
        try:
            yield warm.name
        finally:
            warm.jobs -= 1
            if warm.jobs == 0 and self._warm.get(key) is warm:
                loop = asyncio.get_running_loop()
                warm.expiry = loop.call_later(self.settings.tool_pod_idle, self._forget, key)

    async def _make(
        self, namespace: str, volume: Obj, image: str, owner: str, read_only: bool
    ) -> _Warm:
        pod = tool_pod(namespace, volume, image, self.settings, owner, read_only)
        warm = _Warm(namespace, pod["metadata"]["name"])
        await self.cluster.api.create(pod)
        try:
            await self._wait_running(namespace, warm.name)
        except (Exception, asyncio.CancelledError):
            await asyncio.shield(self._delete(warm))
            raise
        return warm

    def _running(self, warm: _Warm) -> bool:
        pod = self.cluster.cache.get("Pod", warm.namespace, warm.name) or {}
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        return status.get("phase") == "Running" and not meta.get("deletionTimestamp")

    def _take(self, key: str) -> _Warm | None:
        """The key's warm pod, no longer offered to jobs nor timed."""
        warm = self._warm.pop(key, None)
        lock = self._made.get(key)
        if lock is not None and not lock.locked():
            del self._made[key]
        if warm is not None and warm.expiry is not None:
            warm.expiry.cancel()
        return warm

    def _forget(self, key: str) -> None:
        """Delete the key's pod (in a task: the timer's callback cannot wait)."""
        warm = self._take(key)
        if warm is not None:
            task = asyncio.get_running_loop().create_task(self._delete(warm))
            self._deleting.add(task)
            task.add_done_callback(self._deleting.discard)

    async def _delete(self, warm: _Warm) -> None:
        try:
            await self.cluster.api.delete("Pod", warm.name, warm.namespace)
        except KubeError as error:  # the next start's sweep gets it
            log.warning("cannot delete tool pod %s/%s: %s", warm.namespace, warm.name, error)

    async def release(self, namespace: str) -> None:
        """Delete the namespace's idle warm pods now (a notebook starts there): their
        requests count against the namespace's quota, which the notebook may need whole."""
        idle = [
            key
            for key, warm in self._warm.items()
            if warm.namespace == namespace and warm.jobs == 0
        ]
        for warm in [self._take(key) for key in idle]:
            if warm is not None:
                await self._delete(warm)

    async def close(self) -> None:
        """Delete the warm pods (the controller stops)."""
        warm, self._warm = list(self._warm.values()), {}
        for pod in warm:
            if pod.expiry is not None:
                pod.expiry.cancel()
        await asyncio.gather(
            *(self._delete(pod) for pod in warm), *self._deleting, return_exceptions=True
        )

    async def _wait_running(self, namespace: str, name: str) -> None:
        """Until the pod runs; its waiting reason when it cannot (an image, the quota...)."""
        cache = self.cluster.cache
        deadline = time.monotonic() + READY_TIMEOUT
        reason = "it was not scheduled"
        while (remaining := deadline - time.monotonic()) > 0:
            version = cache.version
            status = (cache.get("Pod", namespace, name) or {}).get("status") or {}
            phase = status.get("phase")
            if phase == "Running":
                return
            if phase in ("Failed", "Succeeded"):
                raise BackendError(f"the pod handling files ended early ({phase})")
            for container in status.get("containerStatuses") or []:
                waiting = (container.get("state") or {}).get("waiting") or {}
                if waiting.get("reason") in IMAGE_FAILURES:
                    raise BackendError(
                        f"the pod handling files cannot get its image: {waiting.get('message', '')}"
                    )
                if waiting.get("reason"):
                    reason = f"{waiting['reason']}: {waiting.get('message', '')}".rstrip(": ")
            for condition in status.get("conditions") or []:
                if condition.get("reason") == "Unschedulable":
                    reason = condition.get("message", reason)
            await cache.changed(version, remaining)
        raise BackendError(f"the pod handling files did not start in time ({reason})")

    async def frames(
        self, namespace: str, name: str, argv: list[str], stdin: IO[bytes] | bytes | None
    ) -> AsyncIterator[tuple[int, bytes]]:
        """(channel, data) of every frame the command sends, until it ends. Stdin is sent
        by a task of its own while the output is read, so neither side waits on the
        other's full buffer."""
        source = io.BytesIO(stdin) if isinstance(stdin, bytes) else stdin
        api = self.cluster.api
        async with api.exec(namespace, name, "files", argv, source is not None) as socket:
            sender = None if source is None else asyncio.create_task(_send(socket, source))
            got_status, sent = False, None
            try:
                async for message in socket:
                    if message.type == aiohttp.WSMsgType.BINARY and message.data:
                        got_status = got_status or message.data[0] == STATUS
                        yield message.data[0], message.data[1:]
            finally:
                if sender is not None:
                    sender.cancel()
                    (sent,) = await asyncio.gather(sender, return_exceptions=True)
            if not got_status and isinstance(sent, Exception):
                raise KubeError(f"the stream to pod {namespace}/{name} was cut off: {sent}")

    def image_for(self, namespace: str, owner: str, area: str = "courses") -> str:
        """Any cgu-lab notebook image holds the file tool: the notebook's own, another of
        the owner's, else the one configured; never a guess."""
        cache = self.cluster.cache
        ref = self.naming.notebook(owner, area)
        candidates = [cache.get("Notebook", namespace, ref.name)] if area != "courses" else []
        candidates += cache.objects("Notebook", namespace)
        for notebook in candidates:
            if notebook_image(notebook):
                return notebook_image(notebook)
        if self.settings.files_image:
            return self.settings.files_image
        raise BackendError(
            f"no image to copy {owner}'s files with: {owner} has no notebook in the cluster "
            "yet; set CGU_LAB_KUBE_FILES_IMAGE to a cgu-lab notebook image"
        )

    async def sweep(self) -> None:
        """Delete the tool pods a crash left behind: none is in use before the controller
        has started (its watch cache lists them)."""
        cache = self.cluster.cache
        for pod in cache.objects("Pod"):
            meta = pod.get("metadata", {})
            labels = meta.get("labels") or {}
            if labels.get(names.COMPONENT) != COMPONENT:
                continue
            if not self.naming.managed(meta.get("namespace", "")):
                continue
            try:
                await self.cluster.api.delete("Pod", meta["name"], meta["namespace"])
            except KubeError as error:
                where = f"{meta['namespace']}/{meta['name']}"
                log.warning("cannot sweep tool pod %s: %s", where, error)


async def _send(socket: aiohttp.ClientWebSocketResponse, source: IO[bytes]) -> None:
    """`source` to the command's stdin, then the v5 signal that closes it."""
    while chunk := await asyncio.to_thread(source.read, CHUNK):
        await socket.send_bytes(bytes([STDIN]) + chunk)
    await socket.send_bytes(bytes([CLOSE, STDIN]))

"""Files of homes on Kubernetes: templates, submissions and lab files, copied as their user.

Templates, submissions and class deployments move files between homes and the
controller's store as tar streams, through the file tool (`local_files`): pack
writes the selection to stdout, unpack reads a copy on stdin. Locally the
controller runs that tool as the home's owner. On Kubernetes a home is a
PersistentVolumeClaim the controller cannot mount, so the same tool runs in a
short-lived pod in the owner's namespace, as `kubectl cp` would do it:

- the notebook image (it holds cgu_lab, hence the tool), the notebooks' user
  (uid/gid of KubeSettings, never root), no service account token, no
  privilege escalation, small resource limits (the namespace's quota counts it);
- the claim mounted where notebooks mount their home (or the user's course
  folders, see `COURSES_CLAIM`), so the tool sees the same paths;
- its command only waits; the controller runs the tool through the pod's
  `exec` subresource, streaming the tar over the websocket in binary frames
  and closing stdin with the v5 protocol's close signal, all on the event loop
  (kube_api's asyncio client): a copy holds a connection, not a thread;
- deleted when the copy ends, whatever happened; a sweep at the controller's
  start removes pods a crash left behind (their label names the component).

Running as the notebook's user is what keeps a student's planted symbolic link
from redirecting the copy: the tool refuses links anyway, and it could reach
only the volume mounted for it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import aiohttp

from . import kube_names as names
from . import kube_objects as objects
from .base import BackendError
from .kube_api import KubeApi, KubeError
from .kube_settings import KubeSettings

if TYPE_CHECKING:
    from .kubernetes import KubernetesBackend

log = logging.getLogger("cgu_lab.kubernetes")

Obj = dict[str, Any]
COMPONENT = "files"
COURSES_CLAIM = names.COURSES_CLAIM
MOUNT = "/home/jovyan"
TOOL = ["python", "-m", "cgu_lab.backends.local_files"]
CHUNK = 256 * 1024
READY_TIMEOUT = 180.0  # an image pull on a fresh node; the notebook image is usually there
IMAGE_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
COPY_TIMEOUT = 3600  # the pod's own deadline: nothing it does should take an hour
# Exec's channels: the first byte of every websocket frame (v5.channel.k8s.io).
STDIN, STDOUT, STDERR, STATUS, CLOSE = 0, 1, 2, 3, 255


def files_pod(namespace: str, claim: str, image: str, settings: KubeSettings, owner: str) -> Obj:
    """The pod the file tool runs in (see the module's notes)."""
    name = f"cgu-files-{secrets.token_hex(4)}"
    labels = {
        names.MANAGED_BY: names.PLATFORM,
        names.INSTALLATION: settings.installation,
        names.COMPONENT: COMPONENT,
        names.USER: names.slug(owner, 63),
    }
    resources = {"cpu": "500m", "memory": "256Mi", "ephemeral-storage": "64Mi"}
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
            "activeDeadlineSeconds": COPY_TIMEOUT,
            "terminationGracePeriodSeconds": 1,
            "securityContext": objects.pod_security(settings),
            "containers": [
                {
                    "name": "files",
                    "image": image,
                    "imagePullPolicy": settings.image_pull_policy,
                    "command": ["sleep", str(COPY_TIMEOUT)],
                    "workingDir": MOUNT,
                    "env": [{"name": "HOME", "value": MOUNT}],
                    "resources": {"requests": resources, "limits": resources},
                    "volumeMounts": [{"name": "files", "mountPath": MOUNT}],
                    "securityContext": objects.container_security(),
                }
            ],
            "volumes": [{"name": "files", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }


def tool_result(code: int, lines: list[dict], key: str) -> dict:
    """The file tool's answer, or its refusal as a BackendError the user can read."""
    for line in reversed(lines):
        if "error" in line:
            raise BackendError(line["error"])
        if key in line and code == 0:
            return line[key]
    raise BackendError(f"copying files failed (exit code {code})")


def _json_lines(raw: bytes) -> list[dict]:
    found = []
    for text in raw.splitlines():
        try:
            line = json.loads(text)
        except ValueError:
            continue
        if isinstance(line, dict):
            found.append(line)
    return found


def courses_claim(namespace: str, owner: str, settings: KubeSettings) -> Obj:
    """The user's course folders, kept like a home: only deleting the user removes them.
    A cluster of several nodes needs ReadWriteMany here (two notebooks mount it)."""
    labels = {**objects.platform_labels(settings, "courses"), names.USER: names.slug(owner, 63)}
    return objects.volume_claim(
        COURSES_CLAIM,
        namespace,
        labels,
        {names.OWNER: owner},
        settings.courses_size,
        settings,
        settings.courses_access_mode,
    )


def seed_claim(ref: names.ObjectRef, owner: str, notebook: str, settings: KubeSettings) -> Obj:
    """A home made by its first files (a template's, seeded before the first start). The
    start finds it and keeps it as it is; it lacks only the notebook-id label, which
    nothing selects homes by (`remove_storage` deletes them by name)."""
    labels = {
        **objects.platform_labels(settings, "home"),
        names.USER: names.slug(owner, 63),
        "app": ref.name,
        names.NOTEBOOK_NAME: ref.name,
    }
    annotations = {names.OWNER: owner, names.NOTEBOOK: notebook}
    return objects.volume_claim(
        ref.home, ref.namespace, labels, annotations, settings.home_size, settings
    )


def notebook_image(notebook: Obj | None) -> str:
    containers = (
        ((notebook or {}).get("spec") or {}).get("template", {}).get("spec", {}).get("containers")
    )
    return (containers or [{}])[0].get("image", "")


class HomeFiles:
    """pack/unpack of the kubernetes backend: where the files are, which image, the pod."""

    def __init__(self, backend: KubernetesBackend) -> None:
        self.backend = backend
        self.settings = backend.kube

    @property
    def api(self) -> KubeApi:
        return self.backend._api

    async def pack(
        self,
        owner: str,
        area: str,
        paths: list[str],
        excluded: list[str],
        max_bytes: int,
        max_files: int,
        into: Path,
        base: str = "",
        image: str = "",
    ) -> dict:
        """Backend.pack: the tool's tar into `into`; its manifest."""
        namespace, claim, image = await self._where(owner, area, image, create=False)
        plan = {"paths": paths, "excluded": excluded, "max_bytes": max_bytes}
        plan.update(max_files=max_files, base=base)
        archive = await asyncio.to_thread(open, into, "wb")
        with archive:
            code, _, lines = await self.run(
                namespace, claim, image, owner, "pack", plan, stdout=archive
            )
        return tool_result(code, lines, "manifest")

    async def unpack(
        self,
        owner: str,
        area: str,
        source: Path,
        destination: str,
        label: str,
        on_progress: Callable[[int], Awaitable[None]] | None = None,
        image: str = "",
    ) -> dict:
        """Backend.unpack: `source` into the home; the tool's report."""
        namespace, claim, image = await self._where(owner, area, image, create=True)
        plan = {"destination": destination, "label": label}
        archive = await asyncio.to_thread(open, source, "rb")
        with archive:
            code, output, lines = await self.run(
                namespace,
                claim,
                image,
                owner,
                "unpack",
                plan,
                stdin=archive,
                on_progress=on_progress,
            )
        if code != 0:
            tool_result(code, lines, "report")
        return json.loads(output)

    async def _where(self, owner: str, area: str, image: str, create: bool) -> tuple[str, str, str]:
        """The namespace, the claim and the image a copy uses; the claim made when a copy
        arrives first (a new notebook's files, seeded before its first start)."""
        backend = self.backend
        namespace = backend.naming.user_namespace(owner)
        if area == "courses":
            claim = COURSES_CLAIM
            made = courses_claim(namespace, owner, self.settings)
        else:
            ref = backend.naming.notebook(owner, area)
            claim = ref.home
            made = seed_claim(ref, owner, area, self.settings)
        if create:
            await backend._ensure_namespace(namespace, owner)
            await self.api.create(made, True)
        else:
            try:
                found = await self.api.get("PersistentVolumeClaim", claim, namespace)
            except KubeError as error:
                if error.status != 403:  # 403: no namespace of ours yet
                    raise
                found = None
            if found is None:
                raise BackendError(f"{owner} has no files for notebook '{area}' yet")
        return namespace, claim, image or self._image(namespace, owner, area)

    def _image(self, namespace: str, owner: str, area: str) -> str:
        """Any cgu-lab notebook image holds the file tool: the notebook's own, another of
        the owner's, else the one configured; never a guess."""
        cache = self.backend._cache
        ref = self.backend.naming.notebook(owner, area)
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

    async def run(
        self,
        namespace: str,
        claim: str,
        image: str,
        owner: str,
        command: str,
        plan: dict,
        stdin: IO[bytes] | None = None,
        stdout: IO[bytes] | None = None,
        on_progress: Callable[[int], Awaitable[None]] | None = None,
    ) -> tuple[int, bytes, list[dict]]:
        """Run `local_files <command>` on `claim`; its exit code, stdout (when not
        written to `stdout`) and stderr's JSON lines, as the local backend's."""
        pod = files_pod(namespace, claim, image, self.settings, owner)
        name = pod["metadata"]["name"]
        await self.api.create(pod)
        try:
            await self._wait_running(namespace, name)
            argv = [*TOOL, command, json.dumps({"root": MOUNT, **plan})]
            return await self._exec(namespace, name, argv, stdin, stdout, on_progress)
        finally:
            try:
                await asyncio.shield(self.api.delete("Pod", name, namespace))
            except KubeError as error:  # the sweep gets it
                log.warning("cannot delete file pod %s/%s: %s", namespace, name, error)

    async def _wait_running(self, namespace: str, name: str) -> None:
        """Until the pod runs (the backend's pod watch sees it: it carries the platform's
        labels); its waiting reason when it cannot (an image, the quota...)."""
        cache = self.backend._cache
        deadline = time.monotonic() + READY_TIMEOUT
        reason = "it was not scheduled"
        while (remaining := deadline - time.monotonic()) > 0:
            version = cache.version
            status = (cache.get("Pod", namespace, name) or {}).get("status") or {}
            phase = status.get("phase")
            if phase == "Running":
                return
            if phase in ("Failed", "Succeeded"):
                raise BackendError(f"the pod copying files ended early ({phase})")
            for container in status.get("containerStatuses") or []:
                waiting = (container.get("state") or {}).get("waiting") or {}
                if waiting.get("reason") in IMAGE_FAILURES:
                    raise BackendError(
                        f"the pod copying files cannot get its image: {waiting.get('message', '')}"
                    )
                if waiting.get("reason"):
                    reason = f"{waiting['reason']}: {waiting.get('message', '')}".rstrip(": ")
            for condition in status.get("conditions") or []:
                if condition.get("reason") == "Unschedulable":
                    reason = condition.get("message", reason)
            await cache.changed(version, remaining)
        raise BackendError(f"the pod copying files did not start in time ({reason})")

    async def _exec(
        self,
        namespace: str,
        name: str,
        argv: list[str],
        stdin: IO[bytes] | None,
        stdout: IO[bytes] | None,
        on_progress: Callable[[int], Awaitable[None]] | None,
    ) -> tuple[int, bytes, list[dict]]:
        """The tool through exec: stdin sent by a task of its own while its output is
        read, so neither side waits on the other's full buffer."""
        out, err = bytearray(), bytearray()
        lines: list[dict] = []
        status = b""
        sent: object = None
        async with self.api.exec(namespace, name, "files", argv, stdin is not None) as socket:
            sender = None
            if stdin is not None:
                sender = asyncio.create_task(_send(socket, stdin))
            try:
                async for message in socket:
                    if message.type != aiohttp.WSMsgType.BINARY or not message.data:
                        continue
                    channel, data = message.data[0], message.data[1:]
                    if channel == STDOUT:
                        if stdout is not None:
                            await asyncio.to_thread(stdout.write, data)
                        else:
                            out.extend(data)
                    elif channel == STDERR:
                        err.extend(data)
                        *complete, rest = err.split(b"\n")
                        err[:] = rest
                        for line in _json_lines(b"\n".join(complete)):
                            lines.append(line)
                            if "done" in line and on_progress is not None:
                                await on_progress(line["done"])
                    elif channel == STATUS:
                        status += data
            finally:
                if sender is not None:
                    sender.cancel()
                    (sent,) = await asyncio.gather(sender, return_exceptions=True)
        lines.extend(_json_lines(bytes(err)))
        if not status and isinstance(sent, Exception):
            raise KubeError(f"the copy to pod {namespace}/{name} was cut off: {sent}")
        return _exit_code(status), bytes(out), lines


async def _send(socket: aiohttp.ClientWebSocketResponse, source: IO[bytes]) -> None:
    """`source` to the command's stdin, then the v5 signal that closes it."""
    while chunk := await asyncio.to_thread(source.read, CHUNK):
        await socket.send_bytes(bytes([STDIN]) + chunk)
    await socket.send_bytes(bytes([CLOSE, STDIN]))


def _exit_code(status: bytes) -> int:
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

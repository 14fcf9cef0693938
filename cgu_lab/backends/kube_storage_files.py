"""The storage page on Kubernetes: personal and course storage browsed with no notebook running.

The page's requests (list a folder, upload a chunk, make a folder, delete,
zip a selection) run the storage tool (`local_storage_tool`, the local
backend's) in a tool pod (kube_pod_tool) with the storage's volume mounted:

- personal storage: the user's `cgu-storage` claim, in their namespace (made
  here when the page comes first, as a notebook's start would make it);
- a course's storage: its folder of the NFS share (kube_storage), mounted
  read-only unless the caller may write it, in the caller's own namespace, so
  the kernel refuses a member's writes whatever the tool does. Without an NFS
  share there is no course storage, and the page says so.

Who may open which storage is the controller's rule (controller/storage/service.py);
the pod only ever sees the one volume. The allowance is checked by the tool
on every upload chunk, and the claim's size is a wall the volume enforces
(`enforcement`). A request waits for its pod (a second or two on a node that
has the image): slower than locally, and said on the page by its progress.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ..core.errors import NotSupported
from . import kube_names as names
from . import kube_pod_tool as tool
from . import kube_storage as storage
from .base import BackendError
from .kube_connection import Connection
from .kube_namespaces import Namespaces
from .kube_settings import KubeSettings
from .storage_answer import answer

TOOL = ["python", "-m", "cgu_lab.backends.local_storage_tool"]


@dataclass(frozen=True)
class Place:
    """Where a storage request works: the namespace its pod runs in, the volume."""

    namespace: str
    volume: dict[str, Any]
    writable: bool
    actor: str
    umask: int


class KubeStorage:
    """The kubernetes backend's `storage` (what controller/storage asks of a backend).

    Given the backend's connection (a personal storage claim is created through its
    API client), its settings and naming (which namespace and volume a request uses),
    its namespaces (made ready before the first request writes there) and its tool
    pods (kube_pod_tool: the warm pod a request runs in, and its image)."""

    enforcement = (
        "checked by the platform on every upload from this page; the storage's volume "
        "also holds no more than its size, whatever writes to it"
    )

    def __init__(
        self,
        cluster: Connection,
        settings: KubeSettings,
        naming: names.Naming,
        namespaces: Namespaces,
        tools: tool.PodTool,
    ) -> None:
        self.cluster = cluster
        self.settings = settings
        self.naming = naming
        self.namespaces = namespaces
        self.tools = tools

    async def place(self, owner: str | None, course: str | None, actor: str, writer: bool) -> Place:
        if course is None:
            assert owner is not None
            namespace = self.naming.user_namespace(owner)
            await self.namespaces.ensure(namespace, owner)
            claim = storage.storage_claim(namespace, owner, self.settings)
            await self.cluster.api.create(claim, True)
            volume = {
                "name": storage.STORAGE_VOLUME,
                "persistentVolumeClaim": {"claimName": storage.STORAGE_CLAIM},
            }
            return Place(namespace, volume, writer, actor, 0o077)
        volume = storage.course_volume(course, writer, self.settings)
        if volume is None:
            raise NotSupported(
                "course storage on the kubernetes backend needs an NFS share "
                "(CGU_LAB_KUBE_COURSE_STORAGE_NFS); ask an administrator to set one"
            )
        namespace = self.naming.user_namespace(actor)
        await self.namespaces.ensure(namespace, actor)
        return Place(namespace, volume, writer, actor, 0o002)

    def _argv(self, place: Place, command: str, plan: dict) -> list[str]:
        return [*TOOL, command, json.dumps({"root": tool.MOUNT, "umask": place.umask, **plan})]

    @contextlib.asynccontextmanager
    async def _frames(self, place: Place, command: str, plan: dict, stdin: bytes | None):
        tools = self.tools
        image = tools.image_for(place.namespace, place.actor)
        async with (
            tools.pod(
                place.namespace, place.volume, image, place.actor, not place.writable, keep=True
            ) as pod,
            contextlib.aclosing(
                tools.frames(place.namespace, pod, self._argv(place, command, plan), stdin)
            ) as frames,
        ):
            yield frames

    async def run(self, place: Place, command: str, plan: dict, stdin: bytes | None = None) -> dict:
        output, errors, status = bytearray(), bytearray(), bytearray()
        async with self._frames(place, command, plan, stdin) as frames:
            async for channel, data in frames:
                if channel == tool.STDOUT:
                    output.extend(data)
                elif channel == tool.STDERR:
                    errors.extend(data)
                elif channel == tool.STATUS:
                    status.extend(data)
        return answer(tool.exit_code(bytes(status)), bytes(output), bytes(errors))

    async def stream_zip(self, place: Place, paths: list[str]) -> AsyncIterator[bytes]:
        """The zip's blocks as they come; a refusal before the first byte raises."""
        stack = contextlib.AsyncExitStack()
        frames = await stack.enter_async_context(self._frames(place, "zip", {"paths": paths}, None))
        errors, status = bytearray(), bytearray()
        try:
            first = b""
            async for channel, data in frames:
                if channel == tool.STDOUT and data:
                    first = data
                    break
                (errors if channel == tool.STDERR else status).extend(data)
            if not first:
                answer(tool.exit_code(bytes(status)), b"{}", bytes(errors))
        except BaseException:
            await stack.aclose()
            raise

        async def blocks() -> AsyncIterator[bytes]:
            async with stack:
                yield first
                async for channel, data in frames:
                    if channel == tool.STDOUT:
                        yield data
                    elif channel == tool.STATUS:
                        status.extend(data)
                if tool.exit_code(bytes(status)) != 0:
                    # Leave the chunked body unfinished: the browser marks the download failed.
                    raise BackendError(f"the zip of {paths} stopped halfway")

        return blocks()

"""Files of homes on Kubernetes: templates, submissions and lab files, copied as their user.

Templates, submissions and class deployments move files between homes and the
controller's store as tar streams, through the file tool (`local_files`): pack
writes the selection to stdout, unpack reads a copy on stdin. Locally the
controller runs that tool as the home's owner. On Kubernetes a home is a
PersistentVolumeClaim the controller cannot mount, so the same tool runs in a
tool pod (kube_pod_tool) in the owner's namespace with the claim mounted where
notebooks mount their home (or the user's course folders, see
`COURSES_CLAIM`), so the tool sees the same paths.

Running as the notebook's user is what keeps a student's planted symbolic link
from redirecting the copy: the tool refuses links anyway, and it could reach
only the volume mounted for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

from . import kube_names as names
from . import kube_parts as parts
from . import kube_pod_tool as tool
from .base import BackendError
from .kube_api import KubeError
from .kube_connection import Connection
from .kube_namespaces import Namespaces
from .kube_settings import KubeSettings

Obj = dict[str, Any]
COURSES_CLAIM = names.COURSES_CLAIM
TOOL = ["python", "-m", "cgu_lab.backends.local_files"]


def tool_result(code: int, lines: list[dict], key: str) -> dict:
    """The file tool's answer, or its refusal as a BackendError the user can read."""
    for line in reversed(lines):
        if "error" in line:
            raise BackendError(line["error"])
        if key in line and code == 0:
            return line[key]
    raise BackendError(f"copying files failed (exit code {code})")


def courses_claim(namespace: str, owner: str, settings: KubeSettings) -> Obj:
    """The user's course folders, kept like a home: only deleting the user removes them.
    A cluster of several nodes needs ReadWriteMany here (two notebooks mount it)."""
    labels = {**parts.platform_labels(settings, "courses"), names.USER: names.slug(owner, 63)}
    return parts.volume_claim(
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
        **parts.platform_labels(settings, "home"),
        names.USER: names.slug(owner, 63),
        "app": ref.name,
        names.NOTEBOOK_NAME: ref.name,
    }
    annotations = {names.OWNER: owner, names.NOTEBOOK: notebook}
    return parts.volume_claim(
        ref.home, ref.namespace, labels, annotations, settings.home_size, settings
    )


class HomeFiles:
    """pack/unpack of the kubernetes backend: where the files are, which image, the pod.

    Given the backend's connection (the claims are created and read through its API
    client), its settings and naming (which namespace and claim hold a user's files),
    its namespaces (made ready before a first copy writes there) and its tool pods
    (kube_pod_tool: the pod the copy runs in, and the image it runs)."""

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
        api = self.cluster.api
        namespace = self.naming.user_namespace(owner)
        if area == "courses":
            claim = COURSES_CLAIM
            made = courses_claim(namespace, owner, self.settings)
        else:
            ref = self.naming.notebook(owner, area)
            claim = ref.home
            made = seed_claim(ref, owner, area, self.settings)
        if create:
            await self.namespaces.ensure(namespace, owner)
            await api.create(made, True)
        else:
            try:
                found = await api.get("PersistentVolumeClaim", claim, namespace)
            except KubeError as error:
                if error.status != 403:  # 403: no namespace of ours yet
                    raise
                found = None
            if found is None:
                raise BackendError(f"{owner} has no files for notebook '{area}' yet")
        return namespace, claim, image or self.tools.image_for(namespace, owner, area)

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
        out, err = bytearray(), bytearray()
        lines: list[dict] = []
        status = b""
        argv = [*TOOL, command, json.dumps({"root": tool.MOUNT, **plan})]
        volume = tool.claim_volume(claim)
        tools = self.tools
        async with (
            tools.pod(namespace, volume, image, owner) as pod,
            contextlib.aclosing(tools.frames(namespace, pod, argv, stdin)) as frames,
        ):
            async for channel, data in frames:
                if channel == tool.STDOUT:
                    if stdout is not None:
                        await asyncio.to_thread(stdout.write, data)
                    else:
                        out.extend(data)
                elif channel == tool.STDERR:
                    err.extend(data)
                    *complete, rest = err.split(b"\n")
                    err[:] = rest
                    for line in tool.json_lines(b"\n".join(complete)):
                        lines.append(line)
                        if "done" in line and on_progress is not None:
                            await on_progress(line["done"])
                elif channel == tool.STATUS:
                    status += data
        lines.extend(tool.json_lines(bytes(err)))
        return tool.exit_code(status), bytes(out), lines

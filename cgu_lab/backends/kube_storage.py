"""Personal and course storage on Kubernetes: the claims and mounts of a notebook pod.

Personal storage is one PersistentVolumeClaim per user (`cgu-storage`, in the
user's namespace beside `cgu-courses`), kept like a home: deleting notebooks
never removes it. Every JupyterLab pod of the user mounts it at ~/storage.
Its access mode is `storage_access_mode` (ReadWriteMany where notebooks of
one user run on several nodes; the class must offer it) and its size,
`storage_size`, is the hard limit the volume itself enforces.

Course storage is stored once for the whole course. A claim cannot be mounted
from another namespace, and every member's notebook runs in their own, so a
per-course claim would have to be copied per member (60 copies of a 5 GB data
set: what course storage exists to avoid). It is therefore a folder of one
NFS export (`course_storage_nfs`, "server:/export"), `<export>/<installation>/
courses/<course>`, mounted straight into the pod: read-only for members (the
volume and the mount both say so, so the kernel refuses writes whatever the
files' modes), read-write for the course's writers. Baseline pod security
allows NFS volumes. Without `course_storage_nfs` no course storage is
mounted, and the storage page says the backend does not offer it.

VM notebooks mount neither: a VM sees only its home disk.
"""

from __future__ import annotations

import hashlib
import posixpath

from . import kube_names as names
from . import kube_parts as parts
from .base import NotebookSpec
from .kube_settings import KubeSettings

Obj = dict
STORAGE_CLAIM = "cgu-storage"
STORAGE_VOLUME = "storage"


def storage_claim(namespace: str, owner: str, settings: KubeSettings) -> Obj:
    """The user's personal storage: only deleting the user removes it."""
    labels = {**parts.platform_labels(settings, "storage"), names.USER: names.slug(owner, 63)}
    return parts.volume_claim(
        STORAGE_CLAIM,
        namespace,
        labels,
        {names.OWNER: owner},
        settings.storage_size,
        settings,
        settings.storage_access_mode,
    )


def nfs_source(course_storage_nfs: str) -> tuple[str, str] | None:
    """("server", "/export") of the setting, None when unset."""
    if not course_storage_nfs:
        return None
    server, _, export = course_storage_nfs.partition(":")
    return server, export or "/"


def course_volume_name(course: str) -> str:
    """A pod volume's name (a DNS label of at most 63) for a course's storage."""
    digest = hashlib.sha256(course.encode()).hexdigest()[:8]
    return f"course-{names.slug(course, 40)}-{digest}"


def course_volume(course: str, writable: bool, settings: KubeSettings) -> Obj | None:
    source = nfs_source(settings.course_storage_nfs)
    if source is None:
        return None
    server, export = source
    path = posixpath.join(export, settings.installation, "courses", course)
    nfs = {"server": server, "path": path, "readOnly": not writable}
    return {"name": course_volume_name(course), "nfs": nfs}


def mounts(spec: NotebookSpec, settings: KubeSettings, home: str) -> tuple[list[Obj], list[Obj]]:
    """The volumes and volume mounts a JupyterLab pod adds for storage."""
    volumes: list[Obj] = [
        {"name": STORAGE_VOLUME, "persistentVolumeClaim": {"claimName": STORAGE_CLAIM}}
    ]
    mounted: list[Obj] = [{"name": STORAGE_VOLUME, "mountPath": f"{home}/storage"}]
    for course, writable in spec.courses:
        volume = course_volume(course, writable, settings)
        if volume is None:
            continue
        volumes.append(volume)
        mounted.append(
            {
                "name": volume["name"],
                "mountPath": f"{home}/courses/{course}/shared",
                "readOnly": not writable,
            }
        )
    return volumes, mounted

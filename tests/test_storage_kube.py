"""Personal and course storage on Kubernetes (issue 15): the claims and mounts, without a cluster.

Every object is validated as test_kube_objects validates the backend's others
(the Kubernetes OpenAPI schema, strict; the Notebook against its CRD).
"""

from __future__ import annotations

import pytest

from cgu_lab.backends import kube_storage as storage
from cgu_lab.backends.base import BackendError
from cgu_lab.backends.kube_settings import KubeSettings

from .test_kube_objects import KUBE, NAMING, make_spec, validate

NFS = KubeSettings(
    storage_class="fast",
    storage_access_mode="ReadWriteMany",
    storage_size="20Gi",
    course_storage_nfs="nfs.cluster.local:/exports/cgu",
    installation="school",
)


def pod_of(notebook: dict) -> dict:
    return notebook["spec"]["template"]["spec"]


def test_every_user_has_a_storage_claim_kept_like_a_home():
    claim = storage.storage_claim("cgu-u-john-doe", "john.doe", NFS)
    validate(claim)
    assert claim["metadata"]["name"] == "cgu-storage"
    assert claim["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "20Gi"}},
        "storageClassName": "fast",
    }
    assert claim["metadata"]["annotations"]["cgu-lab.io/owner"] == "john.doe"
    # No owner reference: deleting notebooks (or their Notebook objects) never takes it.
    assert "ownerReferences" not in claim["metadata"]
    assert KubeSettings().storage_access_mode == "ReadWriteOnce"  # one node: the usual class


def test_a_notebook_mounts_storage_and_its_courses_read_only_for_members():
    from cgu_lab.backends import kube_objects as objects

    spec = make_spec(courses=(("ml-2026", False), ("dl-2026", True)))
    ref = NAMING.notebook(spec.owner, spec.name)
    notebook = objects.notebook(ref, spec, NFS)
    validate(notebook)
    pod = pod_of(notebook)
    mounts = {m["mountPath"]: m for m in pod["containers"][0]["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    home = "/home/jovyan"
    assert volumes[mounts[f"{home}/storage"]["name"]] == {
        "name": "storage",
        "persistentVolumeClaim": {"claimName": "cgu-storage"},
    }
    member = mounts[f"{home}/courses/ml-2026/shared"]
    assert member["readOnly"] is True
    assert volumes[member["name"]]["nfs"] == {
        "server": "nfs.cluster.local",
        "path": "/exports/cgu/school/courses/ml-2026",
        "readOnly": True,
    }
    writer = mounts[f"{home}/courses/dl-2026/shared"]
    assert writer["readOnly"] is False and volumes[writer["name"]]["nfs"]["readOnly"] is False
    # One export folder per course, whoever mounts it: stored once.
    other = make_spec(owner="jane", courses=(("ml-2026", False),))
    other_pod = pod_of(objects.notebook(NAMING.notebook("jane", "hw1"), other, NFS))
    assert volumes[member["name"]] in other_pod["volumes"]


def test_without_an_nfs_share_only_personal_storage_is_mounted():
    from cgu_lab.backends import kube_objects as objects

    spec = make_spec(courses=(("ml-2026", False),))
    pod = pod_of(objects.notebook(NAMING.notebook(spec.owner, spec.name), spec, KUBE))
    paths = [m["mountPath"] for m in pod["containers"][0]["volumeMounts"]]
    assert "/home/jovyan/storage" in paths
    assert not any("/shared" in p for p in paths)


def test_course_volume_names_are_dns_labels_and_distinct():
    long = "a" * 63
    names = {storage.course_volume_name(c) for c in ("ml-2026", "ml-2027", long, long[:-1] + "b")}
    assert len(names) == 4 and all(len(n) <= 63 for n in names)


def test_a_malformed_nfs_share_stops_the_controller_with_a_sentence():
    with pytest.raises(BackendError, match=r"COURSE_STORAGE_NFS .* is not an NFS share"):
        KubeSettings(course_storage_nfs="no colon here")


def test_the_storage_page_runs_its_tool_in_a_pod_that_sees_only_the_one_volume():
    """A member's request mounts the course's share read-only (the kernel refuses writes),
    a writer's read-write; the pod is the notebooks' user's, with no API token."""
    from cgu_lab.backends import kube_pod_tool as tool

    for writer in (False, True):
        volume = storage.course_volume("ml-2026", writer, NFS)
        pod = tool.tool_pod("cgu-u-ana", volume, "nb:1", NFS, "ana", read_only=not writer)
        validate(pod)
        spec = pod["spec"]
        assert spec["volumes"] == [volume] and volume["nfs"]["readOnly"] is not writer
        (mount,) = spec["containers"][0]["volumeMounts"]
        assert mount["mountPath"] == tool.MOUNT and mount.get("readOnly", False) is not writer
        assert spec["automountServiceAccountToken"] is False
        assert spec["securityContext"]["runAsNonRoot"] is True


def test_course_storage_without_an_nfs_share_is_refused_by_name():
    import asyncio

    from cgu_lab.backends import create_backend
    from cgu_lab.controller.settings import Settings
    from cgu_lab.controller.storage import service
    from cgu_lab.core.errors import NotSupported

    backend = create_backend("kubernetes", Settings())
    files = service.files_of(backend)
    with pytest.raises(NotSupported, match="needs an NFS share") as refused:
        asyncio.run(files.place(None, "ml-2026", "ana", False))
    assert refused.value.status == 501 and "COURSE_STORAGE_NFS" in refused.value.message

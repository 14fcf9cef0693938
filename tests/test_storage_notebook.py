"""Storage inside a real notebook (issue 15): a real JupyterLab, the controller in the
test's process (conftest's `notebook_servers` layer).

A member's JupyterLab (running as the member's own account, with the groups the
local backend gives it) reads the course's shared storage at
~/courses/<course>/shared and cannot write it through the link; it writes its
owner's ~/storage, whose files the portal then lists, and which outlives the
deletion of every notebook of the owner.
"""

from __future__ import annotations

import os

import pytest

from .test_storage import upload

COURSE = "nb-storage"
NOTEBOOK = "/notebook/alice/with-storage"

pytestmark = [
    pytest.mark.notebook_servers,
    pytest.mark.skipif(os.geteuid() != 0, reason="per-user accounts need root"),
]


@pytest.fixture(scope="module")
def started(admin, teacher, alice):
    admin.ok("POST", "/api/groups", 201, json={"name": COURSE, "display_name": "NB Storage"})
    for user, manager in (("teacher", True), ("alice", False)):
        admin.ok("PUT", f"/api/groups/{COURSE}/members/{user}", json={"manager": manager})
    assert upload(teacher, "courses", COURSE, "data/train.csv", b"x,y\n1,2\n").status_code == 200
    alice.ok(
        "POST", "/api/notebooks", 201, json={"name": "with-storage", "cpu": 1, "memory": "1Gi"}
    )
    nb = alice.ok("POST", "/api/notebooks/alice/with-storage/start?wait=true", 202)
    assert nb["state"] == "running", nb
    return NOTEBOOK


def test_a_members_lab_reads_course_storage_and_cannot_write_it(started, alice, site):
    shared = f"{started}/api/contents/courses/{COURSE}/shared"
    read = alice.ok("GET", f"{shared}/data/train.csv", params={"content": 1, "format": "text"})
    assert read["content"] == "x,y\n1,2\n"
    body = {"type": "file", "format": "text", "content": "mine"}
    refused = alice.put(f"{shared}/data/mine.csv", json=body)
    assert refused.status_code == 403, refused.text
    assert alice.delete(f"{shared}/data/train.csv").status_code in (403, 500)
    course_root = site.data_dir / "storage" / "courses" / COURSE / "shared" / "data"
    assert sorted(os.listdir(course_root)) == ["train.csv"]


def test_the_lab_writes_my_storage_and_it_outlives_every_notebook(started, alice):
    body = {"type": "file", "format": "text", "content": "kept"}
    alice.ok("PUT", f"{started}/api/contents/storage/from-lab.txt", 201, json=body)
    listing = alice.ok("GET", "/api/storage/users/alice")
    assert [e["name"] for e in listing["entries"]] == ["from-lab.txt"]
    alice.ok("POST", "/api/notebooks/alice/with-storage/stop?wait=true", 202)
    alice.ok("DELETE", "/api/notebooks/alice/with-storage")
    assert all(nb["owner"] != "alice" for nb in alice.ok("GET", "/api/notebooks"))
    listing = alice.ok("GET", "/api/storage/users/alice")
    assert [e["name"] for e in listing["entries"]] == ["from-lab.txt"]

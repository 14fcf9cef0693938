"""Personal and course storage (issue 15) on the local backend, through the portal's API.

The controller runs in this process (conftest's `in_process`) as root, so every user
has their own Unix account and every file request runs the storage tool as that
account (backends/local_storage.py). What a notebook does in storage is tried with a
process started by the notebook launcher as the member, with the groups a notebook
of theirs gets: the permissions on disk, not the portal, must refuse it.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import select

from cgu_lab.controller.storage import service
from cgu_lab.store.models import User

COURSE = "stor-course"
CHUNK = 40_000


@pytest.fixture(scope="module")
def course(admin, login):
    """A course with a teacher, a TA (a manager with the ta role) and alice as member;
    alice may hold 100 KB of her own, the course 1 MiB."""
    login("ta1", "ta")
    login("carol", "student")
    admin.ok("POST", "/api/groups", 201, json={"name": COURSE, "display_name": "Storage 101"})
    for user, manager in (("teacher", True), ("ta1", True), ("alice", False)):
        admin.ok("PUT", f"/api/groups/{COURSE}/members/{user}", json={"manager": manager})
    admin.ok("PUT", f"/api/groups/{COURSE}/quota", json={"disk": "1Mi"})
    admin.ok("PUT", "/api/users/alice/quota", json={"disk": 100_000})
    return COURSE


def upload(session, kind: str, name: str, path: str, data: bytes, chunk: int = CHUNK):
    """Send `data` as the page does: chunks at increasing offsets; the last response."""
    offset, response, upload_id = 0, None, secrets.token_hex(8)
    while True:
        part = data[offset : offset + chunk]
        params = {"path": path, "upload": upload_id, "offset": offset, "total": len(data)}
        response = session.put(f"/api/storage/{kind}/{name}/upload", params=params, content=part)
        if response.status_code != 200:
            return response
        offset += len(part)
        if offset >= len(data):
            return response


def names(session, kind: str, name: str, path: str = "") -> list[str]:
    listing = session.ok("GET", f"/api/storage/{kind}/{name}", params={"path": path})
    return [entry["name"] for entry in listing["entries"]]


def as_member(site, user: str, code: str) -> subprocess.CompletedProcess:
    """Run `code` as a notebook of `user` would run: their account, their course groups."""
    platform = site.platform

    async def plan() -> dict:
        async with platform.db.session() as session:
            user_id = await session.scalar(select(User.id).where(User.name == user))
            courses = await service.course_mounts(session, user_id)
        backend = platform.backend
        account = await backend.accounts.account(user)
        home = backend.files.home(user, "probe")
        backend.files.prepare_home(home, account.uid, account.gid)
        backend.files.link_courses(user, home, account.uid, account.gid)
        groups = await backend.storage.mount(user, home, account, courses)
        return {
            "argv": [sys.executable, "-c", code],
            "env": {"PATH": "/usr/bin:/bin", "HOME": str(home)},
            "cwd": str(home),
            "uid": account.uid,
            "gid": account.gid,
            "groups": groups,
        }

    launch = site.call(plan)
    return subprocess.run(
        [sys.executable, "-m", "cgu_lab.backends.local_launch"],
        input=json.dumps(launch),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="per-user accounts need root")


def test_my_storage_takes_chunked_uploads_lists_and_zips_a_folder(course, alice):
    data = os.urandom(70_000)
    done = upload(alice, "users", "alice", "results/run1/weights.bin", data)
    assert done.status_code == 200 and done.json() == {"received": 70_000, "done": True}
    upload(alice, "users", "alice", "results/notes.txt", b"hello\n")
    assert names(alice, "users", "alice", "results") == ["notes.txt", "run1"]
    listing = alice.ok("GET", "/api/storage/users/alice")
    assert listing["area"]["allowance"] == 100_000 and listing["used"] >= 70_006
    assert listing["area"]["mounted_at"] == "storage"
    response = alice.get("/api/storage/users/alice/zip", params={"path": "results"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert archive.read("results/run1/weights.bin") == data
        assert archive.read("results/notes.txt") == b"hello\n"


def test_an_upload_past_the_allowance_is_refused_naming_limit_and_use(alice, site):
    used = alice.ok("GET", "/api/storage/users/alice")["used"]
    refused = upload(alice, "users", "alice", "big.bin", os.urandom(50_000))
    assert refused.status_code == 413
    body = refused.json()
    assert body["code"] == "over_allowance" and body["details"]["limit"] == 100_000
    assert body["details"]["used"] == used and body["details"]["needed"] == 50_000
    assert "your disk allowance is 97.7 KiB" in body["message"], body["message"]
    assert "big.bin" not in names(alice, "users", "alice")
    # An upload refused halfway (a kernel filled the storage meanwhile) leaves no part behind.
    start = alice.put(
        "/api/storage/users/alice/upload",
        params={"path": "late.bin", "upload": "late-upload", "offset": 0, "total": 20_000},
        content=b"y" * 10_000,
    )
    assert start.json() == {"received": 10_000, "done": False}
    root = site.platform.backend.storage.user_root("alice")
    assert len(list(root.glob(".cgu-upload-*"))) == 1
    (root / "from-kernel.bin").write_bytes(b"z" * 15_000)
    late = alice.put(
        "/api/storage/users/alice/upload",
        params={"path": "late.bin", "upload": "late-upload", "offset": 10_000, "total": 20_000},
        content=b"y" * 10_000,
    )
    assert late.status_code == 413 and late.json()["code"] == "over_allowance"
    assert not list(root.glob(".cgu-upload-*")) and not (root / "late.bin").exists()
    (root / "from-kernel.bin").unlink()


def test_a_resumed_upload_goes_on_from_what_the_storage_holds(alice):
    data = b"x" * 3_000
    first = alice.put(
        "/api/storage/users/alice/upload",
        params={"path": "resumed.txt", "upload": "resumed-1", "offset": 0, "total": 3_000},
        content=data[:1_000],
    )
    assert first.json() == {"received": 1_000, "done": False}
    skipped = alice.put(
        "/api/storage/users/alice/upload",
        params={"path": "resumed.txt", "upload": "resumed-1", "offset": 2_000, "total": 3_000},
        content=data[2_000:],
    )
    assert skipped.status_code == 409 and skipped.json()["details"]["received"] == 1_000
    rest = alice.put(
        "/api/storage/users/alice/upload",
        params={"path": "resumed.txt", "upload": "resumed-1", "offset": 1_000, "total": 3_000},
        content=data[1_000:],
    )
    assert rest.json() == {"received": 3_000, "done": True}
    alice.ok("DELETE", "/api/storage/users/alice/files", params={"path": "resumed.txt"})


def test_two_uploads_of_one_path_never_mix_their_chunks(alice, site):
    """Two tabs (or two TAs) upload the same name at once: each upload fills its own
    partial; the file in place is always one whole upload, the last to finish."""
    root = site.platform.backend.storage.user_root("alice")
    first, second = b"A" * 4_000, b"B" * 4_000

    def chunk(upload_id: str, data: bytes, offset: int):
        return alice.put(
            "/api/storage/users/alice/upload",
            params={"path": "same.txt", "upload": upload_id, "offset": offset, "total": 4_000},
            content=data[offset : offset + 2_000],
        ).json()

    assert chunk("tab-one-1", first, 0) == {"received": 2_000, "done": False}
    assert chunk("tab-two-2", second, 0) == {"received": 2_000, "done": False}
    assert chunk("tab-one-1", first, 2_000) == {"received": 4_000, "done": True}
    assert (root / "same.txt").read_bytes() == first
    assert chunk("tab-two-2", second, 2_000) == {"received": 4_000, "done": True}
    assert (root / "same.txt").read_bytes() == second
    assert not list(root.glob(".cgu-upload-*"))
    # The same chunks sent at once, many times over: whole files only, no partial left.
    with ThreadPoolExecutor(8) as pool:
        for _ in range(5):
            ids = [f"racer-{n}-{secrets.token_hex(4)}" for n in range(4)]
            blobs = {upload_id: upload_id.encode().ljust(4_000, b".") for upload_id in ids}
            for offset in (0, 2_000):
                list(pool.map(chunk, ids, [blobs[i] for i in ids], [offset] * len(ids)))
            assert (root / "same.txt").read_bytes() in blobs.values()
    assert not list(root.glob(".cgu-upload-*"))
    alice.ok("DELETE", "/api/storage/users/alice/files", params={"path": "same.txt"})


def test_a_partial_abandoned_for_a_day_is_removed_by_the_next_upload(alice, site):
    root = site.platform.backend.storage.user_root("alice")
    old, recent = root / ".cgu-upload-old.part", root / ".cgu-upload-recent.part"
    for path in (old, recent):
        path.write_bytes(b"x" * 100)
    two_days_ago = time.time() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    assert upload(alice, "users", "alice", "fresh.txt", b"new").status_code == 200
    assert not old.exists() and recent.exists()
    recent.unlink()
    alice.ok("DELETE", "/api/storage/users/alice/files", params={"path": "fresh.txt"})


def test_an_upload_without_its_id_is_refused_with_a_reason(alice):
    refused = alice.put(
        "/api/storage/users/alice/upload",
        params={"path": "x.txt", "offset": 0, "total": 1},
        content=b"x",
    )
    assert refused.status_code == 400, refused.text
    assert "upload" in refused.json()["message"], refused.json()


def test_another_user_cannot_read_my_storage(alice, bob, admin, site):
    for other in (bob, admin):
        refused = other.get("/api/storage/users/alice")
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
        assert (
            other.get("/api/storage/users/alice/zip", params={"path": "results"}).status_code == 403
        )
        assert upload(other, "users", "alice", "planted.txt", b"x").status_code == 403
    if os.geteuid() == 0:  # and on disk: bob's own processes cannot enter it either
        mine = site.platform.backend.storage.user_root("alice") / "results" / "notes.txt"
        probe = as_member(site, "bob", f"open({str(mine)!r}).read()")
        assert probe.returncode != 0 and "PermissionError" in probe.stderr


def test_paths_that_climb_out_and_links_are_refused(alice, site):
    for bad in ("../bob/x.txt", "/etc/passwd", "a/../../x", "a\\..\\x"):
        refused = upload(alice, "users", "alice", bad, b"x")
        assert refused.status_code == 400 and refused.json()["message"], bad
    # A link alice planted in her storage (to a folder she can write, even) is never followed.
    root = site.platform.backend.storage.user_root("alice")
    (root / "elsewhere").mkdir(exist_ok=True)
    os.symlink(root / "elsewhere", root / "link")
    os.symlink("/etc", root / "etc-link")
    refused = upload(alice, "users", "alice", "link/x.txt", b"x")
    assert refused.status_code == 409 and "symbolic link" in refused.json()["message"]
    assert not (root / "elsewhere" / "x.txt").exists()
    listing = alice.get("/api/storage/users/alice", params={"path": "etc-link"})
    assert listing.status_code == 409 and "symbolic link" in listing.json()["message"]
    zipped = alice.get("/api/storage/users/alice/zip", params={"path": "etc-link"})
    assert zipped.status_code == 400 and zipped.json()["code"] == "link"
    # Deleting the link removes the link, not the folder it points to.
    alice.ok("DELETE", "/api/storage/users/alice/files", params={"path": "link"})
    assert (root / "elsewhere").is_dir() and not os.path.lexists(root / "link")
    kinds = {e["name"]: e["kind"] for e in alice.ok("GET", "/api/storage/users/alice")["entries"]}
    assert kinds["etc-link"] == "link"


def test_the_teacher_writes_course_storage_and_members_read_it(course, teacher, alice, bob):
    assert upload(teacher, "courses", course, "data/train.csv", b"a,b\n1,2\n").status_code == 200
    assert names(alice, "courses", course, "data") == ["train.csv"]
    zipped = alice.get(f"/api/storage/courses/{course}/zip", params={"path": "data"})
    with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
        assert archive.read("data/train.csv") == b"a,b\n1,2\n"
    refused = upload(alice, "courses", course, "data/mine.csv", b"x")
    assert refused.status_code == 403 and "read-only for its members" in refused.json()["message"]
    assert (
        alice.delete(f"/api/storage/courses/{course}/files", params={"path": "data"}).status_code
        == 403
    )
    assert bob.get(f"/api/storage/courses/{course}").status_code == 403
    areas = {a["name"]: a for a in alice.ok("GET", "/api/storage")["areas"]}
    assert areas[course]["access"] == "read" and areas[course]["mounted_at"] == (
        f"courses/{course}/shared"
    )
    assert areas["alice"]["access"] == "write"


def test_a_ta_writes_course_storage_only_where_the_teacher_allows(course, teacher, login, alice):
    ta = login("ta1")
    refused = upload(ta, "courses", course, "ta.txt", b"x")
    assert refused.status_code == 403 and "not allowed TAs" in refused.json()["message"]
    assert (
        alice.put(f"/api/storage/courses/{course}/settings", json={"ta_write": True}).status_code
        == 403
    )
    assert (
        ta.put(f"/api/storage/courses/{course}/settings", json={"ta_write": True}).status_code
        == 403
    )
    setting = teacher.ok("PUT", f"/api/storage/courses/{course}/settings", json={"ta_write": True})
    assert setting["ta_write"] is True
    assert upload(ta, "courses", course, "ta.txt", b"from the TA").status_code == 200
    teacher.ok("PUT", f"/api/storage/courses/{course}/settings", json={"ta_write": False})
    assert upload(ta, "courses", course, "ta2.txt", b"x").status_code == 403


def test_course_storage_has_the_courses_allowance(course, teacher):
    refused = upload(teacher, "courses", course, "huge.bin", b"\0" * (2 * 2**20), chunk=2**20)
    assert refused.status_code == 413
    assert "the disk allowance of course 'stor-course' is 1 MiB" in refused.json()["message"]


@needs_root
def test_a_members_notebook_reads_course_storage_and_cannot_write_it(course, teacher, alice, site):
    shared = f"courses/{course}/shared"
    # The teacher's notebook writes with its umask 077; members still read what it made.
    made = as_member(site, "teacher", f"open('{shared}/from-notebook.txt', 'w').write('hi')")
    assert made.returncode == 0, made.stderr
    read = as_member(site, "alice", f"print(open('{shared}/from-notebook.txt').read())")
    assert read.returncode == 0 and read.stdout.strip() == "hi", read.stderr
    for attempt in (
        f"open('{shared}/mine.txt', 'w')",
        f"open('{shared}/from-notebook.txt', 'a')",
        f"import os; os.remove('{shared}/from-notebook.txt')",
        f"import os; os.mkdir('{shared}/dir')",
    ):
        probe = as_member(site, "alice", attempt)
        assert probe.returncode != 0 and "PermissionError" in probe.stderr, attempt
    # Through the link, too: the permissions are the target's.
    target = os.readlink(Path(site.platform.backend.course_folders, "alice", course, "shared"))
    assert target == str(site.platform.backend.storage.course_root(course))
    # Her own storage is hers to write from a notebook.
    own = as_member(site, "alice", "open('storage/from-kernel.txt', 'w').write('mine')")
    assert own.returncode == 0, own.stderr
    assert "from-kernel.txt" in names(alice, "users", "alice")
    # Someone outside the course cannot even enter it.
    outside = as_member(site, "carol", f"import os; os.listdir({str(target)!r})")
    assert outside.returncode != 0 and "PermissionError" in outside.stderr


def test_storage_survives_deleting_every_notebook(alice, site):
    alice.ok("POST", "/api/notebooks", 201, json={"name": "temp", "cpu": 0.5, "memory": "512Mi"})
    alice.ok("DELETE", "/api/notebooks/alice/temp")
    assert alice.ok("GET", "/api/notebooks") == [] or all(
        nb["owner"] != "alice" for nb in alice.ok("GET", "/api/notebooks")
    )
    assert "results" in names(alice, "users", "alice")
    assert names(alice, "users", "alice", "results/run1") == ["weights.bin"]

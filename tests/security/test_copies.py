"""Copies never follow a symbolic link in any part of a path, and `next` stays in its notebook.

A real controller copies files for templates, submissions, class deployments
and a new notebook's seed. It runs with `run_as=self`, and as root here, so
the file tool has every right on the host: only the way it walks (one folder
at a time, O_NOFOLLOW) keeps it inside the homes. Links lead to /etc and to a
folder `outside` with a secret; the checks are on the real files: what the
archives in the store hold, and what `outside` holds afterwards.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import time
from pathlib import Path

import pytest

from ..harness import Controller, reachable_dir

pytestmark = [pytest.mark.integration, pytest.mark.end_to_end]

SECRET = "the answers to every exam"
PASSWD_LINE = b"root:x:0:0"


@pytest.fixture(scope="module")
def site():
    base = reachable_dir()
    ctl = Controller(base / "data", env={"CGU_LAB_RUN_AS": "self"})
    ctl.create_users(
        [("boss", "admin"), ("prof", "teacher"), ("alice", "student"), ("bob", "student")]
    )
    ctl.start()
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    with ctl.client("prof") as prof:
        prof.ok("POST", "/api/groups", 201, json={"name": "cs"})
    with ctl.client("boss") as boss:
        for student in ("alice", "bob"):
            boss.ok("PUT", f"/api/groups/cs/members/{student}", json={"manager": False})
    yield ctl, outside
    ctl.stop()
    ctl.kill_notebooks()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def prof(site):
    with site[0].client("prof") as session:
        yield session


@pytest.fixture(scope="module")
def alice(site):
    with site[0].client("alice") as session:
        yield session


@pytest.fixture(scope="module")
def bob(site):
    with site[0].client("bob") as session:
        yield session


def home_of(ctl: Controller, owner: str, name: str) -> Path:
    return ctl.data_dir / "homes" / owner / name


def make_notebook(session, ctl: Controller, name: str) -> Path:
    """A stopped notebook whose home we fill directly on disk, as its owner would."""
    session.ok("POST", "/api/notebooks", 201, json={"name": name, "cpu": 0.5, "memory": "512Mi"})
    home = home_of(ctl, session.name, name)
    home.mkdir(parents=True, exist_ok=True)
    return home


def archived(ctl: Controller) -> dict[str, bytes]:
    """Every file of every archive in the store: templates, submissions, deployments."""
    found: dict[str, bytes] = {}
    for path in (ctl.data_dir / "store").rglob("*.tar"):
        if path.stat().st_size == 0:  # a deployment refused before it packed anything
            continue
        with tarfile.open(path) as archive:
            for member in archive.getmembers():
                assert member.isfile() or member.isdir(), member.name
                if member.isfile():
                    found[f"{path.name}:{member.name}"] = archive.extractfile(member).read()
    return found


def assert_outside_untouched(outside: Path) -> None:
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET


def assert_nothing_leaked(ctl: Controller) -> None:
    for name, data in archived(ctl).items():
        assert SECRET.encode() not in data, name
        assert PASSWD_LINE not in data, name


def wait_deployment(session, deployment_id: int) -> dict:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        deployment = session.ok("GET", f"/api/deployments/{deployment_id}")
        if deployment["state"] != "running":
            return deployment
        time.sleep(0.3)
    raise AssertionError("the deployment did not finish")


def test_a_template_never_takes_files_through_a_linked_folder(site, prof):
    ctl, outside = site
    home = make_notebook(prof, ctl, "prep")
    (home / "hw1").mkdir()
    (home / "hw1" / "task.txt").write_text("solve x")
    (home / "hw1" / "etclink").symlink_to("/etc", target_is_directory=True)
    (home / "hw1" / "outlink").symlink_to(outside, target_is_directory=True)
    published = prof.ok(
        "POST",
        "/api/templates",
        201,
        json={
            "notebook": "prep",
            "name": "tpl",
            "visibility": "public",
            "paths": ["hw1", "hw1/etclink/passwd", "hw1/outlink/secret.txt"],
        },
    )
    assert published["latest"]["files"] == 1
    assert [name.split(":", 1)[1] for name in archived(ctl)] == ["hw1/task.txt"]
    assert_nothing_leaked(ctl)


def test_a_submission_never_takes_files_through_a_linked_folder(site, prof, alice):
    ctl, outside = site
    assignment = prof.ok("POST", "/api/groups/cs/assignments", 201, json={"name": "hw"})
    submit = f"/api/assignments/{assignment['id']}/submissions"
    home = make_notebook(alice, ctl, "work")
    (home / "hw").mkdir()
    (home / "hw" / "answer.txt").write_text("42")
    (home / "hw" / "etclink").symlink_to("/etc", target_is_directory=True)
    (home / "deep" / "er").mkdir(parents=True)
    (home / "deep" / "er" / "link").symlink_to(outside, target_is_directory=True)
    # The case: a link in the middle of the path. Nothing is left, so nothing is taken.
    refused = alice.post(submit, json={"notebook": "work", "paths": ["hw/etclink/passwd"]})
    assert refused.status_code == 400, refused.text
    assert "holds no files" in refused.json()["message"]
    refused = alice.post(submit, json={"notebook": "work", "paths": ["deep/er/link/secret.txt"]})
    assert refused.status_code == 400
    taken = alice.ok(
        "POST", submit, 201, json={"notebook": "work", "paths": ["hw", "deep", "hw/etclink/group"]}
    )
    assert taken["files"] == 1
    manifest = alice.ok("GET", f"/api/submissions/{taken['id']}")["manifest"]
    assert [entry["path"] for entry in manifest] == ["hw/answer.txt"]
    assert_nothing_leaked(ctl)
    assert_outside_untouched(outside)


def test_a_deployment_never_writes_through_a_link_a_student_planted(site, prof):
    ctl, outside = site
    folders = ctl.data_dir / "course-folders"
    # bob's course folder is a link to elsewhere; alice's week1 hides a link one level down
    (folders / "bob").mkdir(parents=True, exist_ok=True)
    (folders / "bob" / "cs").symlink_to(outside, target_is_directory=True)
    (folders / "alice" / "cs" / "week1").mkdir(parents=True, exist_ok=True)
    (folders / "alice" / "cs" / "week1" / "hw1").symlink_to(outside, target_is_directory=True)
    (folders / "alice" / "cs" / "week2").mkdir(parents=True, exist_ok=True)
    (folders / "alice" / "cs" / "week2" / "task.txt").symlink_to(outside / "secret.txt")
    started = prof.ok(
        "POST",
        "/api/groups/cs/deployments",
        202,
        json={"notebook": "prep", "path": "", "destination": "week1"},
    )
    report = wait_deployment(prof, started["id"])["report"]
    assert "symbolic link" in report["bob"]["error"]
    assert report["alice"]["copied"] == 0  # hw1/task.txt lies below her planted link
    assert_outside_untouched(outside)
    # A member's file that is a link is kept; the copy lands beside it.
    started = prof.ok(
        "POST",
        "/api/groups/cs/deployments",
        202,
        json={"notebook": "prep", "path": "hw1", "destination": "week2"},
    )
    report = wait_deployment(prof, started["id"])["report"]
    assert report["alice"]["conflicts"] == [
        {"path": "cs/week2/task.txt", "saved_as": "cs/week2/task (from prof).txt"}
    ]
    assert os.path.islink(folders / "alice" / "cs" / "week2" / "task.txt")
    assert (folders / "alice" / "cs" / "week2" / "task (from prof).txt").read_text() == "solve x"
    assert_outside_untouched(outside)


def test_a_deployment_source_behind_a_link_is_refused(site, prof):
    ctl, _ = site
    started = prof.ok(
        "POST",
        "/api/groups/cs/deployments",
        202,
        json={"notebook": "prep", "path": "hw1/outlink", "destination": "leak"},
    )
    deployment = wait_deployment(prof, started["id"])
    assert deployment["state"] == "failed"
    assert "'hw1/outlink' is a symbolic link" in deployment["report"]["*"]["error"]
    assert_nothing_leaked(ctl)
    assert not (ctl.data_dir / "course-folders" / "alice" / "cs" / "leak").exists()


def test_a_seed_copy_never_writes_through_a_planted_link(site, bob):
    ctl, outside = site
    home = home_of(ctl, "bob", "seeded")
    home.mkdir(parents=True)
    (home / "hw1").symlink_to(outside, target_is_directory=True)
    bob.ok("POST", "/api/notebooks", 201, json={"name": "seeded", "template": "tpl"})
    started = bob.ok("POST", "/api/notebooks/bob/seeded/start?wait=true", 202)
    assert started["state"] == "running", started["message"]
    assert os.path.islink(home / "hw1")
    # bob's course folder is still the link he planted above: left alone, never followed
    assert os.path.islink(ctl.data_dir / "course-folders" / "bob" / "cs")
    assert_outside_untouched(outside)
    bob.ok("POST", "/api/notebooks/bob/seeded/stop?wait=true", 202)


# -- the auto-start page's `next` -------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "/notebook/alice/work/../../../api/me",
        "/notebook/alice/work/%2e%2e/%2e%2e/%2e%2e/api/me",
        "/notebook/alice/work/..%5c..%5c..%5capi/me",
        "//evil.example/notebook/alice/work/lab",
        "/notebook/alice/work",
    ],
)
def test_auto_start_next_cannot_leave_the_notebook(alice, target):
    page = alice.get("/notebook/auto-start/alice/work", params={"next": target})
    assert page.status_code == 200, page.text
    assert 'data-next="/notebook/alice/work/lab"' in page.text


def test_auto_start_next_keeps_a_page_of_the_notebook(alice):
    target = "/notebook/alice/work/lab/tree/hw/answer.txt"
    page = alice.get("/notebook/auto-start/alice/work", params={"next": target})
    assert f'data-next="{target}"' in page.text

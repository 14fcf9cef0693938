"""Packing and unpacking files as their owner: selections, exclusions, limits,
symbolic links, conflicts that are never overwritten, and hostile archives."""

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from cgu_lab.backends.local_files import Refused, pack, selection, unpack
from cgu_lab.core.errors import Invalid
from cgu_lab.core.selection import DEFAULT_EXCLUDED, excluded


@pytest.fixture
def home(tmp_path):
    root = tmp_path / "home"
    (root / "hw1" / ".ipynb_checkpoints").mkdir(parents=True)
    (root / "hw1" / "task.ipynb").write_text('{"cells": []}')
    (root / "hw1" / ".ipynb_checkpoints" / "task-checkpoint.ipynb").write_text("old")
    (root / "hw1" / "data.csv").write_text("a,b\n1,2\n")
    (root / "notes.txt").write_text("notes")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (root / "escape").symlink_to("/etc/passwd")
    return root


def test_excluded_patterns_match_names_and_paths():
    assert (
        excluded("hw1/.ipynb_checkpoints/a.ipynb", list(DEFAULT_EXCLUDED)) == ".ipynb_checkpoints"
    )
    assert excluded("lib/x.pyc", ["*.pyc"]) == "*.pyc"
    assert excluded("hw1/task.ipynb", list(DEFAULT_EXCLUDED)) is None


def test_selection_skips_excluded_and_links(home):
    files, skipped = selection(
        home, ["hw1", "notes.txt", "escape", "__pycache__", "missing"], list(DEFAULT_EXCLUDED)
    )
    assert [path for path, _ in files] == ["hw1/data.csv", "hw1/task.ipynb", "notes.txt"]
    reasons = {item["path"]: item["reason"] for item in skipped}
    assert reasons["escape"] == "symbolic links are not copied"
    assert reasons["__pycache__"].startswith("excluded by")
    assert reasons["hw1/.ipynb_checkpoints"].startswith("excluded by")
    assert reasons["missing"] == "it does not exist"
    with pytest.raises(Invalid):
        selection(home, ["../etc"], [])


def test_pack_then_unpack_round_trip_with_conflicts(home, tmp_path):
    archive = io.BytesIO()
    manifest = pack(home, [""], list(DEFAULT_EXCLUDED), 10**6, 100, archive)
    assert [f["path"] for f in manifest["files"]] == ["hw1/data.csv", "hw1/task.ipynb", "notes.txt"]
    assert len(manifest["content_hash"]) == 64 and manifest["bytes"] == sum(
        f["size"] for f in manifest["files"]
    )
    target = tmp_path / "target"
    (target / "lab" / "hw1").mkdir(parents=True)
    (target / "lab" / "hw1" / "data.csv").write_text("a,b\n1,2\n")  # same content: skipped
    (target / "lab" / "notes.txt").write_text("my own notes")  # different: kept, copy beside it
    archive.seek(0)
    report = unpack(target, "lab", "from teacher", archive)
    assert report["copied"] == 1 and report["skipped"] == 1
    assert report["conflicts"] == [
        {"path": "lab/notes.txt", "saved_as": "lab/notes (from teacher).txt"}
    ]
    assert (target / "lab" / "notes.txt").read_text() == "my own notes"
    assert (target / "lab" / "notes (from teacher).txt").read_text() == "notes"
    archive.seek(0)
    again = unpack(target, "lab", "from teacher", archive)
    assert again["skipped"] == 2 and (target / "lab" / "notes (from teacher 2).txt").exists()


def test_limits_refuse_the_whole_pack(home):
    with pytest.raises(Refused, match="at most 1 are allowed"):
        pack(home, [""], [], 10**6, 1, io.BytesIO())
    with pytest.raises(Refused, match="MiB"):
        pack(home, [""], [], 10, 100, io.BytesIO())


def hostile(*members: tarfile.TarInfo) -> io.BytesIO:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    data.seek(0)
    return data


@pytest.mark.parametrize("name", ["../evil.txt", "/etc/evil", "a/../../evil", "a\\..\\evil"])
def test_unpack_refuses_paths_out_of_the_home(tmp_path, name):
    member = tarfile.TarInfo(name)
    member.size = 1
    with pytest.raises(Invalid):
        unpack(tmp_path, "", "x", hostile(member))
    assert not (tmp_path.parent / "evil.txt").exists()


def test_unpack_never_writes_links_or_devices(tmp_path):
    link = tarfile.TarInfo("link")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    fifo = tarfile.TarInfo("fifo")
    fifo.type = tarfile.FIFOTYPE
    ok = tarfile.TarInfo("ok.txt")
    ok.size = 2
    report = unpack(tmp_path, "", "x", hostile(link, fifo, ok))
    assert report["copied"] == 1 and sorted(os.listdir(tmp_path)) == ["ok.txt"]


def test_the_tool_reports_refusals_as_json(home):
    plan = {"root": str(home), "paths": [""], "excluded": [], "max_bytes": 10, "max_files": 100}
    result = subprocess.run(
        [sys.executable, "-m", "cgu_lab.backends.local_files", "pack", json.dumps(plan)],
        capture_output=True,
        check=False,
    )
    assert result.returncode == 3
    assert "at most" in json.loads(result.stderr.decode().strip().splitlines()[-1])["error"]
    assert Path(home / "notes.txt").exists()


# -- links in the middle of a path: never followed ------------------------------


@pytest.fixture
def outside(tmp_path):
    """A folder outside the home with a file a copy must never read or change."""
    place = tmp_path / "outside"
    place.mkdir()
    (place / "secret.txt").write_text("not yours")
    return place


def test_selection_never_walks_through_a_linked_folder(home, outside):
    (home / "hw1" / "etclink").symlink_to(outside, target_is_directory=True)
    files, skipped = selection(home, ["hw1/etclink/secret.txt", "hw1"], [])
    assert "hw1/etclink/secret.txt" not in [path for path, _ in files]
    reasons = {item["path"]: item["reason"] for item in skipped}
    assert "'hw1/etclink' is a symbolic link" in reasons["hw1/etclink/secret.txt"]
    assert reasons["hw1/etclink"] == "symbolic links are not copied"
    archive = io.BytesIO()
    manifest = pack(home, ["hw1/etclink/secret.txt", "hw1/etclink"], [], 10**6, 100, archive)
    assert manifest["files"] == [] and b"not yours" not in archive.getvalue()


def test_pack_refuses_a_base_folder_behind_a_link(home, outside):
    (home / "course").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Refused, match="'course' is a symbolic link"):
        pack(home, [""], [], 10**6, 100, io.BytesIO(), base="course/")
    (home / "real").mkdir()
    (home / "real" / "inner").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Refused, match="'real/inner' is a symbolic link"):
        pack(home, [""], [], 10**6, 100, io.BytesIO(), base="real/inner")
    with pytest.raises(Refused, match="has no folder 'nothing'"):
        pack(home, [""], [], 10**6, 100, io.BytesIO(), base="nothing")


def test_a_file_swapped_for_a_link_after_selection_is_not_read(home, outside):
    from cgu_lab.backends.local_files import _open_chosen, open_root

    files, _ = selection(home, ["notes.txt"], [])
    (home / "notes.txt").unlink()
    (home / "notes.txt").symlink_to(outside / "secret.txt")
    root = open_root(home)
    try:
        with pytest.raises(Refused, match="changed while it was being copied"):
            _open_chosen(root, "notes.txt", files[0][1])
    finally:
        os.close(root)


def one_file(name: str, data: bytes = b"teacher's copy") -> io.BytesIO:
    member = tarfile.TarInfo(name)
    member.size = len(data)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.addfile(member, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def test_unpack_refuses_a_destination_behind_a_planted_link(tmp_path, outside):
    home = tmp_path / "courses"
    home.mkdir()
    (home / "cs101").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Refused, match="'cs101' is a symbolic link"):
        unpack(home, "cs101/week1", "from teacher", one_file("secret.txt"))
    with pytest.raises(Refused, match="'cs101' is a symbolic link"):
        unpack(home, "cs101", "from teacher", one_file("new.txt"))
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "not yours"


def test_unpack_skips_members_below_a_planted_link_and_goes_on(tmp_path, outside):
    home = tmp_path / "home"
    (home / "lab").mkdir(parents=True)
    (home / "lab" / "data").symlink_to(outside, target_is_directory=True)
    (home / "lab" / "notes.txt").symlink_to(outside / "secret.txt")
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        for name in ("data/secret.txt", "data/new.txt", "notes.txt", "ok.txt"):
            member = tarfile.TarInfo(name)
            member.size = 5
            tar.addfile(member, io.BytesIO(b"owned"))
    archive.seek(0)
    report = unpack(home, "lab", "from teacher", archive)
    assert report["copied"] == 1 and (home / "lab" / "ok.txt").read_text() == "owned"
    assert [item["path"] for item in report["refused"]] == [
        "lab/data/secret.txt",
        "lab/data/new.txt",
    ]
    assert "'lab/data' is a symbolic link" in report["refused"][0]["reason"]
    # the planted link stays, the copy lands beside it, the link's target is untouched
    assert report["conflicts"] == [
        {"path": "lab/notes.txt", "saved_as": "lab/notes (from teacher).txt"}
    ]
    assert os.path.islink(home / "lab" / "notes.txt")
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "not yours"


@pytest.mark.skipif(os.geteuid() != 0, reason="changing owners needs root")
def test_chown_tree_changes_links_not_their_targets(tmp_path, outside):
    from cgu_lab.backends.local_files import chown_tree

    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    (home / "sub" / "file").write_text("x")
    (home / "link").symlink_to(outside, target_is_directory=True)
    (home / "sub" / "filelink").symlink_to(outside / "secret.txt")
    before = (outside.stat().st_uid, (outside / "secret.txt").stat().st_uid)
    chown_tree(home, 54321, 54321)
    assert (home / "sub" / "file").stat().st_uid == 54321
    assert os.lstat(home / "link").st_uid == 54321
    assert (outside.stat().st_uid, (outside / "secret.txt").stat().st_uid) == before


def test_own_folder_refuses_a_link_in_the_folders_place(tmp_path, outside):
    from cgu_lab.backends.local_files import own_folder

    outside.chmod(0o755)
    (tmp_path / "home").symlink_to(outside, target_is_directory=True)
    with pytest.raises(Refused, match="not a real folder"):
        own_folder(tmp_path / "home", 0o700)
    assert outside.stat().st_mode & 0o777 == 0o755
    made = tmp_path / "homes" / "alice"
    assert own_folder(made, 0o711) is False and made.stat().st_mode & 0o777 == 0o711


def test_the_pickers_listing_skips_a_file_gone_since_the_scan(tmp_path, monkeypatch):
    """JupyterLab's save writes `.~name` and renames it, so a folder's scan may name a file
    that is gone when it is asked for its size: the listing goes on without it (it once
    refused the whole folder, which the pickers showed as "'' is not a folder")."""
    from cgu_lab.notebook import files

    (tmp_path / "week1").mkdir()
    (tmp_path / "week1" / "analysis.ipynb").write_text("{}")
    (tmp_path / "week1" / ".~analysis.ipynb").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".~notes.txt").write_text("x")
    real_scandir = os.scandir

    def scan_then_save(path):
        entries = list(real_scandir(path))
        for entry in entries:
            if entry.name.startswith(".~"):
                os.unlink(entry.path)  # the save's rename, between the scan and the stat
        return iter(entries)

    monkeypatch.setattr(files.os, "scandir", scan_then_save)
    listed = files.listing(tmp_path, "")
    rows = {row["path"]: row for row in listed["entries"]}
    assert set(rows) == {"week1", "notes.txt"}
    assert (rows["week1"]["files"], rows["week1"]["size"]) == (1, 2)

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

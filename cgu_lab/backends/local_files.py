"""Moving files in and out of homes as their owner: packing a selection, unpacking a copy.

Templates, submissions and class deployments copy files between homes and
the platform's store. Doing that as root would let a student redirect the
controller with a symbolic link planted in their home, so the work happens in
a small child process (`python -m cgu_lab.backends.local_files`) running as
the home's own account, which can read and write only what that student can:

    pack    walks the selected paths (never following symbolic links),
            leaves out excluded patterns, enforces the size and file limits,
            and writes an uncompressed tar to stdout; the last stderr line is
            a JSON manifest (every file with its SHA-256, the total, a hash of
            the whole selection).
    unpack  reads a tar on stdin and writes it below a folder of the home:
            a file already there with the same content is skipped, a
            different one is kept and the new copy saved beside it with a
            suffix (never overwritten silently); progress lines go to stderr,
            the report to stdout.

Only regular files and folders are ever written; member names are checked
with the same rule as every user-given path (`core.paths.relative_path`).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import sys
import tarfile
import time
from pathlib import Path

from ..core.errors import Invalid
from ..core.paths import relative_path
from ..core.selection import excluded

CHUNK = 1 << 20


class Refused(Exception):
    """A pack that must not happen (over a limit, a bad path); the message is for the user."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def selection(
    root: Path, paths: list[str], patterns: list[str]
) -> tuple[list[tuple[str, os.stat_result]], list[dict]]:
    """The regular files a selection covers, and what was left out and why."""
    chosen: dict[str, os.stat_result] = {}
    skipped: list[dict] = []
    for given in paths:
        start = relative_path(given, "selected path")
        queue = [start]
        while queue:
            relative = queue.pop()
            path = root / relative if relative else root
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                skipped.append({"path": relative, "reason": "it does not exist"})
                continue
            rule = excluded(relative, patterns) if relative else None
            if rule:
                skipped.append({"path": relative, "reason": f"excluded by '{rule}'"})
            elif stat.S_ISLNK(info.st_mode):
                skipped.append({"path": relative, "reason": "symbolic links are not copied"})
            elif stat.S_ISDIR(info.st_mode):
                queue.extend(
                    f"{relative}/{name}" if relative else name for name in sorted(os.listdir(path))
                )
            elif stat.S_ISREG(info.st_mode):
                chosen[relative] = info
            else:
                skipped.append({"path": relative, "reason": "only files and folders are copied"})
    return sorted(chosen.items()), skipped


def pack(
    root: Path, paths: list[str], patterns: list[str], max_bytes: int, max_files: int, out
) -> dict:
    files, skipped = selection(root, paths, patterns)
    total = sum(info.st_size for _, info in files)
    if len(files) > max_files:
        raise Refused(f"the selection has {len(files)} files; at most {max_files} are allowed")
    if total > max_bytes:
        size, limit = total / 2**20, max_bytes / 2**20
        raise Refused(f"the selection holds {size:.1f} MiB; at most {limit:.0f} MiB are allowed")
    manifest = []
    whole = hashlib.sha256()
    with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as archive:
        for relative, info in files:
            member = tarfile.TarInfo(relative)
            member.size = info.st_size
            member.mtime = int(info.st_mtime)
            member.mode = 0o644 | (0o111 if info.st_mode & 0o100 else 0)
            digest = hashlib.sha256()
            path = root / relative
            with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as handle:
                data = _HashingReader(handle, digest)
                archive.addfile(member, data)
            manifest.append({"path": relative, "size": info.st_size, "sha256": digest.hexdigest()})
            whole.update(f"{relative}\0{digest.hexdigest()}\n".encode())
    return {
        "files": manifest,
        "bytes": total,
        "content_hash": whole.hexdigest(),
        "skipped": skipped,
    }


class _HashingReader(io.RawIOBase):
    """Feeds what tarfile reads through a digest, so each file is read once."""

    def __init__(self, handle, digest) -> None:
        self.handle = handle
        self.digest = digest

    def read(self, size: int = -1) -> bytes:
        data = self.handle.read(size)
        self.digest.update(data)
        return data


def _free_name(target: Path, label: str) -> Path:
    stem, suffix = (target.stem, target.suffix) if target.suffix else (target.name, "")
    candidate = target.with_name(f"{stem} ({label}){suffix}")
    number = 2
    while os.path.lexists(candidate):
        candidate = target.with_name(f"{stem} ({label} {number}){suffix}")
        number += 1
    return candidate


def _same_content(path: Path, new: Path) -> bool:
    return os.path.getsize(path) == os.path.getsize(new) and _sha256(path) == _sha256(new)


def unpack(root: Path, destination: str, label: str, source, progress=None) -> dict:
    base = root / relative_path(destination, "destination") if destination else root
    copied = skipped = written = 0
    conflicts: list[dict] = []
    with tarfile.open(fileobj=source, mode="r|") as archive:
        for member in archive:
            name = relative_path(member.name, "archived file")
            target = base / name
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                continue  # never links, devices or fifos
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.cgu-{os.getpid()}.part")
            stream = archive.extractfile(member)
            with open(temporary, "wb") as handle:
                while chunk := stream.read(CHUNK):
                    handle.write(chunk)
            os.chmod(temporary, 0o644 | (member.mode & 0o111))
            os.utime(temporary, (time.time(), member.mtime))
            written += member.size
            if not os.path.lexists(target):
                os.rename(temporary, target)
                copied += 1
            elif (
                os.path.isfile(target)
                and not os.path.islink(target)
                and _same_content(target, temporary)
            ):
                os.unlink(temporary)
                skipped += 1
            else:
                kept = _free_name(target, label)
                os.rename(temporary, kept)
                conflicts.append(
                    {
                        "path": str(Path(destination, name)) if destination else name,
                        "saved_as": str(kept.relative_to(root)),
                    }
                )
            if progress and (copied + skipped + len(conflicts)) % 50 == 0:
                progress(copied + skipped + len(conflicts))
    return {"copied": copied, "skipped": skipped, "conflicts": conflicts, "bytes": written}


def _folder(root: Path, base: str) -> Path:
    """The folder a pack starts from: the home, or a real folder in it (never a link)."""
    if not base:
        return root
    folder = root / relative_path(base, "folder")
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        raise Refused(f"this notebook has no folder '{base}'") from None
    if not stat.S_ISDIR(info.st_mode):
        raise Refused(f"'{base}' is not a folder of this notebook")
    return folder


def main(argv: list[str]) -> int:
    command, plan = argv[1], json.loads(argv[2])
    os.umask(0o077)
    try:
        if command == "pack":
            manifest = pack(
                _folder(Path(plan["root"]), plan.get("base", "")),
                plan["paths"],
                plan["excluded"],
                plan["max_bytes"],
                plan["max_files"],
                sys.stdout.buffer,
            )
            sys.stdout.buffer.flush()
            print(json.dumps({"manifest": manifest}), file=sys.stderr)
        elif command == "unpack":

            def progress(done: int) -> None:
                print(json.dumps({"done": done}), file=sys.stderr, flush=True)

            report = unpack(
                Path(plan["root"]), plan["destination"], plan["label"], sys.stdin.buffer, progress
            )
            print(json.dumps(report))
        else:
            print(json.dumps({"error": f"unknown command {command}"}), file=sys.stderr)
            return 2
    except (Refused, Invalid) as error:
        print(json.dumps({"error": str(getattr(error, "message", error))}), file=sys.stderr)
        return 3
    except (OSError, tarfile.TarError) as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}), file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

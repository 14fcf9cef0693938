"""Moving files in and out of homes as their owner: packing a selection, unpacking a copy.

Templates, submissions and class deployments copy files between homes and
the platform's store. Doing that as root would let a student redirect the
controller with a symbolic link planted in their home, so the work happens in
a small child process (`python -m cgu_lab.backends.local_files`) running as
the home's own account, which can read and write only what that student can:

    pack    walks the selected paths, leaves out excluded patterns, enforces
            the size and file limits, and writes an uncompressed tar to
            stdout; the last stderr line is a JSON manifest (every file with
            its SHA-256, the total, a hash of the whole selection).
    unpack  reads a tar on stdin and writes it below a folder of the home:
            a file already there with the same content is skipped, a
            different one is kept and the new copy saved beside it with a
            suffix (never overwritten, not even in a race: the copy is put in
            place with link(2), which fails if the name exists); progress
            lines go to stderr, the report to stdout.

Links. Running as the student is not enough: without per-user accounts the
tool runs as the controller's account, which can read every home. So every
path is walked from an open folder one name at a time (openat with
O_NOFOLLOW | O_DIRECTORY), and files are opened and created with O_NOFOLLOW
relative to their folder: a link anywhere in a path, planted before or during
the copy, is never followed. What a link costs depends on the caller:

    pack, a selected path     skipped and named in the manifest's `skipped`: one
                              odd entry must not sink a whole selection, the
                              student sees what was left out, and a submission
                              with no files left is refused
    pack, the folder `base`   refused: a deployment's whole source would be elsewhere
    unpack, the destination   refused: nothing of that copy could land where asked
    unpack, a member's folder that member is skipped and named in `refused`; the
                              rest of the copy goes on

Only regular files and folders are ever written; member names are checked
with the same rule as every user-given path (`core.paths.relative_path`).

It stays one module, a few lines over the house's ~500, because it runs as a
child process on its own (`python -m`, also inside the Kubernetes copy pods):
everything it needs is here, and nothing of the controller is imported.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import stat
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import Invalid
from ..core.paths import beside_name, components
from ..core.selection import excluded

CHUNK = 1 << 20
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a name swapped for a fifo after it was checked must not hang the copy.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_DEPTH = 128
MAX_BESIDE = 1000
NOT_THERE = (errno.ELOOP, errno.ENOTDIR, errno.ENOENT)


class Refused(Exception):
    """A pack that must not happen (over a limit, a bad path); the message is for the user."""


class Blocked(Exception):
    """A name on the way is not a real folder: a link, a file, or nothing."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"'{path}' {reason}")
        self.path = path
        self.reason = reason


@contextlib.contextmanager
def opened(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)


def open_root(path: str | Path) -> int:
    """The home (or course folder) itself; the controller made it, and it is no link either."""
    return os.open(path, DIR_FLAGS)


def _why(dir_fd: int, name: str) -> str:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return "does not exist"
    if stat.S_ISLNK(info.st_mode):
        return "is a symbolic link (links are never followed)"
    if not stat.S_ISDIR(info.st_mode):
        return "is not a folder"
    return "cannot be opened"


def open_dir(dir_fd: int, parts: list[str], create: bool = False) -> int:
    """A new fd of the folder `parts` below `dir_fd`, opened one name at a time.

    Each step is openat(O_NOFOLLOW | O_DIRECTORY), so a link at any depth
    raises Blocked instead of being followed; `create` makes missing folders.
    """
    fd = os.dup(dir_fd)
    walked: list[str] = []
    try:
        for name in parts:
            walked.append(name)
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
            try:
                inner = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as error:
                if error.errno not in NOT_THERE:
                    raise
                raise Blocked("/".join(walked), _why(fd, name)) from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def own_folder(path: Path, mode: int, uid: int | None = None, gid: int | None = None) -> bool:
    """Make a folder the controller names, then set its mode (and owner) through an O_NOFOLLOW fd.

    A link put in the folder's place is refused, never changed: chmod and
    chown by name would follow it. Returns whether the owner was changed.
    """
    path.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, DIR_FLAGS)
    except OSError as error:
        if error.errno not in NOT_THERE:
            raise
        raise Refused(f"{path} is not a real folder (a link or a file is in its place)") from None
    with opened(fd):
        os.fchmod(fd, mode)
        if uid is None or os.fstat(fd).st_uid == uid:
            return False
        os.fchown(fd, uid, gid if gid is not None else -1)
        return True


def chown_tree(top: Path, uid: int, gid: int) -> None:
    """Give a folder and everything below it to an account, changing links, never their targets.

    os.fwalk holds each folder open while it lists it, so swapping a folder
    for a link during the walk does not lead it out of the tree.
    """
    os.chown(top, uid, gid, follow_symlinks=False)
    for _, dirs, files, dir_fd in os.fwalk(top, follow_symlinks=False):
        for name in dirs + files:
            with contextlib.suppress(FileNotFoundError):
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)


def sha256_fd(fd: int) -> str:
    digest = hashlib.sha256()
    while chunk := os.read(fd, CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


# -- pack ---------------------------------------------------------------------


def _visit(
    dir_fd: int,
    name: str,
    relative: str,
    patterns: list[str],
    found: tuple[dict, list],
    depth: int,
) -> None:
    chosen, skipped = found
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        skipped.append({"path": relative, "reason": "it does not exist"})
        return
    rule = excluded(relative, patterns)
    if rule:
        skipped.append({"path": relative, "reason": f"excluded by '{rule}'"})
    elif stat.S_ISLNK(info.st_mode):
        skipped.append({"path": relative, "reason": "symbolic links are not copied"})
    elif stat.S_ISDIR(info.st_mode):
        if depth >= MAX_DEPTH:
            skipped.append({"path": relative, "reason": "folders are nested too deeply"})
            return
        try:
            inner = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
        except OSError as error:
            if error.errno not in NOT_THERE:
                raise
            skipped.append({"path": relative, "reason": "it changed while it was read"})
            return
        with opened(inner):
            _visit_children(inner, relative, patterns, found, depth + 1)
    elif stat.S_ISREG(info.st_mode):
        chosen[relative] = info
    else:
        skipped.append({"path": relative, "reason": "only files and folders are copied"})


def _visit_children(
    dir_fd: int, relative: str, patterns: list[str], found: tuple[dict, list], depth: int
) -> None:
    for name in sorted(os.listdir(dir_fd)):
        child = f"{relative}/{name}" if relative else name
        _visit(dir_fd, name, child, patterns, found, depth)


def _select(
    base_fd: int, paths: list[str], patterns: list[str]
) -> tuple[list[tuple[str, os.stat_result]], list[dict]]:
    found: tuple[dict, list] = ({}, [])
    for given in paths:
        parts = components(given, "selected path")
        if not parts:
            _visit_children(base_fd, "", patterns, found, 0)
            continue
        relative = "/".join(parts)
        try:
            parent = open_dir(base_fd, parts[:-1])
        except Blocked as blocked:
            found[1].append({"path": relative, "reason": str(blocked)})
            continue
        with opened(parent):
            _visit(parent, parts[-1], relative, patterns, found, len(parts) - 1)
    chosen, skipped = found
    return sorted(chosen.items()), skipped


def selection(
    root: Path, paths: list[str], patterns: list[str]
) -> tuple[list[tuple[str, os.stat_result]], list[dict]]:
    """The regular files a selection covers, and what was left out and why."""
    with opened(open_root(root)) as root_fd:
        return _select(root_fd, paths, patterns)


def _open_chosen(base_fd: int, relative: str, seen: os.stat_result) -> int:
    """Open a selected file again by walking to it; refuse if it is no longer what was seen."""
    parts = relative.split("/")
    changed = Refused(f"'{relative}' changed while it was being copied; try again")
    try:
        parent = open_dir(base_fd, parts[:-1])
    except Blocked:
        raise changed from None
    with opened(parent):
        try:
            fd = os.open(parts[-1], FILE_FLAGS, dir_fd=parent)
        except OSError as error:
            if error.errno not in NOT_THERE:
                raise
            raise changed from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino, info.st_size) != (
        seen.st_dev,
        seen.st_ino,
        seen.st_size,
    ):
        os.close(fd)
        raise changed
    return fd


def _open_base(root_fd: int, base: str) -> int:
    try:
        return open_dir(root_fd, components(base, "folder"))
    except Blocked as blocked:
        if blocked.reason == "does not exist":
            raise Refused(f"this notebook has no folder '{base}'") from None
        raise Refused(
            f"the folder '{base}' cannot be copied: {blocked}; copy its files into a real folder"
        ) from None


def pack(
    root: Path,
    paths: list[str],
    patterns: list[str],
    max_bytes: int,
    max_files: int,
    out,
    base: str = "",
) -> dict:
    with opened(open_root(root)) as root_fd, opened(_open_base(root_fd, base)) as base_fd:
        files, skipped = _select(base_fd, paths, patterns)
        total = sum(info.st_size for _, info in files)
        if len(files) > max_files:
            raise Refused(f"the selection has {len(files)} files; at most {max_files} are allowed")
        if total > max_bytes:
            size, limit = total / 2**20, max_bytes / 2**20
            raise Refused(
                f"the selection holds {size:.1f} MiB; at most {limit:.0f} MiB are allowed"
            )
        manifest = []
        whole = hashlib.sha256()
        with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as archive:
            for relative, info in files:
                member = tarfile.TarInfo(relative)
                member.size = info.st_size
                member.mtime = int(info.st_mtime)
                member.mode = 0o644 | (0o111 if info.st_mode & 0o100 else 0)
                digest = hashlib.sha256()
                with open(_open_chosen(base_fd, relative, info), "rb") as handle:
                    archive.addfile(member, _HashingReader(handle, digest))
                manifest.append(
                    {"path": relative, "size": info.st_size, "sha256": digest.hexdigest()}
                )
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


# -- unpack -------------------------------------------------------------------


def _put(dir_fd: int, temporary: str, name: str) -> bool:
    """Give the written copy its name unless the name exists; False if it does."""
    try:
        os.link(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
        return True
    except FileExistsError:
        return False
    except OSError as error:  # a file system without hard links
        if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK):
            raise
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        return False
    except FileNotFoundError:
        os.rename(temporary, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return True


def _same_content(dir_fd: int, name: str, temporary: str) -> bool:
    """Whether `name` is a regular file (not a link) with the copy's bytes."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return False
    with opened(fd):
        info = os.fstat(fd)
        new = os.stat(temporary, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or info.st_size != new.st_size:
            return False
        with opened(os.open(temporary, FILE_FLAGS, dir_fd=dir_fd)) as other:
            return sha256_fd(fd) == sha256_fd(other)


def _write_temporary(dir_fd: int, stream, member: tarfile.TarInfo) -> str:
    temporary = f".cgu-{os.getpid()}-{time.monotonic_ns()}.part"
    fd = os.open(temporary, NEW_FLAGS, 0o600, dir_fd=dir_fd)
    with open(fd, "wb") as handle:
        while chunk := stream.read(CHUNK):
            handle.write(chunk)
        handle.flush()
        os.fchmod(fd, 0o644 | (member.mode & 0o111))
        os.utime(fd, (time.time(), member.mtime))
    return temporary


def _place(dir_fd: int, name: str, stream, member: tarfile.TarInfo, label: str) -> str | None:
    """Write one file into the open folder; None if the same file was there, else the name used."""
    temporary = _write_temporary(dir_fd, stream, member)
    try:
        if _put(dir_fd, temporary, name):
            return name
        if _same_content(dir_fd, name, temporary):
            return None
        for number in range(1, MAX_BESIDE + 1):
            candidate = beside_name(name, label, number)
            if _put(dir_fd, temporary, candidate):
                return candidate
        raise Refused(f"'{name}' has {MAX_BESIDE} copies beside it already; tidy them up first")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=dir_fd)


def unpack(root: Path, destination: str, label: str, source, progress=None) -> dict:
    """Write the tar on `source` below `destination` of the home (see the module's rules)."""
    target = components(destination, "destination")
    with opened(open_root(root)) as root_fd:
        try:
            base_fd = open_dir(root_fd, target, create=True)
        except Blocked as blocked:
            raise Refused(
                f"the files could not be copied into '{'/'.join(target)}': {blocked}; "
                "move it out of the way and try again"
            ) from None
        with opened(base_fd):
            return _unpack_into(base_fd, target, label, source, progress)


def _unpack_into(base_fd: int, target: list[str], label: str, source, progress) -> dict:
    copied = skipped = written = 0
    conflicts: list[dict] = []
    refused: list[dict] = []

    def shown(*parts: str) -> str:
        return "/".join([*target, *parts])

    with tarfile.open(fileobj=source, mode="r|") as archive:
        for member in archive:
            parts = components(member.name, "archived file")
            if not parts or not (member.isdir() or member.isfile()):
                continue  # never links, devices or fifos
            folders = parts if member.isdir() else parts[:-1]
            try:
                folder = open_dir(base_fd, folders, create=True)
            except Blocked as blocked:
                reason = f"'{shown(blocked.path)}' {blocked.reason}"
                refused.append({"path": shown(*parts), "reason": reason})
                continue
            with opened(folder):
                if member.isdir():
                    continue
                placed = _place(folder, parts[-1], archive.extractfile(member), member, label)
            written += member.size
            if placed == parts[-1]:
                copied += 1
            elif placed is None:
                skipped += 1
            else:
                conflicts.append({"path": shown(*parts), "saved_as": shown(*folders, placed)})
            if progress and (copied + skipped + len(conflicts)) % 50 == 0:
                progress(copied + skipped + len(conflicts))
    return {
        "copied": copied,
        "skipped": skipped,
        "conflicts": conflicts,
        "refused": refused,
        "bytes": written,
    }


def main(argv: list[str]) -> int:
    command, plan = argv[1], json.loads(argv[2])
    os.umask(0o077)
    try:
        if command == "pack":
            manifest = pack(
                Path(plan["root"]),
                plan["paths"],
                plan["excluded"],
                plan["max_bytes"],
                plan["max_files"],
                sys.stdout.buffer,
                base=plan.get("base", ""),
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

"""The storage page's file work, done as the files' own account (`python -m ...`).

The portal's storage page lists, uploads into, zips and deletes in a user's
personal storage or a course's shared storage while no notebook runs. The
controller runs as root, and these folders are the users' to fill with
links; so, like the copies of `local_files`, each request runs this small
tool through the launcher as the caller's account (with the course's Unix
groups when the caller may read or write a course's storage): what it can
touch is what that user could from a notebook, whatever a link says.

On top of that, every path is walked one folder at a time with
O_NOFOLLOW (`local_files.open_dir`) and files are opened O_NOFOLLOW: a link
planted in storage is never followed, even to somewhere the account could
reach. Names are checked by the platform's one rule (`core.paths`).

Commands (the plan is JSON in argv; results are one JSON line on stdout,
refusals one JSON line `{error, code, status, ...}` on stderr):

    list    the entries of a folder (hidden names left out, as the file
            browser does) and what the whole storage uses
    put     one chunk of an upload, at `offset` of a file of `total` bytes,
            into a hidden partial file beside the target, named for the
            target and the sender's upload id; the last chunk renames it
            into place. The allowance is checked on every chunk against
            what the storage holds plus what is still to come
    mkdir   a new folder;  delete  a file or a folder (its tree; links in it
            are removed, never followed)
    zip     the selection as a zip on stdout (notebook/transfer/zipstream)

Why a partial file and not writing in place: a refused or abandoned upload
must not leave half a file under the name the user asked for. Why one per
upload id: two uploads of one path at once (two tabs, two TAs in a course's
storage) would otherwise write into one partial and leave a mix of both; each
now fills its own and rename(2) puts whole files in place, the last one
staying. Partials left by uploads abandoned for a day are removed when the
next upload into their folder starts.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import stat
import sys
import time
from pathlib import Path

from ..core.allowance import Room, check
from ..core.errors import Conflict, DomainError, Invalid, NotFound
from ..core.paths import components
from ..files.usage import home_use
from .local_files import Blocked, open_dir, open_root, opened

PARTIAL = ".cgu-upload-"
ABANDONED = 24 * 3600  # seconds after which another upload's partial is abandoned
CHUNK = 1 << 20
MAX_LIST = 5000  # entries a listing shows, so one huge folder cannot stall the page


def _folder(root_fd: int, parts: list[str], create: bool = False) -> int:
    try:
        return open_dir(root_fd, parts, create=create)
    except Blocked as blocked:
        if blocked.reason == "does not exist":
            raise NotFound(f"the folder '{blocked.path}' does not exist") from None
        raise Conflict(f"'{blocked.path}' {blocked.reason}") from None


def list_folder(root: Path, path: str) -> dict:
    parts = components(path, "folder")
    entries = []
    with opened(open_root(root)) as root_fd, opened(_folder(root_fd, parts)) as fd:
        for name in sorted(os.listdir(fd))[:MAX_LIST]:
            if name.startswith("."):
                continue
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            kind = (
                "folder"
                if stat.S_ISDIR(info.st_mode)
                else "file"
                if stat.S_ISREG(info.st_mode)
                else "link"
                if stat.S_ISLNK(info.st_mode)
                else "other"
            )
            entries.append(
                {
                    "name": name,
                    "kind": kind,
                    "size": info.st_size if kind == "file" else None,
                    "modified": info.st_mtime,
                }
            )
    return {"path": "/".join(parts), "entries": entries, **usage(root)}


def usage(root: Path) -> dict:
    return {"used": home_use(root), "free": shutil.disk_usage(root).free}


def _partial(name: str, upload: str) -> str:
    key = hashlib.sha256(f"{upload}/{name}".encode()).hexdigest()[:24]
    return f"{PARTIAL}{key}.part"


def _sweep_abandoned(fd: int) -> None:
    """Remove partials in this folder that no upload has touched for a day."""
    now = time.time()
    for entry in os.listdir(fd):
        if not (entry.startswith(PARTIAL) and entry.endswith(".part")):
            continue
        with contextlib.suppress(OSError):
            info = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime > ABANDONED:
                os.unlink(entry, dir_fd=fd)


def put(root: Path, plan: dict, source) -> dict:
    parts = components(plan.get("path", ""), "file name")
    offset, total, upload = plan.get("offset"), plan.get("total"), plan.get("upload")
    if not isinstance(upload, str) or not upload:
        raise Invalid("an upload chunk needs the id of its upload")
    if not parts or parts[-1].startswith("."):
        raise Invalid("give the file a name that does not start with '.'")
    if not all(isinstance(n, int) and n >= 0 for n in (offset, total)) or offset > total:
        raise Invalid("an upload chunk needs whole numbers 0 <= offset <= total")
    allowance = plan.get("allowance")
    room = Room(allowance, home_use(root), shutil.disk_usage(root).free)
    try:
        check(room, total - offset, f"uploading '{parts[-1]}'", plan.get("whose", "the allowance"))
    except DomainError:
        _forget(root, parts, upload)  # a refused upload leaves nothing, not even its start
        raise
    with opened(open_root(root)) as root_fd, opened(_folder(root_fd, parts[:-1], True)) as fd:
        name, partial = parts[-1], _partial(parts[-1], upload)
        flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        if offset == 0:
            _sweep_abandoned(fd)
            flags |= os.O_CREAT | os.O_TRUNC
        try:
            out = os.open(partial, flags, 0o666, dir_fd=fd)
        except FileNotFoundError:
            raise Conflict(
                "this upload's earlier part is gone; start it again", received=0
            ) from None
        with opened(out):
            have = os.fstat(out).st_size
            if have != offset:
                raise Conflict(
                    f"the storage holds {have} bytes of '{name}', not {offset}; go on from there",
                    received=have,
                )
            os.lseek(out, offset, os.SEEK_SET)
            written = _copy(source, out, total - offset)
        received = offset + written
        if received == total:
            _finish(fd, partial, name, "/".join(parts))
        return {"received": received, "done": received == total}


def _forget(root: Path, parts: list[str], upload: str) -> None:
    with opened(open_root(root)) as root_fd:
        try:
            fd = open_dir(root_fd, parts[:-1])
        except Blocked:
            return
        with opened(fd), contextlib.suppress(FileNotFoundError):
            os.unlink(_partial(parts[-1], upload), dir_fd=fd)


def _copy(source, out: int, most: int) -> int:
    written = 0
    while chunk := source.read(CHUNK):
        written += len(chunk)
        if written > most:
            raise Invalid("the upload sent more bytes than it announced; start it again")
        os.write(out, chunk)
    return written


def _finish(fd: int, partial: str, name: str, shown: str) -> None:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode):
        os.unlink(partial, dir_fd=fd)
        raise Conflict(f"'{shown}' is a folder; upload the file under another name")
    # rename(2) replaces a file or a link by name; it never writes through a link.
    os.rename(partial, name, src_dir_fd=fd, dst_dir_fd=fd)


def mkdir(root: Path, path: str) -> dict:
    parts = components(path, "folder")
    if not parts or parts[-1].startswith("."):
        raise Invalid("give the folder a name that does not start with '.'")
    with opened(open_root(root)) as root_fd, opened(_folder(root_fd, parts[:-1])) as fd:
        try:
            os.mkdir(parts[-1], 0o777, dir_fd=fd)
        except FileExistsError:
            raise Conflict(f"'{'/'.join(parts)}' already exists") from None
    return {"path": "/".join(parts)}


def delete(root: Path, path: str) -> dict:
    parts = components(path, "path")
    if not parts:
        raise Invalid("choose a file or a folder to delete, not the whole storage")
    with opened(open_root(root)) as root_fd, opened(_folder(root_fd, parts[:-1])) as fd:
        try:
            info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            raise NotFound(f"'{'/'.join(parts)}' does not exist") from None
        if stat.S_ISDIR(info.st_mode):
            _remove_tree(fd, parts[-1])
        else:
            os.unlink(parts[-1], dir_fd=fd)
    return {"path": "/".join(parts)}


def _remove_tree(parent: int, name: str) -> None:
    """Remove a folder's tree through O_NOFOLLOW fds: links inside are unlinked, not followed."""
    with opened(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)) as fd:
        for child in os.listdir(fd):
            info = os.stat(child, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                _remove_tree(fd, child)
            else:
                os.unlink(child, dir_fd=fd)
    os.rmdir(name, dir_fd=parent)


def zip_to_stdout(root: Path, paths: list[str]) -> None:
    from ..files import zipstream

    selection = zipstream.select(root, paths, include_hidden=False)
    out = sys.stdout.buffer
    zipstream.write_zip(selection, out.write)
    out.flush()


def _refusal(error: DomainError) -> dict:
    return {"error": error.message, "code": error.code, "status": error.status, **error.details}


def main(argv: list[str]) -> int:
    command, plan = argv[1], json.loads(argv[2])
    os.umask(plan.get("umask", 0o077))
    root = Path(plan["root"])
    try:
        if command == "list":
            answer = list_folder(root, plan.get("path", ""))
        elif command == "usage":
            answer = usage(root)
        elif command == "put":
            answer = put(root, plan, sys.stdin.buffer)
        elif command == "mkdir":
            answer = mkdir(root, plan.get("path", ""))
        elif command == "delete":
            answer = delete(root, plan.get("path", ""))
        elif command == "zip":
            zip_to_stdout(root, plan.get("paths", []))
            return 0
        else:
            raise Invalid(f"unknown command {command}")
    except DomainError as error:
        print(json.dumps(_refusal(error)), file=sys.stderr)
        return 3
    except OSError as error:
        message = f"{os.strerror(error.errno or errno.EIO)}"
        if error.errno in (errno.EACCES, errno.EPERM):
            refusal = {"error": f"permission denied: {message}", "code": "forbidden", "status": 403}
        elif error.errno == errno.ENOSPC:
            refusal = {"error": "the disk is full", "code": "disk_full", "status": 507}
        else:
            refusal = {"error": message, "code": "io_error", "status": 409}
        print(json.dumps(refusal), file=sys.stderr)
        return 4
    print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

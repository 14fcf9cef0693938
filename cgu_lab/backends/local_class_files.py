"""A class's lab files stored once and linked into every member's course folder.

Why: a deployment used to write one copy per member, as that member
(`local_files.unpack`): 200 MB to 60 students wrote 12 GB and took longer than
60 plain `cp -r`. Now the controller unpacks the archive once into a folder of
the platform's own (`store`) and gives each member a hard link to each file
(`link`): a member costs one link(2) per file and no data, and the 200 MB are on
the disk once however large the class.

What a member holds: the linked files belong to root and are readable by all
(0644, executable bits kept); the folders are the member's. So a member reads,
renames, moves and deletes them freely, but cannot change one in place and so
cannot change a classmate's: JupyterLab's save first puts the member's own copy
in the file's place (copy on first write, `cgu_lab/notebook/contents.py`), and a
kernel or a terminal that writes in place gets "Permission denied" (`cp` the file
over itself to own it). This needs per-user accounts: without them every
notebook runs as one account, which would own every member's copy at once, so
the backend keeps one copy per member there (and where links fail: another file
system, one without hard links).

Safety: this runs as root in folders the member owns and may change meanwhile
(their notebook may be running). Every folder is opened one name at a time with
O_NOFOLLOW (`local_files.open_dir`'s rule), a folder made here is handed to the
member through its descriptor, and link(2) never follows, nor replaces, the name
it creates. The store is root's alone (0700 above it); once every member has
their links it is removed: the files live on as the members' links.

Reports have the shape of `local_files.unpack`'s: copied (linked), skipped (the
same file was there), conflicts (a different file was there: the new one is
linked beside it, as a copy would be), refused (a link in a member's folder).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import stat
from pathlib import Path

from ..core.paths import beside_name, components
from .local_files import (
    DIR_FLAGS,
    FILE_FLAGS,
    MAX_BESIDE,
    NOT_THERE,
    Blocked,
    Refused,
    open_root,
    opened,
    sha256_fd,
    unpack,
)

# What a link cannot do, so the copy per member is used instead.
CANNOT_LINK = (errno.EXDEV, errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK)


class CannotLink(Exception):
    """This file system (or this pair of folders) takes no hard links: copy instead."""


def store(archive: Path, into: Path) -> None:
    """Unpack `archive` once into `into` (made here, root's alone). Its files are 0644
    (unpack sets that, keeping executable bits): the members read them through their
    links, never through this folder."""
    into.mkdir(mode=0o700, parents=True)
    with open(archive, "rb") as source:
        unpack(into, "", "", source)


def link(stored: Path, root: Path, destination: str, label: str, uid: int, gid: int) -> dict:
    """Link every file of `stored` below `destination` of the member's folder `root`."""
    target = components(destination, "destination")
    report: dict = {"copied": 0, "skipped": 0, "conflicts": [], "refused": [], "bytes": 0}
    with opened(open_root(root)) as root_fd:
        try:
            base_fd = _open_made(root_fd, target, uid, gid)
        except Blocked as blocked:
            raise Refused(
                f"the files could not be copied into '{'/'.join(target)}': {blocked}; "
                "move it out of the way and try again"
            ) from None
        with opened(base_fd):
            for folder, _dirs, files in os.walk(stored):
                parts = list(Path(folder).relative_to(stored).parts)
                _link_folder(Path(folder), files, base_fd, parts, (target, label, uid, gid), report)
    return report


def _link_folder(source: Path, files, base_fd: int, parts, member, report: dict) -> None:
    target, label, uid, gid = member

    def shown(*names: str) -> str:
        return "/".join([*target, *parts, *names])

    try:
        folder_fd = _open_made(base_fd, parts, uid, gid)
    except Blocked as blocked:
        reason = f"'{'/'.join([*target, blocked.path])}' {blocked.reason}"
        report["refused"].extend({"path": shown(name), "reason": reason} for name in files)
        return
    with opened(folder_fd), opened(os.open(source, DIR_FLAGS)) as source_fd:
        for name in sorted(files):
            placed = _place(source_fd, folder_fd, name, label)
            report["bytes"] += os.stat(name, dir_fd=source_fd, follow_symlinks=False).st_size
            if placed == name:
                report["copied"] += 1
            elif placed is None:
                report["skipped"] += 1
            else:
                report["conflicts"].append({"path": shown(name), "saved_as": shown(placed)})


def _place(source_fd: int, folder_fd: int, name: str, label: str) -> str | None:
    """Link one stored file into the member's folder; None if the same file was there."""
    candidates = itertools.chain(
        [name], (beside_name(name, label, n) for n in range(1, MAX_BESIDE + 1))
    )
    for index, candidate in enumerate(candidates):
        try:
            os.link(
                name, candidate, src_dir_fd=source_fd, dst_dir_fd=folder_fd, follow_symlinks=False
            )
            return candidate
        except FileExistsError:
            if index == 0 and _same(source_fd, folder_fd, name):
                return None
        except OSError as error:
            if error.errno in CANNOT_LINK:
                raise CannotLink(str(error)) from None
            raise
    raise Refused(f"'{name}' has {MAX_BESIDE} copies beside it already; tidy them up first")


def _same(source_fd: int, folder_fd: int, name: str) -> bool:
    """Whether the member's `name` is a regular file (not a link) with the stored bytes."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=folder_fd)
    except OSError:
        return False
    with opened(fd), opened(os.open(name, FILE_FLAGS, dir_fd=source_fd)) as stored:
        mine, theirs = os.fstat(fd), os.fstat(stored)
        if not stat.S_ISREG(mine.st_mode) or mine.st_size != theirs.st_size:
            return False
        if (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino):
            return True
        return sha256_fd(fd) == sha256_fd(stored)


def _open_made(dir_fd: int, parts: list[str], uid: int, gid: int) -> int:
    """The folder `parts` below `dir_fd`, opened one name at a time with O_NOFOLLOW;
    folders made on the way are given to the member through their descriptor."""
    fd = os.dup(dir_fd)
    walked: list[str] = []
    try:
        for name in parts:
            walked.append(name)
            made = False
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=fd)
                made = True
            try:
                inner = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as error:
                if error.errno not in NOT_THERE:
                    raise
                raise Blocked("/".join(walked), "is a link or a file, not a folder") from None
            os.close(fd)
            fd = inner
            if made:
                os.fchown(fd, uid, gid)
    except BaseException:
        os.close(fd)
        raise
    return fd

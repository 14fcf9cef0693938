"""Which names a transfer may read or write, and the refusals it answers with.

Two kinds of names come in:

- paths the page sends (a folder to upload into, files to zip): relative to
  the home, checked by the platform's one rule (`core.paths.relative_path`);
- names inside an archive, written by whatever made it: the same rule, but
  refusing instead of normalising what would escape (`..`, `/etc/passwd`,
  `C:\\x`, `a\\..\\..\\b`), since an archive that tries is not one to half-trust.

Text rules are not enough: a folder on the way may be a symbolic link to
somewhere else. `folder_in_home` therefore walks the real folders one at a
time, refusing links, as `files.py` and the backends' copies do.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..core.allowance import DiskFull, OverAllowance
from ..core.errors import Conflict, Invalid, NotFound
from ..core.paths import relative_path


class UnsafeName(Invalid):
    """A name that would land outside the folder it is meant for."""

    code = "unsafe_name"


class LinkRefused(Invalid):
    """A symbolic or hard link, or a device: never followed, never created."""

    code = "link"


class NotAnArchive(Invalid):
    code = "not_archive"


__all__ = [
    "Conflict",
    "DiskFull",
    "Invalid",
    "LinkRefused",
    "NotAnArchive",
    "NotFound",
    "OverAllowance",
    "UnsafeName",
    "archive_name",
    "folder_in_home",
    "home_path",
    "is_hidden",
]

_DRIVE = re.compile(r"^[A-Za-z]:")


def home_path(path: str, what: str = "path") -> str:
    """A path the page sent, normalised ('' is the home), or Invalid naming the problem."""
    return relative_path(path, what)


def archive_name(raw: str) -> tuple[str, ...]:
    """The parts of an archive entry's name; UnsafeName for any that would escape.

    Backslashes count as separators (archives made on Windows use them), so
    `a\\..\\..\\b` is caught too. `.` and empty parts are dropped; an entry
    naming nothing but the folder itself (`./`) gives an empty tuple.
    """
    name = raw.replace("\\", "/")
    if any(ord(c) < 0x20 or c == "\x7f" for c in name):
        raise UnsafeName(f"'{raw!r}' has control characters in its name: nothing was extracted")
    if name.startswith("/") or _DRIVE.match(name):
        raise UnsafeName(
            f"'{raw}' is an absolute path and would land outside this folder: nothing was extracted"
        )
    parts = tuple(p for p in name.split("/") if p not in ("", "."))
    if ".." in parts:
        raise UnsafeName(
            f"'{raw}' climbs out with '..' and would land outside this folder: "
            "nothing was extracted"
        )
    return parts


def is_hidden(relative: str) -> bool:
    """Whether a path has a part starting with '.', which the contents API hides."""
    return any(part.startswith(".") for part in relative.split("/") if part)


def folder_in_home(root: str | Path, relative: str, create: bool = False) -> Path:
    """The real folder at `relative` below the home, reached without following a link.

    Refuses (LinkRefused, Conflict, NotFound) rather than resolve: a link on the
    way could lead out of the home.
    """
    here = Path(root)
    for part in relative.split("/") if relative else []:
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            if not create:
                raise NotFound(f"the folder '{relative}' does not exist") from None
            os.mkdir(here)
            continue
        if stat.S_ISLNK(info.st_mode):
            raise LinkRefused(
                f"'{relative}' goes through the symbolic link '{part}', which transfers "
                "never follow"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise Conflict(f"'{part}' in '{relative}' is a file, not a folder")
    return here

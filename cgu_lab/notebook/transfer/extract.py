"""Extract an archive of the home into its folder: all of it, or nothing.

An archive is written by someone else's tool, so every entry is checked
before a byte of it lands where the user will see it:

- names: no absolute path, no drive letter, no `..` (backslashes count as
  separators), no control characters (`names.archive_name`); refused, not
  silently rewritten as `zipfile.extractall` would, since an archive that
  tries to escape is not one to half-trust;
- kinds: regular files and folders only; a symbolic link, a hard link, a
  device or a pipe refuses the archive (a link written first and a file
  written "into" it next is the classic way out of the folder);
- shape: a name twice, or a file where the archive also has a folder;
- size: the uncompressed total against the disk allowance and the disk's
  free space, before writing for a zip (its directory lists the sizes, and
  reading stops at the size it declares, so a zip bomb cannot lie), entry
  by entry for a tar (its sizes come with each entry);
- encrypted zip entries: refused with a message, not half-extracted.

Everything is written into a hidden folder beside (`.cgu-extract-*`, same
disk, so moving is a rename) with files created O_EXCL|O_NOFOLLOW; only
when the whole archive is there are its top-level entries renamed into the
folder, after checking none exists already (a conflict names them and
suggests a new folder, `into`). Any refusal or error removes the hidden
folder: nothing is left half-written.

jupyter-archive extracts with `extractall` straight into the folder (zip
entries rewritten, tar links allowed) and on a GET request, which the
request guard lets read-only viewers make; so this does not use it.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ...files.names import (
    Conflict,
    Invalid,
    LinkRefused,
    NotAnArchive,
    NotFound,
    archive_name,
    folder_in_home,
    home_path,
)
from . import allowance

SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
MAX_MEMBERS = 100_000
JUNK = frozenset({"__MACOSX"})  # macOS's resource forks: not the user's files
STAGING_PREFIX = ".cgu-extract-"
COPY = 1024 * 1024
NOTHING = "nothing was extracted"


@dataclass(frozen=True)
class Member:
    """One entry of an archive, whatever its format."""

    name: str  # as the archive writes it, for messages
    parts: tuple[str, ...]
    is_dir: bool
    size: int
    executable: bool
    mtime: float


@dataclass
class Layout:
    """The tree the archive makes, checked as entries are added."""

    files: set[tuple[str, ...]] = field(default_factory=set)
    dirs: set[tuple[str, ...]] = field(default_factory=set)
    bytes: int = 0

    def add(self, member: Member) -> None:
        if len(self.files) + len(self.dirs) >= MAX_MEMBERS:
            raise Invalid(f"the archive has more than {MAX_MEMBERS} entries: {NOTHING}")
        for depth in range(1, len(member.parts)):
            prefix = member.parts[:depth]
            if prefix in self.files:
                raise Conflict(
                    f"'{member.name}' would go inside '{'/'.join(prefix)}', which the archive "
                    f"also has as a file: {NOTHING}"
                )
            self.dirs.add(prefix)
        if member.is_dir:
            if member.parts in self.files:
                raise Conflict(f"'{member.name}' is both a file and a folder: {NOTHING}")
            self.dirs.add(member.parts)
            return
        if member.parts in self.files or member.parts in self.dirs:
            raise Conflict(f"'{member.name}' appears twice in the archive: {NOTHING}")
        self.files.add(member.parts)
        self.bytes += member.size

    @property
    def top(self) -> list[str]:
        return sorted({parts[0] for parts in self.files | self.dirs})


def is_archive(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def stem(name: str) -> str:
    """The archive's name without its suffix: the folder `into` suggests."""
    lower = name.lower()
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if lower.endswith(suffix):
            return name[: -len(suffix)] or "archive"
    return name


def _refuse_kind(name: str, mode: int) -> None:
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        raise LinkRefused(
            f"'{name}' is a symbolic link: archives with links are not extracted, {NOTHING}"
        )
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise LinkRefused(f"'{name}' is a device or a pipe, not a file: {NOTHING}")


def _zip_members(archive: zipfile.ZipFile) -> list[tuple[Member, zipfile.ZipInfo]]:
    members = []
    for info in archive.infolist():
        mode = info.external_attr >> 16 if info.create_system == 3 else 0
        _refuse_kind(info.filename, mode)
        parts = archive_name(info.filename)
        if not parts or parts[0] in JUNK:
            continue
        if info.flag_bits & 0x1:
            raise Invalid(
                f"'{info.filename}' is password-protected: extract it on your computer and "
                f"upload the folder instead ({NOTHING})"
            )
        member = Member(
            info.filename,
            parts,
            info.is_dir(),
            info.file_size,
            bool(mode & 0o111),
            _zip_time(info.date_time),
        )
        members.append((member, info))
    return members


def _zip_time(date_time: tuple[int, ...]) -> float:
    try:
        return time.mktime((*date_time, 0, 0, -1))
    except (ValueError, OverflowError):
        return time.time()


def _tar_members(archive: tarfile.TarFile) -> Iterator[tuple[Member, tarfile.TarInfo]]:
    for info in archive:
        if info.issym() or info.islnk():
            kind = "symbolic" if info.issym() else "hard"
            raise LinkRefused(
                f"'{info.name}' is a {kind} link: archives with links are not extracted, {NOTHING}"
            )
        if not (info.isreg() or info.isdir()):
            raise LinkRefused(f"'{info.name}' is a device or a pipe, not a file: {NOTHING}")
        parts = archive_name(info.name)
        if not parts or parts[0] in JUNK:
            continue
        yield (
            Member(info.name, parts, info.isdir(), info.size, bool(info.mode & 0o111), info.mtime),
            info,
        )


def _write(staging: Path, member: Member, source: BinaryIO | None) -> None:
    target = staging.joinpath(*member.parts)
    if member.is_dir:
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o777 if member.executable else 0o666  # less the umask
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as out:
        if source is not None:
            shutil.copyfileobj(source, out, COPY)
    with contextlib.suppress(OSError, ValueError, OverflowError):
        os.utime(target, (member.mtime, member.mtime))


def _conflicts(folder: Path, layout: Layout, archive: str) -> None:
    existing = [name for name in layout.top if os.path.lexists(folder / name)]
    if existing:
        shown = ", ".join(f"'{name}'" for name in existing[:5])
        more = f" and {len(existing) - 5} more" if len(existing) > 5 else ""
        raise Conflict(
            f"{shown}{more} already exist{'s' if len(existing) == 1 else ''} in this folder: "
            f"{NOTHING}. Extract into a new folder, or move them away first",
            conflicts=existing,
            suggestion=stem(archive),
        )


def _extract_zip(path: Path, staging: Path, folder: Path, room, into: str | None) -> Layout:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise NotAnArchive(f"'{path.name}' is not a zip archive, or it is damaged") from None
    with archive:
        members = _zip_members(archive)
        layout = Layout()
        for member, _ in members:
            layout.add(member)
        allowance.check(room, layout.bytes, "extracting this archive")
        if into is None:
            _conflicts(folder, layout, path.name)
        for member, info in members:
            try:
                with archive.open(info) as source:
                    _write(staging, member, None if member.is_dir else source)
            except (zipfile.BadZipFile, EOFError, zlib.error) as error:
                raise NotAnArchive(f"'{member.name}' is damaged ({error}): {NOTHING}") from None
    return layout


def _extract_tar(path: Path, staging: Path, room) -> Layout:
    layout = Layout()
    try:
        with tarfile.open(path, "r|*") as archive:
            for member, info in _tar_members(archive):
                layout.add(member)
                allowance.check(room, layout.bytes, "extracting this archive")
                source = None if member.is_dir else archive.extractfile(info)
                _write(staging, member, source)
    except (tarfile.TarError, EOFError, OSError) as error:
        if isinstance(error, (tarfile.ReadError, tarfile.CompressionError)):
            raise NotAnArchive(
                f"'{path.name}' is not a tar archive, or it is damaged: {NOTHING}"
            ) from None
        if isinstance(error, OSError) and error.errno is not None:
            raise  # the disk's problem, not the archive's
        raise NotAnArchive(f"'{path.name}' is damaged ({error}): {NOTHING}") from None
    return layout


def _place(staging: Path, folder: Path, layout: Layout, into: str | None, name: str) -> None:
    """Move the finished tree into the folder: one rename for `into`, else one per
    top-level entry, undone if any fails."""
    if into is not None:
        if os.path.lexists(folder / into):
            raise Conflict(f"'{into}' already exists in this folder: {NOTHING}")
        os.chmod(staging, 0o755)  # noqa: S103 - mkdtemp made it private; a plain folder now
        os.rename(staging, folder / into)
        return
    _conflicts(folder, layout, name)
    moved: list[str] = []
    try:
        for entry in layout.top:
            if os.path.lexists(folder / entry):
                _conflicts(folder, layout, name)
            os.rename(staging / entry, folder / entry)
            moved.append(entry)
    except BaseException:
        for entry in reversed(moved):
            with contextlib.suppress(OSError):
                os.rename(folder / entry, staging / entry)
        raise


def _new_folder_name(into: str) -> str:
    parts = archive_name(into)
    if len(parts) != 1 or parts[0].startswith("."):
        raise Invalid(f"'{into}' is not a folder name: give one name, without '/' or a leading '.'")
    return parts[0]


def extract(
    root: str | Path, path: str, into: str | None = None, disk_allowance: int | None = None
) -> dict:
    """Extract the archive at `path` (relative to the home) into its own folder, or into
    a new folder `into` beside it. Raises a DomainError, leaving nothing, when refused."""
    root = Path(root)
    relative = home_path(path, "archive")
    if not relative:
        raise Invalid("choose an archive to extract")
    parent, name = posixpath.split(relative)
    folder = folder_in_home(root, parent)
    try:
        info = os.lstat(folder / name)
    except FileNotFoundError:
        raise NotFound(f"'{relative}' does not exist") from None
    if stat.S_ISLNK(info.st_mode):
        raise LinkRefused(f"'{relative}' is a symbolic link, which is never followed")
    if not stat.S_ISREG(info.st_mode) or not is_archive(name):
        raise NotAnArchive(
            f"'{name}' is not an archive this can extract (.zip, .tar, .tar.gz, .tgz, "
            ".tar.bz2, .tar.xz)"
        )
    into = _new_folder_name(into) if into else None
    if into is not None and os.path.lexists(folder / into):
        raise Conflict(f"'{into}' already exists in this folder: {NOTHING}")
    room = allowance.room(root, disk_allowance)
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
    try:
        if name.lower().endswith(".zip"):
            layout = _extract_zip(folder / name, staging, folder, room, into)
        else:
            layout = _extract_tar(folder / name, staging, room)
        if not layout.files and not layout.dirs:
            raise Invalid(f"the archive is empty: {NOTHING}")
        _place(staging, folder, layout, into, name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {
        "folder": parent,
        "into": into,
        "entries": [into] if into else layout.top,
        "files": len(layout.files),
        "folders": len(layout.dirs),
        "bytes": layout.bytes,
    }

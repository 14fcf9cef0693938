"""A folder or a selection as one zip, written straight into the HTTP response.

Python's `zipfile` can write to a stream it cannot seek (it then puts each
entry's sizes in a data descriptor after the entry), so nothing is built
whole, in memory or on disk: a writer thread compresses file after file into
a pipe of fixed-size blocks, and the handler sends each block and waits for
the socket to take it (`await flush()`) before taking the next. The pipe
holds a few blocks at most, so a slow browser slows the thread down instead
of filling memory, and a closed connection stops it.

What goes in, and what does not:

- regular files and folders (empty ones too, so the tree is kept), below
  the selection, with names relative to the selection's folder;
- symbolic links are never followed (a link could lead out of the home) and
  files are opened with O_NOFOLLOW, so one swapped in meanwhile fails too;
- hidden files and folders only when the contents manager shows them
  (`allow_hidden`): a read-only viewer downloading the home must not get the
  owner's `.ssh` or `.local` that the file browser never showed them;
- what was left out for a reason the user would not guess (a link, a file
  that could not be read) is listed in `cgu-lab-skipped.txt` inside the zip.

Already-compressed files (by their suffix, or because their first 64 KiB do
not shrink by a tenth) are stored; the rest deflated at level 1, the fastest.
"""

from __future__ import annotations

import os
import posixpath
import stat
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .names import LinkRefused, NotFound, folder_in_home, home_path, is_hidden

BLOCK = 256 * 1024  # bytes handed to the response at a time
READ = 1024 * 1024  # bytes read from a file at a time
SAMPLE = 64 * 1024  # bytes of a file's start tried with deflate
MAX_PATHS = 1000  # paths one request may select
SKIPPED_NOTE = "cgu-lab-skipped.txt"
STORED = frozenset(
    {".zip", ".gz", ".tgz", ".bz2", ".xz", ".zst", ".7z", ".rar", ".jar", ".whl"}
    | {".png", ".jpg", ".jpeg", ".gif", ".webp", ".mp3", ".mp4", ".mkv", ".mov", ".avi", ".webm"}
    | {".ogg", ".flac", ".pdf", ".pt", ".pth", ".safetensors", ".npz", ".parquet", ".h5", ".keras"}
)


class Cancelled(Exception):
    """The browser went away; the writer stops."""


@dataclass
class Selection:
    """What a download archives: real paths below the home and their names in the zip."""

    root: Path
    base: str  # the folder the names are relative to
    paths: list[str]  # relative to the home, each a file or a folder below `base`
    include_hidden: bool
    skipped: list[str] = field(default_factory=list)

    @property
    def filename(self) -> str:
        if len(self.paths) == 1:
            return f"{posixpath.basename(self.paths[0]) or 'home'}.zip"
        return f"{posixpath.basename(self.base) or 'home'}.zip"


def select(root: str | Path, paths: list[str], include_hidden: bool) -> Selection:
    """Check a download's selection before the response starts: each path exists, is no
    link, goes through no link; NotFound, LinkRefused or Invalid otherwise."""
    root = Path(root)
    if not paths:
        raise NotFound("choose a folder or some files to download")
    if len(paths) > MAX_PATHS:
        raise NotFound(f"a download takes at most {MAX_PATHS} selected items; zip their folder")
    normal = []
    for path in paths:
        relative = home_path(path)
        if relative and is_hidden(relative) and not include_hidden:
            raise NotFound(f"'{relative}' does not exist")
        parent = posixpath.dirname(relative)
        folder = folder_in_home(root, parent)
        if relative:
            try:
                info = os.lstat(folder / posixpath.basename(relative))
            except FileNotFoundError:
                raise NotFound(f"'{relative}' does not exist") from None
            if stat.S_ISLNK(info.st_mode):
                raise LinkRefused(f"'{relative}' is a symbolic link, which downloads never follow")
        if relative not in normal:
            normal.append(relative)
    parents = [posixpath.dirname(p) if p else "" for p in normal]
    base = posixpath.commonpath(parents) if all(parents) else ""
    return Selection(root, base, normal, include_hidden)


def _entries(selection: Selection) -> Iterator[tuple[str, str]]:
    """(relative path, kind) of everything to archive, walked lazily; kind is 'file',
    'dir', or why it is skipped."""
    for top in selection.paths:
        stack = [top]
        while stack:
            relative = stack.pop()
            where = selection.root / relative if relative else selection.root
            try:
                info = os.lstat(where)
            except OSError:
                yield relative, "vanished"
                continue
            if stat.S_ISLNK(info.st_mode):
                yield relative, "a symbolic link (never followed)"
            elif stat.S_ISREG(info.st_mode):
                yield relative, "file"
            elif stat.S_ISDIR(info.st_mode):
                if relative:
                    yield relative, "dir"
                try:
                    names = sorted(os.listdir(where), reverse=True)
                except OSError:
                    yield relative, "a folder that could not be read"
                    continue
                stack.extend(
                    posixpath.join(relative, name) if relative else name
                    for name in names
                    if selection.include_hidden or not name.startswith(".")
                )
            # sockets, fifos, devices: not files anyone downloads; left out silently


def _date(mtime: float) -> tuple[int, int, int, int, int, int]:
    """A zip timestamp: local time, no earlier than 1980 (the format cannot say)."""
    return max(time.localtime(mtime)[:6], (1980, 1, 1, 0, 0, 0))


class Pipe:
    """The file `zipfile` writes into: gathers its small writes into blocks for `send`.

    No `seek`, so zipfile writes a streamable archive; `tell` keeps the offsets it
    records in the central directory.
    """

    def __init__(self, send: Callable[[bytes], None], block: int = BLOCK) -> None:
        self._send, self._block = send, block
        self._buffer = bytearray()
        self._position = 0

    def write(self, data) -> int:
        self._buffer += data
        self._position += len(data)
        if len(self._buffer) >= self._block:
            self._send(bytes(self._buffer))
            self._buffer.clear()
        return len(data)

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        """zipfile flushes after each entry; blocks leave when full, or at `close`."""

    def close(self) -> None:
        if self._buffer:
            self._send(bytes(self._buffer))
            self._buffer.clear()


def _add_file(archive: zipfile.ZipFile, where: Path, name: str) -> None:
    fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(fd)
        entry = zipfile.ZipInfo(name, _date(info.st_mtime))
        entry.external_attr = (stat.S_IMODE(info.st_mode) | stat.S_IFREG) << 16
        entry.file_size = info.st_size
        first = source.read(READ)
        stored = posixpath.splitext(name)[1].lower() in STORED or not _compressible(first)
        entry.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
        with archive.open(entry, "w", force_zip64=info.st_size > 2**31) as target:
            chunk = first
            while chunk:
                target.write(chunk)
                chunk = source.read(READ)


def _compressible(head: bytes) -> bool:
    """Whether deflate is worth its time on a file that starts like this: random-looking
    data (model weights, encrypted or unknown compressed formats) is stored instead."""
    sample = head[:SAMPLE]
    return len(sample) < 512 or len(zlib.compress(sample, 1)) < 0.9 * len(sample)


def write_zip(selection: Selection, send: Callable[[bytes], None]) -> int:
    """Write the selection as a zip through `send` (which raises Cancelled to stop);
    returns the number of files. Runs in a thread: it blocks on `send`."""
    pipe = Pipe(send)
    files = 0
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for relative, kind in _entries(selection):
            name = relative[len(selection.base) :].lstrip("/") if selection.base else relative
            where = selection.root / relative
            if kind == "dir":
                try:
                    mtime = os.lstat(where).st_mtime
                except OSError:
                    continue
                folder = zipfile.ZipInfo(name + "/", _date(mtime))
                folder.external_attr = (0o40755 << 16) | 0x10
                archive.writestr(folder, b"")
            elif kind == "file":
                try:
                    _add_file(archive, where, name)
                    files += 1
                except OSError as error:
                    selection.skipped.append(f"{name}: could not be read ({error.strerror})")
            elif kind != "vanished":
                selection.skipped.append(f"{name}: {kind}")
        if selection.skipped:
            note = "Left out of this download:\n" + "\n".join(selection.skipped) + "\n"
            archive.writestr(SKIPPED_NOTE, note)
    pipe.close()
    return files

"""A listing of the home for the file pickers (templates, submissions), with sizes.

Directories report the total size and number of the files they would
contribute, excluded ones left out, so the picker can warn before a copy is
refused for its size. Symbolic links are listed as excluded: copies never
follow them.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from ..core.errors import Invalid
from ..core.paths import relative_path
from ..core.selection import DEFAULT_EXCLUDED, excluded

MAX_WALK = 200_000  # entries counted below one directory before giving up on exact totals


def _totals(directory: Path, relative: str, patterns: list[str]) -> tuple[int, int]:
    size = files = seen = 0
    stack = [(directory, relative)]
    while stack and seen < MAX_WALK:
        path, rel = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            child = f"{rel}/{entry.name}" if rel else entry.name
            if excluded(child, patterns) or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), child))
            elif entry.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):  # gone since the scan
                    size += entry.stat(follow_symlinks=False).st_size
                    files += 1
    return size, files


def _entry(root: Path, relative: str, patterns: list[str]) -> dict | None:
    """One path of the home as the picker shows it; None when it does not exist (or a folder
    on the way is a link: copies never follow one, so neither does this)."""
    here = root
    for part in relative.split("/"):
        try:
            info = os.lstat(here / part)
        except OSError:
            return None
        here = here / part
        if stat.S_ISLNK(info.st_mode) and here != root / relative:
            return None
    is_dir = stat.S_ISDIR(info.st_mode)
    return _row(here, relative, patterns, is_dir, stat.S_ISLNK(info.st_mode), info.st_size)


def _row(
    where: Path, relative: str, patterns: list[str], is_dir: bool, is_link: bool, size: int
) -> dict:
    """A path as the picker shows it: its size and file count (a folder's summed), and
    whether copies leave it out and why."""
    rule = excluded(relative, patterns)
    if is_dir and not rule:
        size, files = _totals(where, relative, patterns)
    else:
        size = 0 if is_dir or is_link else size
        files = 0 if is_dir or is_link else 1
    return {
        "name": relative.rsplit("/", 1)[-1],
        "path": relative,
        "type": "directory" if is_dir else "file",
        "size": size,
        "files": files,
        "excluded": bool(rule) or is_link,
        "reason": f"excluded by '{rule}'"
        if rule
        else ("symbolic links are not copied" if is_link else ""),
    }


MAX_STAT = 500


def stat_paths(root: str | Path, paths: list[str], patterns: list[str] | None = None) -> dict:
    """Which of `paths` exist in the home, with sizes: what the Submit dialog may preselect.

    Paths that are not valid (absolute, with '..') or do not exist are left out, not
    refused: they come from a notebook's code, which names many strings that are not files.
    """
    root = Path(root).expanduser()
    patterns = list(DEFAULT_EXCLUDED) if patterns is None else patterns
    entries, seen = [], set()
    for path in paths[:MAX_STAT]:
        try:
            relative = relative_path(path)
        except Invalid:
            continue
        if not relative or relative in seen:
            continue
        seen.add(relative)
        entry = _entry(root, relative, patterns)
        if entry is not None:
            entries.append(entry)
    return {"entries": entries, "excluded_patterns": patterns}


def listing(root: str | Path, path: str, patterns: list[str] | None = None) -> dict:
    root = Path(root).expanduser()
    patterns = list(DEFAULT_EXCLUDED) if patterns is None else patterns
    relative = relative_path(path, "folder")
    directory = root / relative if relative else root
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(relative)
    entries = []
    for entry in sorted(
        os.scandir(directory), key=lambda e: (not e.is_dir(follow_symlinks=False), e.name)
    ):
        child = f"{relative}/{entry.name}" if relative else entry.name
        is_link = entry.is_symlink()
        is_dir = entry.is_dir(follow_symlinks=False)
        try:
            size = 0 if is_dir or is_link else entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:
            # Gone since the scan: JupyterLab's saves write a `.~name` beside the file and
            # rename it, the collaboration's database its journal. Not a reason to refuse
            # the whole folder (which read as "'' is not a folder" in the pickers).
            continue
        entries.append(_row(Path(entry.path), child, patterns, is_dir, is_link, size))
    return {"path": relative, "entries": entries, "excluded_patterns": patterns}

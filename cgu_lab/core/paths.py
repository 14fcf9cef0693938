"""Paths users give inside a notebook's home: one rule for shares, templates and submissions.

A path is relative to the home, uses '/', and can never climb out of it: no
absolute paths, no '..' segments, no NUL or control characters, no
backslashes (which some tools treat as separators).

These rules only look at the text. Whether a folder on the way is a symbolic
link is a question about the disk, answered where the files are opened
(`backends.local_files` descends one folder at a time with O_NOFOLLOW).
"""

from __future__ import annotations

import posixpath

from .errors import Invalid

MAX_PATH = 1024


def relative_path(path: str, what: str = "path") -> str:
    """Return the normalised relative path, or raise Invalid naming the problem."""
    if not isinstance(path, str):
        raise Invalid(f"the {what} must be text")
    if len(path) > MAX_PATH:
        raise Invalid(f"the {what} is longer than {MAX_PATH} characters")
    if any(ord(c) < 0x20 or c == "\x7f" for c in path):
        raise Invalid(f"the {what} '{path!r}' contains control characters")
    if "\\" in path:
        raise Invalid(f"the {what} '{path}' contains a backslash; use '/' between folders")
    if path.startswith("/"):
        raise Invalid(
            f"the {what} '{path}' must be relative to the notebook's home, not start with '/'"
        )
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise Invalid(f"the {what} '{path}' must not contain '..'")
    return posixpath.join(*parts) if parts else ""


def components(path: str, what: str = "path") -> list[str]:
    """The folder names and final name of a user's path, checked by `relative_path`.

    A copy opens these one at a time below a folder it already holds open, so
    that no name can be a link that leads elsewhere.
    """
    normal = relative_path(path, what)
    return normal.split("/") if normal else []


def beside_name(name: str, label: str, number: int = 1) -> str:
    """The name a copy gets next to a different file of the same name: `notes (label 2).txt`."""
    stem, suffix = posixpath.splitext(name)
    if not stem:  # ".bashrc": a name that is all suffix keeps it as its stem
        stem, suffix = name, ""
    tag = label if number == 1 else f"{label} {number}"
    return f"{stem} ({tag}){suffix}"

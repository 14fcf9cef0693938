"""Paths users give inside a notebook's home: one rule for shares, templates and submissions.

A path is relative to the home, uses '/', and can never climb out of it: no
absolute paths, no '..' segments, no NUL or control characters, no
backslashes (which some tools treat as separators).
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

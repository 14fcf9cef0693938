"""Where a login (or a notebook's auto-start page) may send the browser afterwards.

Only to a path on this site, and, for a notebook page, only below that
notebook's own `/notebook/<owner>/<name>/`. Browsers resolve dot segments
before they request a URL, also when they are percent-encoded (`%2e%2e`), and
treat a backslash as a slash, so `/notebook/a/b/../../../api/me` would leave
the notebook for the controller's API: a target with any `.` or `..` segment,
in any spelling, is refused rather than normalised, because a link the
platform made never contains one.
"""

from __future__ import annotations

from urllib.parse import unquote

DEFAULT = "/notebooks"
# Decoding more often than this and still finding escapes is itself suspicious.
MAX_DECODES = 3


def _decoded_path(target: str) -> str | None:
    """The path part with percent-escapes undone (repeatedly), or None if it never settles."""
    path = target.split("?", 1)[0].split("#", 1)[0]
    for _ in range(MAX_DECODES):
        decoded = unquote(path)
        if decoded == path:
            return path
        path = decoded
    return None


def _has_control(text: str) -> bool:
    return any(ord(c) < 0x20 or c == "\x7f" for c in text)


def safe_next(target: str | None, default: str = DEFAULT) -> str:
    """Return `target` if it is a plain local path, else `default`.

    Refuses absolute URLs, scheme-relative ones (`//host`, `///host`), backslash
    tricks browsers normalise into them (`/\\host`), any backslash in the path,
    control characters, and dot segments (`/a/../b`, `/a/%2e%2e/b`,
    `/a/.%2E/b`), also percent-encoded twice.
    """
    if not target or not isinstance(target, str):
        return default
    if _has_control(target):
        return default
    if not target.startswith("/") or target.startswith(("//", "/\\")):
        return default
    path = _decoded_path(target)
    if path is None or _has_control(path) or "\\" in path or path.startswith("//"):
        return default
    if any(segment in (".", "..") for segment in path.split("/")):
        return default
    return target


def safe_next_within(target: str | None, prefix: str, default: str) -> str:
    """`safe_next`, and only a target below `prefix` (which ends with '/'), else `default`.

    For the auto-start page: `prefix` is `/notebook/<owner>/<name>/`, so the
    browser can only go on to a page of that notebook.
    """
    if not prefix.startswith("/") or not prefix.endswith("/"):
        raise ValueError(f"the prefix {prefix!r} must start and end with '/'")
    checked = safe_next(target, default)
    return checked if checked.startswith(prefix) else default

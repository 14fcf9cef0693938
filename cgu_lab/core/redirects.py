"""Where a login may send the browser afterwards: only to a path on this site."""

from __future__ import annotations

DEFAULT = "/notebooks"


def safe_next(target: str | None, default: str = DEFAULT) -> str:
    """Return `target` if it is a local path, else `default`.

    Refuses absolute URLs, scheme-relative ones (`//host`, `///host`), backslash
    tricks browsers normalise into them (`/\\host`) and control characters.
    """
    if not target or not isinstance(target, str):
        return default
    if any(ord(c) < 0x20 or c == "\x7f" for c in target):
        return default
    if not target.startswith("/") or target.startswith(("//", "/\\")):
        return default
    if "\\" in target.split("?", 1)[0]:
        return default
    return target

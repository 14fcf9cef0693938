"""What the storage tool (`local_storage_tool`) answered, read the same on every backend.

The tool runs as the files' user: a process of the launcher locally, an exec
in a tool pod on Kubernetes. Either way it writes its result as one JSON line
on stdout, or a refusal `{error, code, status, ...}` on stderr; this turns
those into the answer or an error the API shows as it is.
"""

from __future__ import annotations

import json

from ..core.errors import DomainError
from .base import BackendError


class StorageRefused(DomainError):
    """A refusal the tool reported, with its status and details."""

    def __init__(self, line: dict) -> None:
        details = {k: v for k, v in line.items() if k not in ("error", "code", "status")}
        super().__init__(line["error"], **details)
        self.status = int(line.get("status", 400))
        self.code = str(line.get("code", "invalid"))


def answer(code: int | None, output: bytes, errors: bytes) -> dict:
    """The tool's result; its refusal raised as StorageRefused, a crash as BackendError."""
    for raw in reversed(errors.splitlines()):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and "error" in line:
            raise StorageRefused(line)
    if code != 0:
        tail = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise BackendError(f"the storage tool failed (exit code {code}): {tail[0]}")
    return json.loads(output)

"""How many bytes a tree of files holds: the walk behind every disk allowance.

The server extension measures a home before a write (notebook/transfer/allowance.py
caches it) and the platform's storage tool measures a user's storage before an upload
(backends/local_storage_tool.py): one walk, so both count the same bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

# Folders below the home walked at most, so that a pathological tree cannot stall a check.
MAX_ENTRIES = 2_000_000


def home_use(root: str | Path) -> int:
    """Bytes held by the regular files below `root`, without following links."""
    total = seen = 0
    stack = [str(root)]
    while stack and seen < MAX_ENTRIES:
        try:
            entries = os.scandir(stack.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
                except OSError:
                    continue
    return total

"""The disk allowance of a home: what it holds, and whether more fits.

The platform's quotas (core/quota.py) give each user a disk allowance (their
own, else the default; a group's budget bounds what its managers give), which
the backends pass to every notebook as `$CGU_DISK_ALLOWANCE`, the default of
`CguLabExtension.disk_allowance` (bytes; none: no limit). This is the check an
upload or an extraction makes before it starts. Each notebook's home is
measured on its own: two notebooks of one user may each hold the allowance.

It is a courtesy, not a wall: whoever may upload (the owner, an editor) may
also run code here and write any amount from a kernel. A hard limit needs the
storage's own (a filesystem quota, a volume's size); this makes the common
case, a too-large folder dropped on the file browser, fail at once with the
figures instead of halfway with "disk full". The free space of the disk
holding the home is checked too, whatever the allowance.

The rule and its refusals are core/allowance.py's, shared with the portal's
storage page.

Use is the apparent size of every regular file below the home, links not
followed, hidden files included (they take space too).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ...core.allowance import Room, check

__all__ = ["Room", "check", "home_use", "room"]

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


def room(root: str | Path, allowance: int | None) -> Room:
    """The allowance, what the home uses (walked only when there is an allowance) and the
    disk's free space."""
    used = home_use(root) if allowance is not None else None
    return Room(allowance, used, shutil.disk_usage(root).free)

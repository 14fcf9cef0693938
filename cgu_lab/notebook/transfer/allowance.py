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

Use is the apparent size of every regular file below the home, links not
followed, hidden files included (they take space too).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ...core.resources import format_memory
from .names import DiskFull, OverAllowance

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


@dataclass(frozen=True)
class Room:
    """The figures an upload is checked against (and the page shows)."""

    allowance: int | None
    used: int | None
    free: int

    def as_dict(self) -> dict:
        left = None if self.allowance is None else max(0, self.allowance - (self.used or 0))
        return {"allowance": self.allowance, "used": self.used, "left": left, "free": self.free}


def room(root: str | Path, allowance: int | None) -> Room:
    """The allowance, what the home uses (walked only when there is an allowance) and the
    disk's free space."""
    used = home_use(root) if allowance is not None else None
    return Room(allowance, used, shutil.disk_usage(root).free)


def check(where: Room, needed: int, what: str = "this upload") -> None:
    """Refuse `needed` more bytes when they pass the allowance or the disk's free space."""
    if where.allowance is not None and (where.used or 0) + needed > where.allowance:
        used = where.used or 0
        left = max(0, where.allowance - used)
        raise OverAllowance(
            f"{what} needs {format_memory(needed)}, but your disk allowance is "
            f"{format_memory(where.allowance)} and {format_memory(used)} of it is used "
            f"({format_memory(left)} left): delete some files, or ask your teacher for more",
            limit=where.allowance,
            used=used,
            needed=needed,
        )
    if needed > where.free:
        raise DiskFull(
            f"{what} needs {format_memory(needed)}, but the disk holding this notebook has "
            f"only {format_memory(where.free)} free",
            free=where.free,
            needed=needed,
        )

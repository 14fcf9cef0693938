"""Disk allowances: the figures a write is checked against, and the refusals it gets.

One rule for every place the platform writes a user's bytes: a notebook's
file manager (notebook/transfer) and the portal's storage page
(controller/storage). The figures come from whoever can measure the disk (the
notebook server, or the storage tool running as the files' owner); the
decision and its sentence are here, without I/O, so both say the same thing.

Refusals name the allowance, the use and what is needed (413: "what you send
is too large"); a full disk is 507, whatever the allowance.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import QuotaExceeded
from .resources import format_memory


class OverAllowance(QuotaExceeded):
    """More than the disk allowance; 413, the status for "what you send is too large"."""

    status = 413
    code = "over_allowance"


class DiskFull(QuotaExceeded):
    status = 507
    code = "disk_full"


@dataclass(frozen=True)
class Room:
    """The figures a write is checked against (and the pages show)."""

    allowance: int | None
    used: int | None
    free: int

    def as_dict(self) -> dict:
        left = None if self.allowance is None else max(0, self.allowance - (self.used or 0))
        return {"allowance": self.allowance, "used": self.used, "left": left, "free": self.free}


def check(
    where: Room, needed: int, what: str = "this upload", whose: str = "your disk allowance"
) -> None:
    """Refuse `needed` more bytes when they pass the allowance or the disk's free space."""
    if where.allowance is not None and (where.used or 0) + needed > where.allowance:
        used = where.used or 0
        left = max(0, where.allowance - used)
        raise OverAllowance(
            f"{what} needs {format_memory(needed)}, but {whose} is "
            f"{format_memory(where.allowance)} and {format_memory(used)} of it is used "
            f"({format_memory(left)} left): delete some files, or ask your teacher for more",
            limit=where.allowance,
            used=used,
            needed=needed,
        )
    if needed > where.free:
        raise DiskFull(
            f"{what} needs {format_memory(needed)}, but the disk holding these files has "
            f"only {format_memory(where.free)} free",
            free=where.free,
            needed=needed,
        )

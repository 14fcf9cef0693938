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

Where the bytes arrive, every write is checked: the contents API's saves,
upload chunks, copies and new files (contents.py), uploads planned here and
extractions. They all ask one `HomeUsage`, which caches the measured use
(see its docstring for why and how long).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ...core.allowance import Room, check
from ...files.usage import home_use

__all__ = ["ENV_ALLOWANCE", "HomeUsage", "Room", "check", "from_environment", "home_use", "room"]

# The variable the backends pass each notebook's allowance in, in bytes ("": none).
ENV_ALLOWANCE = "CGU_DISK_ALLOWANCE"
# The key of the server's HomeUsage in the tornado application's settings.
SETTING = "cgu_lab_home_usage"


def room(root: str | Path, allowance: int | None) -> Room:
    """The allowance, what the home uses (walked only when there is an allowance) and the
    disk's free space."""
    used = home_use(root) if allowance is not None else None
    return Room(allowance, used, shutil.disk_usage(root).free)


def from_environment() -> int | None:
    """$CGU_DISK_ALLOWANCE in bytes; None when unset, empty or not a number."""
    value = os.environ.get(ENV_ALLOWANCE, "")
    try:
        return int(float(value)) if value else None
    except ValueError:
        return None


class HomeUsage:
    """What a home uses, cheap enough to ask on every write.

    Why a cache: JupyterLab saves a notebook every two minutes and on every
    Ctrl+S, and an upload arrives as one PUT per 1 MiB chunk; walking a home
    of tens of thousands of files on each of them would cost more than the
    write (see the README's figures) and stall the server's event loop. So
    the use is walked at most once every `ttl` seconds (in a worker thread,
    one walk at a time), and between walks the writes this server makes move
    the figure by the bytes they add or free (`wrote`), so that a burst of
    chunks cannot slip past the allowance on a stale figure. What kernels
    write, or what a delete moves to the trash, is seen at the next walk: at
    most `ttl` seconds late, which the allowance, a courtesy rather than a
    wall (module docstring), can afford. `forget` makes the next question
    walk at once (after a delete or an extraction, whose sizes are not
    worth adding up).

    `allowance` is bytes (None: no allowance, and no walk); the extension
    keeps it equal to its `disk_allowance` setting. `clock` is injected so
    that tests move time instead of sleeping.
    """

    def __init__(
        self,
        root: str | Path,
        allowance: int | None = None,
        ttl: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.root = str(root)
        self.allowance = allowance
        self.ttl = ttl
        self.clock = clock
        self.walks = 0  # how many times the home was walked (the README's figures, tests)
        self._used: int | None = None
        self._taken = 0.0
        self._lock = threading.Lock()  # the figure; wrote() may come from worker threads
        self._walking: asyncio.Lock | None = None

    def cached(self) -> int | None:
        """The figure as it stands, None when it must be walked first."""
        with self._lock:
            if self._used is None or self.clock() - self._taken >= self.ttl:
                return None
            return self._used

    def measure(self) -> int:
        """Walk the home now (blocking) and keep the figure."""
        used = home_use(self.root)
        with self._lock:
            self._used, self._taken = used, self.clock()
            self.walks += 1
        return used

    async def used(self) -> int:
        """The home's use: the cached figure, else a walk in a worker thread."""
        figure = self.cached()
        if figure is not None:
            return figure
        if self._walking is None:
            self._walking = asyncio.Lock()
        async with self._walking:  # concurrent writers wait for one walk, not one each
            figure = self.cached()
            return figure if figure is not None else await asyncio.to_thread(self.measure)

    async def room(self) -> Room:
        """The figures a write is checked against: the use is walked only with an allowance."""
        used = await self.used() if self.allowance is not None else None
        return Room(self.allowance, used, shutil.disk_usage(self.root).free)

    def wrote(self, size: int) -> None:
        """`size` bytes were added to the home (negative: freed) since the last walk."""
        with self._lock:
            if self._used is not None:
                self._used = max(0, self._used + size)

    def forget(self) -> None:
        """The next question walks the home."""
        with self._lock:
            self._used = None

"""Unix accounts for local notebooks, so students cannot read each other's files.

When the controller runs as root, each platform user's notebooks run as a
system account `cgu-<name>` created on first start (no password, no login
shell). Without root, every notebook runs as the controller's own account
and the README says what that means for isolation.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import pwd
import re
import shutil
from dataclasses import dataclass

MAX_UNIX_NAME = 32


def unix_name(user: str) -> str:
    """A valid, collision-free Unix account name for a platform user name."""
    base = "cgu-" + re.sub(r"[^a-z0-9_-]", "-", user)
    if len(base) <= MAX_UNIX_NAME and base == "cgu-" + user:
        return base
    digest = hashlib.sha256(user.encode()).hexdigest()[:8]
    return base[: MAX_UNIX_NAME - 9] + "-" + digest


@dataclass(frozen=True)
class Account:
    uid: int | None
    gid: int | None
    name: str

    @property
    def separate(self) -> bool:
        return self.uid is not None


class Accounts:
    def __init__(self, mode: str) -> None:
        if mode == "auto":
            mode = "per-user" if os.geteuid() == 0 else "self"
        if mode not in ("per-user", "self"):
            raise ValueError(f"run_as must be 'auto', 'per-user' or 'self', not '{mode}'")
        if mode == "per-user" and os.geteuid() != 0:
            raise ValueError("run_as 'per-user' needs the controller to run as root")
        self.mode = mode
        self._lock = asyncio.Lock()

    async def account(self, user: str) -> Account:
        if self.mode == "self":
            return Account(None, None, pwd.getpwuid(os.geteuid()).pw_name)
        name = unix_name(user)
        async with self._lock:
            try:
                entry = pwd.getpwnam(name)
            except KeyError:
                await self._create(name, user)
                entry = pwd.getpwnam(name)
        return Account(entry.pw_uid, entry.pw_gid, name)

    async def _create(self, name: str, user: str) -> None:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        process = await asyncio.create_subprocess_exec(
            useradd,
            "--system",
            "--user-group",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            "/usr/sbin/nologin",
            "--comment",
            f"cgu-lab notebooks of {user}",
            name,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await process.communicate()
        if process.returncode not in (0, 9):  # 9: the name exists (a concurrent creation)
            raise OSError(f"could not create account {name}: {output.decode().strip()}")

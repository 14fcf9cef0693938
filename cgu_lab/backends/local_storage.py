"""The local backend's storage: each user's own, each course's shared, outliving notebooks.

    storage/users/<user>/             the user's account, 0700; every home
                                      links to it as ~/storage
    storage/courses/<course>/         root:<readers>, 0750: only the course's
                                      people may enter
    storage/courses/<course>/shared/  root:<writers>, 2775, default ACL
                                      u::rwx g::rwx o::r-x: writers (the
                                      teacher, TAs when allowed) write, and
                                      what they make stays readable by members
                                      and writable by the other writers

Members see a course's storage at ~/courses/<course>/shared, a link in their
course folder. Links only point: what a member may do there is decided by
the target's permissions, and a member's notebook carries the readers group
only, so writing fails with EACCES whatever the link says. The Unix groups
(`cgu-<tag>-r-<course>`, `cgu-<tag>-w-<course>`, tagged with the
installation like accounts) are handed to processes as supplementary groups
by the launcher, at each start: a member removed from a course loses access
at their next start (or storage page request), as with a Unix login.

No project quotas: this filesystem (ext4 without `prjquota`, like most
hosts) offers none, so the allowance is a checked one on every write path
the platform controls (the storage page's uploads; see local_storage_tool),
not a wall against a kernel writing into ~/storage. The page says so.

Portal requests run `local_storage_tool` through the launcher as the
caller's account with the groups their role gives, never as root on a path a
user controls. Without per-user accounts (a controller not running as root)
everything runs as the controller's account: the roles are then enforced by
the portal only, as the README says of homes.
"""

from __future__ import annotations

import asyncio
import contextlib
import grp
import json
import logging
import os
import shutil
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

from .base import BackendError
from .local_accounts import Account, Accounts, account_stem, installation_tag
from .local_files import DIR_FLAGS, Refused, opened, own_folder
from .storage_answer import answer

log = logging.getLogger(__name__)

SHARED = "shared"
# A default ACL (system.posix_acl_default, version 2): user::rwx group::rwx other::r-x.
# With it, files made in course storage ignore the maker's umask 077 and stay readable.
_ACL_ENTRY = "<HHI"
DEFAULT_ACL = struct.pack("<I", 2) + b"".join(
    struct.pack(_ACL_ENTRY, tag, perm, 0xFFFFFFFF) for tag, perm in ((1, 7), (4, 7), (0x20, 5))
)
GROUP_STEM = 32 - len("cgu-") - 5 - len("-r-")


@dataclass(frozen=True)
class Place:
    """Where a storage request works, and as whom."""

    root: Path
    account: Account
    groups: tuple[int, ...]
    umask: int


class Storage:
    enforcement = (
        "checked by the platform on every upload from this page; files written from a "
        "notebook are counted at the next upload (this filesystem has no project quotas)"
    )

    def __init__(self, root: Path, course_folders: Path, accounts: Accounts) -> None:
        self.root = root
        self.course_folders = course_folders
        self.accounts = accounts

    def user_root(self, user: str) -> Path:
        return self.root / "users" / user

    def course_root(self, course: str) -> Path:
        return self.root / "courses" / course / SHARED

    def open(self) -> None:
        for folder in (self.root, self.root / "users", self.root / "courses"):
            own_folder(folder, 0o711)

    # -- Unix groups of a course --------------------------------------------------

    def group_name(self, course: str, kind: str) -> str:
        tag = installation_tag(self.accounts.instance)
        return f"cgu-{tag}-{kind}-{account_stem(course, GROUP_STEM)}"

    async def _gid(self, name: str) -> int:
        try:
            return grp.getgrnam(name).gr_gid
        except KeyError:
            pass
        groupadd = shutil.which("groupadd") or "/usr/sbin/groupadd"
        process = await asyncio.create_subprocess_exec(
            groupadd,
            "--system",
            name,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await process.communicate()
        if process.returncode not in (0, 9):  # 9: made meanwhile by a concurrent request
            raise BackendError(f"could not create the group {name}: {output.decode().strip()}")
        return grp.getgrnam(name).gr_gid

    async def course_groups(self, course: str, writer: bool) -> tuple[int, ...]:
        """The supplementary groups of a reader (or writer) of a course's storage; the
        folders are made on first need."""
        if self.accounts.mode != "per-user":
            await asyncio.to_thread(self._prepare_course, course, None, None)
            return ()
        readers = await self._gid(self.group_name(course, "r"))
        writers = await self._gid(self.group_name(course, "w"))
        await asyncio.to_thread(self._prepare_course, course, readers, writers)
        return (readers, writers) if writer else (readers,)

    def _prepare_course(self, course: str, readers: int | None, writers: int | None) -> None:
        shared = self.root / "courses" / course / SHARED
        _root_folder(shared.parent, 0o750, readers)
        _root_folder(shared, 0o2775, writers, DEFAULT_ACL)

    # -- notebooks ----------------------------------------------------------------

    async def mount(self, owner: str, home: Path, account: Account, courses) -> list[int]:
        """Link ~/storage and ~/courses/<course>/shared into a home; the groups its
        processes need. `courses`: (name, writable) pairs of the owner's courses."""
        await asyncio.to_thread(self._prepare_user, owner, account)
        await asyncio.to_thread(self._link, home, "storage", self.user_root(owner), account)
        groups: list[int] = []
        for course, writable in courses:
            groups += await self.course_groups(course, writable)
            folder = self.course_folders / owner / course
            try:
                await asyncio.to_thread(self._own, folder, account)
            except BackendError as error:
                # The owner put a link or a file where their course folder goes: their
                # choice, left alone (never followed); the notebook starts without the link.
                log.warning("no course link for %s in %s: %s", owner, course, error)
                continue
            await asyncio.to_thread(self._link, folder, SHARED, self.course_root(course), account)
        return sorted(set(groups))

    def _prepare_user(self, owner: str, account: Account) -> None:
        self._own(self.user_root(owner), account)

    @staticmethod
    def _own(folder: Path, account: Account) -> None:
        try:
            own_folder(folder, 0o700, account.uid, account.gid)
        except Refused as error:
            raise BackendError(str(error)) from None

    @staticmethod
    def _link(folder: Path, name: str, target: Path, account: Account) -> None:
        """A link `name` in `folder`, made through an O_NOFOLLOW fd of the folder; a file
        the user put there under that name is left alone (they chose it)."""
        with opened(os.open(folder, DIR_FLAGS)) as fd, contextlib.suppress(FileExistsError):
            os.symlink(target, name, dir_fd=fd)
            if account.uid is not None:
                os.chown(name, account.uid, account.gid, dir_fd=fd, follow_symlinks=False)

    # -- the storage page's requests ------------------------------------------------

    async def place(self, owner: str | None, course: str | None, actor: str, writer: bool) -> Place:
        """Where and as whom a request runs: the actor's account, with the course's groups."""
        account = await self.accounts.account(actor)
        if course is None:
            assert owner is not None
            await asyncio.to_thread(self._prepare_user, owner, account)
            return Place(self.user_root(owner), account, (), 0o077)
        groups = await self.course_groups(course, writer)
        return Place(self.course_root(course), account, groups, 0o002)

    async def run(self, place: Place, command: str, plan: dict, stdin: bytes | None = None) -> dict:
        process = await self._start(place, command, plan, stdin is not None)
        assert process.stdout is not None and process.stderr is not None

        async def feed() -> None:
            """The body; a tool that refused before reading it closes the pipe early."""
            if process.stdin is None:
                return
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                process.stdin.write(stdin or b"")
                await process.stdin.drain()
            process.stdin.close()
            # The pipe's close carries the same error; taken here, asyncio does not log
            # it later as a "Future exception was never retrieved".
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await process.stdin.wait_closed()

        output, errors, _ = await asyncio.gather(
            process.stdout.read(), process.stderr.read(), feed()
        )
        await process.wait()
        return answer(process.returncode, output, errors)

    async def stream_zip(self, place: Place, paths: list[str]):
        """The zip's blocks as they come; a refusal before the first byte raises."""
        process = await self._start(place, "zip", {"paths": paths}, False)
        assert process.stdout is not None and process.stderr is not None
        first = await process.stdout.read(1 << 16)
        if not first:
            errors = await process.stderr.read()
            await process.wait()
            answer(process.returncode, b"{}", errors)

        async def blocks():
            try:
                yield first
                while block := await process.stdout.read(1 << 16):
                    yield block
                if await process.wait() != 0:
                    # Leave the chunked body unfinished: the browser marks the download failed.
                    raise BackendError(f"the zip of {paths} stopped halfway")
            finally:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                await process.wait()

        return blocks()

    async def _start(self, place: Place, command: str, plan: dict, stdin: bool):
        tool = {"root": str(place.root), "umask": place.umask, **plan}
        launch = {
            "argv": [
                sys.executable,
                "-m",
                "cgu_lab.backends.local_storage_tool",
                command,
                json.dumps(tool),
            ],
            "env": {
                "PATH": "/usr/bin:/bin",
                "LANG": os.environ.get("LANG", "C.UTF-8"),
                "HOME": str(place.root),
            },
            "cwd": str(place.root),
            "uid": place.account.uid,
            "gid": place.account.gid,
            "groups": list(place.groups),
            "keep_stdin": stdin,
        }
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "cgu_lab.backends.local_launch",
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"CGU_LAUNCH_PLAN": json.dumps(launch), "PATH": "/usr/bin:/bin"},
        )


def _root_folder(path: Path, mode: int, gid: int | None, acl: bytes | None = None) -> None:
    """A folder the controller owns, its group and mode set through an O_NOFOLLOW fd."""
    path.mkdir(exist_ok=True)
    try:
        fd = os.open(path, DIR_FLAGS)
    except OSError:
        raise BackendError(
            f"{path} is not a real folder (a link or a file is in its place)"
        ) from None
    with opened(fd):
        if gid is not None:
            os.fchown(fd, 0, gid)
        os.fchmod(fd, mode)
        if acl is not None:
            with contextlib.suppress(OSError):  # a filesystem without ACLs: umask decides
                os.setxattr(fd, "system.posix_acl_default", acl)

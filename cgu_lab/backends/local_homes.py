"""The local backend's homes: where a user's files are, made theirs, and copied as them.

    homes/<user>/<notebook>/   a notebook's home and root directory
    course-folders/<user>/<group>/
                               a member's folder of each course, where its lab
                               files land; every home links it as `courses`
    lab-files/<id>/            a class's lab files while they are linked into its
                               members' course folders (local_class_files.py)

Folders are made and handed to their account through O_NOFOLLOW descriptors
(local_files.own_folder), so a link planted in a home's place is refused, never
followed. Copies in and out (templates, submissions, lab files for a class)
run the file tool (`python -m cgu_lab.backends.local_files`) through the
launcher as the files' own account: what a copy can touch is what that user
can (local_files says why that matters).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from . import local_class_files as class_files
from .base import BackendError
from .local_accounts import Account, Accounts
from .local_files import Refused, chown_tree, own_folder

log = logging.getLogger("cgu_lab.local")

# A pack's manifest (every file with its hash) arrives as one JSON line.
MANIFEST_LIMIT = 64 * 2**20


def _tool_result(code: int, lines: list[dict], key: str) -> dict:
    """The file tool's answer, or its refusal as a BackendError the user can read."""
    for line in reversed(lines):
        if "error" in line:
            raise BackendError(line["error"])
        if key in line and code == 0:
            return line[key]
    raise BackendError(f"copying files failed (exit code {code})")


def _tool_plan(command: str, plan: dict, root: Path, account: Account) -> dict:
    """The launcher's plan for one run of the file tool in `root`, as `account`."""
    tool = {"root": str(root), **plan}
    return {
        "argv": [sys.executable, "-m", "cgu_lab.backends.local_files", command, json.dumps(tool)],
        "env": {
            "PATH": "/usr/bin:/bin",
            "LANG": os.environ.get("LANG", "C.UTF-8"),
            "HOME": str(root),
        },
        "cwd": str(root),
        "uid": account.uid,
        "gid": account.gid,
        "keep_stdin": True,
    }


@dataclass
class StoredFiles:
    """A class's lab files unpacked once (`folder`), from `archive`; `linking` turns off
    when the file system refuses a link, and the members still to go get copies."""

    archive: Path
    folder: Path
    linking: bool = True


class Homes:
    def __init__(self, homes: Path, course_folders: Path, accounts: Accounts) -> None:
        self.homes = homes
        self.course_folders = course_folders
        self.accounts = accounts

    def move_old_course_folders(self, old: Path) -> None:
        """Installations made before the folder was named for what it holds kept the course
        folders in `coursework/`. They move once, and every home's `courses` link is pointed
        at the new place (the links are absolute), so lab files already deployed stay where
        students find them. Blocking: run at the backend's start, before any notebook starts."""
        if not old.is_dir() or old.is_symlink():
            return
        if self.course_folders.is_dir() and not any(self.course_folders.iterdir()):
            self.course_folders.rmdir()
        if self.course_folders.exists():
            log.warning(
                "%s and %s both hold course folders: left as they are", old, self.course_folders
            )
            return
        os.rename(old, self.course_folders)
        for home in self.homes.glob("*/*/"):
            owner, link = home.parent.name, home / "courses"
            if link.is_symlink() and Path(os.readlink(link)) == old / owner:
                made = link.with_name(".courses-moving")
                made.unlink(missing_ok=True)
                made.symlink_to(self.course_folders / owner, target_is_directory=True)
                stat = link.lstat()
                os.lchown(made, stat.st_uid, stat.st_gid)
                os.replace(made, link)
        log.info("course folders moved from %s to %s", old, self.course_folders)

    def home(self, owner: str, name: str) -> Path:
        return self.homes / owner / name

    def area(self, owner: str, area: str) -> Path:
        """A place of a user's files: a notebook's home, or their course folders ("courses")."""
        return self.course_folders / owner if area == "courses" else self.home(owner, area)

    # -- made and owned (blocking: callers run these in a thread) -------------------

    def prepare_home(self, home: Path, uid: int | None, gid: int | None) -> None:
        """Modes and owners are set through O_NOFOLLOW fds: a link in a home's place is refused."""
        try:
            own_folder(home.parent, 0o711)
            if own_folder(home, 0o700, uid, gid):
                chown_tree(home, uid, gid)
        except Refused as error:
            raise BackendError(str(error)) from None

    def own_dir(self, path: Path, uid: int | None, gid: int | None) -> None:
        try:
            own_folder(path, 0o700, uid, gid)
        except Refused as error:
            raise BackendError(str(error)) from None

    def link_courses(self, owner: str, home: Path, uid: int | None, gid: int | None) -> None:
        """Every notebook of a user sees their course folders at ~/courses."""
        target = self.course_folders / owner
        self.own_dir(target, uid, gid)
        link = home / "courses"
        if not os.path.lexists(link):
            link.symlink_to(target, target_is_directory=True)
            if uid is not None:
                os.lchown(link, uid, gid)

    # -- copies in and out, as the owner ---------------------------------------------

    async def pack(
        self,
        owner: str,
        area: str,
        paths: list[str],
        excluded: list[str],
        max_bytes: int,
        max_files: int,
        into: Path,
        base: str = "",
    ) -> dict:
        """Archive `paths` of a home (relative to its folder `base`) into `into`, as its owner."""
        plan = {
            "paths": paths,
            "excluded": excluded,
            "max_bytes": max_bytes,
            "max_files": max_files,
            "base": base,
        }
        archive = await asyncio.to_thread(open, into, "wb")
        with archive:
            code, _, lines = await self._file_tool(owner, area, "pack", plan, stdout=archive)
        return _tool_result(code, lines, "manifest")

    async def unpack(
        self,
        owner: str,
        area: str,
        source: Path,
        destination: str,
        label: str,
        on_progress: Callable[[int], Awaitable[None]] | None = None,
    ) -> dict:
        plan = {"destination": destination, "label": label}
        archive = await asyncio.to_thread(open, source, "rb")
        with archive:
            code, output, lines = await self._file_tool(
                owner, area, "unpack", plan, stdin=archive, on_progress=on_progress
            )
        if code != 0:
            _tool_result(code, lines, "report")
        return json.loads(output)

    # -- a class's lab files, stored once (local_class_files.py) ---------------------

    async def store_once(self, source: Path) -> StoredFiles | None:
        """The archive unpacked once for linking into members' folders; None without
        per-user accounts (one account would own every member's copy at once)."""
        if self.accounts.mode != "per-user":
            return None
        stored = StoredFiles(source, self.course_folders.parent / "lab-files" / uuid.uuid4().hex)
        await asyncio.to_thread(own_folder, stored.folder.parent, 0o700)
        try:
            await asyncio.to_thread(class_files.store, source, stored.folder)
        except (OSError, Refused) as error:
            await self.drop_stored(stored)
            raise BackendError(f"the lab files could not be stored: {error}") from None
        return stored

    async def unpack_stored(
        self, owner: str, area: str, stored: StoredFiles, destination: str, label: str
    ) -> dict:
        """Link the stored files into the owner's folder; copy them where links fail."""
        if not stored.linking:
            return await self.unpack(owner, area, stored.archive, destination, label)
        account = await self.accounts.account(owner)
        root = await self._file_root(owner, area, "unpack", account)
        try:
            return await asyncio.to_thread(
                class_files.link, stored.folder, root, destination, label, account.uid, account.gid
            )
        except class_files.CannotLink:
            stored.linking = False  # this file system: a copy per member from here on
            return await self.unpack(owner, area, stored.archive, destination, label)
        except Refused as error:
            raise BackendError(str(error)) from None

    async def drop_stored(self, stored: StoredFiles) -> None:
        await asyncio.to_thread(shutil.rmtree, stored.folder, True)

    async def _file_root(self, owner: str, area: str, command: str, account: Account) -> Path:
        """The folder the tool works in, made the owner's where a copy may create it."""
        root = self.area(owner, area)
        if area == "courses":
            await asyncio.to_thread(self.own_dir, root, account.uid, account.gid)
        elif command == "unpack":  # a new notebook's home is made for its first files
            await asyncio.to_thread(self.prepare_home, root, account.uid, account.gid)
        elif not root.is_dir():
            raise BackendError(f"{owner} has no files for notebook '{area}' yet")
        return root

    async def _file_tool(
        self,
        owner: str,
        area: str,
        command: str,
        plan: dict,
        stdin=None,
        stdout=None,
        on_progress=None,
    ) -> tuple[int, bytes, list[dict]]:
        """Run `local_files` as the files' owner; returns its exit code, stdout and stderr lines."""
        account = await self.accounts.account(owner)
        root = await self._file_root(owner, area, command, account)
        launch = _tool_plan(command, plan, root, account)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "cgu_lab.backends.local_launch",
            stdin=stdin if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=stdout if stdout is not None else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"CGU_LAUNCH_PLAN": json.dumps(launch), "PATH": "/usr/bin:/bin"},
            limit=MANIFEST_LIMIT,
        )
        lines: list[dict] = []

        async def read_stderr() -> None:
            assert process.stderr is not None
            async for raw in process.stderr:
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                lines.append(line)
                if on_progress and "done" in line:
                    await on_progress(line["done"])

        output, _ = await asyncio.gather(
            process.stdout.read() if process.stdout is not None else asyncio.sleep(0, b""),
            read_stderr(),
        )
        await process.wait()
        return process.returncode, output or b"", lines

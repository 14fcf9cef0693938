"""Unix accounts for local notebooks, so students cannot read each other's files.

When the controller runs as root, each platform user's notebooks run as a
system account created on first need (no password, no login shell). Without
root, every notebook runs as the controller's own account and the README says
what that means for isolation.

Why the map is stored: a Unix name is derived from the platform name (letters
outside the Unix alphabet replaced, long names shortened with a hash), and
two different platform names can derive the same Unix name (`eve.x` and a
user literally called `eve-x-<hash>`). Sharing an account would mean sharing
files, so the user <-> account map lives in the database (`unix_accounts`),
one row per user with a unique name, written when the account is first
needed: the second claimant of a name is refused, and an existing system
account that this installation did not make for that user is never adopted.

Why the installation tag: several installations may share one host, so every
name carries a short tag derived from the installation id, and the account's
comment field names the whole id and the user (which is how we recognise our
own accounts).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import pwd
import re
import shutil
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from ..core.errors import Conflict
from ..store.db import Database
from ..store.models import UnixAccount, User
from .base import BackendError

MAX_UNIX_NAME = 32
TAG_LENGTH = 5
PREFIX = "cgu-"
# What is left for the user's part in "cgu-<tag>-<stem>".
STEM_MAX = MAX_UNIX_NAME - len(PREFIX) - TAG_LENGTH - 1


def installation_tag(instance: str) -> str:
    """A short, stable tag of an installation id, for host-wide names."""
    return hashlib.sha256(instance.encode()).hexdigest()[:TAG_LENGTH]


def account_stem(user: str, limit: int = STEM_MAX) -> str:
    """The user's part of the Unix name: the name itself when it fits the Unix
    alphabet and length, else a cleaned prefix and a hash of the full name."""
    clean = re.sub(r"[^a-z0-9_-]", "-", user)
    if clean == user and len(user) <= limit:
        return user
    digest = hashlib.sha256(user.encode()).hexdigest()[:8]
    return clean[: limit - 9] + "-" + digest


def unix_name(user: str, tag: str = "") -> str:
    """The Unix account name proposed for a platform user (max 32 chars, useradd-valid).

    With an installation tag (as the backend always calls it) the name is
    `cgu-<tag>-<stem>`; without, the untagged `cgu-<stem>` of older versions.
    The proposal is only a proposal: `Accounts` stores who owns which name.
    """
    if not tag:
        return PREFIX + account_stem(user, MAX_UNIX_NAME - len(PREFIX))
    return f"{PREFIX}{tag}-{account_stem(user)}"


def account_comment(instance: str, user: str) -> str:
    """The comment (GECOS) field that marks an account as ours, for this user."""
    return f"cgu-lab {instance} notebooks of {user}"


# Says why a user name's system account is taken on this host, or None when it is free.
UnixClash = Callable[[str], str | None]


async def check_unix_names(
    session: AsyncSession, names: list[str], unix_clash: UnixClash | None = None
) -> None:
    """Refuse new user names whose system account would be someone else's.

    Local notebooks run as a Unix account derived from the user name; two
    names may derive the same one (`eve.x` and `eve-x-<hash>`), and sharing it
    means sharing files. The derived part does not depend on the installation
    tag (fixed length), so the check needs no backend: it compares with every
    user's derived name and with the stored map; `unix_clash` adds the host's
    side (a system account we did not make) where the backend has one.
    """
    claimed: dict[str, str] = {}
    for name in names:
        stem = account_stem(name)
        if stem in claimed:
            raise Conflict(
                f"'{name}' and '{claimed[stem]}' would share one system account; rename one of them"
            )
        claimed[stem] = name
    if not claimed:
        return
    others = await session.scalars(
        select(User.name).where(
            or_(
                User.name.in_(list(claimed)),
                User.name.contains("."),
                func.length(User.name) > STEM_MAX,
            )
        )
    )
    stored = await session.execute(
        select(UnixAccount.name, User.name).join(User, User.id == UnixAccount.user_id)
    )
    owners = {account_stem(other): other for other in others.all()}
    owners.update({unix.split("-", 2)[-1]: owner for unix, owner in stored.all()})
    for stem, name in claimed.items():
        other = owners.get(stem)
        if other is not None and other != name:
            raise Conflict(
                f"the user name '{name}' cannot be used: its system account would be the "
                f"same as that of '{other}'; choose another name"
            )
        reason = unix_clash(name) if unix_clash else None
        if reason:
            raise Conflict(f"the user name '{name}' cannot be used: {reason}; choose another name")


@dataclass(frozen=True)
class Account:
    uid: int | None
    gid: int | None
    name: str

    @property
    def separate(self) -> bool:
        return self.uid is not None


class Accounts:
    """Finds, or creates on first need, the system account of a platform user.

    A user's account, once found, is remembered: every later start of theirs finds it
    with one lookup of the host's account database, without the lock or a transaction.
    Before, each start of a class took a turn under one lock for a transaction on an
    engine of its own (so outside the platform's turns on SQLite): thirty students
    pressing Start queued behind each other here, seconds on a busy host, before any
    server was launched. The map from user to account never changes once made (names
    are derived from the user and the installation, accounts are never deleted); one
    whose system account went away is looked up again.
    """

    def __init__(
        self,
        mode: str,
        instance: Callable[[], str] | str = "",
        db_url: str = "",
    ) -> None:
        if mode == "auto":
            mode = "per-user" if os.geteuid() == 0 else "self"
        if mode not in ("per-user", "self"):
            raise ValueError(f"run_as must be 'auto', 'per-user' or 'self', not '{mode}'")
        if mode == "per-user" and os.geteuid() != 0:
            raise ValueError("run_as 'per-user' needs the controller to run as root")
        if mode == "per-user" and not db_url:
            raise ValueError("per-user accounts need the database that stores who owns which")
        self.mode = mode
        self._instance = instance
        self.db_url = db_url
        self._lock = asyncio.Lock()
        self._known: dict[str, Account] = {}
        # The platform's database (`Backend.share_database`); without it (a CLI run, a test
        # of the backend alone) an engine of its own per event loop.
        self.database: Database | None = None
        # one engine per event loop (the controller has one; a CLI run, its own)
        self._dbs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Database] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def instance(self) -> str:
        return self._instance() if callable(self._instance) else self._instance

    def proposed_name(self, user: str) -> str | None:
        """The name a new user's account would get here (None: no per-user accounts yet)."""
        if self.mode != "per-user" or not self.instance:
            return None
        return unix_name(user, installation_tag(self.instance))

    def clash(self, user: str) -> str | None:
        """Why `user` could not get their proposed account, or None when it is free.

        Only the host's side: a system account of that name that we did not
        make for this user. The database's side is the controller's check.
        """
        name = self.proposed_name(user)
        if name is None:
            return None
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            return None
        if entry.pw_gecos == account_comment(self.instance, user):
            return None
        return f"the system account '{name}' already exists on this host and is not '{user}''s"

    async def account(self, user: str) -> Account:
        if self.mode == "self":
            return Account(None, None, pwd.getpwuid(os.geteuid()).pw_name)
        instance = self.instance
        if not instance:
            raise BackendError("the local backend is not open yet (no installation id)")
        known = self._known.get(user)
        if known is not None and _still_there(known):
            return known
        async with self._lock:
            name, uid = await self._claim(user, unix_name(user, installation_tag(instance)))
            expected = account_comment(instance, user)
            try:
                entry = pwd.getpwnam(name)
            except KeyError:
                await create_system_account(name, expected)
                entry = pwd.getpwnam(name)
            if entry.pw_gecos != expected or (uid is not None and uid != entry.pw_uid):
                raise BackendError(
                    f"notebooks of '{user}' cannot start: the system account '{name}' "
                    "exists but was not made by this installation for them; "
                    "ask an administrator"
                )
            if uid is None:
                await self._remember_uid(user, entry.pw_uid)
        account = self._known[user] = Account(entry.pw_uid, entry.pw_gid, name)
        return account

    async def close(self) -> None:
        """Close the engine this loop reads and writes the account map with."""
        db = self._dbs.pop(asyncio.get_running_loop(), None)
        if db is not None:
            await db.close()

    def _database(self) -> Database:
        """One engine per loop for the life of the backend, not one per claim (each cost
        a connection's setup)."""
        if self.database is not None:
            return self.database
        loop = asyncio.get_running_loop()
        db = self._dbs.get(loop)
        if db is None:
            db = self._dbs[loop] = Database(self.db_url)
        return db

    # -- the stored map --------------------------------------------------------

    async def _claim(self, user: str, proposed: str) -> tuple[str, int | None]:
        """The user's stored account (name, uid), storing `proposed` on first need."""
        db = self._database()
        try:
            async with db.session() as session:
                user_id = await session.scalar(select(User.id).where(User.name == user))
                if user_id is None:
                    raise BackendError(f"there is no user '{user}'")
                row = await session.get(UnixAccount, user_id)
                if row is not None:
                    return row.name, row.uid
                owner = await session.scalar(
                    select(User.name)
                    .join(UnixAccount, UnixAccount.user_id == User.id)
                    .where(UnixAccount.name == proposed)
                )
                if owner is not None:
                    raise BackendError(
                        f"notebooks of '{user}' cannot start: their system account name "
                        f"'{proposed}' already belongs to '{owner}'; ask an administrator "
                        "to rename one of the two accounts"
                    )
                session.add(UnixAccount(user_id=user_id, name=proposed))
                await session.flush()
                return proposed, None
        except IntegrityError as error:
            raise BackendError(
                f"notebooks of '{user}' cannot start: the system account name '{proposed}' "
                "was just taken by another user; ask an administrator"
            ) from error

    async def _remember_uid(self, user: str, uid: int) -> None:
        async with self._database().session() as session:
            row = await session.scalar(
                select(UnixAccount)
                .join(User, User.id == UnixAccount.user_id)
                .where(User.name == user)
            )
            if row is not None:
                row.uid = uid


def _still_there(account: Account) -> bool:
    """Whether the host still has this account under this name (one passwd lookup)."""
    if account.uid is None:
        return True
    try:
        return pwd.getpwuid(account.uid).pw_name == account.name
    except KeyError:
        return False


async def create_system_account(name: str, comment: str) -> None:
    """A login-less system account with its own group, no home and no shell; the comment
    says which installation made it. OSError when useradd refuses."""
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
        comment,
        name,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    if process.returncode not in (0, 9):  # 9: the name exists (a concurrent creation)
        raise OSError(f"could not create account {name}: {output.decode().strip()}")

"""The contents manager: read-only files for read-only callers, trust for the owner alone.

Read-only: JupyterLab disables saving and marks a document read-only when the
contents API says the file is not `writable`. The request guard already
refuses writes (`authorizer.py`); this makes the interface say so up front
instead of failing at the first save.

Trust: a trusted notebook's HTML and JavaScript outputs run in the viewer's
browser. Before, a student could sign a notebook in her own server, put a
`<script>` in an output and share it read-only with an admin, who then ran
her script. Now:

- anyone but the owner sees every notebook untrusted, whatever its
  signature (`mark_trusted_cells`), a non-owner's save never signs
  (`check_and_sign`), and only the owner may trust (`trust_notebook`; the
  request guard already refuses the trust endpoint to everyone else);
- the notary keeps its signatures in an in-memory SQLite database and signs
  with a random secret made at server start (`_notary_default`), neither of
  them in the home. Keyword arguments win over config files, so a
  `NotebookNotary` setting planted in the home's JSON config cannot move
  them back. The cost: the owner's trust does not survive a restart (re-run
  or re-trust a notebook to see its rich outputs again).

What this cannot stop, and why it does not rely on it: the kernel runs as the
same uid as this server. It can read `/proc/<server pid>/environ` (the proxy
secret the server was started with), may read the server's memory (and so
the notary's secret) where ptrace between processes of one uid is allowed
(Yama `ptrace_scope` 0), and can write Python config into the home that runs
inside the next server it starts. Whoever can run code here (the owner, an
editor) can therefore make this server lie to later viewers. Viewers are
protected by what the owner cannot touch: each notebook is served from its
own origin and the controller's proxy adds its own checks, so a script that
does run can act only on this one notebook, with the viewer's (read-only)
rights. The rules above close the easy path: a signature the owner made in
her own home no longer makes her outputs run for anyone else.

Disk allowance: this is where a browser's bytes arrive, whatever the page
that sends them (the lab extension's upload plans it first, a raw
`PUT api/contents/...` does not), so every write path checks the owner's
allowance here before its first byte: a save (PUT with content; a new file
or notebook is one), each chunk of a chunked upload, a copy (POST with
`copy_from`: a file is copied by a save, a folder is measured first). A
rename writes nothing and is free; a write that makes a file smaller is
always allowed, so a student over the allowance can still shrink and delete.
A refusal is 413 `{message, code: over_allowance, limit, used, needed}` (or
`disk_full`) and leaves nothing behind: nothing is written, and a refused
later chunk removes the part of the file its earlier chunks wrote. The use
comes from `transfer.allowance.HomeUsage`, cached and moved by each write
(why: its docstring); the extension hands it its allowance.

A class's lab files are stored once and linked into each member's course folder,
as files of root's they cannot change in place (backends/local_class_files.py).
Here they are shown writable, and the first save of one puts the student's own
copy in its place before writing (copy on first write), so saving just works and
never changes a classmate's file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import stat
from typing import NoReturn

import nbformat
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from nbformat.sign import NotebookNotary
from tornado import web
from traitlets import Float, Instance, default

from ..core.errors import DomainError
from ..files.usage import home_use
from .access import send_refusal
from .caller import CURRENT_HANDLER, CURRENT_USER
from .transfer.allowance import HomeUsage, check, from_environment


def _read_only(model: dict) -> dict:
    model["writable"] = False
    if model.get("type") == "directory" and isinstance(model.get("content"), list):
        for child in model["content"]:
            child["writable"] = False
    return model


def _caller_is_owner() -> bool:
    """Whether the request being served comes from the owner (no request: no)."""
    user = CURRENT_USER.get()
    return user is not None and user.access == "owner"


def _refuse(error: DomainError) -> NoReturn:
    """Answer the request being served with 413 `{message, code, ...figures}` and stop it
    (`web.Finish`); outside a request, a plain HTTPError with the sentence."""
    handler = CURRENT_HANDLER.get()
    if handler is not None:
        try:
            send_refusal(handler, 413, error.code, error.message, error.details, no_store=True)
        except RuntimeError:  # that request was answered already: this is not its write
            pass
        else:
            raise web.Finish()
    raise web.HTTPError(413, error.message)


def _content_size(model: dict) -> int:
    """The bytes a save or a chunk of `model` writes (a notebook: as nbformat writes it)."""
    content = model.get("content")
    if model.get("type") == "notebook" and isinstance(content, dict):
        try:
            text = nbformat.writes(nbformat.from_dict(content), version=nbformat.NO_CONVERT)
        except Exception:  # the save refuses it itself; its size is about its JSON's
            text = json.dumps(content)
        return len(text.encode("utf-8", "surrogateescape"))
    if model.get("type") != "file" or not isinstance(content, str):
        return 0  # a folder, or a model jupyter_server refuses itself
    if model.get("format") == "base64":
        encoded = "".join(content.split())
        return len(encoded) * 3 // 4 - encoded[-2:].count("=")
    return len(content.encode("utf-8", "surrogateescape"))


class ShareAwareContentsManager(AsyncLargeFileManager):
    usage_seconds = Float(
        10.0,
        help=(
            "How long the measured use of the home is trusted before it is walked again "
            "(writes through this server move it meanwhile; see HomeUsage)."
        ),
    ).tag(config=True)

    home_usage = Instance(
        HomeUsage,
        help=(
            "What the home uses and its allowance, shared with the cgu_lab extension (which "
            "sets the allowance from its disk_allowance; $CGU_DISK_ALLOWANCE until then)."
        ),
    )

    @default("delete_to_trash")
    def _delete_to_trash_default(self) -> bool:
        """Deleting frees the space: a home's trash (~/.local/share/Trash) lies in the home,
        counts against the allowance, and JupyterLab cannot empty it, so "delete some files"
        would not help a student over it. JupyterLab then asks "permanently delete?"."""
        return False

    @default("home_usage")
    def _home_usage_default(self) -> HomeUsage:
        return HomeUsage(self.root_dir, from_environment(), ttl=self.usage_seconds)

    @default("notary")
    def _notary_default(self) -> NotebookNotary:
        return NotebookNotary(parent=self, db_file=":memory:", secret=secrets.token_bytes(32))

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        user = CURRENT_USER.get()
        limited = user is not None and (user.access == "read" or bool(user.scope))
        if limited:
            return _read_only(model)
        if not model.get("writable") and model.get("type") != "directory":
            # A class's shared lab file: saving it makes the student's own copy.
            model["writable"] = await asyncio.to_thread(self._shared_file, path)
        return model

    def mark_trusted_cells(self, nb, path=""):
        if _caller_is_owner():
            return super().mark_trusted_cells(nb, path)
        self.notary.mark_cells(nb, False)
        return None

    def check_and_sign(self, nb, path="", **kwargs):
        if _caller_is_owner():
            return super().check_and_sign(nb, path, **kwargs)
        return None  # saved, not signed: a non-owner's outputs stay untrusted for the owner too

    async def trust_notebook(self, path):
        if not _caller_is_owner():
            raise web.HTTPError(403, "only the owner of this notebook can trust it")
        return await super().trust_notebook(path)

    # -- the disk allowance ------------------------------------------------------------

    async def save(self, model, path=""):
        path = path.strip("/")
        chunk = model.get("chunk")
        appends = chunk is not None and chunk != 1
        added = await asyncio.to_thread(self._growth, model, path, appends)
        if added > 0:
            what = f"uploading '{path}'" if chunk is not None else f"saving '{path}'"
            await self._make_room(added, what, path if appends else None)
        if not appends:
            await asyncio.to_thread(self._own_copy, path)
        try:
            saved = await super().save(model, path)
        except BaseException:
            self.home_usage.forget()  # a failed write may have written part
            raise
        self.home_usage.wrote(added)
        return saved

    async def copy(self, from_path, to_path=None):
        if not await self.dir_exists(from_path):
            return await super().copy(from_path, to_path)  # a file: copied by a save
        source = self._get_os_path(from_path.strip("/"))
        size = await asyncio.to_thread(home_use, source)
        await self._make_room(size, f"copying '{from_path.strip('/')}'")
        copied = await super().copy(from_path, to_path)
        self.home_usage.wrote(size)
        return copied

    async def delete_file(self, path):
        await super().delete_file(path)
        self.home_usage.forget()  # freed, or moved to a trash inside the home: walk again

    # -- a class's lab files, stored once (backends/local_class_files.py) ---------------

    def _shared_file(self, path: str) -> bool:
        """Whether `path` is a lab file the platform linked into this home for a class: a
        regular file of root's in a home whose server runs as its own account (nothing
        else can put a file of root's there)."""
        if os.geteuid() == 0:
            return False
        try:
            info = os.lstat(self._get_os_path(path.strip("/")))
        except (OSError, web.HTTPError):
            return False
        return stat.S_ISREG(info.st_mode) and info.st_uid == 0

    def _own_copy(self, path: str) -> None:
        """Copy on first write: before a save replaces a shared lab file, put the owner's
        own copy in its place (what a save writes then changes no classmate's file). The
        copy is made beside it and renamed over it, so the file never goes missing."""
        if not self._shared_file(path):
            return
        os_path = self._get_os_path(path.strip("/"))
        folder, name = os.path.split(os_path)
        temporary = os.path.join(folder, f".~{name}.{secrets.token_hex(4)}")
        try:
            shutil.copyfile(os_path, temporary, follow_symlinks=False)
            os.chmod(temporary, os.lstat(os_path).st_mode & 0o777 | 0o200)
            os.replace(temporary, os_path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)

    def _growth(self, model: dict, path: str, appends: bool) -> int:
        """Bytes the home grows by: the content, less the file it replaces (not for an
        appended chunk). Negative when the file shrinks."""
        size = _content_size(model)
        if appends:
            return size
        try:
            os_path = self._get_os_path(path)
            replaced = os.path.getsize(os_path) if os.path.isfile(os_path) else 0
        except (OSError, web.HTTPError):
            replaced = 0
        return size - replaced

    async def _make_room(self, needed: int, what: str, partial: str | None = None) -> None:
        """Refuse (413) a write of `needed` bytes that the allowance or the disk cannot take;
        `partial`: a file earlier chunks of this upload wrote, removed on refusal."""
        try:
            check(await self.home_usage.room(), needed, what, self._whose())
        except DomainError as error:
            if partial is not None:
                await asyncio.to_thread(self._remove_partial, partial)
                error.message += "; the part already uploaded was removed"
            _refuse(error)

    def _remove_partial(self, path: str) -> None:
        os_path = self._get_os_path(path)
        try:
            size = os.lstat(os_path).st_size
            if os.path.isfile(os_path) and not os.path.islink(os_path):
                os.unlink(os_path)
                self.home_usage.wrote(-size)
        except OSError:
            return

    @staticmethod
    def _whose() -> str:
        user = CURRENT_USER.get()
        owner = user is None or user.access == "owner"
        return "your disk allowance" if owner else "this notebook's disk allowance"

"""The routes of the file manager, below `<base_url>/cgu-lab/transfer/`.

- `GET zip?path=a&path=b` — the selection as one zip, streamed;
- `POST plan` {path, files: [{path, size}]} — the check an upload makes
  before its first byte: names, folders on the way, what exists already,
  what the contents API would refuse (hidden names), and the allowance;
- `POST extract` {path, into?, remove?} — extract an archive of the home;
- `GET allowance` — the disk allowance and use, for the page to show.

Who may do what is the request guard's (identity.py, authorizer.py), before
any of this runs: read-only and single-file callers make no POST, so they
may download (a GET) but never upload or extract, and get 403
`{message, code}`. Single-file shares reach none of these routes at all
(they are not in `authorizer.ROUTES`). The handlers ask the Authorizer too
(`@authorized`, resource `contents`), as every contents route does.

Refusals are `{message, code}` with the status of the platform's
DomainError, plus its details (`limit`, `used`, `needed`, `conflicts`...).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import posixpath
import threading
from pathlib import Path
from urllib.parse import quote

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.iostream import StreamClosedError

from ...core.errors import DomainError
from ...files import zipstream
from ...files.names import Conflict, Invalid, NotFound, folder_in_home, home_path, is_hidden
from ..access import send_refusal
from ..handlers import BaseHandler
from . import allowance, extract

MAX_PLAN_FILES = 100_000
QUEUED_BLOCKS = 8  # blocks of the zip waiting for the socket, at most


class TransferHandler(BaseHandler):
    """Refusals as `{message, code, ...details}`; the home and the allowance at hand."""

    auth_resource = "contents"

    @property
    def root(self) -> str:
        return self.settings["server_root_dir"]

    @property
    def disk_allowance(self) -> int | None:
        return getattr(self.extensionapp, "disk_allowance", None)

    @property
    def home_usage(self) -> allowance.HomeUsage:
        """The measure of the home the contents manager checks writes with (app.py)."""
        return self.settings[allowance.SETTING]

    @property
    def include_hidden(self) -> bool:
        return bool(getattr(self.contents_manager, "allow_hidden", False))

    def refuse(self, error: DomainError) -> None:
        send_refusal(self, error.status, error.code, error.message, error.details, no_store=True)

    def body(self) -> dict:
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError:
            raise web.HTTPError(400, "the request body is not JSON") from None
        if not isinstance(body, dict):
            raise web.HTTPError(400, "the request body must be a JSON object")
        return body


class ZipHandler(TransferHandler):
    """A folder or a selection as one zip, written as it is read."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        try:
            selection = zipstream.select(self.root, self.get_arguments("path"), self.include_hidden)
        except DomainError as error:
            self.refuse(error)
            return
        name = selection.filename
        self.set_header("Content-Type", "application/zip")
        self.set_header("Cache-Control", "no-store")
        self.set_header(
            "Content-Disposition",
            f"attachment; filename=\"{quote(name)}\"; filename*=UTF-8''{quote(name)}",
        )
        await self._stream(selection)

    async def _stream(self, selection: zipstream.Selection) -> None:
        loop = asyncio.get_running_loop()
        blocks: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue(QUEUED_BLOCKS)
        stop = threading.Event()

        def send(block: bytes | BaseException | None) -> None:
            """From the writer thread: wait for room in the queue, unless told to stop."""
            future = asyncio.run_coroutine_threadsafe(blocks.put(block), loop)
            while True:
                if stop.is_set():
                    future.cancel()
                    raise zipstream.Cancelled()
                try:
                    future.result(timeout=0.5)
                    return
                except TimeoutError:
                    continue

        def writer() -> None:
            try:
                zipstream.write_zip(selection, send)
                outcome: BaseException | None = None
            except zipstream.Cancelled:
                return
            except Exception as error:  # reported to the loop, which logs it
                outcome = error
            with contextlib.suppress(zipstream.Cancelled):
                send(outcome)

        threading.Thread(target=writer, name="cgu-lab-zip", daemon=True).start()
        try:
            while (block := await blocks.get()) is not None:
                if isinstance(block, BaseException):
                    self.log.error("cgu-lab: zip of %s failed: %s", selection.paths, block)
                    # Unfinished chunked body: the browser marks the download failed.
                    self.request.connection.close()
                    return
                self.write(block)
                await self.flush()
        except StreamClosedError:
            self.log.info("cgu-lab: download of %s stopped by the browser", selection.paths)
            return
        finally:
            stop.set()
        self.finish()


class PlanHandler(TransferHandler):
    """Whether an upload may start, before its first byte."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.body()
        try:
            answer = await asyncio.to_thread(self._plan, body)
        except DomainError as error:
            self.refuse(error)
            return
        self.finish(answer)

    def _plan(self, body: dict) -> dict:
        folder = home_path(str(body.get("path", "")), "folder")
        files = body.get("files")
        if not isinstance(files, list) or not files:
            raise Invalid("an upload plan lists its files: [{path, size}]")
        if len(files) > MAX_PLAN_FILES:
            raise Invalid(f"an upload takes at most {MAX_PLAN_FILES} files at once")
        if folder and is_hidden(folder) and not self.include_hidden:
            raise Invalid(f"'{folder}' is hidden: uploads go to folders the file browser shows")
        base = folder_in_home(self.root, folder)
        needed, conflicts, skipped, accepted = 0, [], [], []
        for item in files:
            if not isinstance(item, dict) or not isinstance(item.get("size"), int):
                raise Invalid("each file of an upload plan is {path, size}")
            relative = home_path(str(item.get("path", "")), "file name")
            if not relative or item["size"] < 0:
                raise Invalid("each file of an upload plan needs a name and a size")
            if is_hidden(relative) and not self.include_hidden:
                skipped.append({"path": relative, "reason": "hidden"})
                continue
            existing = self._existing(base, relative, folder)
            if existing is not None:
                conflicts.append(relative)
            needed += item["size"] - (existing or 0)
            accepted.append(relative)
        room = allowance.room(self.root, self.disk_allowance)
        allowance.check(room, max(0, needed), "this upload")
        return {
            "path": folder,
            "files": len(accepted),
            "needed": max(0, needed),
            "conflicts": conflicts,
            "skipped": skipped,
            **room.as_dict(),
        }

    @staticmethod
    def _existing(base, relative: str, folder: str) -> int | None:
        """The size of the file an upload would replace; None when there is none.
        A folder on the way that is a file or a link refuses the plan."""
        parent, name = posixpath.split(relative)
        shown = posixpath.join(folder, relative)
        try:
            where = folder_in_home(base, parent)
        except NotFound:
            return None
        try:
            info = os.lstat(where / name)
        except FileNotFoundError:
            return None
        if not os.path.isfile(where / name) or os.path.islink(where / name):
            raise Conflict(
                f"'{shown}' exists and is not a file: rename it or choose another folder"
            )
        return info.st_size


class ExtractHandler(TransferHandler):
    """Extract an archive of the home, all or nothing; `remove` deletes it afterwards."""

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.body()
        path, into = body.get("path"), body.get("into")
        if not isinstance(path, str) or (into is not None and not isinstance(into, str)):
            self.refuse(Invalid("extract takes {path, into?: folder name, remove?: bool}"))
            return
        try:
            answer = await asyncio.to_thread(
                extract.extract, self.root, path, into or None, self.disk_allowance
            )
        except DomainError as error:
            self.refuse(error)
            return
        finally:
            self.home_usage.forget()  # the contents API's next write sees what was written
        if body.get("remove") is True:
            archive = Path(self.root, home_path(path))
            try:
                os.unlink(archive)
                answer["removed"] = True
            except OSError:
                answer["removed"] = False
        self.finish(answer)


class AllowanceHandler(TransferHandler):
    """The disk allowance, what the home uses and the disk's free space."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        where = await asyncio.to_thread(allowance.room, self.root, self.disk_allowance)
        self.finish(where.as_dict())


def routes(app) -> list[tuple]:
    return [
        (r"cgu-lab/transfer/zip", ZipHandler),
        (r"cgu-lab/transfer/plan", PlanHandler),
        (r"cgu-lab/transfer/extract", ExtractHandler),
        (r"cgu-lab/transfer/allowance", AllowanceHandler),
    ]

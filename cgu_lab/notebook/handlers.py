"""REST routes of the server extension, all below `<base_url>/cgu-lab/`.

`info` and `resources` answer anyone with access to this notebook; `files`
(the home, for the file pickers) and `files/stat` (which of some paths exist,
for the Submit dialog's preselection) only its owner. Visitors' JupyterLab
workspaces are kept apart from the owner's in `workspaces.py`. What JupyterLab asks of the
controller (shares, resize, quota, templates, submissions, courses, culling)
never reaches this server: the controller's proxy answers those paths on the
notebook's origin with the browser user's own identity, so no credential a
kernel can read is involved (cgu_lab/controller/api/lab.py).
"""

from __future__ import annotations

import asyncio
import json

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web

from .. import __version__
from ..core.errors import Invalid
from . import controller_client, files, usage

AUTH_RESOURCE = "cgu_lab"


class BaseHandler(ExtensionHandlerMixin, APIHandler):
    """Shared policy: JSON errors with a readable `message`, owner checks."""

    auth_resource = AUTH_RESOURCE

    def write_error(self, status_code: int, **kwargs) -> None:
        self.set_header("Content-Type", "application/json")
        reason = self._reason
        exc_info = kwargs.get("exc_info")
        if exc_info and isinstance(exc_info[1], web.HTTPError) and exc_info[1].log_message:
            reason = exc_info[1].log_message
        self.finish(json.dumps({"message": reason}))

    def require_owner(self) -> None:
        if getattr(self.current_user, "access", None) != "owner":
            raise web.HTTPError(403, "only the owner of this notebook can do this")


class InfoHandler(BaseHandler):
    """The handshake: version, who I am here, and where the control panel is."""

    _track_activity = False  # polled by the page: looking is not using

    @web.authenticated
    @authorized
    def get(self) -> None:
        user = self.current_user
        client: controller_client.ControllerClient = self.settings[controller_client.SETTING]
        self.finish(
            {
                "version": __version__,
                "user": {"name": user.username, "display_name": user.display_name},
                "notebook": {"owner": client.owner, "name": client.name} if client.owner else None,
                "access": getattr(user, "access", "owner"),
                "scope": list(getattr(user, "scope", ())),
                "controller_url": self.extensionapp.public_url or None,
            }
        )


class ResourcesHandler(BaseHandler):
    """What this notebook uses now, and what it asked for."""

    _track_activity = False  # polled by the status bar: looking is not using

    @web.authenticated
    @authorized
    async def get(self) -> None:
        sampler: usage.Sampler = self.settings[usage.SETTING]
        reading = await sampler.read()
        given = reading["gpus"]["allocated"]
        reading["requested"] = {
            "cpu_milli": round((sampler.cpu_limit or 0) * 1000),
            "memory": sampler.memory_limit or 0,
            "gpu_type": given["gpu_type"],
            "gpus": given["count"],
        }
        self.finish(reading)


class FilesHandler(BaseHandler):
    """The home, listed for the file pickers of "Save as template" and "Submit"."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        root, path = self.settings["server_root_dir"], self.get_argument("path", "")
        try:
            answer = await asyncio.to_thread(files.listing, root, path)
        except (Invalid, NotADirectoryError, FileNotFoundError) as error:
            message = (
                getattr(error, "message", None)
                or f"'{self.get_argument('path', '')}' is not a folder"
            )
            raise web.HTTPError(400, message) from None
        self.finish(answer)


class FileStatHandler(BaseHandler):
    """Which of some paths exist in the home, with their sizes (the Submit dialog's
    preselection: the files a notebook reads, the files its template brought)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        root = self.settings["server_root_dir"]
        paths = self.get_arguments("path")
        answer = await asyncio.to_thread(files.stat_paths, root, paths)
        self.finish(answer)


def route_table() -> list[tuple[str, type]]:
    """Every route of the extension; the ExtensionApp prefixes the server's base_url."""
    return [
        (r"cgu-lab/info", InfoHandler),
        (r"cgu-lab/resources", ResourcesHandler),
        (r"cgu-lab/files", FilesHandler),
        (r"cgu-lab/files/stat", FileStatHandler),
    ]

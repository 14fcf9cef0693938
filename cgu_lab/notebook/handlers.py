"""REST routes of the server extension, all below `<base_url>/cgu-lab/`.

`info` and `resources` answer anyone with access to this notebook, `culling`
and `keep-running` anyone who may edit it; the rest are the owner's. All but
`info` and `resources` are forwarded to the controller with the notebook's
own token (share, resize, quota, directory, shared-with-me, culling).
"""

from __future__ import annotations

import asyncio
import json
import os
from urllib.parse import quote

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.extension.handler import ExtensionHandlerMixin
from tornado import web

from .. import __version__
from ..core.errors import Invalid
from . import files
from .controller_client import ControllerError, controller_client
from .usage import Sampler

AUTH_RESOURCE = "cgu_lab"


class BaseHandler(ExtensionHandlerMixin, APIHandler):
    """Shared policy: JSON errors with a readable `message`, owner checks, forwarding."""

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

    def require_editor(self) -> None:
        if getattr(self.current_user, "access", None) not in ("owner", "edit"):
            raise web.HTTPError(403, "your access to this notebook is read-only")

    async def forward(
        self,
        method: str,
        path: str,
        body: dict | None = None,
        query: dict | None = None,
        status: int = 200,
    ):
        try:
            result = await controller_client().call(method, path, body, query)
        except ControllerError as error:
            raise web.HTTPError(error.status, error.message) from None
        self.set_status(status)
        return result

    def json_body(self) -> dict:
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError:
            raise web.HTTPError(400, "the request body is not JSON") from None
        if not isinstance(body, dict):
            raise web.HTTPError(400, "the request body must be a JSON object")
        return body


class InfoHandler(BaseHandler):
    """The handshake: version, who I am here, and where the control panel is."""

    _track_activity = False  # polled by the page: looking is not using

    @web.authenticated
    @authorized
    def get(self) -> None:
        user = self.current_user
        client = controller_client()
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
    def get(self) -> None:
        sampler: Sampler = self.settings.setdefault("cgu_lab_sampler", Sampler())
        reading = sampler.reading()
        reading["requested"] = {
            "cpu_milli": round(float(os.environ.get("CGU_CPU_LIMIT", "0") or 0) * 1000),
            "memory": int(os.environ.get("CGU_MEM_LIMIT", "0") or 0),
            "gpu_type": os.environ.get("CGU_GPU_TYPE") or None,
            "gpus": len([d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d]),
        }
        self.finish(reading)


class QuotaHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        client = controller_client()
        quota = await self.forward("GET", f"/api/users/{quote(client.owner)}/quota")
        gpu_types = await self.forward("GET", "/api/gpu-types")
        self.finish(
            {
                "limits": quota["limits"],
                "usage": quota["usage"],
                "gpu_types": [
                    {
                        "name": t["name"],
                        "display_name": t["display_name"],
                        "capacity": t["capacity"],
                    }
                    for t in gpu_types
                ],
            }
        )


class ResizeHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.require_owner()
        body = self.json_body()
        changes = {key: body[key] for key in ("cpu", "memory", "gpu_type", "gpus") if key in body}
        client = controller_client()
        result = await self.forward("PATCH", client.notebook_path(), changes)
        where = f"{quote(client.owner)}/{quote(client.name)}"
        lab = quote(f"/notebook/{where}/lab", safe="")
        restart = f"/notebook/auto-start/{where}?next={lab}"
        self.set_status(202)
        self.finish({"state": result["state"], "restart_url": restart})


class SharesHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        self.finish(
            json.dumps(await self.forward("GET", controller_client().notebook_path("shares")))
        )

    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.require_owner()
        body = self.json_body()
        share = await self.forward(
            "POST", controller_client().notebook_path("shares"), body, status=201
        )
        self.finish(share)


class ShareHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def delete(self, share_id: str) -> None:
        self.require_owner()
        self.finish(
            await self.forward("DELETE", controller_client().notebook_path("shares", share_id))
        )


class DirectoryHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        self.finish(
            await self.forward("GET", "/api/directory", query={"q": self.get_argument("q", "")})
        )


class SharedWithMeHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        self.finish(json.dumps(await self.forward("GET", "/api/shared-with-me")))


class CullingHandler(BaseHandler):
    """Whether and when the idle culler stops this notebook (the countdown in JupyterLab)."""

    _track_activity = False

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_editor()
        self.finish(await self.forward("GET", controller_client().notebook_path("culling")))


class KeepRunningHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.require_editor()
        self.finish(await self.forward("POST", controller_client().notebook_path("keep-running")))


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


class TemplateOptionsHandler(BaseHandler):
    """What the "Save as template" dialog offers: environments, groups, my templates, defaults."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        client = controller_client()
        me = await self.forward("GET", "/api/me")
        version = await self.forward("GET", "/api/version")
        environments = await self.forward("GET", "/api/environments")
        groups = await self.forward("GET", "/api/groups")
        templates = await self.forward("GET", "/api/templates", query={"retired": "true"})
        notebook = await self.forward("GET", client.notebook_path())
        self.finish(
            {
                "can_publish": me["role"] in ("admin", "teacher", "ta"),
                "environments": [
                    {"name": e["name"], "display_name": e["display_name"]} for e in environments
                ],
                "groups": [{"name": g["name"], "display_name": g["display_name"]} for g in groups],
                "templates": [
                    {
                        "name": t["name"],
                        "display_name": t["display_name"],
                        "versions": t["latest"]["version"] if t["latest"] else 0,
                    }
                    for t in templates
                    if t["mine"]
                ],
                "defaults": {
                    "environment": notebook["environment"],
                    "cpu_milli": notebook["cpu_milli"],
                    "memory": notebook["memory"],
                    "gpu_type": notebook["gpu_type"],
                    "gpus": notebook["gpus"],
                },
                "max_bytes": version["limits"]["template_max_bytes"],
            }
        )


class TemplatesHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.require_owner()
        body = {**self.json_body(), "notebook": controller_client().name}
        template = await self.forward("POST", "/api/templates", body, status=201)
        latest = template["latest"] or {}
        self.finish(
            {
                "name": template["name"],
                "version": latest.get("version", 0),
                "files": latest.get("files", 0),
                "bytes": latest.get("bytes", 0),
                "url": f"/templates/{template['name']}",
            }
        )


class AssignmentsHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        self.finish(json.dumps(await self.forward("GET", "/api/assignments")))


class SubmitHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.require_owner()
        body = self.json_body()
        assignment = body.get("assignment_id")
        if not isinstance(assignment, int):
            raise web.HTTPError(400, "choose the assignment to submit to")
        payload = {
            "notebook": controller_client().name,
            "paths": body.get("paths") or [],
            "note": body.get("note") or "",
        }
        self.finish(
            await self.forward(
                "POST", f"/api/assignments/{assignment}/submissions", payload, status=201
            )
        )


class CoursesHandler(BaseHandler):
    _track_activity = False  # polled by the Course panel

    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.require_owner()
        self.finish({"groups": await self.forward("GET", "/api/courses")})


class CoursesSeenHandler(BaseHandler):
    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.require_owner()
        self.finish(await self.forward("POST", "/api/courses/seen"))


def route_table() -> list[tuple[str, type]]:
    """Every route of the extension; the ExtensionApp prefixes the server's base_url."""
    return [
        (r"cgu-lab/info", InfoHandler),
        (r"cgu-lab/resources", ResourcesHandler),
        (r"cgu-lab/quota", QuotaHandler),
        (r"cgu-lab/resize", ResizeHandler),
        (r"cgu-lab/shares", SharesHandler),
        (r"cgu-lab/shares/(\d+)", ShareHandler),
        (r"cgu-lab/directory", DirectoryHandler),
        (r"cgu-lab/shared-with-me", SharedWithMeHandler),
        (r"cgu-lab/culling", CullingHandler),
        (r"cgu-lab/keep-running", KeepRunningHandler),
        (r"cgu-lab/files", FilesHandler),
        (r"cgu-lab/templates/options", TemplateOptionsHandler),
        (r"cgu-lab/templates", TemplatesHandler),
        (r"cgu-lab/assignments", AssignmentsHandler),
        (r"cgu-lab/submit", SubmitHandler),
        (r"cgu-lab/courses", CoursesHandler),
        (r"cgu-lab/courses/seen", CoursesSeenHandler),
    ]

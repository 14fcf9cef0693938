"""What JupyterLab asks the controller, on a notebook's own origin (`<nb>/cgu-lab/...`).

The proxy answers these paths of a notebook's origin by calling this router
with the browser user's identity, scoped to that notebook and to their access
in it (core/scopes.py): anyone with access reads the lab's status, editors
keep the notebook running, its owner shares, resizes, publishes and submits.
No credential a kernel can read is involved, so code in the notebook can do
nothing here that its viewer could not.

The answers keep the shapes the lab extension knows; links that point at the
controller's pages are absolute, because the lab runs on another origin.
The routes are not part of the public API document: only the proxy reaches them.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Query
from pydantic import Field

from ..accounts import router as accounts
from ..environments import router as catalog
from ..gpus import router as gpus
from ..notebooks import culling_router as culling
from ..notebooks import router as notebooks
from ..notebooks.schemas import CullerView
from ..quotas import router as quotas
from ..sharing import router as shares
from ..teaching import router as teaching
from ..teaching.schemas import BroadcastCopied, BroadcastCopy
from . import system
from .deps import ActorDep, IdentityDep, PlatformDep, require_scope
from .schema_types import Id, LabelPath, RelativePath
from .schemas import (
    Amount,
    Message,
    NotebookPatch,
    ShareCreate,
    Strict,
    SubmissionCreate,
    TemplatePublish,
)

router = APIRouter(
    prefix="/lab/{owner}/{name}",
    include_in_schema=False,
    dependencies=[require_scope("lab:read")],
)
OWN = [require_scope("lab:own")]
EDIT = [require_scope("lab:edit")]


class Resize(Strict):
    cpu: Amount | None = None
    memory: Amount | None = None
    gpu_type: str | None = Field(None, max_length=63)
    gpus: int | None = Field(None, ge=0, le=8)


class LabTemplate(TemplatePublish):
    notebook: str = Field("", description="Always this notebook")


class LabBroadcastCopy(Strict):
    path: RelativePath = ""


class LabSubmission(Strict):
    assignment_id: int = Field(ge=1, le=2**63 - 1)
    paths: list[str] = Field(default_factory=list, max_length=20_000)
    note: str = Field("", max_length=2000)


@router.get("/shares", dependencies=OWN)
async def list_shares(owner: str, name: str, platform: PlatformDep, actor: ActorDep):
    return await shares.list_shares(owner, name, platform, actor)


@router.post("/shares", status_code=201, dependencies=OWN)
async def create_share(
    owner: str, name: str, body: ShareCreate, platform: PlatformDep, actor: ActorDep
):
    return await shares.create_share(owner, name, body, platform, actor)


@router.delete("/shares/{share_id}", dependencies=OWN)
async def revoke_share(
    owner: str, name: str, share_id: int, platform: PlatformDep, actor: ActorDep
) -> Message:
    return await shares.revoke_share(owner, name, share_id, platform, actor)


@router.get("/directory", dependencies=OWN)
async def directory(platform: PlatformDep, actor: ActorDep, q: str = Query("", max_length=100)):
    return await shares.directory(platform, actor, q)


@router.get("/shared-with-me", dependencies=OWN)
async def shared_with_me(platform: PlatformDep, actor: ActorDep):
    return await shares.shared_with_me(platform, actor)


@router.get("/culling", dependencies=EDIT)
async def culling_status(
    owner: str, name: str, platform: PlatformDep, actor: ActorDep
) -> CullerView:
    """The culler's view read now, with the figures the lab counts down from: `now` (the
    server's clock, so a skewed laptop clock shifts nothing), `idle_seconds` and `stop_at`."""
    nb, group = await culling._notebook(platform, actor, owner, name)  # 404 unless editor
    return await platform.culler.status(nb, group)


@router.post("/keep-running", dependencies=EDIT)
async def keep_running(owner: str, name: str, platform: PlatformDep, actor: ActorDep) -> Message:
    return await culling.keep_running(owner, name, platform, actor)


@router.get("/quota", dependencies=OWN)
async def quota(owner: str, platform: PlatformDep, actor: ActorDep) -> dict:
    limits = await quotas.get_user_quota(owner, platform, actor)
    gpu_types = await gpus.list_gpu_types(platform, actor)
    return {
        "limits": limits.limits,
        "usage": limits.usage,
        "gpu_types": [
            {"name": t.name, "display_name": t.display_name, "capacity": t.capacity}
            for t in gpu_types
        ],
    }


@router.post("/resize", status_code=202, dependencies=OWN)
async def resize(
    owner: str, name: str, body: Resize, platform: PlatformDep, actor: ActorDep
) -> dict:
    patch = NotebookPatch(**body.model_dump(exclude_none=True))
    result = await notebooks.update_notebook(owner, name, patch, platform, actor, wait=False)
    where = f"{quote(owner)}/{quote(name)}"
    lab = quote(f"/notebook/{where}/lab", safe="")
    restart = f"{platform.settings.base_url}/notebook/auto-start/{where}?next={lab}"
    return {"state": result.state, "restart_url": restart}


@router.get("/templates/options", dependencies=OWN)
async def template_options(
    owner: str, name: str, platform: PlatformDep, actor: ActorDep, who: IdentityDep
) -> dict:
    profile = await accounts.me(platform, who)
    version = await system.version(platform, actor)
    environments = await catalog.list_environments(platform, actor)
    groups = await accounts.list_groups(platform, actor)
    templates = await teaching.list_templates(platform, actor, retired=True)
    notebook = await notebooks.get_notebook(owner, name, platform, actor)
    return {
        "can_publish": profile.role in ("admin", "teacher", "ta"),
        "environments": [{"name": e.name, "display_name": e.display_name} for e in environments],
        "groups": [{"name": g.name, "display_name": g.display_name} for g in groups],
        "templates": [
            {
                "name": t.name,
                "display_name": t.display_name,
                "versions": t.latest.version if t.latest else 0,
            }
            for t in templates
            if t.mine
        ],
        "defaults": {
            "environment": notebook.environment,
            "cpu_milli": notebook.cpu_milli,
            "memory": notebook.memory,
            "gpu_type": notebook.gpu_type,
            "gpus": notebook.gpus,
        },
        "max_bytes": version.limits["template_max_bytes"],
    }


@router.get("/templates/files", dependencies=OWN)
async def template_files(owner: str, name: str, platform: PlatformDep, actor: ActorDep) -> dict:
    """The files this notebook's template brought into its home (none when it was not made
    from one): what a submission should include for the notebook to run elsewhere."""
    await notebooks.get_notebook(owner, name, platform, actor)  # the owner's, or 404
    seeded = await platform.templates.seeded(owner, name)
    if seeded is None:
        return {"template": None, "display_name": "", "version": None, "files": []}
    return {
        "template": seeded.template,
        "display_name": seeded.display_name,
        "version": seeded.version,
        "files": seeded.files,
    }


@router.post("/templates", status_code=201, dependencies=OWN)
async def publish_template(
    name: str, body: LabTemplate, platform: PlatformDep, actor: ActorDep
) -> dict:
    template = await teaching.publish_template(
        TemplatePublish(**{**body.model_dump(), "notebook": name}), platform, actor
    )
    latest = template.latest
    return {
        "name": template.name,
        "version": latest.version if latest else 0,
        "files": latest.files if latest else 0,
        "bytes": latest.bytes if latest else 0,
        "url": f"{platform.settings.base_url}/templates/{quote(template.name)}",
    }


@router.get("/assignments", dependencies=OWN)
async def assignments(platform: PlatformDep, actor: ActorDep):
    return await teaching.my_assignments(platform, actor)


@router.post("/submit", status_code=201, dependencies=OWN)
async def submit(name: str, body: LabSubmission, platform: PlatformDep, actor: ActorDep):
    created = SubmissionCreate(notebook=name, paths=body.paths, note=body.note)
    return await teaching.submit(body.assignment_id, created, platform, actor)


@router.get("/courses", dependencies=OWN)
async def courses(platform: PlatformDep, actor: ActorDep) -> dict:
    return {"groups": await teaching.courses(platform, actor)}


@router.post("/courses/seen", dependencies=OWN)
async def courses_seen(platform: PlatformDep, actor: ActorDep) -> Message:
    return await teaching.courses_seen(platform, actor)


@router.post("/courses/{group}/broadcasts/{share_id}/copy", dependencies=OWN)
async def copy_broadcast(
    name: str,
    group: LabelPath,
    share_id: Id,
    body: LabBroadcastCopy,
    platform: PlatformDep,
    actor: ActorDep,
) -> BroadcastCopied:
    """The Course panel's Copy to my home: into this very notebook, its owner's."""
    return await teaching.copy_broadcast(
        group, share_id, BroadcastCopy(notebook=name, path=body.path), platform, actor
    )

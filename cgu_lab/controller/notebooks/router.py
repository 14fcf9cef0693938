"""Notebooks: list, create, start, stop, resize, delete, and follow progress."""

from __future__ import annotations

from fastapi import APIRouter, Query
from sse_starlette import EventSourceResponse

from ...core.errors import Forbidden
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.events import SSE_RESPONSES, notebook_changes, progress_stream
from ..api.schema_types import LabelPath, SearchQuery, StateName, UserNamePath, UserNameQuery
from ..api.schemas import Message, NotebookCreate, NotebookOut, NotebookPatch
from . import pod_defaults
from .lifecycle import Changes
from .schemas import PodDefaultOut
from .service import NotebookRequest

router = APIRouter(tags=["notebooks"], dependencies=[require_scope("notebooks")])

RESOURCE_FIELDS = ("cpu", "memory", "gpu_type", "gpus", "pod_defaults")


async def _current(platform, actor, owner: str, name: str) -> NotebookOut:
    return await platform.notebooks.view(actor, owner, name)


@router.get(
    "/notebooks", response_model=list[NotebookOut], summary="My notebooks (admins: everyone's)"
)
async def list_notebooks(
    platform: PlatformDep,
    actor: ActorDep,
    owner: UserNameQuery = None,
    state: StateName | None = None,
    q: SearchQuery = "",
) -> list[NotebookOut]:
    return await platform.notebooks.listed(actor, owner, state, q)


@router.get(
    "/notebooks/events",
    summary="State changes of my notebooks (admins: everyone's), as Server-Sent Events",
    response_class=EventSourceResponse,
    responses=SSE_RESPONSES,
)
async def notebooks_events(
    platform: PlatformDep, actor: ActorDep, owner: UserNameQuery = None
) -> EventSourceResponse:
    """The notebooks GET /notebooks would list with the same `owner`, whatever their state."""
    if owner and owner != actor.name and not actor.is_admin:
        raise Forbidden("you may follow only your own notebooks")

    async def followed(nb_id: int) -> tuple[str, str] | None:
        found = await platform.notebooks.followed(nb_id)
        if found is None:
            return None
        mine = found.owner == owner if owner else actor.is_admin or found.owner_id == actor.id
        return (found.owner, found.name) if mine else None

    return notebook_changes(platform.broker, followed)


@router.get(
    "/pod-defaults",
    response_model=list[PodDefaultOut],
    summary="The configurations (Kubeflow PodDefaults) my notebooks may apply",
)
async def list_pod_defaults(
    platform: PlatformDep, actor: ActorDep, owner: UserNameQuery = None
) -> list[PodDefaultOut]:
    """The PodDefaults of the owner's namespace (admins: any user's with `owner`), by their
    description, as Kubeflow's notebook form offers them; none where the backend or the
    cluster has no PodDefaults (the local backend, Kubernetes without Kubeflow)."""
    return await pod_defaults.offered(platform.backend, actor, owner or actor.name)


@router.post("/notebooks", response_model=NotebookOut, status_code=201, summary="Create a notebook")
async def create_notebook(
    body: NotebookCreate, platform: PlatformDep, actor: ActorDep
) -> NotebookOut:
    request = NotebookRequest(
        name=body.name,
        owner=body.owner,
        display_name=body.display_name,
        environment=body.environment,
        cpu=body.cpu,
        memory=body.memory,
        gpu_type=body.gpu_type,
        gpus=body.gpus,
        group=body.group,
        persistent=body.persistent,
        template=body.template,
        template_version=body.template_version,
        kind=body.kind,
        image=body.image,
        starting=body.start,
        pod_defaults=tuple(body.pod_defaults),
    )
    if body.start:
        nb, owner = await platform.notebooks.create_started(actor, request)
    else:
        nb, owner = await platform.notebooks.create(actor, request)
    return await _current(platform, actor, owner, nb.name)


@router.get("/notebooks/{owner}/{name}", response_model=NotebookOut, summary="One notebook")
async def get_notebook(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> NotebookOut:
    return await _current(platform, actor, owner, name)


@router.patch(
    "/notebooks/{owner}/{name}",
    response_model=NotebookOut,
    summary="Rename, mark persistent, or resize (a running notebook restarts)",
)
async def update_notebook(
    owner: UserNamePath,
    name: LabelPath,
    body: NotebookPatch,
    platform: PlatformDep,
    actor: ActorDep,
    wait: bool = Query(False, description="Answer once a restart has finished"),
) -> NotebookOut:
    if body.display_name is not None or body.persistent is not None:
        await platform.notebooks.update(actor, owner, name, body.display_name, body.persistent)
    if any(getattr(body, field) is not None for field in RESOURCE_FIELDS):
        nb = await platform.notebooks.lifecycle.resize(
            actor,
            owner,
            name,
            Changes(body.cpu, body.memory, body.gpu_type, body.gpus, body.pod_defaults),
        )
        if wait:
            await platform.notebooks.lifecycle.wait(nb.id)
    return await _current(platform, actor, owner, name)


@router.delete(
    "/notebooks/{owner}/{name}",
    response_model=Message,
    summary="Delete a stopped notebook; its files move to the trash",
)
async def delete_notebook(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> Message:
    await platform.notebooks.delete(actor, owner, name)
    return Message(message=f"notebook '{name}' was deleted")


@router.post(
    "/notebooks/{owner}/{name}/start",
    response_model=NotebookOut,
    status_code=202,
    summary="Start; follow /events for progress",
)
async def start_notebook(
    owner: UserNamePath,
    name: LabelPath,
    platform: PlatformDep,
    actor: ActorDep,
    wait: bool = Query(False, description="Answer once it is running (or failed)"),
) -> NotebookOut:
    nb = await platform.notebooks.lifecycle.start(actor, owner, name)
    if wait:
        await platform.notebooks.lifecycle.wait(nb.id)
    return await _current(platform, actor, owner, name)


@router.post(
    "/notebooks/{owner}/{name}/stop",
    response_model=NotebookOut,
    status_code=202,
    summary="Stop; kernels and terminals end with it",
)
async def stop_notebook(
    owner: UserNamePath,
    name: LabelPath,
    platform: PlatformDep,
    actor: ActorDep,
    wait: bool = Query(False, description="Answer once it has stopped"),
) -> NotebookOut:
    nb = await platform.notebooks.lifecycle.stop(actor, owner, name)
    if wait:
        await platform.notebooks.lifecycle.wait(nb.id)
    return await _current(platform, actor, owner, name)


@router.get(
    "/notebooks/{owner}/{name}/events",
    summary="Progress of the current start, stop or resize (Server-Sent Events)",
    response_class=EventSourceResponse,
    responses=SSE_RESPONSES,
)
async def notebook_events(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> EventSourceResponse:
    notebook_id, current = await platform.notebooks.view_with_id(actor, owner, name)
    status = {
        "message": current.message or current.state,
        "state": current.state,
        "ok": True,
        "url": current.url if current.state == "running" else None,
    }
    return progress_stream(platform.broker, notebook_id, status)

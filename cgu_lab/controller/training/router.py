"""Training jobs (Kubeflow PyTorchJob) and the images notebooks may use."""

from __future__ import annotations

from fastapi import APIRouter, Query
from fastapi.responses import PlainTextResponse

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import LabelPath, UserNamePath
from ..api.schemas import ImagesOut, Message, TrainingCreate, TrainingOut

router = APIRouter(tags=["training"], dependencies=[require_scope("training")])


@router.post(
    "/training",
    response_model=TrainingOut,
    status_code=201,
    summary="Submit a multi-node training job; it waits in the queue while GPUs are short",
)
async def submit(body: TrainingCreate, platform: PlatformDep, actor: ActorDep) -> TrainingOut:
    job = await platform.training.submit(
        actor,
        body.name,
        body.image,
        body.command,
        body.workers,
        body.cpu,
        body.memory,
        body.gpu_type,
        body.gpus,
        body.group,
    )
    return await platform.training.status(actor, actor.name, job.name)


@router.get(
    "/training", response_model=list[TrainingOut], summary="My training jobs (admins: everyone's)"
)
async def listing(platform: PlatformDep, actor: ActorDep) -> list[TrainingOut]:
    return await platform.training.listing(actor)


@router.get(
    "/training/{owner}/{name}",
    response_model=TrainingOut,
    summary="A training job and where it stands",
)
async def status(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> TrainingOut:
    return await platform.training.status(actor, owner, name)


@router.get(
    "/training/{owner}/{name}/logs",
    response_class=PlainTextResponse,
    summary="The last lines a replica printed",
    responses={200: {"content": {"text/plain": {}}}},
)
async def logs(
    owner: UserNamePath,
    name: LabelPath,
    platform: PlatformDep,
    actor: ActorDep,
    replica: str = Query("master", pattern="^(master|worker)$"),
    index: int = Query(0, ge=0, le=64),
) -> str:
    return await platform.training.logs(actor, owner, name, replica, index)


@router.delete(
    "/training/{owner}/{name}", response_model=Message, summary="Stop and delete a training job"
)
async def delete(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> Message:
    await platform.training.delete(actor, owner, name)
    return Message(message=f"training job '{name}' was deleted")


@router.get("/images", response_model=ImagesOut, summary="Images for the custom-image choice")
async def images(platform: PlatformDep, actor: ActorDep) -> ImagesOut:
    return await platform.training.images(actor)

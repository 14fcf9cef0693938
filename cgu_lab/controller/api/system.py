"""Health and version: the first things a script or a load balancer asks."""

from __future__ import annotations

from fastapi import APIRouter

from ... import __version__
from .deps import ActorDep, PlatformDep, require_scope
from .schemas import Message, VersionOut

router = APIRouter(tags=["system"])


@router.get("/health", response_model=Message, summary="Liveness (no login needed)")
async def health() -> Message:
    return Message(message="ok")


@router.get(
    "/version",
    response_model=VersionOut,
    summary="Version and backend facts",
    dependencies=[require_scope("system")],
)
async def version(platform: PlatformDep, actor: ActorDep) -> VersionOut:
    settings = platform.settings
    return VersionOut(
        version=__version__,
        backend={
            **platform.backend.describe(),
            "notebook_origins": settings.origins.describe(),
        },
        limits={
            "template_max_bytes": settings.template_max_bytes,
            "template_max_files": settings.template_max_files,
        },
    )

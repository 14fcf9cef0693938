"""Health and version: the first things a script or a load balancer asks."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from ... import __version__
from ...core.errors import DatabaseBusy
from .deps import ActorDep, PlatformDep, require_scope
from .schemas import VersionOut

router = APIRouter(tags=["system"])


class HealthOut(BaseModel):
    message: str
    database: str = Field(description='"ok", "busy" (locked or slow) or "unreachable"')


@router.get(
    "/health",
    response_model=HealthOut,
    summary="Liveness and the database (no login needed); 503 while the database is busy",
)
async def health(platform: PlatformDep) -> HealthOut | JSONResponse:
    """A load balancer takes a controller whose database does not answer out of rotation:
    503 with Retry-After when a trivial transaction fails or waits (a lock held elsewhere),
    within a few seconds however long the database's own busy timeout is."""
    db = platform.db
    state = await db.health(min(2.0, db.busy_timeout + 0.5))
    if state == "ok":
        return HealthOut(message="ok", database="ok")
    busy = DatabaseBusy("busy" if state == "busy" else "unreachable")
    return JSONResponse(
        {
            "message": busy.message,
            "code": busy.code,
            "details": {**busy.details, "database": state},
            "database": state,
        },
        status_code=503,
        headers=busy.headers,
    )


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

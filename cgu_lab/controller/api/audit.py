"""The audit log, for administrators."""

from __future__ import annotations

from fastapi import APIRouter, Query

from ...core.roles import require_admin
from .. import audit as service
from .deps import ActorDep, PlatformDep
from .schemas import AuditOut

router = APIRouter(tags=["audit"])


@router.get("/audit", response_model=list[AuditOut], summary="State changes, newest first (admins)")
async def list_events(
    platform: PlatformDep,
    actor: ActorDep,
    actor_name: str | None = Query(None, alias="actor"),
    action: str | None = Query(None, description="Prefix, e.g. 'notebook.' or 'quota.set'"),
    target: str | None = Query(None, description="Part of the target, e.g. 'user:alice'"),
    before: int | None = Query(None, description="Only events older than this id (paging)"),
    limit: int = Query(100, ge=1, le=1000),
) -> list[AuditOut]:
    require_admin(actor, "read the audit log")
    async with platform.db.session() as session:
        events = await service.query(
            session, actor=actor_name, action=action, target=target, before_id=before, limit=limit
        )
        return [
            AuditOut(
                id=e.id, at=e.at, actor=e.actor, action=e.action, target=e.target, details=e.details
            )
            for e in events
        ]

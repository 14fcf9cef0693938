"""The audit log, for administrators."""

from __future__ import annotations

from fastapi import APIRouter, Query

from ...core.roles import require_admin
from .. import audit as service
from .deps import ActorDep, PlatformDep, require_scope
from .schema_types import filter_query, id_query
from .schemas import AuditOut

router = APIRouter(tags=["audit"], dependencies=[require_scope("audit")])


@router.get("/audit", response_model=list[AuditOut], summary="State changes, newest first (admins)")
async def list_events(
    platform: PlatformDep,
    actor: ActorDep,
    actor_name: filter_query("Who acted, e.g. alice", alias="actor") = None,
    action: filter_query("Prefix, e.g. 'notebook.' or 'quota.set'") = None,
    target: filter_query("Part of the target, e.g. 'user:alice'") = None,
    before: id_query("Only events older than this id (paging)") = None,
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

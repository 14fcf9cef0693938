"""The audit log, for administrators: paged by cursor, filtered, and exported as CSV."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse
from pydantic import BeforeValidator

from ...core import names
from ...core.errors import Invalid
from ...core.roles import require_admin
from .. import audit as service
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import filter_query, id_query
from ..api.schemas import AuditOut

router = APIRouter(tags=["audit"], dependencies=[require_scope("audit")])


def _iso_only(value: object) -> object:
    """A number is refused: pydantic would read it as seconds since 1970, which the API
    document (a date-time) does not offer and nobody filtering the log means."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return value
        raise ValueError("give a date and time in ISO 8601, e.g. 2027-01-14T09:00:00Z")
    return value


Moment = Annotated[
    datetime | None,
    BeforeValidator(_iso_only),
    Query(description="ISO 8601, e.g. 2027-01-14T09:00:00Z (no zone: UTC)"),
]


def _utc(moment: datetime | None) -> datetime | None:
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment


UserFilter = Annotated[
    str | None,
    Query(
        max_length=names.MAX_USER_NAME,
        pattern=names.USER_NAME_PATTERN,
        description="By or about this user (their account, their notebooks)",
    ),
]
ActorFilter = filter_query("Who acted, e.g. alice", alias="actor")
ActionFilter = filter_query("Prefix, e.g. 'notebook.' or 'quota.set'")
TargetFilter = filter_query("Part of the target, e.g. 'user:alice'")


class AuditQuery:
    """The filters every reading of the audit log takes, declared once (a FastAPI dependency).

    Collecting them checks nothing: `filters()` is called after the caller was found to be
    an administrator, so a non-administrator learns nothing from a bad time range.
    """

    def __init__(
        self,
        actor_name: ActorFilter = None,
        action: ActionFilter = None,
        target: TargetFilter = None,
        user: UserFilter = None,
        since: Moment = None,
        until: Moment = None,
    ) -> None:
        self.actor_name, self.action, self.target, self.user = actor_name, action, target, user
        self.since, self.until = since, until

    def filters(self) -> service.Filters:
        """The filters for the store, times in UTC; Invalid when the range ends before it starts."""
        since, until = _utc(self.since), _utc(self.until)
        if since and until and since >= until:
            raise Invalid("the time range ends before it starts: 'until' must be after 'since'")
        return service.Filters(self.actor_name, self.action, self.target, self.user, since, until)


class AuditPage:
    """Where a page of the log starts and how long it is (only listing pages).

    A dependency of its own, declared after AuditQuery, so the documented parameters keep
    their order: the filters, then the cursor.
    """

    def __init__(
        self,
        before: id_query(
            "Only events older than this id: the last id of a page gives the next"
        ) = None,
        limit: int = Query(100, ge=1, le=1000),
    ) -> None:
        self.before, self.limit = before, limit


AuditQueryDep = Annotated[AuditQuery, Depends()]
AuditPageDep = Annotated[AuditPage, Depends()]


@router.get("/audit", response_model=list[AuditOut], summary="State changes, newest first (admins)")
async def list_events(
    platform: PlatformDep,
    actor: ActorDep,
    query: AuditQueryDep,
    page: AuditPageDep,
) -> list[AuditOut]:
    require_admin(actor, "read the audit log")
    events = await service.page(platform.db, query.filters(), page.before, page.limit)
    return [
        AuditOut(
            id=e.id, at=e.at, actor=e.actor, action=e.action, target=e.target, details=e.details
        )
        for e in events
    ]


@router.get(
    "/audit/export",
    summary="The filtered audit log as CSV, newest first (admins)",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/csv": {}}}},
)
async def export_events(
    platform: PlatformDep,
    actor: ActorDep,
    query: AuditQueryDep,
) -> StreamingResponse:
    require_admin(actor, "export the audit log")
    filters = query.filters()
    await service.record_export(platform.db, actor.name, filters)
    stamp = platform.clock.now().strftime("%Y%m%d-%H%M%S")
    return StreamingResponse(
        service.export_csv(platform.db, filters),
        media_type="text/csv; charset=utf-8",
        headers={
            "Content-Disposition": f'attachment; filename="cgu-lab-audit-{stamp}.csv"',
            "Cache-Control": "no-store",
        },
    )

"""Live load for the monitoring page, and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ...core.roles import require_admin
from ..api.deps import ActorDep, PlatformDep, require_scope

router = APIRouter(tags=["monitoring"], dependencies=[require_scope("monitoring")])


@router.get(
    "/monitoring",
    response_model=dict,
    summary="Current load per node, user and notebook, with the last hour (admins)",
)
async def monitoring(platform: PlatformDep, actor: ActorDep) -> Response:
    require_admin(actor, "see the platform's load")
    # The monitor's report (monitoring/schemas.py), which the API document describes as an
    # open object: the page's own. It is serialized once, by its model, rather than dumped
    # to dicts that FastAPI would check and serialize again: the hour's history is most of
    # it (360 samples, each with every user's figures). No docstring: it would become the
    # route's description in the API document.
    report = platform.monitor.report()
    return Response(report.model_dump_json(), media_type="application/json")


@router.get(
    "/metrics",
    response_class=Response,
    summary="Prometheus metrics (admins or their API token)",
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}},
)
async def metrics(platform: PlatformDep, actor: ActorDep) -> Response:
    require_admin(actor, "read the metrics")
    return Response(generate_latest(platform.monitor.registry), media_type=CONTENT_TYPE_LATEST)

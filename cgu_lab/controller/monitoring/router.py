"""Live load for the monitoring page, and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ...core.roles import require_admin
from ..api.deps import ActorDep, PlatformDep, require_scope

router = APIRouter(tags=["monitoring"], dependencies=[require_scope("monitoring")])


@router.get(
    "/monitoring", summary="Current load per node, user and notebook, with the last hour (admins)"
)
async def monitoring(platform: PlatformDep, actor: ActorDep) -> dict:
    require_admin(actor, "see the platform's load")
    monitor = platform.monitor
    snap = monitor.latest
    return {
        "at": snap.at,
        "interval": platform.settings.monitor_interval,
        "node": snap.node,
        "nodes": snap.nodes(),
        "gpu_inventory": {
            "detected": sum(n["detected"] for n in snap.inventory),
            "declared": sum(n["declared"] for n in snap.inventory),
            "total": sum(n["total"] for n in snap.inventory),
            "held": sum(n["held"] for n in snap.inventory),
        },
        "gpus": snap.gpus,
        "notebooks": snap.notebooks,
        "users": snap.users(),
        "states": snap.states,
        "allocation": snap.allocation,
        "stops": snap.stops,
        "reclaimed_gpu_hours": snap.reclaimed_gpu_hours,
        "energy_saved_kwh": snap.energy_saved_kwh,
        "history": list(monitor.history),
    }


@router.get(
    "/metrics",
    response_class=Response,
    summary="Prometheus metrics (admins or their API token)",
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}}},
)
async def metrics(platform: PlatformDep, actor: ActorDep) -> Response:
    require_admin(actor, "read the metrics")
    return Response(generate_latest(platform.monitor.registry), media_type=CONTENT_TYPE_LATEST)

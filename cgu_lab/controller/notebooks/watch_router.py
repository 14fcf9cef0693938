"""Notebook state changes for the staff pages, as Server-Sent Events.

The Users list, an account's page and a course's Live tab reload when one of the
notebooks they show changes state, as My notebooks does (GET /notebooks/events):
the same broker, the same stream, authorized as the list each page shows
(`controller.notebook_watch`). A caller who may not read that list is refused
with its 403 before any event is sent.
"""

from __future__ import annotations

from fastapi import APIRouter
from sse_starlette import EventSourceResponse

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.events import SSE_RESPONSES, notebook_changes
from ..api.schema_types import LabelPath, UserNameQuery
from .watch import accounts_watch, course_watch

# Each stream asks for the scope of the list it follows.
router = APIRouter()


@router.get(
    "/users/notebooks/events",
    tags=["users"],
    dependencies=[require_scope("notebooks")],
    summary="State changes of the notebooks of the accounts I manage, as Server-Sent Events",
    description=(
        "The accounts GET /users lists (admins: everyone; group managers: their groups' "
        "members), or only `user` (whom GET /users/{name} shows the caller)."
    ),
    response_class=EventSourceResponse,
    responses=SSE_RESPONSES,
)
async def accounts_events(
    platform: PlatformDep, actor: ActorDep, user: UserNameQuery = None
) -> EventSourceResponse:
    return notebook_changes(platform.broker, await accounts_watch(platform, actor, user))


@router.get(
    "/groups/{group}/live/events",
    tags=["teaching"],
    dependencies=[require_scope("teaching")],
    summary="State changes of the notebooks a course's Live tab shows, as Server-Sent Events",
    description="Its students' notebooks and its live views' (the course's managers).",
    response_class=EventSourceResponse,
    responses=SSE_RESPONSES,
)
async def course_live_events(
    group: LabelPath, platform: PlatformDep, actor: ActorDep
) -> EventSourceResponse:
    return notebook_changes(platform.broker, await course_watch(platform, actor, group))

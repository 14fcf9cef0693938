"""Class sessions' REST API: a course's sessions (book, see, cancel), a student's open,
the caller's upcoming sessions and, for administrators, every booking ahead."""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import Id, LabelPath
from .schemas import AttachOut, SessionBook, SessionOut, SessionsOut

router = APIRouter(tags=["class sessions"], dependencies=[require_scope("teaching")])


@router.get(
    "/courses/{course}/sessions",
    response_model=SessionsOut,
    response_model_by_alias=True,
    summary="A course's class sessions: who is in and the capacity held (students: their seat)",
)
async def listing(course: LabelPath, platform: PlatformDep, actor: ActorDep) -> SessionsOut:
    return await platform.class_sessions.listing(actor, course)


@router.post(
    "/courses/{course}/sessions",
    response_model=SessionOut,
    status_code=201,
    summary="Book a class session: capacity held for the window, notebooks pre-warmed",
)
async def book(
    course: LabelPath, body: SessionBook, platform: PlatformDep, actor: ActorDep
) -> SessionOut:
    return await platform.class_sessions.book(
        actor,
        course,
        body.title,
        body.template,
        body.template_version,
        body.starts_at,
        body.ends_at,
        body.prewarm_minutes,
        body.grace_minutes,
        body.seats,
    )


@router.get(
    "/courses/{course}/sessions/{session_id}",
    response_model=SessionOut,
    summary="One class session",
)
async def one(
    course: LabelPath, session_id: Id, platform: PlatformDep, actor: ActorDep
) -> SessionOut:
    return await platform.class_sessions.get(actor, course, session_id)


@router.post(
    "/courses/{course}/sessions/{session_id}/cancel",
    response_model=SessionOut,
    summary="Cancel a class session: its capacity is free at once",
)
async def cancel(
    course: LabelPath, session_id: Id, platform: PlatformDep, actor: ActorDep
) -> SessionOut:
    return await platform.class_sessions.cancel(actor, course, session_id)


@router.post(
    "/courses/{course}/sessions/{session_id}/open",
    response_model=AttachOut,
    summary="Open my pre-warmed notebook of this session (started if it was stopped)",
)
async def open_mine(
    course: LabelPath, session_id: Id, platform: PlatformDep, actor: ActorDep
) -> AttachOut:
    return await platform.class_sessions.attach(actor, course, session_id)


@router.get(
    "/class-sessions/mine",
    response_model=list[SessionOut],
    summary="My class sessions not over yet, in every course I am in",
)
async def mine(platform: PlatformDep, actor: ActorDep) -> list[SessionOut]:
    return await platform.class_sessions.mine(actor)


@router.get(
    "/class-sessions/ahead",
    response_model=list[SessionOut],
    summary="Every course's bookings not over yet (administrators)",
)
async def ahead(platform: PlatformDep, actor: ActorDep) -> list[SessionOut]:
    return await platform.class_sessions.ahead(actor)

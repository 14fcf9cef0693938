"""The administrator's side of users and their notebooks (see `controller.user_admin`).

The Users page lists accounts with how they use the platform
(`accounts.service.UserActivityOut`, answered by /api/users); an administrator
stops all of a user's notebooks at once, or opens one with access of their own,
time-limited and audited.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import LINE_PATTERN, LabelPath, Strict, UserNamePath, number, text
from . import user_admin as service

router = APIRouter(dependencies=[require_scope("notebooks")])


class StoppedOut(BaseModel):
    message: str
    code: str = "ok"
    stopped: list[str]


class AdminAccessIn(Strict):
    access: Literal["read", "edit"] = Field(
        "edit", description="read-only, or editable (run code, save files)"
    )
    minutes: number(float, minimum=1, maximum=service.MAX_ADMIN_MINUTES) | None = Field(
        None, description=f"How long the access lasts (default {service.ADMIN_MINUTES:g})"
    )
    reason: text(200, LINE_PATTERN) = Field(
        "", description="Why, for the audit log; required (an empty one is refused with a 400)"
    )


class AdminAccessOut(BaseModel):
    url: str = Field(description="Where to open the notebook")
    access: str
    expires_at: datetime
    state: str = Field(description="The notebook's state now (a stopped one offers to start)")
    open_url: str = Field(
        description=(
            "Where to go now: the notebook when it runs, else its start page, which starts "
            "a stopped notebook at once and shows the start's progress"
        )
    )


@router.post(
    "/users/{name}/notebooks/stop",
    response_model=StoppedOut,
    tags=["users"],
    summary="Stop every notebook of a user, queued ones included (admins)",
)
async def stop_users_notebooks(
    name: UserNamePath, platform: PlatformDep, actor: ActorDep
) -> StoppedOut:
    stopped = await service.stop_all(platform, actor, name)
    message = (
        f"stopping {len(stopped)} notebook(s) of {name}: {', '.join(stopped)}"
        if stopped
        else f"{name} has no notebook running or waiting"
    )
    return StoppedOut(message=message, stopped=stopped)


@router.post(
    "/notebooks/{owner}/{name}/admin-access",
    response_model=AdminAccessOut,
    tags=["notebooks"],
    summary="Open a user's notebook as yourself: a time-limited share to you, audited (admins)",
)
async def admin_access(
    owner: UserNamePath,
    name: LabelPath,
    body: AdminAccessIn,
    platform: PlatformDep,
    actor: ActorDep,
) -> AdminAccessOut:
    granted = await service.open_as_admin(
        platform, actor, owner, name, body.access, body.minutes, body.reason
    )
    return AdminAccessOut(
        url=granted.url,
        access=granted.access,
        expires_at=granted.expires_at,
        state=granted.state,
        open_url=granted.open_url,
    )

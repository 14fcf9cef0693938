"""Teams students form themselves in a competition with teams (competition_teams.py).

A student creates a team and reads its join code; others join with the code; a
member leaves while the team has no entries. The join code is in these answers
only, and only for the team's own members; the managers' routes
(`/competitions/{id}/teams`, api/competitions.py) never carry it.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import Field

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import Id, Strict, text
from ..api.schemas import Message
from .schemas import MyTeamOut
from .teams import MAX_CODE, TeamService

routes = APIRouter(tags=["competitions"], dependencies=[require_scope("teaching")])
TeamName = text(100, min_length=1)
JoinCode = text(MAX_CODE, min_length=1)


class MyTeamCreate(Strict):
    name: TeamName = Field(description="The team's name: letters, digits and dashes")


class MyTeamJoin(Strict):
    code: JoinCode = Field(description="The join code a member of the team gave you")


def _teams(platform) -> TeamService:
    return TeamService(platform.competitions)


@routes.get(
    "/competitions/{competition_id}/my-team",
    response_model=MyTeamOut,
    summary="My team in a competition with teams, with its join code (404: in none)",
)
async def my_team(competition_id: Id, platform: PlatformDep, actor: ActorDep) -> MyTeamOut:
    return await _teams(platform).mine(actor, competition_id)


@routes.post(
    "/competitions/{competition_id}/my-team",
    response_model=MyTeamOut,
    status_code=201,
    summary="Create a team (a student in none, before the end); invite others with its code",
)
async def create_my_team(
    competition_id: Id, body: MyTeamCreate, platform: PlatformDep, actor: ActorDep
) -> MyTeamOut:
    return await _teams(platform).create(actor, competition_id, body.name)


@routes.post(
    "/competitions/{competition_id}/my-team/join",
    response_model=MyTeamOut,
    summary="Join a team with its join code (a student in none who has not submitted alone)",
)
async def join_team(
    competition_id: Id, body: MyTeamJoin, platform: PlatformDep, actor: ActorDep
) -> MyTeamOut:
    return await _teams(platform).join(actor, competition_id, body.code)


@routes.delete(
    "/competitions/{competition_id}/my-team",
    response_model=Message,
    summary="Leave my team while it has no entries; the last member leaving removes it",
)
async def leave_team(competition_id: Id, platform: PlatformDep, actor: ActorDep) -> Message:
    name = await _teams(platform).leave(actor, competition_id)
    return Message(message=f"you left team '{name}'")


router = APIRouter()
router.include_router(routes)

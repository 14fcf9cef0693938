"""Course competitions: definitions, files, teams, entries and leaderboards.

Files travel as the raw request body (a CSV, a Python script), not as JSON:
a 10 MB predictions file would otherwise cost a third more bytes and a copy.
No route serves the hidden solution or the scoring script, to anyone; a
student's answers never carry the scorer's output (`log`), only the course's
managers' (`/entries`, `/entries.csv`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import FileResponse, Response
from pydantic import Field
from sse_starlette import EventSourceResponse

from ...core.errors import Invalid
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.events import SSE_RESPONSES, json_stream
from ..api.schema_types import (
    Description,
    GpuTypeName,
    Id,
    LabelPath,
    Strict,
    Timestamp,
    Title,
    label,
    text,
)
from ..api.schemas import Message
from .schemas import (
    CompetitionEntryOut,
    CompetitionEntryWithLog,
    CompetitionLeaderboard,
    CompetitionOut,
    CompetitionTeamOut,
    LabCompetitionOut,
)
from .service import MAX_FILE, CompetitionSpec

routes = APIRouter(tags=["competitions"], dependencies=[require_scope("teaching")])
# JupyterLab's calls on a notebook's origin (`cgu-lab/competitions...`, sent here by the
# proxy: proxy/forward.py answers_lab): its owner submits.
lab_routes = APIRouter(
    prefix="/lab/{owner}/{name}",
    include_in_schema=False,
    dependencies=[require_scope("lab:own")],
)

MetricName = Literal["accuracy", "macro_f1", "rmse", "mae", "auc", "custom"]
FileKind = Annotated[
    str,
    Path(
        pattern="^(train|test|solution|script|inputs)$",
        description="train, test, solution, script, inputs (a code competition's hidden inputs)",
    ),
]
ColumnName = text(100, min_length=1)
FileName = Annotated[str, Query(max_length=255, pattern=r"^[^\x00-\x1f\x7f/\\]*$")]
NoteQuery = Annotated[str, Query(max_length=2000, pattern=r"^[^\x00]*$")]
CompetitionName = label("competition")
RAW_BODY = {
    "requestBody": {
        "required": True,
        "content": {"text/csv": {"schema": {"type": "string"}}},
    }
}
ENTRY_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "text/csv": {"schema": {"type": "string"}},
            "application/x-ipynb+json": {"schema": {"type": "string"}},
        },
    }
}


class CompetitionCreate(Strict):
    name: CompetitionName
    title: Title = ""
    description: Description = Field("", description="Markdown; raw HTML is shown as text")
    starts_at: Timestamp
    ends_at: Timestamp
    metric: MetricName
    higher_is_better: bool | None = Field(
        None, description="For a custom script only; the built-in metrics know their direction"
    )
    id_column: ColumnName = "id"
    target_column: ColumnName = "prediction"
    public_fraction: float = Field(
        0.5, ge=0.01, le=0.99, description="Share of the test set the public leaderboard scores"
    )
    per_day: int = Field(5, ge=0, le=1000, description="Entries per UTC day; 0: no limit")
    total: int = Field(0, ge=0, le=100_000, description="Entries in all; 0: no limit")
    teams: bool = False
    max_team_size: int = Field(3, ge=1, le=50)
    time_limit: float = Field(
        60,
        ge=1,
        le=3600,
        description="Seconds one scoring (a code entry: its notebook's run) may take",
    )
    memory_limit: int = Field(2**30, ge=64 * 2**20, le=64 * 2**30, description="Bytes")
    kind: Literal["predictions", "code"] = Field(
        "predictions",
        description="predictions: students upload a CSV; code: a notebook the platform runs "
        "on the hidden inputs (upload them as the file 'inputs'), within time_limit and "
        "memory_limit",
    )
    gpu_type: GpuTypeName | None = Field(
        None,
        description="A code competition only: each run takes one GPU of this type (a GPU "
        "type the platform defines, GET /api/gpu-types); none: runs have no GPU",
    )

    def spec(self) -> CompetitionSpec:
        values = self.model_dump(exclude={"name"})
        return CompetitionSpec(**values)


class CompetitionPatch(Strict):
    title: Title | None = None
    description: Description | None = None
    starts_at: Timestamp | None = None
    ends_at: Timestamp | None = None
    metric: MetricName | None = None
    higher_is_better: bool | None = None
    public_fraction: float | None = Field(None, ge=0.01, le=0.99)
    per_day: int | None = Field(None, ge=0, le=1000)
    total: int | None = Field(None, ge=0, le=100_000)
    teams: bool | None = None
    max_team_size: int | None = Field(None, ge=1, le=50)
    time_limit: float | None = Field(None, ge=1, le=3600)
    memory_limit: int | None = Field(None, ge=64 * 2**20, le=64 * 2**30)
    gpu_type: str | None = Field(
        None, max_length=63, description='The GPU type of a code competition\'s runs; "": none'
    )


class CompetitionTeamIn(Strict):
    members: list[Annotated[str, Field(max_length=64)]] = Field(max_length=50)


async def _body(request: Request, limit: int) -> bytes:
    data = bytearray()
    async for part in request.stream():
        data += part
        if len(data) > limit:
            raise Invalid(f"the file is larger than the {limit} bytes allowed")
    return bytes(data)


@routes.get(
    "/competitions", response_model=list[CompetitionOut], summary="My courses' competitions"
)
async def my_competitions(platform: PlatformDep, actor: ActorDep) -> list[CompetitionOut]:
    return await platform.competitions.mine(actor)


@routes.get(
    "/groups/{group}/competitions",
    response_model=list[CompetitionOut],
    summary="A course's competitions",
)
async def group_competitions(
    group: LabelPath, platform: PlatformDep, actor: ActorDep
) -> list[CompetitionOut]:
    return await platform.competitions.for_group(actor, group)


@routes.post(
    "/groups/{group}/competitions",
    response_model=CompetitionOut,
    status_code=201,
    summary="Create a competition for a course (its managers); upload its files next",
)
async def create_competition(
    group: LabelPath, body: CompetitionCreate, platform: PlatformDep, actor: ActorDep
) -> CompetitionOut:
    return await platform.competitions.create(actor, group, body.name, body.spec())


@routes.get(
    "/competitions/{competition_id}", response_model=CompetitionOut, summary="A competition"
)
async def get_competition(
    competition_id: Id, platform: PlatformDep, actor: ActorDep
) -> CompetitionOut:
    return await platform.competitions.get(actor, competition_id)


@routes.patch(
    "/competitions/{competition_id}", response_model=CompetitionOut, summary="Change a competition"
)
async def update_competition(
    competition_id: Id, body: CompetitionPatch, platform: PlatformDep, actor: ActorDep
) -> CompetitionOut:
    # null leaves a field as it is, like a field not sent.
    changes = {k: v for k, v in body.model_dump(exclude_unset=True).items() if v is not None}
    return await platform.competitions.update(actor, competition_id, changes)


@routes.delete(
    "/competitions/{competition_id}",
    response_model=Message,
    summary="Delete a competition with its files and entries",
)
async def delete_competition(competition_id: Id, platform: PlatformDep, actor: ActorDep) -> Message:
    await platform.competitions.delete(actor, competition_id)
    return Message(message=f"deleted competition {competition_id}")


@routes.put(
    "/competitions/{competition_id}/files/{kind}",
    response_model=CompetitionOut,
    summary="Upload the training set, the test inputs, the hidden solution, a scoring script "
    "or a code competition's hidden inputs",
    openapi_extra=RAW_BODY,
)
async def upload_file(
    competition_id: Id,
    kind: FileKind,
    request: Request,
    platform: PlatformDep,
    actor: ActorDep,
    name: FileName = "",
) -> CompetitionOut:
    data = await _body(request, MAX_FILE)
    return await platform.competitions.upload(actor, competition_id, kind, name or kind, data)


@routes.get(
    "/competitions/{competition_id}/files/{kind}",
    summary="Download the training set or the test inputs (the hidden files are never served)",
    response_class=FileResponse,
    responses={200: {"content": {"text/csv": {}}}},
)
async def download_file(
    competition_id: Id, kind: FileKind, platform: PlatformDep, actor: ActorDep
) -> FileResponse:
    path, filename = await platform.competitions.public_file(actor, competition_id, kind)
    return FileResponse(
        path, media_type="text/csv", filename=filename, headers={"Cache-Control": "no-store"}
    )


@routes.post(
    "/competitions/{competition_id}/entries",
    response_model=CompetitionEntryOut,
    status_code=201,
    summary="Submit a predictions CSV (a notebook in a code competition); it is queued and scored",
    openapi_extra=ENTRY_BODY,
)
async def submit_entry(
    competition_id: Id,
    request: Request,
    platform: PlatformDep,
    actor: ActorDep,
    name: FileName = "predictions.csv",
    note: NoteQuery = "",
) -> CompetitionEntryOut:
    data = await _body(request, MAX_FILE)
    return await platform.competition_entries.submit(actor, competition_id, name, data, note)


@routes.get(
    "/competitions/{competition_id}/entries/mine",
    response_model=list[CompetitionEntryOut],
    summary="My entries (my team's), newest first, with their scores",
)
async def my_entries(
    competition_id: Id, platform: PlatformDep, actor: ActorDep
) -> list[CompetitionEntryOut]:
    return await platform.competition_entries.history(actor, competition_id)


@routes.get(
    "/competitions/{competition_id}/entries",
    response_model=list[CompetitionEntryWithLog],
    summary="Every entry with the scorer's output (the course's managers)",
)
async def all_entries(
    competition_id: Id, platform: PlatformDep, actor: ActorDep
) -> list[CompetitionEntryWithLog]:
    return await platform.competition_entries.everything(actor, competition_id)


@routes.get(
    "/competitions/{competition_id}/entries.csv",
    summary="Every entry as CSV (the course's managers)",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}}},
)
async def export_entries(competition_id: Id, platform: PlatformDep, actor: ActorDep) -> Response:
    body = await platform.competition_entries.export_csv(actor, competition_id)
    return Response(
        body,
        media_type="text/csv",
        headers={
            "Content-Disposition": f'attachment; filename="competition-{competition_id}.csv"',
            "Cache-Control": "no-store",
        },
    )


@routes.get(
    "/competitions/{competition_id}/leaderboard",
    response_model=CompetitionLeaderboard,
    summary="The public leaderboard, or the private one once the competition has ended",
)
async def leaderboard(
    competition_id: Id,
    platform: PlatformDep,
    actor: ActorDep,
    board: Literal["public", "private"] = "public",
) -> CompetitionLeaderboard:
    return await platform.leaderboards.leaderboard(actor, competition_id, board)


@routes.get(
    "/competitions/{competition_id}/leaderboard/events",
    response_class=EventSourceResponse,
    responses=SSE_RESPONSES,
    summary="The leaderboard now and again after each change, as Server-Sent Events "
    "(each event's data is the leaderboard's answer)",
)
async def follow_leaderboard(
    competition_id: Id,
    platform: PlatformDep,
    actor: ActorDep,
    board: Literal["public", "private"] = "public",
) -> EventSourceResponse:
    boards = await platform.leaderboards.follow(actor, competition_id, board)
    return json_stream(boards, lambda item: item.model_dump(mode="json"))


@routes.get(
    "/competitions/{competition_id}/teams",
    response_model=list[CompetitionTeamOut],
    summary="A competition's teams",
)
async def list_teams(
    competition_id: Id, platform: PlatformDep, actor: ActorDep
) -> list[CompetitionTeamOut]:
    return await platform.competitions.teams(actor, competition_id)


@routes.put(
    "/competitions/{competition_id}/teams/{team}",
    response_model=CompetitionTeamOut,
    summary="Form or change a team (the course's managers); no members removes it",
)
async def set_team(
    competition_id: Id,
    team: LabelPath,
    body: CompetitionTeamIn,
    platform: PlatformDep,
    actor: ActorDep,
) -> CompetitionTeamOut:
    return await platform.competitions.set_team(actor, competition_id, team, body.members)


# -- from JupyterLab -------------------------------------------------------------------


@lab_routes.get("/competitions")
async def lab_competitions(platform: PlatformDep, actor: ActorDep) -> list[LabCompetitionOut]:
    """The competitions open now, with their page's address (the lab is on another origin)."""
    base = platform.settings.base_url
    return [
        LabCompetitionOut(**c.model_dump(), url=f"{base}/competitions/{c.id}")
        for c in await platform.competitions.mine(actor)
        if c.phase == "open"
    ]


@lab_routes.post("/competitions/{competition_id}/entries", status_code=201)
async def lab_submit(
    competition_id: Id,
    request: Request,
    platform: PlatformDep,
    actor: ActorDep,
    file: FileName = "predictions.csv",
    note: NoteQuery = "",
) -> CompetitionEntryOut:
    """As POST /api/competitions/{id}/entries; the file's name is `file` here (`name` is
    the notebook's)."""
    return await submit_entry(competition_id, request, platform, actor, file, note)


@lab_routes.get("/competitions/{competition_id}/entries/mine")
async def lab_entries(
    competition_id: Id, platform: PlatformDep, actor: ActorDep
) -> list[CompetitionEntryOut]:
    return await my_entries(competition_id, platform, actor)


router = APIRouter()
router.include_router(routes)
router.include_router(lab_routes)

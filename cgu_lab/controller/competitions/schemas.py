"""The competitions' API answers, as the services hand them back.

No class here has a docstring: a model's docstring would become its description in
the OpenAPI document. The request bodies stay beside their routes (router.py,
teams_router.py): `CompetitionCreate` builds the service's own `CompetitionSpec`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field


class CompetitionFileInfo(BaseModel):
    name: str
    bytes: int
    rows: int | None = None


class CompetitionOut(BaseModel):
    id: int
    group: str
    name: str
    title: str
    description: str
    description_html: str = Field(description="The description rendered (safe to insert)")
    starts_at: datetime
    ends_at: datetime
    phase: Literal["upcoming", "open", "closed"]
    metric: str
    metric_title: str
    higher_is_better: bool
    id_column: str
    target_column: str
    public_fraction: float
    per_day: int
    total: int
    teams: bool
    max_team_size: int
    time_limit: float
    memory_limit: int
    max_bytes: int
    kind: Literal["predictions", "code"]
    gpu_type: str | None = Field(description="The GPU type each run takes one of; null: none")
    files: dict[str, CompetitionFileInfo]
    ready: bool
    manage: bool


# JupyterLab's list (lab_routes, outside the OpenAPI document): the competition with its
# page's address, since the lab runs on the notebook's origin.
class LabCompetitionOut(CompetitionOut):
    url: str


class CompetitionEntryOut(BaseModel):
    id: int
    competition_id: int
    user: str
    team: str | None
    file_name: str
    bytes: int
    content_hash: str
    note: str
    state: Literal["queued", "scoring", "scored", "failed", "error"]
    message: str
    public_score: float | None
    private_score: float | None = Field(description="Shown once the competition has ended")
    submitted_at: datetime
    scored_at: datetime | None
    gpu_type: str | None = Field(None, description="The GPU type the notebook's run used")


class CompetitionEntryWithLog(CompetitionEntryOut):
    log: str = Field(description="The scorer's output: for the course's managers only")


class CompetitionLeaderboardRow(BaseModel):
    rank: int
    participant: str
    team: bool
    score: float
    entries: int
    submitted_at: datetime
    mine: bool


class CompetitionLeaderboard(BaseModel):
    competition_id: int
    board: Literal["public", "private"]
    final: bool
    metric: str
    higher_is_better: bool
    rows: list[CompetitionLeaderboardRow]


class CompetitionTeamOut(BaseModel):
    name: str
    members: list[str]


class MyTeamOut(BaseModel):
    name: str
    members: list[str]
    join_code: str = Field(description="The team's secret: whoever has it may join")
    max_team_size: int
    entries: int = Field(description="The team's entries; members cannot leave once it has any")

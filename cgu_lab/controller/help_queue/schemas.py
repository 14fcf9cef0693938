"""The help queue's API shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from ...core import names
from ..api.schema_types import Strict


class HelpAsk(Strict):
    """Raise a hand in a course about one of my notebooks."""

    notebook: str = Field(max_length=names.MAX_LABEL, pattern=names.LABEL_PATTERN)
    question: str = Field("", max_length=200, description="One line, optional")
    access: Literal["edit", "read"] = Field(
        "edit", description="What the helper may do in the notebook: edit it, or only look"
    )


class LabHelpAsk(Strict):
    """From JupyterLab: raise a hand about this notebook."""

    group: str = Field(max_length=names.MAX_LABEL, pattern=names.LABEL_PATTERN)
    question: str = Field("", max_length=200)
    access: Literal["edit", "read"] = "edit"


class HelpStudent(BaseModel):
    name: str
    display_name: str


class HelpRequestOut(BaseModel):
    id: int
    group: str
    student: HelpStudent
    notebook: str
    url: str
    question: str
    access: str
    state: str
    position: int | None = Field(
        None, description="Place in the course's queue while waiting (1: next), else null"
    )
    created_at: datetime
    waited_seconds: float | None
    helper: str | None
    helper_display_name: str | None = None
    taken_at: datetime | None
    ended_at: datetime | None


class HelpFigures(BaseModel):
    waiting: int
    being_helped: int
    median_wait_seconds: float | None
    median_help_seconds: float | None
    helped: int


class HelpQueueOut(BaseModel):
    group: str
    manages: bool
    requests: list[HelpRequestOut]
    figures: HelpFigures | None = None


class HelpPanelOut(BaseModel):
    """JupyterLab's help panel: the queues of the courses I help in, my own open requests,
    and the courses I may ask in."""

    courses: list[str]
    queues: list[HelpQueueOut]
    mine: list[HelpRequestOut]

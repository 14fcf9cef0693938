"""Class sessions' API shapes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from ...core import class_sessions as rules
from ..api.schema_types import Strict, TemplateName, Timestamp, Title


class SessionBook(Strict):
    """Book a window for the course's students: each seat holds one notebook of the template."""

    title: Title = ""
    template: TemplateName
    template_version: int | None = Field(None, ge=1, le=1_000_000)
    starts_at: Timestamp
    ends_at: Timestamp
    prewarm_minutes: int = Field(5, ge=0, le=rules.MAX_PREWARM_MINUTES)
    grace_minutes: int = Field(15, ge=1, le=rules.MAX_GRACE_MINUTES)
    seats: int | None = Field(
        None, ge=1, le=rules.MAX_SEATS, description="Default: the course's students"
    )


class SeatOut(BaseModel):
    cpu_milli: int
    memory: int
    gpu_type: str | None
    gpus: int


class HeldOut(BaseModel):
    cpu_milli: int
    memory: int
    gpus: dict[str, int]
    now: bool


class PersonOut(BaseModel):
    student: str
    notebook: str | None
    state: str | None
    url: str | None
    prewarmed_at: datetime | None
    opened_at: datetime | None
    in_: bool = Field(alias="in")
    message: str

    model_config = {"populate_by_name": True}


class SessionOut(BaseModel):
    id: int
    course: str
    title: str
    template: str | None
    template_version: int | None
    starts_at: datetime
    ends_at: datetime
    holds_from: datetime
    prewarm_minutes: int
    grace_minutes: int
    seats: int
    seat: SeatOut
    held: HeldOut
    phase: str
    booked_by: str
    in_: int = Field(alias="in")
    people: list[PersonOut]

    model_config = {"populate_by_name": True}


class SessionsOut(BaseModel):
    course: str
    manages: bool
    sessions: list[SessionOut]


class AttachOut(BaseModel):
    notebook: str
    state: str
    url: str

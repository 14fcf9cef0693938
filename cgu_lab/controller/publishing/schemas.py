"""The published demos' API shapes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from ...core import names, publishing
from ..api.schema_types import Strict


class PublishBody(Strict):
    """Publish one of this notebook's apps."""

    app: str = Field(
        max_length=40,
        description="The app's path in the notebook: 'proxy/<port>/' for a port the notebook "
        "serves on, or '<name>/' for an app its environment declares",
    )
    course: str | None = Field(
        None,
        max_length=names.MAX_LABEL,
        pattern=names.LABEL_PATTERN,
        description="The course whose members may use it (one you teach); none: every "
        "logged-in user",
    )
    title: str = Field("", max_length=publishing.MAX_TITLE)


class PublicBody(Strict):
    """Whether a published demo may be used without a log-in (administrators only)."""

    public: bool


class PublishedApps(BaseModel):
    """A notebook's published app paths, as its own server asks for them."""

    apps: list[str] = Field(description="'proxy/<port>/', '<name>/' or 'voila-<name>/' each")


class DemoOut(BaseModel):
    id: int
    owner: str
    owner_display_name: str
    notebook: str
    app: str
    title: str
    course: str | None
    state: str
    url: str = Field(description="The demo's address, on its notebook's own origin")
    visitors: int = Field(description="How many people have used it (anonymous ones too)")
    anonymous_visitors: int = Field(description="Of those, how many without a log-in")
    public: bool = Field(description="Reached without a log-in too (an administrator's choice)")
    created_by: str
    created_at: datetime


class DemoCourse(BaseModel):
    """A course a demo may be published to."""

    name: str
    display_name: str


class PublishOptionsOut(BaseModel):
    """What JupyterLab's Publish dialog offers a notebook's owner: whether they may publish
    at all, the courses they may publish to, and what the notebook publishes now."""

    may_publish: bool
    courses: list[DemoCourse]
    demos: list[DemoOut]

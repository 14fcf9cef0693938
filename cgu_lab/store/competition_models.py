"""The tables of course competitions (migration 0011), kept apart from models.py
because they are one feature's and models.py is near the house's size limit.

The hidden solution and a teacher's scoring script are never stored here:
they are files in the controller's data directory (controller/competitions/files.py);
the table only says whether they are there. `split_salt` decides which solution
rows are public (core/competition.py) and never leaves the controller.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow


class Competition(Base):
    __tablename__ = "competitions"
    __table_args__ = (UniqueConstraint("group_id", "name", name="uq_competition_group_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(63))
    title: Mapped[str] = mapped_column(String(200), default="")
    description: Mapped[str] = mapped_column(Text, default="")  # Markdown
    starts_at: Mapped[datetime] = mapped_column()
    ends_at: Mapped[datetime] = mapped_column()
    metric: Mapped[str] = mapped_column(String(16))  # core/metrics.py's names, or "custom"
    # "predictions": students upload a CSV; "code": a notebook the platform runs on
    # the hidden inputs (migration 0013).
    kind: Mapped[str] = mapped_column(
        String(16), default="predictions", server_default="predictions"
    )
    higher_is_better: Mapped[bool] = mapped_column(Boolean, default=True)
    id_column: Mapped[str] = mapped_column(String(100), default="id")
    target_column: Mapped[str] = mapped_column(String(100), default="prediction")
    public_fraction: Mapped[float] = mapped_column(Float, default=0.5)
    split_salt: Mapped[str] = mapped_column(String(64))
    per_day: Mapped[int] = mapped_column(Integer, default=5)  # 0: no limit
    total: Mapped[int] = mapped_column(Integer, default=0)  # 0: no limit
    teams: Mapped[bool] = mapped_column(Boolean, default=False)
    max_team_size: Mapped[int] = mapped_column(Integer, default=3)
    time_limit: Mapped[float] = mapped_column(Float, default=60.0)  # seconds per scoring
    memory_limit: Mapped[int] = mapped_column(BigInteger, default=2**30)
    max_bytes: Mapped[int] = mapped_column(BigInteger, default=20 * 2**20)
    # A code competition's runs take one device of this GPU type (migration 0015).
    gpu_type: Mapped[str | None] = mapped_column(String(63), nullable=True)
    # Which files are there: {"train": {"name", "bytes"}, "test": ..., "solution": ...,
    # "script": ..., "inputs": ...}; the files themselves live in the data directory.
    files: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


def new_join_code() -> str:
    """A team's invitation secret: 12 URL-safe characters (72 random bits)."""
    return secrets.token_urlsafe(9)


class CompetitionTeam(Base):
    """A team of a competition with teams: the teacher puts students in it, or students
    form it themselves (controller/competitions/teams.py) and invite with its join code."""

    __tablename__ = "competition_teams"
    __table_args__ = (
        UniqueConstraint("competition_id", "name", name="uq_competition_team"),
        UniqueConstraint("join_code", name="uq_competition_team_join_code"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(63))
    # Shown to the team's members only (migration 0014); whoever has it may join.
    join_code: Mapped[str] = mapped_column(String(32), default=new_join_code)


class CompetitionTeamMember(Base):
    __tablename__ = "competition_team_members"
    __table_args__ = (UniqueConstraint("competition_id", "user_id", name="uq_competition_member"),)

    team_id: Mapped[int] = mapped_column(
        ForeignKey("competition_teams.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    # Repeated from the team so that one student is in at most one team per competition.
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"))


class CompetitionEntry(Base):
    """One predictions file a participant submitted, and its score once the scorer ran.

    state: queued -> scoring -> scored | failed (the student's file: `message` says
    why, and the entry does not count against the limits) | error (the scorer or
    the teacher's script: the student is told it failed, the teacher sees `log`).
    """

    __tablename__ = "competition_entries"
    __table_args__ = (
        Index("ix_competition_entries_comp", "competition_id", "state"),
        Index("ix_competition_entries_user", "competition_id", "user_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    competition_id: Mapped[int] = mapped_column(ForeignKey("competitions.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    team_id: Mapped[int | None] = mapped_column(
        ForeignKey("competition_teams.id", ondelete="SET NULL"), nullable=True
    )
    note: Mapped[str] = mapped_column(Text, default="")
    file_name: Mapped[str] = mapped_column(String(255), default="")
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    content_hash: Mapped[str] = mapped_column(String(64), default="")
    state: Mapped[str] = mapped_column(String(16), default="queued")
    message: Mapped[str] = mapped_column(Text, default="")
    public_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    private_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    # The scorer's output, for the teacher only (never in a student's answer).
    log: Mapped[str] = mapped_column(Text, default="")
    submitted_at: Mapped[datetime] = mapped_column(default=utcnow)
    scored_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # The GPU type the run used, and the device while the run holds it (migration 0015).
    gpu_type: Mapped[str | None] = mapped_column(String(63), nullable=True)
    devices: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)

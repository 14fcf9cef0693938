"""Class sessions' tables (migration 0019), apart from models.py as they are one feature's
(controller/class_sessions/)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow


class ClassSession(Base):
    """A teacher's booking of a course's capacity for a window.

    Each of `seats` holds one notebook of the template's version (its resources are
    copied here at booking time, so a later template version does not change what was
    booked) from `prewarm_minutes` before `starts_at` until `ends_at`. `prewarmed_at`:
    when the platform started the students' notebooks; `swept_at`: when it stopped
    those nobody opened within `grace_minutes`; `cancelled_at`: the teacher cancelled.
    """

    __tablename__ = "class_sessions"
    __table_args__ = (Index("ix_class_sessions_window", "ends_at", "starts_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    template_version_id: Mapped[int] = mapped_column(
        ForeignKey("template_versions.id", ondelete="CASCADE")
    )
    starts_at: Mapped[datetime] = mapped_column()
    ends_at: Mapped[datetime] = mapped_column()
    prewarm_minutes: Mapped[int] = mapped_column(Integer)
    grace_minutes: Mapped[int] = mapped_column(Integer)
    seats: Mapped[int] = mapped_column(Integer)
    cpu_milli: Mapped[int] = mapped_column(Integer)
    memory: Mapped[int] = mapped_column(BigInteger)
    gpu_type: Mapped[str | None] = mapped_column(String(63), nullable=True)
    gpus: Mapped[int] = mapped_column(Integer, default=0)
    booked_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    prewarmed_at: Mapped[datetime | None] = mapped_column(nullable=True)
    swept_at: Mapped[datetime | None] = mapped_column(nullable=True)
    cancelled_at: Mapped[datetime | None] = mapped_column(nullable=True)


class ClassSessionSeat(Base):
    """One student's place in a session: the notebook pre-warmed for them, when, and
    whether they opened it (an unopened one is stopped after the grace period)."""

    __tablename__ = "class_session_seats"
    __table_args__ = (UniqueConstraint("session_id", "user_id", name="uq_class_session_seat"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    session_id: Mapped[int] = mapped_column(ForeignKey("class_sessions.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    notebook_id: Mapped[int | None] = mapped_column(
        ForeignKey("notebooks.id", ondelete="SET NULL"), nullable=True
    )
    prewarmed_at: Mapped[datetime | None] = mapped_column(nullable=True)
    opened_at: Mapped[datetime | None] = mapped_column(nullable=True)
    stopped_at: Mapped[datetime | None] = mapped_column(nullable=True)
    message: Mapped[str] = mapped_column(String(500), default="")

"""The help queue's table (migration 0018), apart from models.py as it is one feature's
(controller/help_queue/)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow


class HelpRequest(Base):
    """A student's raised hand in one course, about one of their notebooks.

    `state`: waiting -> helping (a TA took it: `share_id` is the grant it made) ->
    done (the helper ended it) or thanked (the student did); cancelled (the student
    lowered their hand before anyone came). The times give the course's wait and help
    figures.
    """

    __tablename__ = "help_requests"
    __table_args__ = (Index("ix_help_requests_group_state", "group_id", "state"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"))
    student_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    notebook_id: Mapped[int] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"))
    question: Mapped[str] = mapped_column(String(200), default="")
    access: Mapped[str] = mapped_column(String(8))  # what the helper gets: edit | read
    state: Mapped[str] = mapped_column(String(12), default="waiting")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    taken_at: Mapped[datetime | None] = mapped_column(nullable=True)
    helper_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    share_id: Mapped[int | None] = mapped_column(nullable=True)
    ended_at: Mapped[datetime | None] = mapped_column(nullable=True)
    ended_by: Mapped[str] = mapped_column(String(64), default="")

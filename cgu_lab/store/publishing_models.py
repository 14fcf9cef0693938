"""Published demos (migrations 0021, 0022), apart from models.py as they are one feature's
(controller/publishing/)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow


class Publication(Base):
    """One app of a notebook, published to a course (`group_id`) or to every logged-in user
    (`group_id` null). One row per app of a notebook: publishing it again changes its
    audience and title rather than adding a second way in."""

    __tablename__ = "publications"
    __table_args__ = (UniqueConstraint("notebook_id", "prefix", name="uq_publications_app"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    notebook_id: Mapped[int] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"))
    # The app's path inside the notebook server (core/publishing.check_prefix).
    prefix: Mapped[str] = mapped_column(String(40))
    title: Mapped[str] = mapped_column(String(100), default="")
    group_id: Mapped[int | None] = mapped_column(
        ForeignKey("groups.id", ondelete="CASCADE"), nullable=True, index=True
    )
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Reached without a log-in too: an administrator's choice, never the owner's alone.
    public: Mapped[bool] = mapped_column(default=False, server_default=false())


class DemoVisit(Base):
    """A user who has used a published demo (its visitor count counts people, not requests)."""

    __tablename__ = "demo_visits"

    publication_id: Mapped[int] = mapped_column(
        ForeignKey("publications.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    first_at: Mapped[datetime] = mapped_column(default=utcnow)


class AnonymousVisit(Base):
    """An anonymous visitor of a public demo, known by the random name in their cookie."""

    __tablename__ = "demo_anonymous_visits"

    publication_id: Mapped[int] = mapped_column(
        ForeignKey("publications.id", ondelete="CASCADE"), primary_key=True
    )
    visitor: Mapped[str] = mapped_column(String(32), primary_key=True)
    first_at: Mapped[datetime] = mapped_column(default=utcnow)

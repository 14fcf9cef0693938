"""The tables of the school login (migration 0017), kept apart from models.py because
they are one feature's (controller/school_login/).

A directory user is an ordinary `User` whose `directory` names the provider it logs
in through; `DirectoryAccount` ties it to the provider's stable subject (an OpenID
`sub`, an LDAP entry's DN), never to a name or an e-mail that the school may reuse.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base, utcnow


class DirectoryAccount(Base):
    """One platform account's identity at its school's provider."""

    __tablename__ = "directory_accounts"
    __table_args__ = (UniqueConstraint("provider", "subject", name="uq_directory_subject"),)

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    provider: Mapped[str] = mapped_column(String(63))
    subject: Mapped[str] = mapped_column(String(500))
    # The courses the directory put the user in at the last login, so that a course the
    # directory no longer names is left, and one an admin or teacher added is kept.
    courses: Mapped[list[str]] = mapped_column(JSON, default=list)
    # Sealed with the installation's key (school_login/sealing.py): OpenID users' refresh
    # token, which the periodic check uses to ask the provider whether they still exist.
    refresh_token: Mapped[str] = mapped_column(Text, default="")
    last_checked: Mapped[datetime | None] = mapped_column(nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class DirectoryRule(Base):
    """An administrator's mapping: a claim value or LDAP group -> a role and/or a course."""

    __tablename__ = "directory_rules"

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(63), default="")
    source: Mapped[str] = mapped_column(String(8))  # claim | group
    attribute: Mapped[str] = mapped_column(String(200), default="")
    value: Mapped[str] = mapped_column(String(500))
    role: Mapped[str | None] = mapped_column(String(16), nullable=True)
    course: Mapped[str | None] = mapped_column(String(63), nullable=True)
    created_by: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PreEnrolment(Base):
    """A course place waiting for a directory user's first login, by verified e-mail."""

    __tablename__ = "directory_pre_enrolments"
    __table_args__ = (UniqueConstraint("email", "group_id", name="uq_pre_enrolment"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    email: Mapped[str] = mapped_column(String(320))
    group_id: Mapped[int] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"))
    added_by: Mapped[str] = mapped_column(String(64), default="")
    added_at: Mapped[datetime] = mapped_column(default=utcnow)

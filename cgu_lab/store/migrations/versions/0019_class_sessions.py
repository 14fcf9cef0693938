"""class sessions: a course's booked capacity and its pre-warmed notebooks

Revision ID: 0019
Revises: 0018
Create Date: 2027-01-27 10:00:00.000000

One row per booking (controller/class_sessions/): course, window, template version and
the per-seat resources it holds; one row per student's seat: the notebook pre-warmed
for them and whether they opened it.
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "class_sessions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "group_id", sa.Integer(), sa.ForeignKey("groups.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column(
            "template_version_id",
            sa.Integer(),
            sa.ForeignKey("template_versions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prewarm_minutes", sa.Integer(), nullable=False),
        sa.Column("grace_minutes", sa.Integer(), nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.Column("cpu_milli", sa.Integer(), nullable=False),
        sa.Column("memory", sa.BigInteger(), nullable=False),
        sa.Column("gpu_type", sa.String(63), nullable=True),
        sa.Column("gpus", sa.Integer(), nullable=False),
        sa.Column("booked_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("prewarmed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("swept_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("cancelled_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_class_sessions_window", "class_sessions", ["ends_at", "starts_at"])
    op.create_table(
        "class_session_seats",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "session_id",
            sa.Integer(),
            sa.ForeignKey("class_sessions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "notebook_id",
            sa.Integer(),
            sa.ForeignKey("notebooks.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("prewarmed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("message", sa.String(500), nullable=False),
        sa.UniqueConstraint("session_id", "user_id", name="uq_class_session_seat"),
    )


def downgrade() -> None:
    op.drop_table("class_session_seats")
    op.drop_index("ix_class_sessions_window", "class_sessions")
    op.drop_table("class_sessions")

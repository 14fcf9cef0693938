"""course competitions: competitions, their teams and their scored entries

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 21:00:00.000000

The hidden solution and teachers' scoring scripts are files in the data
directory, not rows; see cgu_lab/store/competition_models.py.
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "competitions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "group_id", sa.Integer(), sa.ForeignKey("groups.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("name", sa.String(63), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("starts_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("metric", sa.String(16), nullable=False),
        sa.Column("higher_is_better", sa.Boolean(), nullable=False),
        sa.Column("id_column", sa.String(100), nullable=False),
        sa.Column("target_column", sa.String(100), nullable=False),
        sa.Column("public_fraction", sa.Float(), nullable=False),
        sa.Column("split_salt", sa.String(64), nullable=False),
        sa.Column("per_day", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("teams", sa.Boolean(), nullable=False),
        sa.Column("max_team_size", sa.Integer(), nullable=False),
        sa.Column("time_limit", sa.Float(), nullable=False),
        sa.Column("memory_limit", sa.BigInteger(), nullable=False),
        sa.Column("max_bytes", sa.BigInteger(), nullable=False),
        sa.Column("files", sa.JSON(), nullable=True),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("group_id", "name", name="uq_competition_group_name"),
    )
    op.create_table(
        "competition_teams",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "competition_id",
            sa.Integer(),
            sa.ForeignKey("competitions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("name", sa.String(63), nullable=False),
        sa.UniqueConstraint("competition_id", "name", name="uq_competition_team"),
    )
    op.create_table(
        "competition_team_members",
        sa.Column(
            "team_id",
            sa.Integer(),
            sa.ForeignKey("competition_teams.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column(
            "competition_id",
            sa.Integer(),
            sa.ForeignKey("competitions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.UniqueConstraint("competition_id", "user_id", name="uq_competition_member"),
    )
    op.create_table(
        "competition_entries",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "competition_id",
            sa.Integer(),
            sa.ForeignKey("competitions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column(
            "user_id", sa.Integer(), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "team_id",
            sa.Integer(),
            sa.ForeignKey("competition_teams.id", ondelete="SET NULL"),
            nullable=True,
        ),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("file_name", sa.String(255), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("public_score", sa.Float(), nullable=True),
        sa.Column("private_score", sa.Float(), nullable=True),
        sa.Column("log", sa.Text(), nullable=False),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scored_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index(
        "ix_competition_entries_comp", "competition_entries", ["competition_id", "state"]
    )
    op.create_index(
        "ix_competition_entries_user", "competition_entries", ["competition_id", "user_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_competition_entries_user", table_name="competition_entries")
    op.drop_index("ix_competition_entries_comp", table_name="competition_entries")
    op.drop_table("competition_entries")
    op.drop_table("competition_team_members")
    op.drop_table("competition_teams")
    op.drop_table("competitions")

"""environments built by the platform: state, recipe, packages, log

Revision ID: 0007
Revises: 0006
Create Date: 2027-01-12 10:00:00.000000

Existing environments were declared by hand (an image, a prefix), so they are
"ready": the server default says so for every row already there.
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("environments", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("state", sa.String(length=16), nullable=False, server_default="ready")
        )
        batch_op.add_column(sa.Column("recipe", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("packages", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("message", sa.Text(), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("log_tail", sa.Text(), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("size", sa.BigInteger(), nullable=True))
        batch_op.add_column(
            sa.Column("built_by", sa.String(length=64), nullable=False, server_default="")
        )
        batch_op.add_column(
            sa.Column("build_started_at", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("built_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("environments", schema=None) as batch_op:
        for column in (
            "built_at",
            "build_started_at",
            "built_by",
            "size",
            "log_tail",
            "message",
            "packages",
            "recipe",
            "state",
        ):
            batch_op.drop_column(column)

"""vm notebooks custom images and training jobs

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 16:42:53.082899
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "training_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("image", sa.String(length=500), nullable=False),
        sa.Column("command", sa.JSON(), nullable=False),
        sa.Column("workers", sa.Integer(), nullable=False),
        sa.Column("cpu_milli", sa.Integer(), nullable=False),
        sa.Column("memory", sa.BigInteger(), nullable=False),
        sa.Column("gpu_type", sa.String(length=63), nullable=True),
        sa.Column("gpus", sa.Integer(), nullable=False),
        sa.Column("group_id", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["group_id"], ["groups.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("owner_id", "name", name="uq_training_owner_name"),
    )
    with op.batch_alter_table("notebooks", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("kind", sa.String(length=16), nullable=False, server_default="jupyter")
        )
        batch_op.add_column(
            sa.Column("image", sa.String(length=500), nullable=False, server_default="")
        )


def downgrade() -> None:
    with op.batch_alter_table("notebooks", schema=None) as batch_op:
        batch_op.drop_column("image")
        batch_op.drop_column("kind")

    op.drop_table("training_jobs")

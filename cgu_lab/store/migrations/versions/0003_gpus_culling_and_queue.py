"""gpus culling and queue

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02 15:55:19.912854
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "gpu_devices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("device_id", sa.String(length=100), nullable=False),
        sa.Column("node", sa.String(length=253), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("memory", sa.BigInteger(), nullable=False),
        sa.Column("mig_profile", sa.String(length=32), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("device_id"),
    )
    op.create_table(
        "cull_policies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("group_id", sa.Integer(), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("idle_minutes", sa.Double(), nullable=False),
        sa.Column("warn_minutes", sa.Double(), nullable=False),
        sa.Column("gpu_idle_percent", sa.Double(), nullable=True),
        sa.Column("max_lifetime_hours", sa.Double(), nullable=True),
        sa.Column("updated_by", sa.String(length=64), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["group_id"], ["groups.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("group_id", name="uq_cull_policy_group"),
    )
    op.create_table(
        "stop_records",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("notebook_id", sa.Integer(), nullable=True),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("notebook", sa.String(length=63), nullable=False),
        sa.Column("cause", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("gpus", sa.Double(), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("restarted_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["notebook_id"], ["notebooks.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("stop_records", schema=None) as batch_op:
        batch_op.create_index("ix_stop_records_at", ["stopped_at"], unique=False)

    with op.batch_alter_table("notebooks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("warned_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("kept_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("queued_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("notebooks", schema=None) as batch_op:
        batch_op.drop_column("queued_at")
        batch_op.drop_column("kept_at")
        batch_op.drop_column("warned_at")

    with op.batch_alter_table("stop_records", schema=None) as batch_op:
        batch_op.drop_index("ix_stop_records_at")

    op.drop_table("stop_records")
    op.drop_table("cull_policies")
    op.drop_table("gpu_devices")

"""shares

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 15:43:53.894490
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "shares",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("notebook_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("group_id", sa.Integer(), nullable=True),
        sa.Column("access", sa.String(length=8), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("note", sa.String(length=200), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_by", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["group_id"], ["groups.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["notebook_id"], ["notebooks.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("shares", schema=None) as batch_op:
        batch_op.create_index("ix_shares_group", ["group_id"], unique=False)
        batch_op.create_index("ix_shares_notebook", ["notebook_id"], unique=False)
        batch_op.create_index("ix_shares_user", ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("shares", schema=None) as batch_op:
        batch_op.drop_index("ix_shares_user")
        batch_op.drop_index("ix_shares_notebook")
        batch_op.drop_index("ix_shares_group")

    op.drop_table("shares")

"""course storage: whether a course's TAs may write its shared storage

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03 21:00:00.000000

Personal and course storage are folders (local) or volumes (Kubernetes), not
rows; the one setting a teacher chooses is stored with the course's group.
Existing courses start with only their teachers writing.
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("groups") as batch:
        batch.add_column(
            sa.Column("storage_ta_write", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("groups") as batch:
        batch.drop_column("storage_ta_write")

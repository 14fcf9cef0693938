"""code competitions: a competition's kind (predictions or code)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04 04:40:00.000000

A code competition's hidden inputs are a file in the data directory, like its
solution (controller/competitions/files.py); the row only says its kind.
Existing competitions are "predictions" ones.
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.add_column(
            sa.Column("kind", sa.String(16), nullable=False, server_default="predictions")
        )


def downgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.drop_column("kind")

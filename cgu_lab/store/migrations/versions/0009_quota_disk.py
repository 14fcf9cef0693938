"""a disk allowance in quotas: per user, per group and the platform default

Revision ID: 0009
Revises: 0008
Create Date: 2027-01-16 10:00:00.000000

Null is "no limit", so every quota already there keeps allowing any amount
until an administrator sets one.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("quotas") as batch:
        batch.add_column(sa.Column("disk", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("quotas") as batch:
        batch.drop_column("disk")

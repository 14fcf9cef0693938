"""competition GPUs: a code competition's runs may take a GPU of a named type

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-12 10:00:00.000000

`competitions.gpu_type` names the GPU type a code competition's runs take one
device of (none: no GPU). An entry records the type its run used (`gpu_type`)
and, while the run holds it, the device (`devices`), which the GPU pool counts
as taken like a notebook's (controller/competitions/gpus.py).
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("competitions") as batch:
        batch.add_column(sa.Column("gpu_type", sa.String(63), nullable=True))
    with op.batch_alter_table("competition_entries") as batch:
        batch.add_column(sa.Column("gpu_type", sa.String(63), nullable=True))
        batch.add_column(sa.Column("devices", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("competition_entries") as batch:
        batch.drop_column("devices")
        batch.drop_column("gpu_type")
    with op.batch_alter_table("competitions") as batch:
        batch.drop_column("gpu_type")

"""cull_policies: idle kernels shut down by their own server

Revision ID: 0023
Revises: 0022
Create Date: 2027-02-10 10:00:00.000000

An idle policy may now also name how long a kernel may sit idle before its server shuts
it down while the server itself stays up (jupyter-server's kernel culler, given these at
launch), and whether kernels with a browser tab connected count. Existing policies keep
every kernel running: the columns start empty and off.
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("cull_policies") as batch:
        batch.add_column(sa.Column("kernel_idle_minutes", sa.Double(), nullable=True))
        batch.add_column(
            sa.Column(
                "kernel_cull_connected", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("cull_policies") as batch:
        batch.drop_column("kernel_cull_connected")
        batch.drop_column("kernel_idle_minutes")

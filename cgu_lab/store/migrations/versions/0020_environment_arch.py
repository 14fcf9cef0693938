"""environments: the CPU architecture their image runs on

Revision ID: 0020
Revises: 0019
Create Date: 2027-02-03 10:00:00.000000

amd64, arm64 or any (the default, and what every existing environment is): on
Kubernetes a notebook of an environment built for one architecture lands only on
nodes of it (`kubernetes.io/arch`), where a fleet mixes x86 servers and arm64 boards.
"""

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("environments") as batch:
        batch.add_column(sa.Column("arch", sa.String(8), nullable=False, server_default="any"))


def downgrade() -> None:
    with op.batch_alter_table("environments") as batch:
        batch.drop_column("arch")

"""the apps an environment offers beside JupyterLab (a desktop, VS Code, an admin's own)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 21:00:00.000000

Null is "the built-in apps where installed", so every environment already
there keeps offering the desktop and VS Code until an administrator says
otherwise.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("environments") as batch:
        batch.add_column(sa.Column("apps", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("environments") as batch:
        batch.drop_column("apps")

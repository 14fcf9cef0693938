"""users' last activity, for the admin's Users page

Revision ID: 0008
Revises: 0007
Create Date: 2027-01-14 10:00:00.000000

`last_login` was stored already; `last_activity` is new and empty until each
user's next request.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("last_activity", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("last_activity")

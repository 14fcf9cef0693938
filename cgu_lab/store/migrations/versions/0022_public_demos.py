"""public demos: an administrator lets a published demo be reached without a log-in

Revision ID: 0022
Revises: 0021
Create Date: 2027-02-12 10:00:00.000000

`publications.public` marks a demo anonymous visitors may use (its app's path only, as any
visitor); `demo_anonymous_visits` counts them by the random name their cookie holds.
"""

import sqlalchemy as sa
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("publications") as batch:
        batch.add_column(
            sa.Column("public", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "demo_anonymous_visits",
        sa.Column(
            "publication_id",
            sa.Integer(),
            sa.ForeignKey("publications.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("visitor", sa.String(32), primary_key=True),
        sa.Column("first_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("demo_anonymous_visits")
    with op.batch_alter_table("publications") as batch:
        batch.drop_column("public")

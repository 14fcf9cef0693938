"""publications: a notebook's app published as a demo, and who visited it

Revision ID: 0021
Revises: 0020
Create Date: 2027-02-10 10:00:00.000000

A teacher keeps a demo running in a persistent notebook and publishes one of its apps
to a course or to every logged-in user (controller/publishing/); visitors may use that
app and nothing else of the notebook. `demo_visits` holds who used it, for its count.
"""

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "publications",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "notebook_id",
            sa.Integer(),
            sa.ForeignKey("notebooks.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("prefix", sa.String(40), nullable=False),
        sa.Column("title", sa.String(100), nullable=False),
        sa.Column(
            "group_id", sa.Integer(), sa.ForeignKey("groups.id", ondelete="CASCADE"), nullable=True
        ),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("notebook_id", "prefix", name="uq_publications_app"),
    )
    op.create_index("ix_publications_group_id", "publications", ["group_id"])
    op.create_table(
        "demo_visits",
        sa.Column(
            "publication_id",
            sa.Integer(),
            sa.ForeignKey("publications.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("first_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("demo_visits")
    op.drop_index("ix_publications_group_id", "publications")
    op.drop_table("publications")

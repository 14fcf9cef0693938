"""one copy of a submission per TA, one share per grantee and scope

Revision ID: 0016
Revises: 0015
Create Date: 2027-01-10 10:00:00.000000

`notebooks.submission_id` names the submission a TA's notebook is a copy of, unique
per owner: a second "Open as notebook" opens that copy instead of making another
(the seed that named it is forgotten once its files are copied).

Shares: one grant per notebook, grantee and scope (the same file, or the whole
notebook); sharing again replaces the grant (controller/sharing/service.py). Rows that an
earlier version let pile up are merged first: the newest grant of each grantee and
scope stays, as it is the one the owner gave last.
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def _merge_duplicate_shares(column: str) -> None:
    """Delete all but the newest share of each (notebook, grantee, path)."""
    # `column` is one of two names this module passes, never input: no injection.
    op.execute(
        sa.text(
            f"DELETE FROM shares WHERE {column} IS NOT NULL AND id NOT IN ("  # noqa: S608
            f"SELECT MAX(id) FROM shares WHERE {column} IS NOT NULL "
            f"GROUP BY notebook_id, {column}, path)"
        )
    )


def upgrade() -> None:
    with op.batch_alter_table("notebooks") as batch:
        batch.add_column(sa.Column("submission_id", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_notebooks_submission_id",
            "submissions",
            ["submission_id"],
            ["id"],
            ondelete="SET NULL",
        )
    op.create_index(
        "uq_notebook_owner_submission", "notebooks", ["owner_id", "submission_id"], unique=True
    )
    _merge_duplicate_shares("user_id")
    _merge_duplicate_shares("group_id")
    op.create_index(
        "uq_shares_user_scope", "shares", ["notebook_id", "user_id", "path"], unique=True
    )
    op.create_index(
        "uq_shares_group_scope", "shares", ["notebook_id", "group_id", "path"], unique=True
    )


def downgrade() -> None:
    op.drop_index("uq_shares_group_scope", table_name="shares")
    op.drop_index("uq_shares_user_scope", table_name="shares")
    op.drop_index("uq_notebook_owner_submission", table_name="notebooks")
    with op.batch_alter_table("notebooks") as batch:
        batch.drop_constraint("fk_notebooks_submission_id", type_="foreignkey")
        batch.drop_column("submission_id")

"""school login: directory accounts, role rules, pre-enrolments

Revision ID: 0017
Revises: 0016
Create Date: 2027-01-20 10:00:00.000000

Accounts that log in through a school's OpenID provider or LDAP directory
(controller/school_login/): `users.directory` names the provider, and
`directory_accounts` ties the account to the provider's stable subject.
`directory_rules` is the administrators' mapping of claims and LDAP groups to
roles and courses; `directory_pre_enrolments` holds course places that wait, by
e-mail, for a student's first login.
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("directory", sa.String(63), nullable=False, server_default=""))
    op.create_table(
        "directory_accounts",
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("provider", sa.String(63), nullable=False),
        sa.Column("subject", sa.String(500), nullable=False),
        sa.Column("courses", sa.JSON(), nullable=False),
        sa.Column("refresh_token", sa.Text(), nullable=False),
        sa.Column("last_checked", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("provider", "subject", name="uq_directory_subject"),
    )
    op.create_table(
        "directory_rules",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("provider", sa.String(63), nullable=False),
        sa.Column("source", sa.String(8), nullable=False),
        sa.Column("attribute", sa.String(200), nullable=False),
        sa.Column("value", sa.String(500), nullable=False),
        sa.Column("role", sa.String(16), nullable=True),
        sa.Column("course", sa.String(63), nullable=True),
        sa.Column("created_by", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "directory_pre_enrolments",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("email", sa.String(320), nullable=False),
        sa.Column(
            "group_id",
            sa.Integer(),
            sa.ForeignKey("groups.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("added_by", sa.String(64), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("email", "group_id", name="uq_pre_enrolment"),
    )


def downgrade() -> None:
    op.drop_table("directory_pre_enrolments")
    op.drop_table("directory_rules")
    op.drop_table("directory_accounts")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("directory")

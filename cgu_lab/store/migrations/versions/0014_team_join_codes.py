"""team join codes: students form their own competition teams

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-10 10:00:00.000000

A team's members invite others with its join code (controller/competitions/teams.py).
The column is added nullable, every existing team gets a random code, then it
becomes required and unique.
"""

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("competition_teams") as batch:
        batch.add_column(sa.Column("join_code", sa.String(32), nullable=True))
    teams = sa.table("competition_teams", sa.column("id", sa.Integer), sa.column("join_code"))
    bind = op.get_bind()
    for (team_id,) in bind.execute(sa.select(teams.c.id)).all():
        bind.execute(
            teams.update().where(teams.c.id == team_id).values(join_code=secrets.token_urlsafe(9))
        )
    with op.batch_alter_table("competition_teams") as batch:
        batch.alter_column("join_code", existing_type=sa.String(32), nullable=False)
        batch.create_unique_constraint("uq_competition_team_join_code", ["join_code"])


def downgrade() -> None:
    with op.batch_alter_table("competition_teams") as batch:
        batch.drop_constraint("uq_competition_team_join_code", type_="unique")
        batch.drop_column("join_code")

"""notebooks: the Kubeflow PodDefaults ("configurations") their owner chose

Revision ID: 0024
Revises: 0023
Create Date: 2027-02-12 10:00:00.000000

On Kubernetes with Kubeflow, the notebook form offers the PodDefaults of the owner's
namespace; the chosen ones are kept with the notebook as {name: selector labels}, and
the labels go on the notebook at each start. Existing notebooks chose none: the column
starts empty.
"""

import sqlalchemy as sa
from alembic import op

revision = "0024"
down_revision = "0023"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("notebooks") as batch:
        batch.add_column(sa.Column("pod_defaults", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("notebooks") as batch:
        batch.drop_column("pod_defaults")

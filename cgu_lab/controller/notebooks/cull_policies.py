"""The idle policies in force, read from the database: the culler's, and a start's.

Apart from culler.py because a start needs them too (the kernel culling its server is
launched with, specs.py) and the culler imports the notebook service, which builds specs:
reading them here keeps the imports pointing one way.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import culling
from ...store.models import CullPolicyRow, Group

DEFAULT_POLICY = culling.CullPolicy(idle_minutes=60, warn_minutes=10, max_lifetime_hours=12)


@dataclass(frozen=True)
class Policies:
    """The policies in force: rules per group, and which groups (or all) are exempt."""

    rules: culling.PolicySet
    enabled: bool
    disabled_groups: frozenset[str]

    def applies(self, group: str | None) -> bool:
        """Whether the culler may stop a notebook charged to `group` (None: no group)."""
        if group is not None and group in self.rules.groups:
            return group not in self.disabled_groups
        return self.enabled


def policy_of(row: CullPolicyRow) -> culling.CullPolicy:
    return culling.CullPolicy(
        idle_minutes=row.idle_minutes,
        warn_minutes=row.warn_minutes,
        gpu_idle_percent=row.gpu_idle_percent,
        max_lifetime_hours=row.max_lifetime_hours,
        kernel_idle_minutes=row.kernel_idle_minutes,
        kernel_cull_connected=row.kernel_cull_connected,
    )


async def load_policies(session: AsyncSession) -> Policies:
    rows = (
        await session.execute(
            select(CullPolicyRow, Group.name).outerjoin(Group, Group.id == CullPolicyRow.group_id)
        )
    ).all()
    default = next((row for row, group in rows if group is None), None)
    groups = {group: policy_of(row) for row, group in rows if group is not None}
    return Policies(
        rules=culling.PolicySet(policy_of(default) if default else DEFAULT_POLICY, groups),
        enabled=default.enabled if default else True,
        disabled_groups=frozenset(
            group for row, group in rows if group is not None and not row.enabled
        ),
    )


async def kernel_culling(
    session: AsyncSession, group_id: int | None
) -> culling.KernelCulling | None:
    """How the server of a notebook charged to `group_id` (None: no group) culls its idle
    kernels: its group's policy where it has one, else the platform's; None: it does not."""
    statement = select(CullPolicyRow)
    if group_id is None:
        statement = statement.where(CullPolicyRow.group_id.is_(None))
    else:
        statement = statement.where(
            (CullPolicyRow.group_id == group_id) | CullPolicyRow.group_id.is_(None)
        )
    rows = {row.group_id: row for row in (await session.scalars(statement)).all()}
    row = rows.get(group_id) or rows.get(None)
    return culling.kernel_culling(policy_of(row) if row is not None else DEFAULT_POLICY)

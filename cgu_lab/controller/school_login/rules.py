"""The administrator's rules (System page): which claim value or LDAP group gives which
role and course. Written here, read at every school login by the account matching
(accounts.py, through `role_rules`), so a change applies from each user's next login."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import roles
from ...core.directory import RoleRule
from ...core.errors import NotFound
from ...core.roles import Principal, Role
from ...store.db import Database
from ...store.directory_models import DirectoryRule
from ...store.models import Group
from .. import audit
from .schemas import RuleIn


async def rule_rows(session: AsyncSession) -> list[DirectoryRule]:
    """The rules in the order they were added (the order `decide` reads them in)."""
    return list((await session.scalars(select(DirectoryRule).order_by(DirectoryRule.id))).all())


async def role_rules(session: AsyncSession) -> list[RoleRule]:
    """The rules as core/directory.py's `decide` takes them."""
    return [
        RoleRule(
            r.source,
            r.attribute,
            r.value,
            Role(r.role) if r.role else None,
            r.course,
            r.provider,
        )
        for r in await rule_rows(session)
    ]


class Rules:
    def __init__(self, db: Database, known_provider: Callable[[str], object]) -> None:
        """`known_provider`: raises NotFound for a provider that is not configured, so a
        rule never names one that no login can reach."""
        self.db = db
        self.known_provider = known_provider

    async def read(self, actor: Principal) -> list[DirectoryRule]:
        roles.require_admin(actor, "see the school login's rules")
        async with self.db.session() as session:
            return await rule_rows(session)

    async def add(self, actor: Principal, rule: RuleIn) -> DirectoryRule:
        """The new rule, added and audited in one transaction."""
        roles.require_admin(actor, "map the school's directory to roles and courses")
        if rule.provider:
            self.known_provider(rule.provider)
        async with self.db.session() as session:
            return await self._add(session, actor, rule)

    async def _add(self, session: AsyncSession, actor: Principal, rule: RuleIn) -> DirectoryRule:
        if rule.course and not await session.scalar(
            select(Group.id).where(Group.name == rule.course)
        ):
            raise NotFound(f"there is no course '{rule.course}'; create it first")
        row = DirectoryRule(
            provider=rule.provider,
            source=rule.source,
            attribute=rule.attribute if rule.source == "claim" else "",
            value=rule.value.strip(),
            role=rule.role.value if rule.role else None,
            course=rule.course,
            created_by=actor.name,
        )
        session.add(row)
        await session.flush()
        audit.record(
            session,
            actor.name,
            "school.rule_added",
            f"school_rule:{row.id}",
            provider=row.provider,
            source=row.source,
            attribute=row.attribute,
            value=row.value,
            role=row.role,
            course=row.course,
        )
        return row

    async def delete(self, actor: Principal, rule_id: int) -> None:
        roles.require_admin(actor, "map the school's directory to roles and courses")
        async with self.db.session() as session:
            row = await session.get(DirectoryRule, rule_id)
            if row is None:
                raise NotFound(f"there is no school login rule {rule_id}")
            await session.delete(row)
            audit.record(
                session,
                actor.name,
                "school.rule_deleted",
                f"school_rule:{rule_id}",
                value=row.value,
            )

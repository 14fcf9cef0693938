"""Pre-enrolment: course places a teacher keeps by e-mail for students who have not
logged in yet, taken at their first school login by a verified address only. Both
halves live here so that the rule "a place waits for exactly this address" is read in
one room: the teacher's list (`PreEnrolments`) and the first login's taking (`take`)."""

from __future__ import annotations

import csv
import io

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import roles
from ...core.errors import Invalid, NotFound
from ...core.names import EMAIL
from ...core.roles import Principal
from ...store.db import Database
from ...store.directory_models import PreEnrolment
from ...store.models import Group, Membership, User
from .. import audit
from .schemas import PreEnrolOut

MAX_PRE_ENROL = 5000


class PreEnrolments:
    """A group manager's side: add addresses to a course and list those still waiting."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def add(self, actor: Principal, group_name: str, text: str) -> PreEnrolOut:
        """Course places for students who have not logged in yet, by e-mail; all or
        nothing (a bad address refuses the file with its line)."""
        async with self.db.session() as session:
            return await self._add(session, actor, group_name, text)

    async def _add(
        self, session: AsyncSession, actor: Principal, group_name: str, text: str
    ) -> PreEnrolOut:
        group = await session.scalar(select(Group).where(Group.name == group_name))
        if group is None:
            raise NotFound(f"there is no group '{group_name}'")
        roles.require_group_manager(actor, group.id, group.name)
        emails = parse_emails(text)
        existing = set(
            (
                await session.scalars(
                    select(PreEnrolment.email).where(PreEnrolment.group_id == group.id)
                )
            ).all()
        )
        accounts = set(
            (await session.scalars(select(User.email).where(User.email.in_(emails)))).all()
        )
        result = PreEnrolOut(added=[], already=[], existing_accounts=[])
        for email in emails:
            if email in accounts:
                result.existing_accounts.append(email)
            elif email in existing:
                result.already.append(email)
            else:
                session.add(PreEnrolment(email=email, group_id=group.id, added_by=actor.name))
                result.added.append(email)
        audit.record(
            session,
            actor.name,
            "group.pre_enrolled",
            f"group:{group.name}",
            added=len(result.added),
            already=len(result.already),
        )
        return result

    async def waiting(self, actor: Principal, group_name: str) -> list[str]:
        async with self.db.session() as session:
            group = await session.scalar(select(Group).where(Group.name == group_name))
            if group is None:
                raise NotFound(f"there is no group '{group_name}'")
            roles.require_group_manager(actor, group.id, group.name)
            rows = await session.scalars(
                select(PreEnrolment.email)
                .where(PreEnrolment.group_id == group.id)
                .order_by(PreEnrolment.email)
            )
            return list(rows.all())


async def take(session: AsyncSession, user: User, email: str) -> None:
    """A new account joins the courses that waited for its (verified) address, each
    audited in the teacher's name, and the places are used up."""
    rows = (
        await session.execute(
            select(PreEnrolment, Group)
            .join(Group, Group.id == PreEnrolment.group_id)
            .where(PreEnrolment.email == email.lower())
        )
    ).all()
    for row, group in rows:
        if await session.get(Membership, (group.id, user.id)) is None:
            session.add(Membership(group_id=group.id, user_id=user.id, manager=False))
            audit.record(
                session,
                row.added_by,
                "group.member_added",
                f"group:{group.name}",
                user=user.name,
                pre_enrolled=email.lower(),
            )
        await session.delete(row)


def parse_emails(text: str) -> list[str]:
    """The `email` column of a CSV list (header `email`, `e-mail` or `mail`), lower-cased,
    each checked; Invalid names every bad line."""
    # newline="": the csv module reads \r, \n and \r\n line ends itself (a lone \r was a 500).
    try:
        rows = [
            row
            for row in csv.reader(io.StringIO(text, newline=""))
            if any(cell.strip() for cell in row)
        ]
    except csv.Error as error:  # a field over the module's size limit, a NUL...
        raise Invalid(f"the list is not readable CSV: {error}") from None
    if not rows:
        raise Invalid("the list is empty; give a CSV file with an 'email' column")
    header = [cell.strip().lower() for cell in rows[0]]
    column = next((i for i, h in enumerate(header) if h in ("email", "e-mail", "mail")), None)
    if column is None:
        raise Invalid("the first line must be a header with an 'email' column")
    if len(rows) - 1 > MAX_PRE_ENROL:
        raise Invalid(f"a list may hold at most {MAX_PRE_ENROL} addresses")
    emails: list[str] = []
    problems: list[str] = []
    for number, row in enumerate(rows[1:], start=2):
        value = row[column].strip().lower() if column < len(row) else ""
        if not value or "@" not in value or not EMAIL.fullmatch(value) or len(value) > 320:
            problems.append(f"line {number}: '{value[:60]}' is not an e-mail address")
        elif value not in emails:
            emails.append(value)
    if problems:
        shown = "; ".join(problems[:10])
        raise Invalid(f"nothing was added: {shown}", problems=problems)
    return emails

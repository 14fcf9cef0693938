"""Teams students form themselves, as on Kaggle InClass.

In a competition with teams, while it has not ended, a student of the course who
is in no team creates one and gets its join code; other students join with the
code, up to the competition's `max_team_size`; a member leaves while the team
has no entries (the last one to leave removes it). The code is a secret shown to
the team's members only: the course's managers form teams with `set_team`
(competitions.py) and never see it.

Limits are counted per team and entries never move from one participant to
another, so a student who has submitted on their own cannot join or create a
team (their teacher may still put them in one), and a team that has entries
keeps its members.

Every change takes the student's user row lock first and then the team's, in
the order a submission takes them (competition_entries.py): two students
joining the last seat at once queue on the team's row and the second one counts
the first.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from ...core.competition import phase
from ...core.errors import Conflict, Forbidden, NotFound
from ...core.names import check_label
from ...core.roles import Principal
from ...store.competition_models import (
    Competition,
    CompetitionEntry,
    CompetitionTeam,
    CompetitionTeamMember,
    new_join_code,
)
from ...store.models import Group, User
from .. import audit
from .schemas import MyTeamOut
from .service import CompetitionService

MAX_CODE = 100


class TeamRefused(Conflict):
    """A 409 whose `code` says which rule refused (team_full, already_in_team...)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class NoTeam(NotFound):
    code = "no_team"


class TeamService:
    """Stateless: the API builds one per request over the platform's CompetitionService."""

    def __init__(self, competitions: CompetitionService) -> None:
        self.competitions = competitions
        self.db = competitions.db

    # -- rules -----------------------------------------------------------------------

    async def _context(
        self, session: AsyncSession, actor: Principal, competition_id: int, changing: bool
    ) -> tuple[Competition, Group]:
        """The competition and course, refused unless teams are on (and, to change a team,
        unless it runs still and the actor is one of the course's students)."""
        competition, group, manage = await self.competitions.load(session, actor, competition_id)
        if not competition.teams:
            raise TeamRefused(
                "this competition is for individuals: it has no teams to form or join",
                "teams_off",
            )
        if not changing:
            return competition, group
        now = self.competitions.clock.now()
        if phase(competition.starts_at, competition.ends_at, now) == "closed":
            raise TeamRefused(
                f"'{competition.title or competition.name}' has ended; teams cannot change now",
                "competition_ended",
            )
        if manage or group.id not in actor.groups:
            raise Forbidden(
                f"only the students of course '{group.name}' form and join teams; its staff "
                "put students in teams from the teams list"
            )
        return competition, group

    @staticmethod
    async def _lock_user(session: AsyncSession, actor: Principal) -> None:
        await session.execute(select(User.id).where(User.id == actor.id).with_for_update())

    @staticmethod
    async def _team_of(
        session: AsyncSession, competition: Competition, user_id: int, lock: bool = False
    ) -> CompetitionTeam | None:
        statement = (
            select(CompetitionTeam)
            .join(CompetitionTeamMember, CompetitionTeamMember.team_id == CompetitionTeam.id)
            .where(
                CompetitionTeamMember.competition_id == competition.id,
                CompetitionTeamMember.user_id == user_id,
            )
        )
        return await session.scalar(statement.with_for_update() if lock else statement)

    async def _refuse_if_in_team_or_submitted(
        self, session: AsyncSession, competition: Competition, actor: Principal
    ) -> None:
        current = await self._team_of(session, competition, actor.id)
        if current is not None:
            raise TeamRefused(
                f"you are already in team '{current.name}'; leave it first", "already_in_team"
            )
        own = await session.scalar(
            select(func.count(CompetitionEntry.id)).where(
                CompetitionEntry.competition_id == competition.id,
                CompetitionEntry.user_id == actor.id,
                CompetitionEntry.team_id.is_(None),
            )
        )
        if own:
            raise TeamRefused(
                "you have submitted on your own; ask your teacher to put you in a team",
                "own_entries",
            )

    @staticmethod
    async def _entries(session: AsyncSession, team: CompetitionTeam) -> int:
        count = await session.scalar(
            select(func.count(CompetitionEntry.id)).where(CompetitionEntry.team_id == team.id)
        )
        return count or 0

    async def _describe(
        self, session: AsyncSession, competition: Competition, team: CompetitionTeam
    ) -> MyTeamOut:
        members = await session.scalars(
            select(User.name)
            .join(CompetitionTeamMember, CompetitionTeamMember.user_id == User.id)
            .where(CompetitionTeamMember.team_id == team.id)
            .order_by(User.name)
        )
        return MyTeamOut(
            name=team.name,
            members=list(members.all()),
            join_code=team.join_code,
            max_team_size=competition.max_team_size,
            entries=await self._entries(session, team),
        )

    @staticmethod
    def _record(session, actor: Principal, action: str, group: Group, competition, team: str):
        target = f"competition:{group.name}/{competition.name}"
        audit.record(session, actor.name, action, target, team=team)

    # -- students ----------------------------------------------------------------------

    async def mine(self, actor: Principal, competition_id: int) -> MyTeamOut:
        async with self.db.session() as session:
            competition, _ = await self._context(session, actor, competition_id, False)
            team = await self._team_of(session, competition, actor.id)
            if team is None:
                raise NoTeam("you are in no team of this competition; create one or join one")
            return await self._describe(session, competition, team)

    async def create(self, actor: Principal, competition_id: int, name: str) -> MyTeamOut:
        name = check_label(name.strip().lower(), "team")
        async with self.db.session() as session:
            competition, group = await self._context(session, actor, competition_id, True)
            await self._lock_user(session, actor)
            await self._refuse_if_in_team_or_submitted(session, competition, actor)
            taken = await session.scalar(
                select(CompetitionTeam.id).where(
                    CompetitionTeam.competition_id == competition.id, CompetitionTeam.name == name
                )
            )
            if taken:
                raise TeamRefused(
                    f"there is already a team named '{name}' here; pick another name",
                    "team_name_taken",
                )
            team = CompetitionTeam(
                competition_id=competition.id, name=name, join_code=new_join_code()
            )
            session.add(team)
            try:
                await session.flush()
            except IntegrityError:  # the same name created at the same moment
                raise TeamRefused(
                    f"there is already a team named '{name}' here; pick another name",
                    "team_name_taken",
                ) from None
            session.add(
                CompetitionTeamMember(
                    team_id=team.id, user_id=actor.id, competition_id=competition.id
                )
            )
            await session.flush()
            self._record(session, actor, "competition.team.created", group, competition, name)
            return await self._describe(session, competition, team)

    async def join(self, actor: Principal, competition_id: int, code: str) -> MyTeamOut:
        code = code.strip()
        async with self.db.session() as session:
            competition, group = await self._context(session, actor, competition_id, True)
            await self._lock_user(session, actor)
            current = await self._team_of(session, competition, actor.id)
            if current is not None:
                raise TeamRefused(
                    f"you are already in team '{current.name}'; leave it first",
                    "already_in_team",
                )
            # An exact match looked up by the database: no character-by-character
            # comparison in Python that a timing could reveal.
            team = await session.scalar(
                select(CompetitionTeam)
                .where(
                    CompetitionTeam.competition_id == competition.id,
                    CompetitionTeam.join_code == code,
                )
                .with_for_update()
            )
            if team is None or not code or len(code) > MAX_CODE:
                raise NoTeam(
                    "no team of this competition has that join code; check it with a member "
                    "of the team"
                )
            await self._refuse_if_in_team_or_submitted(session, competition, actor)
            size = await session.scalar(
                select(func.count())
                .select_from(CompetitionTeamMember)
                .where(CompetitionTeamMember.team_id == team.id)
            )
            if (size or 0) >= competition.max_team_size:
                raise TeamRefused(
                    f"team '{team.name}' is full: a team has at most "
                    f"{competition.max_team_size} members",
                    "team_full",
                )
            session.add(
                CompetitionTeamMember(
                    team_id=team.id, user_id=actor.id, competition_id=competition.id
                )
            )
            await session.flush()
            self._record(session, actor, "competition.team.joined", group, competition, team.name)
            return await self._describe(session, competition, team)

    async def leave(self, actor: Principal, competition_id: int) -> str:
        """Leave my team (removed with its last member); returns the team's name."""
        async with self.db.session() as session:
            competition, group = await self._context(session, actor, competition_id, True)
            await self._lock_user(session, actor)
            team = await self._team_of(session, competition, actor.id, lock=True)
            if team is None:
                raise NoTeam("you are in no team of this competition")
            if await self._entries(session, team):
                raise TeamRefused(
                    f"team '{team.name}' has entries, which stay the team's; its members "
                    "cannot leave it now (ask your teacher)",
                    "team_has_entries",
                )
            member = await session.get(CompetitionTeamMember, (team.id, actor.id))
            await session.delete(member)
            await session.flush()
            left = await session.scalar(
                select(func.count())
                .select_from(CompetitionTeamMember)
                .where(CompetitionTeamMember.team_id == team.id)
            )
            if not left:
                await session.delete(team)
            self._record(session, actor, "competition.team.left", group, competition, team.name)
            return team.name

"""Reading leaderboards: one answer, or a page kept up to date as scores arrive.

The ranking is shared by every viewer and kept by `Boards` (boards.py); what is the
viewer's own (may they see this board? which row is theirs?) is read here from the
database. A page that stays open follows the board (`follow`) instead of asking again:
it gets the board at once, then again after each announced change, so a score reaches
200 open pages as one ranking and 200 writes, with no request from any of them.

The public board ranks each participant's best public score
while the competition runs; at its end the private board ranks, for each
participant, the private score of the entry that was their best public one
(on Kaggle: the automatic choice when none is selected). Ties go to the
earlier entry. Entries of the course's staff are listed for them and never
ranked.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import competition as rules
from ...core.errors import Forbidden, NotFound
from ...core.roles import Principal
from ...store.competition_models import Competition, CompetitionEntry, CompetitionTeam
from ...store.db import Database
from ...store.models import Group, Membership, User
from .schemas import CompetitionLeaderboard, CompetitionLeaderboardRow
from .service import CompetitionService

# A follower's right to the board and its own row are read again at most this often
# (seconds of the platform's monotonic clock), at the first change after it: a member
# removed from the course stops being told, and a team joined shows as theirs, within
# that time, without a query per follower for every score.
RECHECK_SECONDS = 30.0


@dataclass(frozen=True)
class Viewer:
    """What one viewer of one board may see: the board's heading and which row is theirs."""

    competition_id: int
    board: str
    final: bool
    metric: str
    higher_is_better: bool
    mine: str  # the participant key of the viewer's row ("user:<name>" or "team:<name>")


class Leaderboards:
    def __init__(self, db: Database, competitions: CompetitionService) -> None:
        self.db = db
        self.competitions = competitions

    async def leaderboard(
        self, actor: Principal, competition_id: int, board: str
    ) -> CompetitionLeaderboard:
        """The public board, or the private one (at the end; managers may look earlier)."""
        return await self._draw(await self._viewer(actor, competition_id, board))

    async def follow(
        self, actor: Principal, competition_id: int, board: str
    ) -> AsyncIterator[CompetitionLeaderboard]:
        """The board now and after each change, until the viewer may no longer see it.

        Who may look is checked here, before the first board: a refusal is an answer
        (403/404), not a stream that ends at once."""
        viewer = await self._viewer(actor, competition_id, board)
        return self._follow(actor, viewer)

    async def _follow(
        self, actor: Principal, viewer: Viewer
    ) -> AsyncIterator[CompetitionLeaderboard]:
        boards, clock = self.competitions.boards, self.competitions.clock
        checked = clock.monotonic()
        while True:
            seen = boards.version(viewer.competition_id)
            try:
                yield await self._draw(viewer)
            except NotFound:  # the competition was deleted
                return
            await boards.next_change(viewer.competition_id, seen)
            if clock.monotonic() - checked >= RECHECK_SECONDS:
                try:
                    viewer = await self._viewer(actor, viewer.competition_id, viewer.board)
                except (Forbidden, NotFound):
                    return
                checked = clock.monotonic()

    async def _viewer(self, actor: Principal, competition_id: int, board: str) -> Viewer:
        async with self.db.session() as session:
            competition, _group, manage = await self.competitions.load(
                session, actor, competition_id
            )
            closed = self.competitions.clock.now() >= competition.ends_at
            if board == "private" and not (closed or manage):
                raise Forbidden(
                    "the private leaderboard is revealed when the competition ends, at "
                    f"{competition.ends_at.isoformat(timespec='minutes')}"
                )
            team = await self.competitions.team_of(session, competition, actor.id)
            return Viewer(
                competition_id=competition.id,
                board=board,
                final=board == "private" and closed,
                metric=competition.metric,
                higher_is_better=competition.higher_is_better,
                mine=f"team:{team.name}" if team else f"user:{actor.name}",
            )

    async def _draw(self, viewer: Viewer) -> CompetitionLeaderboard:
        """The shared ranking (ranked again only after a change) with the viewer's row marked."""
        cid, board = viewer.competition_id, viewer.board
        ranked = await self.competitions.boards.get(cid, board, lambda: self._ranked(cid, board))
        return CompetitionLeaderboard(
            competition_id=cid,
            board=board,
            final=viewer.final,
            metric=viewer.metric,
            higher_is_better=viewer.higher_is_better,
            # The ranked rows are every viewer's: each answer marks its own copies.
            rows=[
                row.model_copy(update={"mine": participant == viewer.mine})
                for participant, row in ranked
            ],
        )

    async def _ranked(
        self, competition_id: int, board: str
    ) -> list[tuple[str, CompetitionLeaderboardRow]]:
        """Every viewer's board: (participant, row) in rank order, from the database."""
        async with self.db.session() as session:
            competition = await session.get(Competition, competition_id)
            if competition is None:
                raise NotFound(f"there is no competition {competition_id}")
            group = await session.get(Group, competition.group_id)
            staff = await self._staff(session, group)
            rows = (
                await session.execute(
                    select(CompetitionEntry, User.name, User.display_name, CompetitionTeam.name)
                    .join(User, User.id == CompetitionEntry.user_id)
                    .outerjoin(CompetitionTeam, CompetitionTeam.id == CompetitionEntry.team_id)
                    .where(
                        CompetitionEntry.competition_id == competition.id,
                        CompetitionEntry.state == "scored",
                    )
                )
            ).all()
        return _rank(competition.higher_is_better, rows, staff, board)

    @staticmethod
    async def _staff(session: AsyncSession, group: Group) -> set[int]:
        """The course's managers and the admins: their entries are tries, not standings."""
        managers = await session.scalars(
            select(Membership.user_id).where(
                Membership.group_id == group.id, Membership.manager.is_(True)
            )
        )
        admins = await session.scalars(select(User.id).where(User.role == "admin"))
        return set(managers.all()) | set(admins.all())


def _rank(higher: bool, rows, staff, board) -> list[tuple[str, CompetitionLeaderboardRow]]:
    """(participant, row) in rank order: each participant's best public entry; on the
    private board, those same entries ranked by their private scores. No row is anyone's
    (`mine`) yet: that is each viewer's, marked by `_draw`."""
    by_id: dict[int, tuple] = {}
    counts: dict[str, int] = {}
    for entry, name, display, team in rows:
        if entry.user_id in staff:
            continue
        participant = f"team:{team}" if team else f"user:{name}"
        by_id[entry.id] = (entry, participant, team or display or name)
        counts[participant] = counts.get(participant, 0) + 1

    def entries(field: str, ids) -> list[rules.Entry]:
        found = []
        for entry_id in ids:
            entry, participant, _ = by_id[entry_id]
            value = getattr(entry, field)
            if value is not None:
                found.append(rules.Entry(participant, value, entry.submitted_at, entry.id))
        return found

    ranked = rules.leaderboard(entries("public_score", by_id), higher)
    if board == "private":
        chosen = [entry.submission_id for _, entry in ranked]
        ranked = rules.leaderboard(entries("private_score", chosen), higher)
    return [
        (
            e.participant,
            CompetitionLeaderboardRow(
                rank=rank,
                participant=by_id[e.submission_id][2],
                team=e.participant.startswith("team:"),
                score=e.score,
                entries=counts[e.participant],
                submitted_at=e.submitted_at,
                mine=False,
            ),
        )
        for rank, e in ranked
    ]

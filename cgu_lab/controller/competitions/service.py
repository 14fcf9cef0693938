"""Course competitions: what a teacher sets up and what every member may read.

A course's managers (its teacher and TAs) and admins create a competition for
the course: title, Markdown description, start and end, the metric, limits,
teams, the public/private split; then upload its files: the training set and
the test inputs (members download them), the hidden solution and optionally a
scoring script (never served to anyone, not even back to the teacher: the
teacher keeps their own copy). Members of the course see the competition from
its start; others get a 404, as if it did not exist.

Entries and scoring are `entries.py`, leaderboards `leaderboards.py` (ranked once per
change by `boards.py`).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass, replace
from datetime import datetime

from markdown_it import MarkdownIt
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...core import roles
from ...core.competition import PredictionError, check_solution, phase, read_table
from ...core.errors import Conflict, Forbidden, Invalid, NotFound
from ...core.metrics import CUSTOM, METRICS
from ...core.names import check_label
from ...core.roles import Principal
from ...store.competition_models import (
    Competition,
    CompetitionTeam,
    CompetitionTeamMember,
    new_join_code,
)
from ...store.db import Database
from ...store.models import Group, Membership, User
from .. import audit
from ..accounts.directory import get_group
from ..clock import Clock
from . import files
from .boards import Boards
from .gpus import check_gpu_type
from .schemas import CompetitionOut, CompetitionTeamOut

MAX_FILE = 16 * 2**20 - 4096  # below the API's body limit
# Raw HTML is escaped and unsafe link schemes (javascript:, data:...) refused by
# markdown-it's own link check; the page's CSP forbids inline scripts besides.
_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def render_markdown(text: str) -> str:
    return _MARKDOWN.render(text)


@dataclass(frozen=True)
class CompetitionSpec:
    """What a teacher sets; every field is checked by `check_spec`."""

    title: str
    description: str
    starts_at: datetime
    ends_at: datetime
    metric: str
    higher_is_better: bool | None = None
    id_column: str = "id"
    target_column: str = "prediction"
    public_fraction: float = 0.5
    per_day: int = 5
    total: int = 0
    teams: bool = False
    max_team_size: int = 3
    time_limit: float = 60.0
    memory_limit: int = 2**30
    # "code": students send a notebook that runs on the hidden inputs, within
    # `time_limit` and `memory_limit` (competition_runs.py); its predictions are
    # then scored as an uploaded file is.
    kind: str = "predictions"
    # A code competition's runs take one device of this GPU type (competition_gpus.py).
    gpu_type: str | None = None


KINDS = ("predictions", "code")


def check_spec(spec: CompetitionSpec) -> None:
    if spec.starts_at.tzinfo is None or spec.ends_at.tzinfo is None:
        raise Invalid("give the start and end with their time zone, e.g. 2027-03-01T09:00+08:00")
    if spec.ends_at <= spec.starts_at:
        raise Invalid("the end must come after the start")
    if spec.metric != CUSTOM and spec.metric not in METRICS:
        raise Invalid(f"unknown metric '{spec.metric}'; use one of {', '.join(METRICS)}, custom")
    if spec.id_column == spec.target_column:
        raise Invalid("the id column and the prediction column need different names")
    if spec.kind not in KINDS:
        raise Invalid(f"unknown kind '{spec.kind}'; use predictions or code")
    if spec.gpu_type and spec.kind != "code":
        raise Invalid("only a code competition's notebook runs take a GPU; leave gpu_type out")
    if not 0 < spec.public_fraction < 1:
        raise Invalid("the public part of the test set must be more than 0 and less than 1")


class CompetitionService:
    def __init__(self, db: Database, settings, clock: Clock) -> None:
        """`clock`: the platform's; phases, limits per day and scoring times follow it
        (tests move it past a start or an end)."""
        self.db = db
        self.settings = settings
        self.clock = clock
        # The ranked leaderboards, shared by every viewer (boards.py); entries and teams
        # announce their changes to it.
        self.boards = Boards(clock.monotonic)

    # -- reading ---------------------------------------------------------------------

    async def load(
        self, session: AsyncSession, actor: Principal, competition_id: int
    ) -> tuple[Competition, Group, bool]:
        """(competition, course, manages it); a 404 for anyone outside the course."""
        competition = await session.get(Competition, competition_id)
        if competition is not None:
            group = await session.get(Group, competition.group_id)
            manage = roles.can_manage_group(actor, group.id)
            if manage or group.id in actor.groups:
                return competition, group, manage
        raise NotFound(f"there is no competition {competition_id} in a course of yours")

    async def team_of(
        self, session: AsyncSession, competition: Competition, user_id: int
    ) -> CompetitionTeam | None:
        """The team `user_id` is in for this competition (None without teams or a team)."""
        if not competition.teams:
            return None
        return await session.scalar(
            select(CompetitionTeam)
            .join(CompetitionTeamMember, CompetitionTeamMember.team_id == CompetitionTeam.id)
            .where(
                CompetitionTeamMember.competition_id == competition.id,
                CompetitionTeamMember.user_id == user_id,
            )
        )

    def describe(self, competition: Competition, group: Group, manage: bool) -> CompetitionOut:
        metric = METRICS.get(competition.metric)
        present = competition.files or {}
        shown = present if manage else {k: v for k, v in present.items() if k in files.PUBLIC_KINDS}
        return CompetitionOut(
            id=competition.id,
            group=group.name,
            name=competition.name,
            title=competition.title or competition.name,
            description=competition.description,
            description_html=render_markdown(competition.description),
            starts_at=competition.starts_at,
            ends_at=competition.ends_at,
            phase=phase(competition.starts_at, competition.ends_at, self.clock.now()),
            metric=competition.metric,
            metric_title=metric.title if metric else "the course's own scoring script",
            higher_is_better=competition.higher_is_better,
            id_column=competition.id_column,
            target_column=competition.target_column,
            public_fraction=competition.public_fraction,
            per_day=competition.per_day,
            total=competition.total,
            teams=competition.teams,
            max_team_size=competition.max_team_size,
            time_limit=competition.time_limit,
            memory_limit=competition.memory_limit,
            max_bytes=competition.max_bytes,
            files=shown,
            kind=competition.kind,
            gpu_type=competition.gpu_type,
            ready="solution" in present
            and (competition.metric != CUSTOM or "script" in present)
            and (competition.kind != "code" or "inputs" in present),
            manage=manage,
        )

    async def get(self, actor: Principal, competition_id: int) -> CompetitionOut:
        async with self.db.session() as session:
            return self.describe(*await self.load(session, actor, competition_id))

    async def for_group(self, actor: Principal, group: str) -> list[CompetitionOut]:
        async with self.db.session() as session:
            target = await get_group(session, group)
            manage = roles.can_manage_group(actor, target.id)
            if not manage and target.id not in actor.groups:
                raise NotFound(f"there is no course '{group}' that you are in")
            rows = await session.scalars(
                select(Competition)
                .where(Competition.group_id == target.id)
                .order_by(Competition.ends_at.desc(), Competition.id)
            )
            return [self.describe(c, target, manage) for c in rows.all()]

    async def mine(self, actor: Principal) -> list[CompetitionOut]:
        """Competitions of every course I am in or manage, running ones first."""
        async with self.db.session() as session:
            ids = set(actor.groups) | set(actor.managed_groups)
            statement = select(Competition, Group).join(Group, Group.id == Competition.group_id)
            if not actor.is_admin:
                statement = statement.where(Competition.group_id.in_(ids))
            rows = (await session.execute(statement.order_by(Competition.ends_at))).all()
            found = [self.describe(c, g, roles.can_manage_group(actor, g.id)) for c, g in rows]
        order = {"open": 0, "upcoming": 1, "closed": 2}
        return sorted(found, key=lambda c: order[c.phase])

    # -- teachers ----------------------------------------------------------------------

    async def create(
        self, actor: Principal, group: str, name: str, spec: CompetitionSpec
    ) -> CompetitionOut:
        name = check_label(name.strip().lower(), "competition")
        check_spec(spec)
        async with self.db.session() as session:
            target = await get_group(session, group)
            roles.require_group_manager(actor, target.id, target.name)
            spec = replace(spec, gpu_type=await self._gpu_type(session, spec.gpu_type))
            if await session.scalar(
                select(Competition.id).where(
                    Competition.group_id == target.id, Competition.name == name
                )
            ):
                raise Conflict(f"course '{group}' already has a competition named '{name}'")
            competition = Competition(
                group_id=target.id,
                name=name,
                split_salt=secrets.token_hex(32),
                created_by=actor.name,
            )
            self._apply(competition, spec)
            session.add(competition)
            await session.flush()
            audit.record(
                session,
                actor.name,
                "competition.created",
                f"competition:{group}/{name}",
                metric=spec.metric,
                starts_at=spec.starts_at.isoformat(),
                ends_at=spec.ends_at.isoformat(),
                gpu_type=spec.gpu_type,
            )
            return self.describe(competition, target, True)

    async def _gpu_type(self, session: AsyncSession, name: str | None) -> str | None:
        return await check_gpu_type(session, name, self.settings.backend)

    @staticmethod
    def _apply(competition: Competition, spec: CompetitionSpec) -> None:
        for key, value in spec.__dict__.items():
            if key == "higher_is_better":
                metric = METRICS.get(spec.metric)
                value = metric.higher_is_better if metric else (True if value is None else value)
            setattr(competition, key, value.strip() if isinstance(value, str) else value)

    async def update(self, actor: Principal, competition_id: int, changes: dict) -> CompetitionOut:
        async with self.db.session() as session:
            competition, group, manage = await self.load(session, actor, competition_id)
            if not manage:
                raise Forbidden(
                    f"only the managers of course '{group.name}' change its competitions"
                )
            current = {k: getattr(competition, k) for k in CompetitionSpec.__dataclass_fields__}
            spec = CompetitionSpec(**{**current, **changes})
            check_spec(spec)
            if "gpu_type" in changes:
                spec = replace(spec, gpu_type=await self._gpu_type(session, spec.gpu_type))
            if "metric" in changes and competition.files and "solution" in competition.files:
                await asyncio.to_thread(self._check_solution_file, competition, spec)
            self._apply(competition, spec)
            audit.record(
                session,
                actor.name,
                "competition.updated",
                f"competition:{group.name}/{competition.name}",
                changed=sorted(changes),
            )
            described = self.describe(competition, group, True)
        self.boards.changed(competition_id)  # the metric's direction, the end: rank again
        return described

    def _check_solution_file(self, competition: Competition, spec: CompetitionSpec) -> None:
        text = files.path_of(self.settings.data_dir, competition.id, "solution").read_text()
        self._check_solution(text, spec.id_column, spec.target_column, spec.metric)

    @staticmethod
    def _check_solution(text: str, id_column: str, target_column: str, metric: str) -> int:
        try:
            solution = read_table(text, id_column, target_column, "the solution")
            if metric != CUSTOM:
                check_solution(solution, METRICS[metric])
        except PredictionError as error:
            raise Invalid(str(error)) from None
        return len(solution)

    async def upload(
        self, actor: Principal, competition_id: int, kind: str, file_name: str, data: bytes
    ) -> CompetitionOut:
        """Store one of the competition's files (train, test, solution, script or inputs)."""
        if kind not in files.KINDS:
            raise NotFound(f"a competition has no file '{kind}'; use {', '.join(files.KINDS)}")
        if len(data) > MAX_FILE:
            raise Invalid(f"a competition's file may have at most {MAX_FILE} bytes")
        async with self.db.session() as session:
            competition, group, manage = await self.load(session, actor, competition_id)
            if not manage:
                raise Forbidden(f"only the managers of course '{group.name}' upload its files")
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise Invalid(f"the {kind} file is not UTF-8 text") from None
            info = {"name": file_name[:200], "bytes": len(data)}
            if kind == "solution":
                info["rows"] = self._check_solution(
                    text, competition.id_column, competition.target_column, competition.metric
                )
            target = files.path_of(self.settings.data_dir, competition.id, kind)
            await asyncio.to_thread(files.write, self.settings.data_dir, target, data)
            competition.files = {**(competition.files or {}), kind: info}
            audit.record(
                session,
                actor.name,
                "competition.file",
                f"competition:{group.name}/{competition.name}",
                kind=kind,
                bytes=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
            )
            return self.describe(competition, group, True)

    async def public_file(self, actor: Principal, competition_id: int, kind: str):
        """(path, download name) of the training set or the test inputs, for members."""
        if kind not in files.PUBLIC_KINDS:
            # The hidden files are never served, whoever asks (the teacher keeps a copy).
            raise NotFound(f"there is no downloadable file '{kind}'; use train or test")
        async with self.db.session() as session:
            competition, _, manage = await self.load(session, actor, competition_id)
        if not manage and self.clock.now() < competition.starts_at:
            raise Forbidden("the competition's files are available from its start")
        if kind not in (competition.files or {}):
            raise NotFound(f"the teacher has not uploaded the {kind} file yet")
        path = files.path_of(self.settings.data_dir, competition.id, kind)
        return path, f"{competition.name}-{kind}.csv"

    async def delete(self, actor: Principal, competition_id: int) -> None:
        async with self.db.session() as session:
            competition, group, manage = await self.load(session, actor, competition_id)
            if not manage:
                raise Forbidden(f"only the managers of course '{group.name}' delete competitions")
            await session.delete(competition)
            audit.record(
                session,
                actor.name,
                "competition.deleted",
                f"competition:{group.name}/{competition.name}",
            )
        await asyncio.to_thread(files.remove, self.settings.data_dir, competition_id)
        self.boards.changed(competition_id)

    # -- teams -----------------------------------------------------------------------

    async def set_team(
        self, actor: Principal, competition_id: int, team: str, members: list[str]
    ) -> CompetitionTeamOut:
        """Create or replace a team (its members: students of the course); [] removes it."""
        team = check_label(team.strip().lower(), "team")
        async with self.db.session() as session:
            competition, group, manage = await self.load(session, actor, competition_id)
            if not manage:
                raise Forbidden(f"only the managers of course '{group.name}' form teams")
            if not competition.teams:
                raise Conflict("this competition is for individuals; turn teams on first")
            if len(members) > competition.max_team_size:
                raise Invalid(f"a team has at most {competition.max_team_size} members")
            users = (
                await session.execute(
                    select(User.id, User.name)
                    .join(Membership, Membership.user_id == User.id)
                    .where(Membership.group_id == group.id, User.name.in_(members))
                )
            ).all()
            unknown = sorted(set(members) - {name for _, name in users})
            if unknown:
                raise Invalid(f"not in course '{group.name}': {', '.join(unknown)}")
            row = await session.scalar(
                select(CompetitionTeam).where(
                    CompetitionTeam.competition_id == competition.id, CompetitionTeam.name == team
                )
            )
            if row is None:
                # Its members see the join code (competition_teams.py) and may invite.
                row = CompetitionTeam(
                    competition_id=competition.id, name=team, join_code=new_join_code()
                )
                session.add(row)
                await session.flush()
            await session.execute(
                delete(CompetitionTeamMember).where(
                    CompetitionTeamMember.competition_id == competition.id,
                    (CompetitionTeamMember.team_id == row.id)
                    | CompetitionTeamMember.user_id.in_([uid for uid, _ in users]),
                )
            )
            for uid, _ in users:
                session.add(
                    CompetitionTeamMember(
                        team_id=row.id, user_id=uid, competition_id=competition.id
                    )
                )
            if not users:
                await session.delete(row)
            audit.record(
                session,
                actor.name,
                "competition.team",
                f"competition:{group.name}/{competition.name}",
                team=team,
                members=sorted(members),
            )
        self.boards.changed(competition_id)  # a staff's change of teams regroups entries
        return CompetitionTeamOut(name=team, members=sorted(name for _, name in users))

    async def teams(self, actor: Principal, competition_id: int) -> list[CompetitionTeamOut]:
        async with self.db.session() as session:
            competition, _, _ = await self.load(session, actor, competition_id)
            rows = (
                await session.execute(
                    select(CompetitionTeam.name, User.name)
                    .join(
                        CompetitionTeamMember, CompetitionTeamMember.team_id == CompetitionTeam.id
                    )
                    .join(User, User.id == CompetitionTeamMember.user_id)
                    .where(CompetitionTeam.competition_id == competition.id)
                    .order_by(CompetitionTeam.name, User.name)
                )
            ).all()
        found: dict[str, list[str]] = {}
        for team, member in rows:
            found.setdefault(team, []).append(member)
        return [CompetitionTeamOut(name=team, members=members) for team, members in found.items()]

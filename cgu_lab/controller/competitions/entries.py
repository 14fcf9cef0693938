"""Competition entries: submitting predictions, the scoring queue, reading entries.

A member submits a predictions file while the competition is open, within
its daily and total limits (counted per team when it has teams; entries whose
file could not be scored do not count). The entry is stored and queued; a few
workers (`PARALLEL_SCORINGS`) score entries one at a time each, in the
scorer's sandbox (backends/competition_sandbox.py), so a burst of entries before a
deadline waits in line instead of starving the controller. A code competition
that asks for a GPU runs each notebook on one device of its type
(competition_gpus.py); while none is free the entry stays queued, "waiting for a
GPU", and is offered again a moment later, so other entries are not held up.

What a student sees of a scoring: its state, its public score, the private
score once the competition is over, and, when their file was wrong, the
sentence core/competition.py wrote about their file. When the scorer itself
failed they read that it failed; its output (`log`) is for the course's
managers only, since a teacher's script may print anything, solution rows
included.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from ...backends.competition_notebook_run import NotebookRun, NotebookRunner
from ...backends.competition_sandbox import Sandboxed, ScorerSandbox
from ...backends.local_limits import Limiter, instance_id
from ...core import competition as rules
from ...core.errors import Conflict, Forbidden, Invalid
from ...core.metrics import CUSTOM
from ...core.roles import Principal
from ...store.competition_models import (
    Competition,
    CompetitionEntry,
    CompetitionTeam,
)
from ...store.db import Database
from ...store.models import Group, User
from .. import audit
from ..clock import Clock
from . import files
from .runs import CodeRuns, check_notebook
from .schemas import CompetitionEntryOut, CompetitionEntryWithLog
from .service import CompetitionService

log = logging.getLogger("cgu_lab.competitions")

PARALLEL_SCORINGS = 2
GPU_RETRY = 1.0  # seconds before an entry waiting for a GPU is offered again
COUNTED = ("queued", "scoring", "scored")
SCORER_FAILED = (
    "the scorer could not score this file; this is not a problem of your file's "
    "format, and your course's staff can see what went wrong"
)


class EntryService:
    def __init__(self, db: Database, settings, competitions: CompetitionService, gpus=None) -> None:
        """`gpus`: the runs' GPUs (competition_gpus.RunGpus); none: runs never take one."""
        self.db = db
        self.settings = settings
        self.competitions = competitions
        separate = None if settings.run_as == "auto" else settings.run_as == "per-user"
        # Code runs get cgroups of their own beside the notebooks' (competition_sandbox.py).
        limiter = Limiter(enabled=settings.use_cgroups)
        self.sandbox = ScorerSandbox(self._instance, separate, limiter)
        self.code = CodeRuns(db, settings, NotebookRunner(self.sandbox), gpus)
        self._queue: asyncio.Queue[int] = asyncio.Queue()

    def _instance(self) -> str:
        return instance_id(self.settings.data_dir / "instance-id")

    @property
    def clock(self) -> Clock:
        """The platform's clock, as the competitions see it."""
        return self.competitions.clock

    # -- submitting ------------------------------------------------------------------

    def _mine(self, competition: Competition, actor: Principal, team):
        """The condition selecting the entries of the actor's participant (them or their team)."""
        if team is not None:
            return CompetitionEntry.team_id == team.id
        return (CompetitionEntry.user_id == actor.id) & (CompetitionEntry.team_id.is_(None))

    def _check_file(self, competition: Competition, data: bytes) -> datetime:
        """Refuse a file too large, out of time or with nothing to score it; returns the time."""
        if len(data) > competition.max_bytes:
            raise Invalid(
                f"a predictions file may have at most {competition.max_bytes} bytes; "
                f"yours has {len(data)}"
            )
        now = self.clock.now()
        rules.check_open(
            competition.title or competition.name,
            competition.starts_at,
            competition.ends_at,
            now,
        )
        code = competition.kind == "code"
        if code:
            check_notebook(data)
        present = competition.files or {}
        if (
            "solution" not in present
            or (competition.metric == CUSTOM and "script" not in present)
            or (code and "inputs" not in present)
        ):
            raise Conflict("the competition is not ready for entries yet (no solution uploaded)")
        return now

    async def _check_limits(
        self, session: AsyncSession, competition: Competition, actor: Principal, now: datetime
    ) -> CompetitionTeam | None:
        """Check the entry limits with the submitter's rows locked, so that entries sent at once
        count each other; returns the submitter's team (None without teams)."""
        await session.execute(select(User.id).where(User.id == actor.id).with_for_update())
        team = await self.competitions.team_of(session, competition, actor.id)
        if team is not None:
            await session.execute(
                select(CompetitionTeam.id).where(CompetitionTeam.id == team.id).with_for_update()
            )
        counted = (
            CompetitionEntry.competition_id == competition.id,
            CompetitionEntry.state.in_(COUNTED),
            self._mine(competition, actor, team),
        )
        total = await session.scalar(select(func.count(CompetitionEntry.id)).where(*counted))
        today = await session.scalar(
            select(func.count(CompetitionEntry.id)).where(
                *counted, CompetitionEntry.submitted_at >= rules.day_start(now)
            )
        )
        rules.check_limits(today or 0, total or 0, competition.per_day, competition.total, now)
        return team

    async def submit(
        self, actor: Principal, competition_id: int, file_name: str, data: bytes, note: str = ""
    ) -> CompetitionEntryOut:
        if len(note) > 2000:
            raise Invalid("a note may have at most 2000 characters")
        if not data:
            raise Invalid("the predictions file is empty")
        async with self.db.session() as session:
            competition, group, _ = await self.competitions.load(session, actor, competition_id)
            now = self._check_file(competition, data)
            code = competition.kind == "code"
            team = await self._check_limits(session, competition, actor, now)
            digest = hashlib.sha256(data).hexdigest()
            entry = CompetitionEntry(
                competition_id=competition.id,
                user_id=actor.id,
                team_id=team.id if team is not None else None,
                note=note,
                file_name=file_name[:255],
                bytes=len(data),
                content_hash=digest,
                state="queued",
                submitted_at=now,
            )
            session.add(entry)
            await session.flush()
            suffix = ".ipynb" if code else ".csv"
            target = files.entry_path(self.settings.data_dir, competition.id, entry.id, suffix)
            await asyncio.to_thread(files.write, self.settings.data_dir, target, data)
            audit.record(
                session,
                actor.name,
                "competition.entry",
                f"competition:{group.name}/{competition.name}",
                entry=entry.id,
                team=team.name if team is not None else None,
                bytes=len(data),
                sha256=digest,
            )
            receipt = self._out(entry, actor.name, team.name if team else None, show_private=False)
        self._queue.put_nowait(receipt.id)
        return receipt

    @staticmethod
    def _out(
        entry: CompetitionEntry, user: str, team: str | None, show_private: bool
    ) -> CompetitionEntryOut:
        return CompetitionEntryOut(
            id=entry.id,
            competition_id=entry.competition_id,
            user=user,
            team=team,
            file_name=entry.file_name,
            bytes=entry.bytes,
            content_hash=entry.content_hash,
            note=entry.note,
            state=entry.state,
            message=entry.message,
            public_score=entry.public_score,
            private_score=entry.private_score if show_private else None,
            submitted_at=entry.submitted_at,
            scored_at=entry.scored_at,
            gpu_type=entry.gpu_type,
        )

    # -- scoring -----------------------------------------------------------------------

    async def run(self) -> None:
        """Score queued entries, those left queued by a previous run first (a loop of root.py)."""
        await self.code.gpus.forget_all()
        async with self.db.session() as session:
            waiting = await session.scalars(
                select(CompetitionEntry.id)
                .where(CompetitionEntry.state.in_(("queued", "scoring")))
                .order_by(CompetitionEntry.id)
            )
            for entry_id in waiting.all():
                self._queue.put_nowait(entry_id)
        workers = [asyncio.create_task(self._work()) for _ in range(PARALLEL_SCORINGS)]
        try:
            await asyncio.gather(*workers)
        finally:
            for worker in workers:
                worker.cancel()

    async def drain(self) -> None:
        """Wait until every queued entry is scored (tests, benchmarks)."""
        await self._queue.join()

    async def _work(self) -> None:
        while True:
            entry_id = await self._queue.get()
            try:
                if not await self.score(entry_id):  # waiting for a GPU: its turn comes again
                    await self.clock.sleep(GPU_RETRY)
                    self._queue.put_nowait(entry_id)
            except Exception:  # the entry stays "scoring"; the next start retries it
                log.exception("scoring entry %s failed", entry_id)
            finally:
                self._queue.task_done()

    async def score(self, entry_id: int) -> bool:
        """Score an entry; False: its run waits for a GPU, and it is queued again."""
        async with self.db.session() as session:
            entry = await session.get(CompetitionEntry, entry_id)
            if entry is None or entry.state not in ("queued", "scoring"):
                return True
            competition = await session.get(Competition, entry.competition_id)
            entry.state = "scoring"
            job = {
                "metric": competition.metric,
                "id_column": competition.id_column,
                "target_column": competition.target_column,
                "salt": competition.split_salt,
                "fraction": competition.public_fraction,
            }
            limits = (competition.time_limit, competition.memory_limit)
            code = competition.kind == "code"
            max_bytes, gpu_type = competition.max_bytes, competition.gpu_type
            group = await session.get(Group, competition.group_id)
            target = f"competition:{group.name}/{competition.name}"
        data_dir = self.settings.data_dir
        ran = None
        if code:
            ran = await self.code.run(competition.id, entry_id, *limits, max_bytes, gpu_type)
            if ran is None:
                return False
        if ran is not None and not ran.ok:
            await self._failed_run(entry_id, target, ran.student, ran.log)
            return True
        script = (
            files.path_of(data_dir, competition.id, "script") if job["metric"] == CUSTOM else None
        )
        result = await self.sandbox.run(
            job,
            files.path_of(data_dir, competition.id, "solution"),
            files.entry_path(data_dir, competition.id, entry_id),
            script,
            *limits,
        )
        await self._record_score(entry_id, target, ran, result)
        return True

    async def _record_score(
        self, entry_id: int, target: str, ran: NotebookRun | None, result: Sandboxed
    ) -> None:
        """The scorer's verdict: a score, the student's mistake, or the scorer's own failure."""
        answer = result.answer or {}
        async with self.db.session() as session:
            entry = await session.get(CompetitionEntry, entry_id)
            competition_id = entry.competition_id
            entry.scored_at = self.clock.now()
            parts = (ran.log if ran else "", answer.get("log", ""), result.log)
            entry.log = "\n".join(part for part in parts if part)
            if answer.get("ok"):
                entry.state = "scored"
                entry.public_score, entry.private_score = answer["public"], answer["private"]
                entry.message = ""
            elif answer.get("kind") == "prediction":
                entry.state, entry.message = "failed", str(answer.get("message", ""))[:2000]
            else:
                entry.state = "error"
                entry.message = (
                    "the scorer took longer than the competition allows; " + SCORER_FAILED
                    if result.timed_out
                    else SCORER_FAILED
                )
            audit.record(
                session,
                audit.SYSTEM,
                "competition.scored",
                target,
                entry=entry_id,
                state=entry.state,
                public_score=entry.public_score,
                private_score=entry.private_score,
            )
        self.competitions.boards.changed(competition_id)  # committed: rank the board again

    async def _failed_run(self, entry_id: int, target: str, student: str, log_text: str) -> None:
        """A code entry whose notebook failed: the student's sentence, the staff's log."""
        async with self.db.session() as session:
            entry = await session.get(CompetitionEntry, entry_id)
            entry.scored_at = self.clock.now()
            entry.state, entry.message, entry.log = "failed", student[:2000], log_text
            audit.record(
                session, audit.SYSTEM, "competition.scored", target, entry=entry_id, state="failed"
            )

    # -- reading -----------------------------------------------------------------------

    async def history(self, actor: Principal, competition_id: int) -> list[CompetitionEntryOut]:
        """My entries (my team's, with teams), newest first."""
        async with self.db.session() as session:
            competition, _, manage = await self.competitions.load(session, actor, competition_id)
            team = await self.competitions.team_of(session, competition, actor.id)
            closed = self.clock.now() >= competition.ends_at
            rows = (
                await session.execute(
                    select(CompetitionEntry, User.name)
                    .join(User, User.id == CompetitionEntry.user_id)
                    .where(
                        CompetitionEntry.competition_id == competition.id,
                        or_(
                            self._mine(competition, actor, team),
                            CompetitionEntry.user_id == actor.id,
                        ),
                    )
                    .order_by(CompetitionEntry.id.desc())
                )
            ).all()
            return [
                self._out(e, name, team.name if team else None, closed or manage)
                for e, name in rows
            ]

    async def everything(
        self, actor: Principal, competition_id: int
    ) -> list[CompetitionEntryWithLog]:
        """Every entry with the scorer's output, for the course's managers."""
        async with self.db.session() as session:
            competition, group, manage = await self.competitions.load(
                session, actor, competition_id
            )
            if not manage:
                raise Forbidden(f"only the managers of course '{group.name}' see every entry")
            rows = (
                await session.execute(
                    select(CompetitionEntry, User.name, CompetitionTeam.name)
                    .join(User, User.id == CompetitionEntry.user_id)
                    .outerjoin(CompetitionTeam, CompetitionTeam.id == CompetitionEntry.team_id)
                    .where(CompetitionEntry.competition_id == competition.id)
                    .order_by(CompetitionEntry.id.desc())
                )
            ).all()
        return [
            CompetitionEntryWithLog(**dict(self._out(e, name, team, True)), log=e.log)
            for e, name, team in rows
        ]

    async def export_csv(self, actor: Principal, competition_id: int) -> str:
        entries = await self.everything(actor, competition_id)
        return rules.entries_csv(entry.model_dump() for entry in entries)

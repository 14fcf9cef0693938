"""The composition root: one object holding the controller's parts.

Built once per process from the settings; the web app, the CLI and the tests
all reach the database, the backend and the services through it.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import func, select

from ..backends import create_backend
from ..backends.base import Backend
from ..core.roles import Role
from ..store.db import Database
from ..store.models import CullPolicyRow, Quota, User
from . import audit
from .accounts.auth import Authenticator
from .accounts.security import hash_password, new_password
from .class_sessions.service import ClassSessions
from .clock import Clock
from .competitions.entries import EntryService
from .competitions.gpus import RunGpus
from .competitions.leaderboards import Leaderboards
from .competitions.service import CompetitionService
from .environments import catalog
from .environments.builds import EnvironmentBuilds
from .help_queue.service import HelpQueue
from .monitoring.loop_lag import LoopLag
from .monitoring.service import Monitor
from .notebooks import liveness
from .notebooks.culler import DEFAULT_POLICY, Culler
from .notebooks.reader import NotebookReader
from .notebooks.service import NotebookService
from .progress import ProgressBroker
from .proxy.origin_auth import OriginAuth
from .publishing.service import Publishing
from .quotas import service as quotas
from .quotas.mirror import QuotaMirror
from .school_login.service import SchoolLogin
from .settings import Settings
from .sharing.service import ShareService
from .teaching.assignments import AssignmentService
from .teaching.lab_files import LabFileService
from .teaching.live import LiveService
from .teaching.student_view import StudentViewService
from .teaching.templates import TemplateService
from .training.service import TrainingService

log = logging.getLogger("cgu_lab.platform")

FIRST_ADMIN = "admin"


class Platform:
    def __init__(
        self, settings: Settings, backend: Backend | None = None, clock: Clock | None = None
    ) -> None:
        """`backend`: an instance to use instead of the one `settings.backend` names
        (tests pass a backend whose notebook servers are not real processes). `clock`:
        the one clock every service reads the time from (tests pass a `FakeClock`)."""
        self.settings = settings
        self.clock = clock or Clock()
        self.db = Database(settings.db_url, settings.db_busy_timeout)
        self.backend = backend or create_backend(settings.backend, settings)
        self.backend.share_database(self.db)
        self.broker = ProgressBroker(self.clock)
        self.environments = EnvironmentBuilds(
            self.db, self.broker, settings, self.backend.name, self.clock
        )
        self.auth = Authenticator(self.db, settings.session_hours, self.clock)
        self.origin_auth = OriginAuth(self.auth, settings.secrets_dir, self.clock)
        self.school_login = SchoolLogin(
            self.db,
            self.auth,
            settings,
            self.clock,
            getattr(getattr(self.backend, "accounts", None), "clash", None),
        )
        self.templates = TemplateService(self.db, self.backend, settings)
        self.notebooks = NotebookService(
            self.db, self.backend, self.broker, self.auth, settings, self.templates, self.clock
        )
        self.shares = ShareService(self.db, self.notebooks, self.clock)
        self.help_queue = HelpQueue(self.db, self.shares, self.notebooks, self.clock)
        self.reader = NotebookReader()
        self.publishing = Publishing(
            self.db,
            self.shares,
            self.notebooks,
            settings.origins,
            self.clock,
            self.reader,
            anonymous_pace=(settings.demo_public_rate, settings.demo_public_burst),
        )
        self.assignments = AssignmentService(
            self.db, self.backend, self.notebooks, settings, self.clock
        )
        self.lab_files = LabFileService(
            self.db,
            self.backend,
            self.broker,
            self.templates,
            self.notebooks,
            settings,
            self.clock,
        )
        self.student_view = StudentViewService(
            self.db, self.assignments, self.notebooks, self.clock
        )
        self.live = LiveService(self.db, self.notebooks, self.shares, self.clock)
        self.class_sessions = ClassSessions(self.db, self.notebooks, settings, self.clock)
        self.notebooks.admission.held = self.class_sessions.check_start
        self.training = TrainingService(self.db, self.backend, self.notebooks.gpus, self.clock)
        self.competitions = CompetitionService(self.db, settings, self.clock)
        run_gpus = RunGpus(self.db, self.notebooks.gpus, self.notebooks.admission.queue_drain)
        self.competition_entries = EntryService(self.db, settings, self.competitions, run_gpus)
        self.leaderboards = Leaderboards(self.db, self.competitions)
        self.culler = Culler(
            self.db, self.notebooks, self.reader, settings.cull_interval, self.clock
        )
        self.monitor = Monitor(self.db, self.notebooks, self.reader, settings, self.clock)
        self.quota_mirror = QuotaMirror(self.db, self.backend, settings.quota_sync_interval)
        self.loop_lag = LoopLag()
        self.monitor.registry.register(self.loop_lag.histogram)
        self._loops: list[asyncio.Task] = []

    async def open(self) -> None:
        """Migrate, seed a new installation, and find running notebooks again."""
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        await self.db.upgrade()
        await self.backend.open()
        async with self.db.session() as session:
            await catalog.ensure_defaults(session)
            if not await session.scalar(
                select(func.count()).select_from(Quota).where(Quota.scope == "default")
            ):
                limits = quotas.DEFAULT_LIMITS
                session.add(
                    Quota(
                        scope="default",
                        cpu_milli=limits.cpu_milli,
                        memory=limits.memory,
                        gpus=dict(limits.gpus or {}),
                        notebooks=limits.notebooks,
                        updated_by=audit.SYSTEM,
                    )
                )
        async with self.db.session() as session:
            await self.notebooks.gpus.refresh(session)
            if not await session.scalar(
                select(func.count())
                .select_from(CullPolicyRow)
                .where(CullPolicyRow.group_id.is_(None))
            ):
                policy = DEFAULT_POLICY
                session.add(
                    CullPolicyRow(
                        idle_minutes=policy.idle_minutes,
                        warn_minutes=policy.warn_minutes,
                        max_lifetime_hours=policy.max_lifetime_hours,
                        updated_by=audit.SYSTEM,
                    )
                )
        result = await self.notebooks.lifecycle.reconcile()
        if result.adopted or result.stopped:
            log.info("notebooks adopted: %s; stopped: %s", result.adopted, result.stopped)
        await self.reader.open()
        await self.notebooks.admission.drain_queue()
        self._loops = [
            asyncio.create_task(self._housekeep()),
            asyncio.create_task(self.culler.run()),
            asyncio.create_task(self.monitor.run()),
            asyncio.create_task(self._dispatch_training()),
            asyncio.create_task(
                liveness.watch(self.notebooks, self.clock, self.settings.liveness_interval)
            ),
            asyncio.create_task(self.quota_mirror.run()),
            asyncio.create_task(self.competition_entries.run()),
            asyncio.create_task(self.school_login.run()),
            asyncio.create_task(self.class_sessions.run()),
            asyncio.create_task(self.loop_lag.run()),
        ]

    async def close(self) -> None:
        for loop in self._loops:
            loop.cancel()
        for loop in self._loops:
            try:
                await loop
            except asyncio.CancelledError:
                pass
            except Exception:  # a loop that died earlier (a locked database) must not stop
                log.exception("a background loop had failed")  # the rest of the shutdown
        await self.environments.shutdown()
        await self.notebooks.lifecycle.shutdown()
        await self.reader.close()
        await self.backend.close()
        await self.db.close()

    async def _housekeep(self) -> None:
        while True:
            await self.clock.sleep(3600)
            try:
                await self.auth.purge_expired()
            except Exception:  # keep the loop alive; the next hour tries again
                log.exception("housekeeping failed")

    async def _dispatch_training(self) -> None:
        """Queued training jobs start when their GPUs are free; look as often as the culler."""
        if not self.backend.describe().get("training_jobs"):
            return
        while True:
            await self.clock.sleep(self.settings.cull_interval)
            try:
                await self.training.dispatch()
            except Exception:  # the next round tries again
                log.exception("dispatching training jobs failed")

    async def ensure_first_admin(self) -> str | None:
        """Create the first administrator on an empty installation; return its one-time password."""
        async with self.db.session() as session:
            if await session.scalar(select(func.count()).select_from(User)):
                return None
            password = new_password()
            session.add(
                User(
                    name=FIRST_ADMIN,
                    display_name="Administrator",
                    role=Role.ADMIN.value,
                    password_hash=await hash_password(password),
                    must_change_password=True,
                )
            )
            audit.record(
                session,
                audit.SYSTEM,
                "user.created",
                f"user:{FIRST_ADMIN}",
                role="admin",
                first=True,
            )
        return password

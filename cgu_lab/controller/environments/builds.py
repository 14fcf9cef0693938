"""Environments built from recipes: requests, the background build, its record.

An admin asks for an environment from a recipe (core/environments.py); this
service records it as "building", runs the build in the background
(backends/local_environments.py does the machine's part: a venv layered on
the platform, then pip) and records the outcome: "ready" with its prefix,
packages and size, or "failed" with the last lines of the log. Notebooks may
use it only once it is ready (catalog.require_runnable).

Each build goes to a new `<data>/environments/<name>/build-<time>/` and the
environment's prefix is swapped to it only on success, so a failed rebuild
leaves the previous build serving; the old directory is then removed (a
rebuild is refused while notebooks of the environment run).

Progress is streamed through the controller's ProgressBroker under
("environment", name), one event per line of pip's output, and the whole log
is kept in `<data>/logs/environments/<name>.log`. One build runs at a time: a
second request meanwhile is refused, which keeps a two-core machine usable. A
shared pip cache ($CGU_LAB_PIP_CACHE, default `<data>/pip-cache`) makes
repeated builds fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import shutil
from pathlib import Path

from sqlalchemy import select

from ...backends import local_environments
from ...core import apps as app_rules
from ...core import environments as rules
from ...core import roles
from ...core.errors import Conflict, Invalid, NotSupported
from ...core.lifecycle import HOLDING
from ...core.names import check_label
from ...store.db import Database
from ...store.models import Environment, Notebook, User
from .. import audit
from ..clock import Clock
from ..progress import ProgressBroker, ProgressEvent
from . import catalog

log = logging.getLogger("cgu_lab.environments")


class EnvironmentBuilds:
    """Builds, rebuilds and removes environments made from recipes (local backend)."""

    def __init__(
        self, db: Database, broker: ProgressBroker, settings, backend_name: str, clock: Clock
    ) -> None:
        """`clock`: when builds start and end, and how long they took."""
        self.db = db
        self.clock = clock
        self.broker = broker
        self.backend_name = backend_name
        self.root = Path(settings.data_dir) / "environments"
        self.logs = Path(settings.data_dir) / "logs" / "environments"
        cache = os.environ.get("CGU_LAB_PIP_CACHE") or Path(settings.data_dir) / "pip-cache"
        self.cache = Path(cache).absolute()
        self._task: asyncio.Task | None = None
        # The environment being built, or reserved for a build about to start.
        self._busy = ""

    @staticmethod
    def key(name: str) -> tuple[str, str]:
        return ("environment", name)

    # -- requests ------------------------------------------------------------

    def _reserve(self, actor: roles.Principal, name: str) -> None:
        """Check that `actor` may build now, and hold the one build slot for `name`."""
        roles.require_admin(actor, "build environments")
        if self.backend_name != "local":
            raise NotSupported(
                "building environments on this machine needs the local backend; this platform "
                f"runs the {self.backend_name} backend, whose environments are container images "
                "(declare one with its image instead)"
            )
        if self._busy:
            raise Conflict(
                f"environment '{self._busy}' is being built; one build runs at a time, "
                "so start this one when it is done"
            )
        self._busy = name

    async def declare(
        self,
        actor: roles.Principal,
        recipe: rules.Recipe,
        name: str = "",
        display_name: str = "",
        description: str = "",
        is_default: bool = False,
    ) -> Environment:
        """Record a new environment as "building" and start its build in the background.

        With `is_default` it becomes the default environment once it is ready.
        """
        name = name or rules.default_name(recipe.kind)
        if not name:
            raise Invalid("give the environment a name (custom recipes have none of their own)")
        name = check_label(name, "environment")
        self._reserve(actor, name)
        try:
            environment = await self._record_new(actor, recipe, name, display_name, description)
        except BaseException:
            self._busy = ""
            raise
        self._start(name, recipe, is_default)
        return environment

    async def _record_new(
        self,
        actor: roles.Principal,
        recipe: rules.Recipe,
        name: str,
        display_name: str,
        description: str,
    ) -> Environment:
        record = recipe.as_record()
        # The recipe's apps (a database, R's RStudio), as an admin would declare them.
        apps = app_rules.check_apps(list(recipe.apps)) if recipe.apps is not None else None
        main = recipe.main_packages or recipe.system_packages
        async with self.db.session() as session:
            if await session.scalar(select(Environment.id).where(Environment.name == name)):
                raise Conflict(
                    f"there is already an environment '{name}'; rebuild it or choose another name"
                )
            environment = Environment(
                name=name,
                display_name=display_name or recipe.title,
                description=description or f"{recipe.title}: {', '.join(main)}",
                apps=apps,
                image="",
                local_prefix="",
                state=rules.BUILDING,
                recipe=record,
                message="Build requested",
                built_by=actor.name,
                build_started_at=self.clock.now(),
            )
            session.add(environment)
            audit.record(
                session,
                actor.name,
                "environment.build_requested",
                f"environment:{name}",
                recipe=record,
            )
        return environment

    async def rebuild(
        self, actor: roles.Principal, name: str, make_default: bool = False
    ) -> Environment:
        """Build a built environment again from its recipe (newest versions of its packages)."""
        self._reserve(actor, name)
        try:
            environment = await self._mark_rebuilding(actor, name)
        except BaseException:
            self._busy = ""
            raise
        self._start(name, rules.recipe_from_record(environment.recipe), make_default)
        return environment

    async def _mark_rebuilding(self, actor: roles.Principal, name: str) -> Environment:
        async with self.db.session() as session:
            environment = await catalog.get_environment(session, name)
            if environment.recipe is None:
                raise Invalid(
                    f"environment '{name}' was declared by hand (an image or a prefix), "
                    "not built from a recipe; only built environments can be rebuilt"
                )
            running = await self._running_users(session, name)
            if running:
                raise Conflict(
                    f"environment '{name}' is in use by running notebooks of "
                    f"{', '.join(running)}; they must stop before it is rebuilt",
                    users=running,
                )
            rules.recipe_from_record(environment.recipe)  # still a valid recipe
            environment.state = rules.BUILDING
            environment.message = "Rebuild requested"
            environment.built_by = actor.name
            environment.build_started_at = self.clock.now()
            audit.record(
                session, actor.name, "environment.rebuild_requested", f"environment:{name}"
            )
        return environment

    async def delete(self, actor: roles.Principal, name: str) -> None:
        """Delete an unused environment, and its files when the platform built them."""
        async with self.db.session() as session:
            environment = await catalog.get_environment(session, name)
            built = environment.recipe is not None
            await catalog.delete_environment(session, actor, name)
        if built:
            await asyncio.to_thread(shutil.rmtree, self.root / name, True)

    @staticmethod
    async def _running_users(session, name: str) -> list[str]:
        rows = await session.scalars(
            select(User.name)
            .join(Notebook, Notebook.owner_id == User.id)
            .where(Notebook.environment == name, Notebook.state.in_([s.value for s in HOLDING]))
            .distinct()
        )
        return sorted(rows.all())

    # -- the background build ---------------------------------------------------

    def _start(self, name: str, recipe: rules.Recipe, make_default: bool) -> None:
        self.broker.begin(self.key(name), self._event(2, "Build requested"))
        self._task = asyncio.create_task(self._run(name, recipe, make_default))
        self._task.add_done_callback(self._released)

    def _released(self, task: asyncio.Task) -> None:
        if task is self._task:
            self._busy = ""

    async def wait(self) -> None:
        """Until the build under way (if any) is over."""
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._task)

    async def shutdown(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    def _event(
        self, percent: int, message: str, state: str = rules.BUILDING, **done
    ) -> ProgressEvent:
        return ProgressEvent("build", percent, message, state, **done)

    async def _run(self, name: str, recipe: rules.Recipe, make_default: bool) -> None:
        key = self.key(name)
        local = self.clock.now().astimezone()  # the machine's time zone, as in its other logs
        stamp = f"{local:%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"
        target = self.root / name / f"build-{stamp}"
        lines: list[str] = []
        started = self.clock.monotonic()
        percent = 2

        def say(message: str, at: int | None = None) -> None:
            nonlocal percent
            percent = max(percent, at if at is not None else percent)
            lines.append(message)
            self.broker.publish(key, self._event(percent, message))

        try:
            await asyncio.to_thread(self._prepare_dirs, name, target)
            log_file = await asyncio.to_thread(open, self.logs / f"{name}.log", "a")
            with log_file:
                log_file.write(f"\n--- build of {name} at {local:%Y-%m-%d %H:%M:%S}\n")

                def on_line(line: str, at: int | None = None) -> None:
                    log_file.write(line + "\n")
                    log_file.flush()
                    say(line, at)

                packages, size = await local_environments.build(target, recipe, self.cache, on_line)
            seconds = self.clock.monotonic() - started
            own = sum(1 for p in packages if p["own"])
            summary = (
                f"Built in {seconds:.0f} s: {own} packages, {local_environments.size_text(size)}"
            )
            await self._finish_ready(name, target, packages, size, summary, lines, make_default)
        except asyncio.CancelledError:
            await asyncio.to_thread(shutil.rmtree, target, True)
            with contextlib.suppress(Exception):
                await self._finish_failed(name, "the build was cancelled", lines)
            raise
        except Exception as error:
            if not isinstance(error, (local_environments.BuildFailed, OSError)):
                log.exception("building environment %s failed", name)
            await asyncio.to_thread(shutil.rmtree, target, True)
            kept = await self._finish_failed(name, str(error) or type(error).__name__, lines)
            state = rules.READY if kept else rules.FAILED
            failed = f"The build failed: {error}"
            self.broker.publish(key, self._event(100, failed, state, done=True, ok=False))
            return
        log.info("environment %s: %s", name, summary)
        self.broker.publish(key, self._event(100, summary, rules.READY, done=True, ok=True))

    def _prepare_dirs(self, name: str, target: Path) -> None:
        for directory, mode in ((self.root, 0o711), (self.root / name, 0o755), (self.logs, 0o700)):
            directory.mkdir(parents=True, exist_ok=True)
            directory.chmod(mode)
        self.cache.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target, ignore_errors=True)

    # -- recording the outcome ---------------------------------------------------

    async def _finish_ready(
        self,
        name: str,
        target: Path,
        packages: list[dict],
        size: int,
        summary: str,
        lines: list[str],
        make_default: bool,
    ) -> None:
        async with self.db.session() as session:
            environment = await catalog.get_environment(session, name)
            previous = environment.local_prefix
            environment.local_prefix = str(target)
            environment.state = rules.READY
            environment.packages = packages
            environment.size = size
            environment.message = summary
            environment.log_tail = rules.tail(lines)
            environment.built_at = self.clock.now()
            # A notebook that slipped in while the rebuild began keeps its tree;
            # deleting the environment later removes every build of it.
            in_use = bool(await self._running_users(session, name))
            if make_default:
                await catalog.make_default(session, environment)
            audit.record(
                session,
                "system",
                "environment.built",
                f"environment:{name}",
                prefix=str(target),
                packages=len(packages),
                size=size,
                default=make_default,
            )
        earlier = Path(previous) if previous else None
        if earlier and earlier.parent == self.root / name and earlier != target and not in_use:
            await asyncio.to_thread(shutil.rmtree, earlier, True)

    async def _finish_failed(self, name: str, reason: str, lines: list[str]) -> bool:
        """Record the failure; True when an earlier build of the environment keeps serving."""
        async with self.db.session() as session:
            environment = await catalog.get_environment(session, name)
            kept = bool(environment.local_prefix)
            environment.state = rules.READY if kept else rules.FAILED
            environment.message = (
                f"the rebuild failed ({reason}); notebooks keep the earlier build"
                if kept
                else f"the build failed: {reason}"
            )[:2000]
            environment.log_tail = rules.tail(lines)
            audit.record(
                session,
                "system",
                "environment.build_failed",
                f"environment:{name}",
                reason=reason[:500],
                kept_earlier_build=kept,
            )
        log.warning("environment %s: the build failed: %s", name, reason)
        return kept

"""The lifecycle: starting, stopping, resizing and restarting one notebook.

It exists apart from the notebook service (which records what notebooks
should be) because carrying a change out takes time: a start is decided in one
transaction (permission, quota, GPU admission, state `starting`) and then run
by a background task that seeds files, launches the server and streams progress
to the page. Nothing half-done survives a failure: the task stops whatever it
launched and the notebook returns to `stopped` with the reason in its message.

What a start or a stop writes in its deciding transaction (state, audit event,
stop record) is in notebook_transitions; this module decides and carries out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass

from sqlalchemy import select

from ...backends.base import Backend, BackendError, NotebookSpec
from ...core import roles
from ...core.errors import Conflict, DomainError, Forbidden, NotFound
from ...core.lifecycle import HOLDING, State, require_move
from ...store.db import Database, unavailable
from ...store.models import Notebook, User
from .. import audit
from ..clock import Clock
from ..environments import catalog
from ..progress import ProgressBroker, ProgressEvent
from ..quotas import service as quotas
from . import transitions
from .admission import RECLAIM_NOTE, NotebookAdmission
from .pod_defaults import chosen as chosen_pod_defaults
from .routes import RouteTable
from .schemas import Reconciled
from .seed import copy_seed
from .specs import NotebookSpecs, load_notebook, validated_resources

log = logging.getLogger("cgu_lab.notebooks")

# A resize usually comes from the notebook's own server (the lab's Resize
# dialog); its answer must leave the server before the server is stopped.
# New requests already see the notebook as stopping, so this only lets the
# ones in flight finish.
RESTART_GRACE_SECONDS = 1.0


@dataclass
class Changes:
    """Requested resource changes of a resize; None leaves a value as it is.
    `pod_defaults` names the Kubeflow PodDefaults ("configurations") to run with."""

    cpu: str | float | None = None
    memory: str | int | None = None
    gpu_type: str | None = None
    gpus: int | None = None
    pod_defaults: list[str] | None = None


class NotebookLifecycle:
    """Carries out one notebook's start, stop and resize. Given the database, the backend,
    the settings, the route table, the specs (what the backend is told), the progress
    broker, the sessions (a start mints the notebook's token) and the admission."""

    def __init__(
        self,
        db: Database,
        backend: Backend,
        settings,
        routes: RouteTable,
        specs: NotebookSpecs,
        broker: ProgressBroker,
        auth,
        admission: NotebookAdmission,
        clock: Clock,
    ) -> None:
        self.db = db
        self.clock = clock
        self.backend = backend
        self.settings = settings
        self.routes = routes
        self.specs = specs
        self.broker = broker
        self.auth = auth
        self.admission = admission
        self._tasks: dict[int, asyncio.Task] = {}

    # -- progress and background tasks ------------------------------------------

    def _publish(
        self,
        nb_id: int,
        operation: str,
        percent: int,
        message: str,
        state: State,
        done: bool = False,
        ok: bool | None = None,
        url: str | None = None,
        begin: bool = False,
    ) -> None:
        event = ProgressEvent(operation, percent, message, state.value, done, ok, url)
        (self.broker.begin if begin else self.broker.publish)(nb_id, event)

    def _spawn(self, nb_id: int, work) -> None:
        task = asyncio.create_task(work)
        self._tasks[nb_id] = task
        task.add_done_callback(lambda done: self._done(nb_id, done))

    def _done(self, nb_id: int, task: asyncio.Task) -> None:
        """Forget a finished operation; one that ended in an exception is logged now, not
        when the task is collected (a start's failure left unseen is a notebook that
        says "starting" for ever)."""
        if self._tasks.get(nb_id) is task:
            self._tasks.pop(nb_id, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("notebook %s: its operation failed", nb_id, exc_info=task.exception())

    def busy(self, nb_id: int) -> bool:
        """A start, stop or resize of this notebook is under way."""
        return nb_id in self._tasks

    async def wait(self, nb_id: int) -> None:
        """Wait for the notebook's current operation (for API clients that ask to)."""
        task = self._tasks.get(nb_id)
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)

    async def shutdown(self) -> None:
        """Controller exit: finish nothing half-way; notebooks themselves keep running."""
        for task in list(self._tasks.values()):
            task.cancel()
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # -- start -------------------------------------------------------------

    async def start(
        self, actor: roles.Principal | None, owner: str, name: str, from_queue: bool = False
    ) -> Notebook:
        """Decide the start (quota, GPUs) and hand it to a background task.

        Without a free GPU the notebook joins the queue for its GPU type (after
        idle notebooks are stopped to make room, when some can be); the queue
        is served first come, first served whenever something stops.
        """
        victims: list[tuple[int, str, str]] = []
        async with self.db.session() as session:
            nb, owner_user = await load_notebook(session, owner, name, lock=True)
            if actor is not None and not roles.may_manage_notebook(actor, nb.owner_id):
                raise NotFound(f"{owner} has no notebook '{name}'")
            if not owner_user.active:
                raise Forbidden(f"the account '{owner}' is deactivated")
            state = State(nb.state)
            if state in (State.STARTING, State.RUNNING) or (
                state is State.QUEUED and not from_queue
            ):
                return nb
            if from_queue and state is not State.QUEUED:
                return nb
            require_move(state, State.STARTING, name)
            env = await catalog.get_environment(session, nb.environment)
            catalog.require_runnable(env, self.backend.name, nb.image)
            await quotas.enforce_start(session, nb, owner_user)
            admission = await self.admission.admit(session, nb)
            who = actor.name if actor else audit.SYSTEM
            if admission.devices is not None:
                await transitions.grant_start(session, nb, owner, admission, who, self.clock.now())
            else:
                victims = await transitions.enqueue(
                    session, nb, owner, state, admission, who, self.clock.now()
                )
        self.routes.update(nb, owner)
        if nb.state == State.STARTING.value:
            self._publish(nb.id, "start", 5, "Start requested", State.STARTING, begin=True)
            self._spawn(nb.id, self._run_start(nb.id, owner, nb.name))
        else:
            self._publish(
                nb.id, "start", 3, nb.message, State.QUEUED, begin=state is not State.QUEUED
            )
        for victim_id, victim_owner, victim_name in victims:
            self._begin_stop(victim_id, victim_owner, victim_name, RECLAIM_NOTE)
        return nb

    async def _start_spec(self, nb_id: int) -> tuple[Notebook, str, NotebookSpec]:
        """The notebook, its owner and its spec, with the server's new token. Only the
        token is written: the rest is read outside the writers' turn, which a class's
        thirty starts each took twice here, behind one another (class_burst, busy host)."""
        async with self.db.reading() as session:
            nb = await session.get(Notebook, nb_id)
            owner = (await session.get(User, nb.owner_id)).name
        token, _ = await self.auth.create_token(
            nb.owner_id, f"notebook {nb.name}", notebook_id=nb.id
        )
        async with self.db.reading() as session:
            spec = await self.specs.spec(session, nb, owner, token)
        return nb, owner, spec

    async def _mark_running(self, nb_id: int, backend_state: dict) -> tuple[Notebook, bool]:
        """Record the launched server; True: the notebook was stopped meanwhile (left as is)."""
        async with self.db.session() as session:
            current = await session.get(Notebook, nb_id)
            abandoned = current.state != State.STARTING.value
            if not abandoned:
                current.state = State.RUNNING.value
                current.backend_state = backend_state
                current.started_at = self.clock.now()
                current.last_activity = self.clock.now()
        return current, abandoned

    async def _run_start(self, nb_id: int, owner: str, name: str) -> None:
        try:
            nb, owner, spec = await self._start_spec(nb_id)
        except Exception as error:  # nothing launched yet: the start ends, with why
            if unavailable(error) is None:
                log.exception("preparing notebook %s/%s's start failed", owner, name)
            await self._finish_stopped(
                nb_id, owner, name, "start", f"the start failed: {error}", ok=False
            )
            return

        async def progress(percent: int, message: str) -> None:
            self._publish(nb_id, "start", percent, message, State.STARTING)

        backend_state: dict | None = None
        try:
            if nb.seed:
                await copy_seed(self.db, self.backend, self.settings, nb, owner, progress)
            launch = self.backend.start_vm if nb.kind == "vm" else self.backend.start
            backend_state = await launch(spec, progress)
            current, abandoned = await self._mark_running(nb_id, backend_state)
        except asyncio.CancelledError:
            await self._abandon_start(
                spec, backend_state, owner, "the start was cancelled", ok=True
            )
            raise
        except BackendError as error:
            await self._abandon_start(spec, backend_state, owner, str(error), ok=False)
            return
        except Exception as error:
            log.exception("starting notebook %s/%s failed", owner, nb.name)
            await self._abandon_start(
                spec, backend_state, owner, f"the start failed: {error}", ok=False
            )
            return
        if abandoned:  # stopped while it started
            await self._abandon_start(spec, backend_state, owner, "Stopped", ok=True)
            return
        self.routes.update(current, owner)
        self._publish(
            nb_id,
            "start",
            100,
            "Your notebook is ready",
            State.RUNNING,
            done=True,
            ok=True,
            url=spec.base_path + "lab",
        )

    async def _abandon_start(
        self, spec: NotebookSpec, backend_state: dict | None, owner: str, message: str, ok: bool
    ) -> None:
        if backend_state:
            await self.backend.stop(spec, backend_state)
        await self._finish_stopped(spec.id, owner, spec.name, "start", message, ok=ok)

    async def finish_stopped(self, nb_id: int, owner: str, name: str, reason: str) -> None:
        """A stop nobody asked for: the notebook is stopped and the reason kept for its owner."""
        await self._finish_stopped(nb_id, owner, name, "stop", reason, ok=None)

    async def _finish_stopped(
        self,
        nb_id: int,
        owner: str,
        name: str,
        operation: str,
        message: str,
        ok: bool | None = True,
    ) -> None:
        await self.auth.revoke_notebook_tokens(nb_id)
        async with self.db.session() as session:
            nb = await session.get(Notebook, nb_id)
            if nb is None:
                return
            nb.state = State.STOPPED.value
            nb.backend_state = None
            nb.devices = None
            nb.stopped_at = self.clock.now()
            # Failures and stops the owner did not ask for (ok None) stay explained.
            nb.message = "" if ok else message
            if ok is False:
                audit.record(
                    session,
                    audit.SYSTEM,
                    f"notebook.{operation}_failed",
                    f"notebook:{owner}/{name}",
                    reason=message,
                )
        self.routes.update(nb, owner)
        self._publish(nb_id, operation, 100, message, State.STOPPED, done=True, ok=ok)
        self.admission.queue_drain()

    # -- stop --------------------------------------------------------------

    async def stop(
        self,
        actor: roles.Principal | None,
        owner: str,
        name: str,
        reason: str = "requested",
        cause: str | None = None,
    ) -> Notebook:
        """Stop a notebook; `cause` (user, admin, idle, lifetime, reclaim) feeds the records."""
        async with self.db.session() as session:
            nb, _ = await load_notebook(session, owner, name, lock=True)
            if actor is not None and not roles.may_manage_notebook(actor, nb.owner_id):
                raise NotFound(f"{owner} has no notebook '{name}'")
            state = State(nb.state)
            if state in (State.STOPPED, State.STOPPING):
                return nb
            if cause is None:
                cause = "user" if actor is not None and actor.id == nb.owner_id else "admin"
            if state is State.QUEUED:
                nb.state = State.STOPPED.value
                nb.queued_at = None
                nb.message = ""
                audit.record(
                    session,
                    actor.name if actor else audit.SYSTEM,
                    "notebook.dequeued",
                    f"notebook:{owner}/{name}",
                    reason=reason,
                )
            else:
                await transitions.mark_stopping(
                    session,
                    nb,
                    owner,
                    cause,
                    reason,
                    actor.name if actor else audit.SYSTEM,
                    self.clock.now(),
                )
        self.routes.update(nb, owner)
        if state is State.QUEUED:
            self._publish(
                nb.id, "stop", 100, "Left the queue", State.STOPPED, begin=True, done=True, ok=True
            )
            return nb
        starting = self._tasks.get(nb.id)
        if state is State.STARTING and starting is not None:
            self._publish(nb.id, "stop", 10, "Stopping", State.STOPPING, begin=True)
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await starting
            return nb
        note = f"Stopped by the idle culler: {reason}." if cause in ("idle", "lifetime") else ""
        self._begin_stop(nb.id, owner, nb.name, note)
        return nb

    def _begin_stop(self, nb_id: int, owner: str, name: str, note: str = "") -> None:
        """Stop in the background; a `note` explains a stop the owner did not ask for."""
        self._publish(nb_id, "stop", 10, "Stopping", State.STOPPING, begin=True)
        self._spawn(nb_id, self._run_stop(nb_id, owner, name, note))

    async def _backend_stop(self, nb_id: int, owner: str) -> None:
        async with self.db.session() as session:
            nb = await session.get(Notebook, nb_id)
            spec = await self.specs.spec(session, nb, owner)
            state = dict(nb.backend_state or {})
        if state:
            await self.backend.stop(spec, state)

    async def _run_stop(self, nb_id: int, owner: str, name: str, note: str = "") -> None:
        try:
            await self._backend_stop(nb_id, owner)
        except Exception as error:
            log.exception("stopping notebook %s/%s failed", owner, name)
            self._publish(
                nb_id, "stop", 100, f"stopping failed: {error}", State.STOPPING, done=True, ok=False
            )
            return
        await self._finish_stopped(
            nb_id, owner, name, "stop", note or "Stopped", ok=None if note else True
        )

    # -- resize --------------------------------------------------------------

    async def resize(
        self, actor: roles.Principal, owner: str, name: str, changes: Changes
    ) -> Notebook:
        """Change resources or configurations; a running notebook restarts with them, checked
        against quota first. Configurations are checked against the backend's offer before
        the notebook is locked (a call to the cluster), by someone who may manage it."""
        pod_defaults = None
        if changes.pod_defaults is not None:
            async with self.db.session() as session:
                nb, _ = await load_notebook(session, owner, name)
                if not roles.may_manage_notebook(actor, nb.owner_id):
                    raise NotFound(f"{owner} has no notebook '{name}'")
                kind = nb.kind
            pod_defaults = await chosen_pod_defaults(
                self.backend, actor, owner, changes.pod_defaults, kind
            )
        async with self.db.session() as session:
            nb, owner_user = await load_notebook(session, owner, name, lock=True)
            if not roles.may_manage_notebook(actor, nb.owner_id):
                raise NotFound(f"{owner} has no notebook '{name}'")
            state = State(nb.state)
            if state in (State.STARTING, State.STOPPING):
                raise Conflict(f"notebook '{name}' is {state.value}; resize it once that is done")
            gpus = changes.gpus if changes.gpus is not None else nb.gpus
            gpu_type = changes.gpu_type if changes.gpu_type is not None else nb.gpu_type
            cpu_milli, memory, gpu_type, gpus = await validated_resources(
                session,
                changes.cpu if changes.cpu is not None else f"{nb.cpu_milli}m",
                changes.memory if changes.memory is not None else nb.memory,
                gpu_type or None,
                gpus,
            )
            before = {
                "cpu_milli": nb.cpu_milli,
                "memory": nb.memory,
                "gpu_type": nb.gpu_type,
                "gpus": nb.gpus,
                "pod_defaults": nb.pod_defaults or {},
            }
            after = {
                "cpu_milli": cpu_milli,
                "memory": memory,
                "gpu_type": gpu_type,
                "gpus": gpus,
                "pod_defaults": before["pod_defaults"] if pod_defaults is None else pod_defaults,
            }
            if before == after:
                return nb
            nb.cpu_milli, nb.memory, nb.gpu_type, nb.gpus = cpu_milli, memory, gpu_type, gpus
            nb.pod_defaults = after["pod_defaults"] or None
            if state is State.RUNNING:
                await quotas.enforce_start(session, nb, owner_user)
                nb.state = State.STOPPING.value
            else:
                await quotas.enforce_fits(
                    session, nb.owner_id, nb.group_id, quotas.notebook_resources(nb)
                )
            audit.record(
                session,
                actor.name,
                "notebook.resized",
                f"notebook:{owner}/{name}",
                before=before,
                after=after,
                restart=state is State.RUNNING,
            )
        if state is State.RUNNING:
            self.routes.update(nb, owner)
            self._publish(
                nb.id,
                "resize",
                5,
                "Stopping to apply the new resources",
                State.STOPPING,
                begin=True,
            )
            self._spawn(nb.id, self._run_restart(nb.id, owner, name))
        return nb

    async def _run_restart(self, nb_id: int, owner: str, name: str) -> None:
        await asyncio.sleep(RESTART_GRACE_SECONDS)
        try:
            await self._backend_stop(nb_id, owner)
        except Exception as error:
            log.exception("stopping %s/%s for a resize failed", owner, name)
            self._publish(
                nb_id,
                "resize",
                100,
                f"stopping failed: {error}",
                State.STOPPING,
                done=True,
                ok=False,
            )
            return
        await self.auth.revoke_notebook_tokens(nb_id)
        try:
            async with self.db.session() as session:
                nb = await session.get(Notebook, nb_id)
                nb.backend_state = None
                nb.devices = None
                admission = await self.admission.admit(session, nb, reclaim=False)
                nb.devices = list(admission.devices) or None
                nb.state = State.STARTING.value
                nb.proxy_secret = secrets.token_urlsafe(32)
        except DomainError as error:
            await self._finish_stopped(nb_id, owner, name, "resize", error.message, ok=False)
            return
        self.routes.update(nb, owner)
        self._publish(
            nb_id, "start", 30, "Starting with the new resources", State.STARTING, begin=True
        )
        await self._run_start(nb_id, owner, name)

    async def reconcile(self) -> Reconciled:
        """Find running notebooks again after a controller restart; stop what cannot be adopted."""
        adopted, stopped = [], []
        async with self.db.session() as session:
            rows = (
                await session.execute(
                    select(Notebook, User.name)
                    .join(User, User.id == Notebook.owner_id)
                    .where(Notebook.state.in_([s.value for s in HOLDING]))
                )
            ).all()
            work = [(nb, owner, await self.specs.spec(session, nb, owner)) for nb, owner in rows]
        keep: set[int] = set()
        for nb, owner, spec in work:
            state = State(nb.state)
            observed = None
            if nb.backend_state and state in (State.RUNNING, State.STARTING):
                observed = await self.backend.observe(spec, nb.backend_state)
            if observed is not None and observed.ready:
                keep.add(nb.id)
                async with self.db.session() as session:
                    current = await session.get(Notebook, nb.id)
                    current.state = State.RUNNING.value
                self.routes.update(current, owner)
                adopted.append(f"{owner}/{nb.name}")
                continue
            if nb.backend_state:
                await self.backend.stop(spec, nb.backend_state)
            reason = (
                observed.detail
                if observed
                else "it was being stopped or started when the controller stopped"
            )
            await self.finish_stopped(
                nb.id, owner, nb.name, f"stopped at controller start: {reason}"
            )
            stopped.append(f"{owner}/{nb.name}")
        swept = await self.backend.sweep(keep)
        if adopted or stopped or swept:
            async with self.db.session() as session:
                audit.record(
                    session,
                    audit.SYSTEM,
                    "controller.reconciled",
                    "notebooks",
                    adopted=adopted,
                    stopped=stopped,
                    orphans_killed=swept,
                )
        return Reconciled(adopted, stopped)

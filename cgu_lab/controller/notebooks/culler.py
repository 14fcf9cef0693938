"""The idle culler: a loop that reads every running notebook and applies the policy.

Each pass reads the kernels and terminals of every running notebook from its
own server (and its GPU use when the policy looks at GPUs), asks
`core.culling.plan` what to do, records warnings (JupyterLab shows them with
a "keep running" button) and stops what is due, recording why. Policies are
the admin's: a platform default plus per-group overrides, each of which may
be switched off.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from datetime import datetime, timezone

from sqlalchemy import select

from ...backends.base import BackendError
from ...core import culling
from ...core.errors import DomainError, NotSupported
from ...core.lifecycle import State
from ...core.roles import Principal, require_admin
from ...store.db import Database
from ...store.models import CullPolicyRow, Group, Notebook, User
from .. import audit
from ..accounts.directory import get_group
from ..clock import Clock
from .cull_policies import DEFAULT_POLICY, Policies, load_policies, policy_of
from .reader import NotebookReader
from .routes import Route
from .schemas import CullerView, CullPolicyOut
from .service import NotebookService

log = logging.getLogger("cgu_lab.culler")

MAX_STOPS_PER_PASS = 10


def _parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def policy_out(row: CullPolicyRow | None, scope: str) -> CullPolicyOut:
    policy = policy_of(row) if row else DEFAULT_POLICY
    return CullPolicyOut(
        scope=scope,
        enabled=row.enabled if row else True,
        idle_minutes=policy.idle_minutes,
        warn_minutes=policy.warn_minutes,
        gpu_idle_percent=policy.gpu_idle_percent,
        max_lifetime_hours=policy.max_lifetime_hours,
        kernel_idle_minutes=policy.kernel_idle_minutes,
        kernel_cull_connected=policy.kernel_cull_connected,
        inherited=row is None,
    )


async def get_policy(db: Database, group: str | None) -> CullPolicyOut:
    """The platform's policy (group None) or a group's, as it applies to the group."""
    async with db.session() as session:
        group_id = (await get_group(session, group)).id if group else None
        row = await session.scalar(
            select(CullPolicyRow).where(
                CullPolicyRow.group_id.is_(None)
                if group_id is None
                else CullPolicyRow.group_id == group_id
            )
        )
    return policy_out(row, f"group:{group}" if group else "default")


async def set_policy(
    db: Database,
    actor: Principal,
    group: str | None,
    enabled: bool,
    policy: culling.CullPolicy | None,
) -> CullPolicyOut:
    """Save the default policy (group None) or a group's override; None removes an override.

    One transaction, audited inside it."""
    async with db.session() as session:
        require_admin(actor, "change the idle culler's policy")
        group_id = (await get_group(session, group)).id if group else None
        row = await session.scalar(
            select(CullPolicyRow).where(
                CullPolicyRow.group_id.is_(None)
                if group_id is None
                else CullPolicyRow.group_id == group_id
            )
        )
        scope = f"group:{group}" if group else "default"
        if policy is None:
            if row is not None and group_id is not None:
                await session.delete(row)
            audit.record(session, actor.name, "culling.policy_removed", scope)
            return policy_out(None, scope)
        policy.validate()
        if row is None:
            row = CullPolicyRow(group_id=group_id)
            session.add(row)
        row.enabled = enabled
        row.idle_minutes = policy.idle_minutes
        row.warn_minutes = policy.warn_minutes
        row.gpu_idle_percent = policy.gpu_idle_percent
        row.max_lifetime_hours = policy.max_lifetime_hours
        row.kernel_idle_minutes = policy.kernel_idle_minutes
        row.kernel_cull_connected = policy.kernel_cull_connected
        row.updated_by = actor.name
        audit.record(
            session,
            actor.name,
            "culling.policy_set",
            scope,
            enabled=enabled,
            idle_minutes=policy.idle_minutes,
            warn_minutes=policy.warn_minutes,
            gpu_idle_percent=policy.gpu_idle_percent,
            max_lifetime_hours=policy.max_lifetime_hours,
            kernel_idle_minutes=policy.kernel_idle_minutes,
            kernel_cull_connected=policy.kernel_cull_connected,
        )
        return policy_out(row, scope)


def exemption(policies: Policies, group: str | None) -> str:
    """Why the culler leaves every notebook charged to `group` alone; "" when it applies."""
    if policies.applies(group):
        return ""
    if group is not None and group in policies.rules.groups:
        return f"exempt through its group '{group}': the idle culler never stops its notebooks"
    return "the idle culler is switched off on this platform"


def _record_warning(session, nb: Notebook, owner: str, decision, now: datetime) -> None:
    """A "warn" decision delivered: the countdown starts now, once, for pass and page alike."""
    nb.warned_at = now
    audit.record(
        session,
        audit.SYSTEM,
        "notebook.warned",
        f"notebook:{owner}/{nb.name}",
        reason=decision.reason,
        stop_at=decision.stop_at.isoformat() if decision.stop_at else None,
    )


def _shown_action(decision: culling.Decision) -> str:
    """A warned notebook counting down shows as "warn" until it stops or is kept."""
    return "warn" if decision.action == "keep" and decision.message else decision.action


class Culler:
    def __init__(
        self,
        db: Database,
        notebooks: NotebookService,
        reader: NotebookReader,
        interval: float,
        clock: Clock,
    ) -> None:
        """`clock`: idle time, warnings' countdowns and the pause between passes follow it
        (a test moves it and runs `pass_once`, as jupyterhub-idle-culler's tests do)."""
        self.db = db
        self.clock = clock
        self.notebooks = notebooks
        self.reader = reader
        self.interval = interval
        self.decisions: dict[int, culling.Decision] = {}
        self._records_activity = True  # until the backend says it keeps no such record

    async def run(self) -> None:
        while True:
            await self.clock.sleep(self.interval)
            try:
                await self.pass_once()
            except Exception:  # the next pass tries again
                log.exception("culler pass failed")

    async def _read(
        self, route: Route, nb: Notebook, group: str | None, policies: Policies
    ) -> culling.Activity:
        kernels = await self.reader.get(route, "api/kernels")
        terminals = await self.reader.get(route, "api/terminals")
        # Collaborators editing together (no kernel need run): the server extension's
        # record of the last change or cursor move by an owner or editor; None on servers
        # without it.
        together = await self.reader.get(route, "cgu-lab/collaboration")
        last = None
        busy = False
        if kernels is not None and terminals is not None:
            times = [_parse_time(k.get("last_activity")) for k in kernels]
            times += [_parse_time(t.get("last_activity")) for t in terminals]
            if isinstance(together, dict):
                times.append(_parse_time(together.get("last_activity")))
            known = [t for t in times if t is not None]
            busy = any(k.get("execution_state") == "busy" for k in kernels)
            # Read fine but nothing ran yet: idle since the last time we knew of, or the start.
            last = max(known) if known else (nb.last_activity or nb.started_at)
        gpu = None
        policy = policies.rules.for_group(group)
        if policy.gpu_idle_percent is not None and nb.devices:
            usage = await self.reader.get(route, "cgu-lab/resources")
            values = [
                d.get("utilization") for d in (usage or {}).get("gpus", {}).get("devices", [])
            ]
            gpu = max((v for v in values if v is not None), default=None)
        return culling.Activity(
            notebook_id=nb.id,
            started_at=nb.started_at or self.clock.now(),
            last_activity=last,
            busy=busy,
            gpu_utilization=gpu,
            persistent=nb.persistent,
            group=group,
            warned_at=nb.warned_at,
            kept_at=nb.kept_at,
            exempt=exemption(policies, group),
        )

    async def pass_once(self) -> list[culling.Decision]:
        """Read the running notebooks (outside the writers' turn), ask each server how
        idle it is, then write every notebook's activity and warnings in one transaction
        that loads them in one query, and stop those the rules say."""
        now = self.clock.now()
        async with self.db.reading() as session:
            policies = await load_policies(session)
            rows = (
                await session.execute(
                    select(Notebook, User.name, Group.name)
                    .join(User, User.id == Notebook.owner_id)
                    .outerjoin(Group, Group.id == Notebook.group_id)
                    .where(Notebook.state == State.RUNNING.value)
                )
            ).all()
        work = []
        for nb, owner, group in rows:
            route = await self.notebooks.routes.lookup(owner, nb.name)
            if route is not None and route.target is not None:
                work.append((nb, owner, group, route))
        activities = await asyncio.gather(
            *(self._read(route, nb, group, policies) for nb, _, group, route in work)
        )
        for activity in activities:
            self.notebooks.admission.activity[activity.notebook_id] = activity
        decisions = culling.plan(policies.rules, activities, now, MAX_STOPS_PER_PASS)
        self.decisions = {d.notebook_id: d for d in decisions}
        by_id = {nb.id: (nb, owner) for nb, owner, _, _ in work}
        async with self.db.session() as session:
            ids = [activity.notebook_id for activity in activities]
            currents = {
                nb.id: nb
                for nb in (await session.scalars(select(Notebook).where(Notebook.id.in_(ids))))
            }
            for activity in activities:
                current = currents.get(activity.notebook_id)
                if current is None:
                    continue
                if activity.last_activity is not None:
                    current.last_activity = activity.last_activity
                decision = self.decisions[activity.notebook_id]
                if decision.action == "warn":
                    nb, owner = by_id[activity.notebook_id]
                    _record_warning(session, current, owner, decision, now)
        await self._record_activity(work, activities, now)
        for decision in decisions:
            if decision.action == "stop":
                nb, owner = by_id[decision.notebook_id]
                await self.notebooks.lifecycle.stop(
                    None, owner, nb.name, reason=decision.reason, cause=decision.cause or "idle"
                )
        self.notebooks.admission.queue_drain()
        return decisions

    async def _record_activity(
        self, work: list, activities: list[culling.Activity], now: datetime
    ) -> None:
        """Keep the cluster's own record of activity current (Kubeflow's
        `notebooks.kubeflow.org/last-activity`): Kubeflow's culler, where it runs, reads
        only that and would stop a notebook busy in a long cell. A busy kernel counts as
        active now. The local backend keeps no such record and says so once."""
        if not self._records_activity:
            return
        by_id = {nb.id: (nb, owner) for nb, owner, _, _ in work}
        async with self.db.session() as session:
            for activity in activities:
                when = now if activity.busy else activity.last_activity
                if when is None:
                    continue
                nb, owner = by_id[activity.notebook_id]
                spec = await self.notebooks.spec(session, nb, owner)
                try:
                    await self.notebooks.backend.record_activity(spec, nb.backend_state, when)
                except NotSupported:
                    self._records_activity = False
                    return
                except (BackendError, DomainError) as error:  # stopped meanwhile; next pass
                    log.info("activity of %s/%s not recorded: %s", owner, nb.name, error)

    async def status(self, nb: Notebook, group: str | None) -> CullerView:
        """What the culler would do with this notebook now, for the countdown in JupyterLab.

        One source of truth with the passes: the notebook's kernels and terminals are
        read now (not at the last pass, which may be a minute old: a cell run since
        must not leave a stale "idle for 4 minutes" on screen), decided by the same
        rules, and a warning shown here is recorded as given, so its countdown is the
        one the next pass stops by. `idle_seconds` is measured at `now`.
        """
        now = self.clock.now()
        async with self.db.session() as session:
            policies = await load_policies(session)
        policy = policies.rules.for_group(group)
        exempt = exemption(policies, group)
        enabled = not exempt and not nb.persistent
        route = self._route_of(nb.id)
        decision = None
        last_activity = nb.last_activity
        if route is not None and route.target is not None and nb.state == State.RUNNING.value:
            activity = await self._read(route, nb, group, policies)
            seen = self.notebooks.admission.activity.get(nb.id)
            if activity.last_activity is None and seen is not None:
                # Unreadable now: what the last pass saw, with today's bookkeeping.
                activity = replace(
                    seen, warned_at=nb.warned_at, kept_at=nb.kept_at, exempt=activity.exempt
                )
            else:
                self.notebooks.admission.activity[nb.id] = activity
            decision = culling.decide(policy, activity, now)
            last_activity = activity.last_activity or last_activity
            if decision.action == "warn" and enabled:
                async with self.db.session() as session:
                    current = await session.get(Notebook, nb.id)
                    if current is not None and current.warned_at == nb.warned_at:
                        _record_warning(session, current, route.owner, decision, now)
        shown = enabled and decision is not None
        return CullerView(
            enabled=enabled,
            persistent=nb.persistent,
            exempt=exempt,
            idle_minutes=policy.idle_minutes,
            warn_minutes=policy.warn_minutes,
            max_lifetime_hours=policy.max_lifetime_hours,
            last_activity=last_activity,
            now=now,
            idle_seconds=decision.idle_seconds if decision else None,
            cause=decision.cause if shown else None,
            action=_shown_action(decision) if shown else "keep",
            reason=decision.reason if decision else (exempt or ""),
            message=decision.message if shown else "",
            stop_at=decision.stop_at if shown else None,
        )

    def _route_of(self, notebook_id: int) -> Route | None:
        return self.notebooks.routes.by_id(notebook_id)

    async def notebook(self, owner: str, name: str) -> tuple[Notebook, str | None]:
        """The notebook and the name of the group it is charged to (whose policy applies);
        NotFound when there is none. Who may see it is the caller's to check."""
        async with self.db.session() as session:
            nb, _ = await self.notebooks.load(session, owner, name)
            group = (
                await session.scalar(select(Group.name).where(Group.id == nb.group_id))
                if nb.group_id
                else None
            )
        return nb, group

    async def keep_running(self, actor: Principal | None, owner: str, name: str) -> None:
        async with self.db.session() as session:
            nb, _ = await self.notebooks.load(session, owner, name)
            nb.kept_at = self.clock.now()
            nb.warned_at = None
            audit.record(
                session,
                actor.name if actor else owner,
                "notebook.kept_running",
                f"notebook:{owner}/{name}",
            )
        activity = self.notebooks.admission.activity.get(nb.id)
        if activity is not None:
            self.notebooks.admission.activity[nb.id] = replace(
                activity, kept_at=nb.kept_at, warned_at=None
            )

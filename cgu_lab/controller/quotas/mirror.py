"""Quotas mirrored into the cluster, continuously: ResourceQuota follows the platform's limits.

A cluster enforces quotas too (a ResourceQuota per namespace), so a platform
limit that changed must reach it even when nobody starts a notebook: a lower
platform default, a new group budget or a changed GPU type (its resource name)
change every namespace at once. The mirror recomputes every subject's quota
each pass (at most `interval` seconds apart, at once after `poke`) and sends
only what changed since it last sent it; the first pass after a start sends
everything, which is harmless (server-side apply of the same object).

Subjects are the users who own notebooks (the others have no namespace yet;
their first start writes their quota) and the groups with a budget. The
platform's own admission check stays in force whatever the cluster says, so a
cluster that cannot be reached is only logged and retried on the next pass.
A backend without cluster quotas (local) says so once and the loop ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy import select

from ...backends.base import Backend, BackendError, QuotaSpec
from ...core.errors import NotSupported
from ...core.quota import Limits
from ...store.db import Database
from ...store.models import Group, Notebook, Quota, User
from ..environments import catalog
from . import service

log = logging.getLogger("cgu_lab.quotas")

Subject = tuple[str, bool]  # (user or group name, is a group)


class QuotaMirror:
    def __init__(self, db: Database, backend: Backend, interval: float = 30.0) -> None:
        self.db = db
        self.backend = backend
        self.interval = interval
        self.supported = True
        self._sent: dict[Subject, QuotaSpec] = {}
        self._wake = asyncio.Event()

    def poke(self) -> None:
        """A default, a budget or a GPU type changed: the next pass starts now."""
        self._wake.set()

    async def run(self) -> None:
        while self.supported:
            try:
                await self.pass_once()
            except Exception:  # the next pass tries again
                log.exception("quota mirror pass failed")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()

    async def mirror(self, name: str, group: bool = False) -> None:
        """Send one subject's quota now (its limits were just changed through the API)."""
        async with self.db.reading() as session:
            resources = await catalog.gpu_resources(session)
            quota = await self._quota(session, name, group, resources)
        await self._send((name, group), quota, force=True)

    async def pass_once(self) -> int:
        """Send every changed quota; how many were sent. It only reads the store (no
        writer's turn)."""
        if not self.supported:
            return 0
        async with self.db.reading() as session:
            resources = await catalog.gpu_resources(session)
            users = (
                await session.scalars(
                    select(User.name).join(Notebook, Notebook.owner_id == User.id).distinct()
                )
            ).all()
            groups = (
                await session.scalars(
                    select(Group.name).join(Quota, Quota.group_id == Group.id).distinct()
                )
            ).all()
            wanted = [
                ((name, group), await self._quota(session, name, group, resources))
                for names, group in ((users, False), (groups, True))
                for name in names
            ]
        sent = 0
        for subject, quota in wanted:
            sent += await self._send(subject, quota)
            if not self.supported:
                break
        return sent

    @staticmethod
    async def _quota(session, name: str, group: bool, resources: dict[str, str]) -> QuotaSpec:
        if group:
            group_id = await session.scalar(select(Group.id).where(Group.name == name))
            limits = await service.group_limits(session, group_id) if group_id else None
        else:
            user_id = await session.scalar(select(User.id).where(User.name == name))
            limits = (await service.user_limits(session, user_id))[0] if user_id else None
        return QuotaSpec(limits or Limits(), resources)

    async def _send(self, subject: Subject, quota: QuotaSpec, force: bool = False) -> int:
        if not force and self._sent.get(subject) == quota:
            return 0
        name, group = subject
        try:
            await self.backend.sync_quota(name, quota, group=group)
        except NotSupported:
            self.supported = False
            return 0
        except BackendError as error:
            log.warning("quota of %s not mirrored into the cluster: %s", name, error)
            self._sent.pop(subject, None)
            return 0
        self._sent[subject] = quota
        return 1

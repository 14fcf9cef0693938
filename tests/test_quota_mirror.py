"""The quota mirror: a changed default, budget or GPU type reaches every namespace without
waiting for a start; only what changed is sent; a backend without cluster quotas ends it.

The store is a real (SQLite) database; the backend records what it was asked to mirror.
The Kubernetes suites check the same mirror against a real API server (test_kube_controller).
"""

import asyncio

import pytest
from sqlalchemy import select

from cgu_lab.backends.base import QuotaSpec
from cgu_lab.controller.quotas.mirror import QuotaMirror
from cgu_lab.core.errors import NotSupported
from cgu_lab.core.quota import Limits
from cgu_lab.store.db import Database
from cgu_lab.store.models import GpuType, Group, Notebook, Quota, User


class Recording:
    """The one backend method the mirror calls, recorded."""

    def __init__(self, refuse: bool = False) -> None:
        self.sent: list[tuple[str, bool, QuotaSpec]] = []
        self.refuse = refuse

    async def sync_quota(self, owner: str, quota: QuotaSpec, group: bool = False) -> None:
        if self.refuse:
            raise NotSupported("Cluster quotas need the kubernetes backend")
        self.sent.append((owner, group, quota))


@pytest.fixture
def db(tmp_path, jp_asyncio_loop):
    database = Database(f"sqlite:///{tmp_path / 'store.sqlite'}")
    database.upgrade_sync()

    async def seed() -> None:
        async with database.session() as session:
            ann, bob, cid = (
                User(name="ann", role="student"),
                User(name="bob", role="student"),
                User(name="cid", role="student"),
            )
            course = Group(name="course")
            session.add_all([ann, bob, cid, course])
            await session.flush()
            session.add_all(
                [
                    Quota(scope="default", cpu_milli=4000, memory=8 << 30, updated_by="t"),
                    Quota(scope="user", user_id=bob.id, cpu_milli=1000, updated_by="t"),
                    Quota(scope="group", group_id=course.id, cpu_milli=32000, updated_by="t"),
                    GpuType(name="whole", resource_name="nvidia.com/gpu"),
                ]
            )
            for owner in (ann, bob):  # cid owns no notebook: no namespace to mirror into
                session.add(
                    Notebook(
                        owner_id=owner.id,
                        name="nb",
                        environment="default",
                        cpu_milli=1000,
                        memory=1 << 30,
                    )
                )

    jp_asyncio_loop.run_until_complete(seed())
    yield database
    jp_asyncio_loop.run_until_complete(database.close())


async def test_every_owner_and_budget_is_mirrored_then_only_changes(db):
    backend = Recording()
    mirror = QuotaMirror(db, backend, interval=3600)
    assert await mirror.pass_once() == 3
    sent = {(name, group): quota for name, group, quota in backend.sent}
    assert set(sent) == {("ann", False), ("bob", False), ("course", True)}
    assert sent["ann", False].limits.cpu_milli == 4000  # the default
    assert sent["bob", False].limits.cpu_milli == 1000  # his own
    assert sent["course", True].limits.cpu_milli == 32000
    assert sent["ann", False].gpu_resources == {"whole": "nvidia.com/gpu"}

    backend.sent.clear()
    assert await mirror.pass_once() == 0 and backend.sent == []

    # The platform default changes: only those on the default get a new quota.
    async with db.session() as session:
        (await session.scalar(select(Quota).where(Quota.scope == "default"))).cpu_milli = 2000
    assert await mirror.pass_once() == 1
    assert [(n, q.limits.cpu_milli) for n, _, q in backend.sent] == [("ann", 2000)]

    # A GPU type's resource changes: every namespace's quota names it anew.
    backend.sent.clear()
    async with db.session() as session:
        (await session.scalar(select(GpuType))).resource_name = "nvidia.com/gpu.shared"
    assert await mirror.pass_once() == 3


async def test_poke_runs_a_pass_at_once_and_a_local_backend_ends_the_loop(db):
    backend = Recording()
    mirror = QuotaMirror(db, backend, interval=3600)
    loop = asyncio.create_task(mirror.run())
    try:
        for _ in range(200):
            if len(backend.sent) == 3:
                break
            await asyncio.sleep(0.01)
        async with db.session() as session:
            (await session.scalar(select(Quota).where(Quota.scope == "group"))).cpu_milli = 16000
        mirror.poke()  # the hour-long interval is not waited for
        for _ in range(200):
            if len(backend.sent) == 4:
                break
            await asyncio.sleep(0.01)
        assert backend.sent[-1][:2] == ("course", True)
        assert backend.sent[-1][2].limits == Limits(cpu_milli=16000)
    finally:
        loop.cancel()

    local = QuotaMirror(db, Recording(refuse=True), interval=0)
    await asyncio.wait_for(local.run(), 5)  # returns: nothing to mirror into
    assert not local.supported

"""Quotas: the platform default, each group's budget, each user's limits."""

from __future__ import annotations

import logging

from fastapi import APIRouter

from ...backends.base import BackendError, QuotaSpec
from ...core.errors import NotSupported
from ...core.quota import Limits
from .. import catalog
from .. import quotas as service
from ..accounts import get_group, get_user
from ..root import Platform
from .deps import ActorDep, PlatformDep, require_scope
from .schema_types import LabelPath, UserNamePath
from .schemas import LimitsIn, QuotaOut

router = APIRouter(tags=["quotas"], dependencies=[require_scope("quotas")])
log = logging.getLogger("cgu_lab.quotas")


async def mirror(platform: Platform, name: str, group: bool = False) -> None:
    """Clusters enforce quotas too (ResourceQuota): a changed quota reaches the
    namespace now rather than at the owner's next start. The platform's own
    check stays in force, so a cluster that cannot be reached is only logged."""
    async with platform.db.session() as session:
        if group:
            limits = await service.group_limits(session, (await get_group(session, name)).id)
        else:
            limits, _ = await service.user_limits(session, (await get_user(session, name)).id)
        quota = QuotaSpec(limits or Limits(), await catalog.gpu_resources(session))
    try:
        await platform.backend.sync_quota(name, quota, group=group)
    except NotSupported:
        pass
    except BackendError as error:
        log.warning("quota of %s not mirrored into the cluster: %s", name, error)


@router.get("/quotas/default", response_model=QuotaOut, summary="The default quota of every user")
async def get_default(platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    async with platform.db.session() as session:
        return QuotaOut(**await service.describe_default(session))


@router.put("/quotas/default", response_model=QuotaOut, summary="Change the default quota (admins)")
async def put_default(body: LimitsIn, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    async with platform.db.session() as session:
        await service.set_default(session, actor, body.to_limits())
        return QuotaOut(**await service.describe_default(session))


@router.get("/users/{name}/quota", response_model=QuotaOut, summary="A user's limits and use")
async def get_user_quota(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    async with platform.db.session() as session:
        return QuotaOut(**await service.describe_user(session, actor, name))


@router.put(
    "/users/{name}/quota",
    response_model=QuotaOut,
    summary="Set a user's quota (admins; group managers within the group budget)",
)
async def put_user_quota(
    name: UserNamePath, body: LimitsIn, platform: PlatformDep, actor: ActorDep
) -> QuotaOut:
    async with platform.db.session() as session:
        await service.set_user(session, actor, name, body.to_limits())
    await mirror(platform, name)
    return await get_user_quota(name, platform, actor)


@router.delete(
    "/users/{name}/quota",
    response_model=QuotaOut,
    summary="Remove a user's own quota; the default applies again (admins)",
)
async def delete_user_quota(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    async with platform.db.session() as session:
        await service.set_user(session, actor, name, None)
    await mirror(platform, name)
    return await get_user_quota(name, platform, actor)


@router.get("/groups/{name}/quota", response_model=QuotaOut, summary="A group's budget and use")
async def get_group_quota(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    async with platform.db.session() as session:
        return QuotaOut(**await service.describe_group(session, actor, name))


@router.put(
    "/groups/{name}/quota", response_model=QuotaOut, summary="Set a group's budget (admins)"
)
async def put_group_quota(
    name: LabelPath, body: LimitsIn, platform: PlatformDep, actor: ActorDep
) -> QuotaOut:
    async with platform.db.session() as session:
        await service.set_group(session, actor, name, body.to_limits())
    await mirror(platform, name, group=True)
    return await get_group_quota(name, platform, actor)


@router.delete(
    "/groups/{name}/quota", response_model=QuotaOut, summary="Remove a group's budget (admins)"
)
async def delete_group_quota(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    async with platform.db.session() as session:
        await service.set_group(session, actor, name, None)
    await mirror(platform, name, group=True)
    return await get_group_quota(name, platform, actor)

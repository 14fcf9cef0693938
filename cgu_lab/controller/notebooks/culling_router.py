"""The idle culler: its policies (admins) and what it plans for a notebook (its owner)."""

from __future__ import annotations

from fastapi import APIRouter

from ...core.culling import CullPolicy
from ...core.errors import NotFound
from ...core.roles import may_manage_notebook
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import LabelPath, UserNamePath
from ..api.schemas import CullingStatus, CullPolicyIn, CullPolicyOut, Message
from . import culler

router = APIRouter(tags=["culling"], dependencies=[require_scope("culling")])


def _policy(body: CullPolicyIn) -> CullPolicy:
    return CullPolicy(
        body.idle_minutes,
        body.warn_minutes,
        body.gpu_idle_percent,
        body.max_lifetime_hours,
        body.kernel_idle_minutes,
        body.kernel_cull_connected,
    )


@router.get("/culling/policy", response_model=CullPolicyOut, summary="The platform's idle policy")
async def get_default_policy(platform: PlatformDep, actor: ActorDep) -> CullPolicyOut:
    return await culler.get_policy(platform.db, None)


@router.put(
    "/culling/policy",
    response_model=CullPolicyOut,
    summary="Change the platform's idle policy (admins)",
)
async def put_default_policy(
    body: CullPolicyIn, platform: PlatformDep, actor: ActorDep
) -> CullPolicyOut:
    return await culler.set_policy(platform.db, actor, None, body.enabled, _policy(body))


@router.get("/groups/{name}/culling", response_model=CullPolicyOut, summary="A group's idle policy")
async def get_group_policy(
    name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> CullPolicyOut:
    return await culler.get_policy(platform.db, name)


@router.put(
    "/groups/{name}/culling",
    response_model=CullPolicyOut,
    summary="Give a group its own idle policy, or exempt it (admins)",
)
async def put_group_policy(
    name: LabelPath, body: CullPolicyIn, platform: PlatformDep, actor: ActorDep
) -> CullPolicyOut:
    return await culler.set_policy(platform.db, actor, name, body.enabled, _policy(body))


@router.delete(
    "/groups/{name}/culling",
    response_model=CullPolicyOut,
    summary="Remove a group's own policy; the platform's applies again (admins)",
)
async def delete_group_policy(
    name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> CullPolicyOut:
    return await culler.set_policy(platform.db, actor, name, True, None)


async def _notebook(platform, actor, owner: str, name: str):
    """The notebook and its group, for its owner, an admin or an editor; else 404."""
    nb, group = await platform.culler.notebook(owner, name)
    if not may_manage_notebook(actor, nb.owner_id):
        principal_access = await platform.shares.access(actor, nb.id)
        if principal_access is None or principal_access.level == "read":
            raise NotFound(f"{owner} has no notebook '{name}'")
    return nb, group


@router.get(
    "/notebooks/{owner}/{name}/culling",
    response_model=CullingStatus,
    summary="Whether and when the idle culler will stop this notebook",
)
async def culling_status(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> CullingStatus:
    nb, group = await _notebook(platform, actor, owner, name)
    return await platform.culler.status(nb, group)


@router.post(
    "/notebooks/{owner}/{name}/keep-running",
    response_model=Message,
    summary="Keep running: count now as activity and dismiss the warning",
)
async def keep_running(
    owner: UserNamePath, name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> Message:
    await _notebook(platform, actor, owner, name)
    await platform.culler.keep_running(actor, owner, name)
    return Message(message="the idle clock was reset; your notebook keeps running")

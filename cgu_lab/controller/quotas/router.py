"""Quotas: the platform default, each group's budget, each user's limits."""

from __future__ import annotations

from fastapi import APIRouter

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import LabelPath, UserNamePath
from ..api.schemas import BudgetRequestIn, ClassQuotaOut, LimitsIn, Message, QuotaOut
from . import service

router = APIRouter(tags=["quotas"], dependencies=[require_scope("quotas")])


@router.get("/quotas/default", response_model=QuotaOut, summary="The default quota of every user")
async def get_default(platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    return await service.default_quota(platform.db)


@router.put("/quotas/default", response_model=QuotaOut, summary="Change the default quota (admins)")
async def put_default(body: LimitsIn, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    out = await service.set_default(platform.db, actor, body.to_limits())
    platform.quota_mirror.poke()  # every user on the default: each namespace, within a pass
    return out


@router.get("/users/{name}/quota", response_model=QuotaOut, summary="A user's limits and use")
async def get_user_quota(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    return await service.user_quota(platform.db, actor, name)


@router.put(
    "/users/{name}/quota",
    response_model=QuotaOut,
    summary="Set a user's quota (admins; group managers within the group budget)",
)
async def put_user_quota(
    name: UserNamePath, body: LimitsIn, platform: PlatformDep, actor: ActorDep
) -> QuotaOut:
    await service.set_user(platform.db, actor, name, body.to_limits())
    await platform.quota_mirror.mirror(name)
    return await get_user_quota(name, platform, actor)


@router.delete(
    "/users/{name}/quota",
    response_model=QuotaOut,
    summary="Remove a user's own quota; the default applies again (admins)",
)
async def delete_user_quota(name: UserNamePath, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    await service.set_user(platform.db, actor, name, None)
    await platform.quota_mirror.mirror(name)
    return await get_user_quota(name, platform, actor)


@router.get("/groups/{name}/quota", response_model=QuotaOut, summary="A group's budget and use")
async def get_group_quota(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    return await service.group_quota(platform.db, actor, name)


@router.put(
    "/groups/{name}/quota", response_model=QuotaOut, summary="Set a group's budget (admins)"
)
async def put_group_quota(
    name: LabelPath, body: LimitsIn, platform: PlatformDep, actor: ActorDep
) -> QuotaOut:
    await service.set_group(platform.db, actor, name, body.to_limits())
    await platform.quota_mirror.mirror(name, group=True)
    return await get_group_quota(name, platform, actor)


@router.delete(
    "/groups/{name}/quota", response_model=QuotaOut, summary="Remove a group's budget (admins)"
)
async def delete_group_quota(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> QuotaOut:
    await service.set_group(platform.db, actor, name, None)
    await platform.quota_mirror.mirror(name, group=True)
    return await get_group_quota(name, platform, actor)


@router.put(
    "/groups/{name}/student-quotas",
    response_model=ClassQuotaOut,
    summary="Give every student of a course one quota, within its budget (its managers)",
)
async def put_class_quota(
    name: LabelPath, body: LimitsIn, platform: PlatformDep, actor: ActorDep
) -> ClassQuotaOut:
    students = await service.set_course_students(platform.db, actor, name, body.to_limits())
    for student in students:
        await platform.quota_mirror.mirror(student)
    count = f"{len(students)} student{'' if len(students) == 1 else 's'}"
    return ClassQuotaOut(message=f"the quota of {count} of '{name}' was set", students=students)


@router.post(
    "/groups/{name}/quota/requests",
    response_model=Message,
    status_code=201,
    summary="Ask the administrators for more budget for a course (its managers)",
)
async def request_budget(
    name: LabelPath, body: BudgetRequestIn, platform: PlatformDep, actor: ActorDep
) -> Message:
    await service.request_budget(platform.db, actor, name, body.message)
    return Message(
        message="your request was sent: administrators read it in the audit log and answer "
        "by changing the budget, which this page then shows"
    )

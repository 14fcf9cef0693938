"""The school login's API: the administrator's mapping (System page) and the teachers'
pre-enrolment by e-mail. Under /api, scope "accounts"; every change is audited by the
service in the same transaction."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import Id, LabelPath
from .schemas import (
    DirectorySettingsOut,
    OidcProvider,
    PreEnrolIn,
    PreEnrolOut,
    ProviderOut,
    RuleIn,
    RuleOut,
)

router = APIRouter(tags=["school login"], dependencies=[require_scope("accounts")])


def _rule_out(row) -> RuleOut:
    return RuleOut(
        id=row.id,
        provider=row.provider,
        source=row.source,
        attribute=row.attribute,
        value=row.value,
        role=row.role,
        course=row.course,
        created_by=row.created_by,
    )


@router.get(
    "/school-login",
    response_model=DirectorySettingsOut,
    summary="The school logins configured and the rules mapping them to roles and courses",
)
async def school_login(platform: PlatformDep, actor: ActorDep) -> DirectorySettingsOut:
    service = platform.school_login
    rules = await service.list_rules(actor)
    providers = [
        ProviderOut(
            id=p.id,
            name=p.name,
            kind=p.kind,
            default_role=str(getattr(p.default_role, "value", p.default_role)),
            redirect_uri=service.redirect_uri(p.id) if isinstance(p, OidcProvider) else None,
        )
        for p in service.providers.values()
    ]
    return DirectorySettingsOut(providers=providers, rules=[_rule_out(r) for r in rules])


@router.post(
    "/school-login/rules",
    response_model=RuleOut,
    status_code=201,
    summary="Map a claim value or LDAP group to a role and/or a course (admins)",
)
async def add_rule(body: RuleIn, platform: PlatformDep, actor: ActorDep) -> RuleOut:
    return _rule_out(await platform.school_login.add_rule(actor, body))


@router.delete(
    "/school-login/rules/{rule_id}",
    status_code=204,
    summary="Remove a mapping rule (applies from each user's next login)",
)
async def delete_rule(rule_id: Id, platform: PlatformDep, actor: ActorDep) -> Response:
    await platform.school_login.delete_rule(actor, rule_id)
    return Response(status_code=204)


@router.post(
    "/groups/{name}/pre-enrolments",
    response_model=PreEnrolOut,
    summary="Pre-enrol students by e-mail: they join at their first school login",
)
async def pre_enrol(
    name: LabelPath, body: PreEnrolIn, platform: PlatformDep, actor: ActorDep
) -> PreEnrolOut:
    return await platform.school_login.pre_enrol(actor, name, body.csv)


@router.get(
    "/groups/{name}/pre-enrolments",
    response_model=list[str],
    summary="The e-mail addresses still waiting for a first school login in a group",
)
async def pre_enrolments(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> list[str]:
    return await platform.school_login.pre_enrolments(actor, name)

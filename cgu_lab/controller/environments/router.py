"""Environments users choose from when creating notebooks, and their builds.

Everyone signed in lists environments (the new-notebook form shows each one's
main packages); only admins declare, build, rebuild and delete them (the
services check the role). A build runs in the background: POST answers 202
at once and `/environments/{name}/events` streams its progress.
"""

from __future__ import annotations

from fastapi import APIRouter
from sse_starlette import EventSourceResponse

from ...core import environments as rules
from ...core import roles
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.events import SSE_RESPONSES, progress_stream
from ..api.schema_types import LabelPath
from ..api.schemas import EnvironmentIn, Message
from . import apps as environment_apps
from . import service
from .schemas import (
    EnvironmentApps,
    EnvironmentBuild,
    EnvironmentDetail,
    PackageOut,
    RecipeInfo,
    RecipeOut,
)

router = APIRouter(tags=["catalog"], dependencies=[require_scope("catalog")])


def environment_out(env, actor: roles.Principal) -> EnvironmentDetail:
    recipe = env.recipe
    return EnvironmentDetail(
        name=env.name,
        display_name=env.display_name,
        description=env.description,
        image=env.image,
        local_prefix=env.local_prefix,
        is_default=env.is_default,
        arch=env.arch,
        state=env.state if env.state in rules.STATES else rules.READY,
        message=env.message or "",
        recipe=RecipeOut(
            kind=recipe.get("kind", ""),
            variant=recipe.get("variant", "cpu"),
            packages=list(recipe.get("packages", [])),
        )
        if recipe
        else None,
        packages=[
            PackageOut(
                name=p["name"],
                version=p["version"],
                main=bool(p.get("main")),
                own=bool(p.get("own")),
            )
            for p in env.packages or []
        ],
        size=env.size,
        built_by=env.built_by or "",
        build_started_at=env.build_started_at,
        built_at=env.built_at,
        log_tail=(env.log_tail or "") if actor.is_admin else "",
        apps=environment_apps.offered(env),
        apps_declared=getattr(env, "apps", None) is not None,
    )


@router.get(
    "/environments", response_model=list[EnvironmentDetail], summary="Software environments"
)
async def list_environments(platform: PlatformDep, actor: ActorDep) -> list[EnvironmentDetail]:
    return [environment_out(e, actor) for e in await service.listed(platform.db)]


@router.get(
    "/environment-recipes",
    response_model=list[RecipeInfo],
    summary="Recipes an environment can be built from",
)
async def list_recipes(actor: ActorDep) -> list[RecipeInfo]:
    return [
        RecipeInfo(
            kind=kind,
            title=title,
            name=name,
            cpu_packages=list(cpu),
            cuda_packages=list(cuda),
        )
        for kind, (title, name, cpu, cuda) in rules.RECIPES.items()
    ]


@router.post(
    "/environments",
    response_model=EnvironmentDetail,
    status_code=202,
    summary="Build an environment from a recipe on this machine (admins); follow /events",
)
async def build_environment(
    body: EnvironmentBuild, platform: PlatformDep, actor: ActorDep
) -> EnvironmentDetail:
    roles.require_admin(actor, "build environments")
    recipe = rules.recipe(body.recipe, body.variant, body.packages)
    env = await platform.environments.declare(
        actor,
        recipe,
        name=body.name or "",
        display_name=body.display_name,
        description=body.description,
        is_default=body.is_default,
    )
    return environment_out(env, actor)


@router.get("/environments/{name}", response_model=EnvironmentDetail, summary="One environment")
async def get_environment(
    name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> EnvironmentDetail:
    return environment_out(await service.one(platform.db, name), actor)


@router.put(
    "/environments/{name}",
    response_model=EnvironmentDetail,
    summary="Declare or change an environment by hand (admins)",
)
async def put_environment(
    name: LabelPath, body: EnvironmentIn, platform: PlatformDep, actor: ActorDep
) -> EnvironmentDetail:
    env = await service.save(platform.db, actor, name, **body.model_dump())
    return environment_out(env, actor)


@router.put(
    "/environments/{name}/apps",
    response_model=EnvironmentDetail,
    summary="Choose the apps an environment's notebooks offer (admins)",
)
async def put_environment_apps(
    name: LabelPath, body: EnvironmentApps, platform: PlatformDep, actor: ActorDep
) -> EnvironmentDetail:
    apps = None if body.apps is None else [a.model_dump() for a in body.apps]
    env = await service.choose_apps(platform.db, actor, name, apps)
    return environment_out(env, actor)


@router.post(
    "/environments/{name}/rebuild",
    response_model=EnvironmentDetail,
    status_code=202,
    summary="Build an environment again from its recipe (admins); follow /events",
)
async def rebuild_environment(
    name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> EnvironmentDetail:
    env = await platform.environments.rebuild(actor, name)
    return environment_out(env, actor)


@router.get(
    "/environments/{name}/events",
    summary="Progress of an environment's build (Server-Sent Events; admins)",
    response_class=EventSourceResponse,
    responses=SSE_RESPONSES,
)
async def environment_events(
    name: LabelPath, platform: PlatformDep, actor: ActorDep
) -> EventSourceResponse:
    roles.require_admin(actor, "follow environment builds")
    env = await service.one(platform.db, name)
    state, message = env.state, env.message
    status = {
        "message": message or f"Environment '{name}' is {state}",
        "state": state,
        "ok": state == rules.READY,
    }
    return progress_stream(platform.broker, platform.environments.key(name), status)


@router.delete(
    "/environments/{name}", response_model=Message, summary="Delete an unused environment (admins)"
)
async def delete_environment(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> Message:
    await platform.environments.delete(actor, name)
    return Message(message=f"environment '{name}' was deleted")

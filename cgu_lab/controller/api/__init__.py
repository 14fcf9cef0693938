"""The REST API under /api: one router per area, all behind `deps.actor`.

FastAPI derives the OpenAPI document (served at /api/openapi.json and kept in
docs/openapi.json) from these routes and their pydantic schemas, so the
written API and the code cannot drift apart.
"""

from fastapi import APIRouter

from . import (
    accounts,
    audit,
    catalog,
    competition_teams,
    competitions,
    culling,
    gpus,
    invitations,
    lab,
    monitoring,
    notebook_access,
    notebooks,
    quotas,
    shares,
    storage,
    system,
    teaching,
    training,
    user_admin,
    watch,
)


def router() -> APIRouter:
    api = APIRouter(prefix="/api")
    for module in (
        system,
        accounts,
        user_admin,
        invitations,
        quotas,
        notebooks,
        shares,
        notebook_access,
        catalog,
        gpus,
        culling,
        monitoring,
        teaching,
        competitions,
        competition_teams,
        training,
        audit,
        lab,
        watch,
        storage,
    ):
        api.include_router(module.router)
    return api

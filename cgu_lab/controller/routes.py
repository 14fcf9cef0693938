"""The REST API under /api: one router per feature, all behind `api.deps.actor`.

Each feature package holds its own router (notebooks/router.py, teaching/router.py...);
this table puts them under /api in one place. FastAPI derives the OpenAPI document
(served at /api/openapi.json and kept in docs/openapi.json) from these routes and their
pydantic schemas, so the written API and the code cannot drift apart.
"""

from fastapi import APIRouter

from .accounts import admin_router as user_admin
from .accounts import invitations_router as invitations
from .accounts import router as accounts
from .api import lab, system
from .class_sessions import router as class_sessions
from .competitions import router as competitions
from .competitions import teams_router as competition_teams
from .environments import router as catalog
from .gpus import router as gpus
from .help_queue import lab_router as help_lab
from .help_queue import router as help_queue
from .monitoring import audit_router as audit
from .monitoring import router as monitoring
from .notebooks import culling_router as culling
from .notebooks import router as notebooks
from .notebooks import watch_router as watch
from .publishing import lab_router as publishing_lab
from .publishing import router as publishing
from .publishing import server_router as publishing_server
from .quotas import router as quotas
from .school_login import router as school_login
from .sharing import access_router as notebook_access
from .sharing import router as shares
from .storage import router as storage
from .teaching import router as teaching
from .training import router as training


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
        publishing,
        publishing_lab,
        publishing_server,
        catalog,
        gpus,
        culling,
        monitoring,
        teaching,
        help_queue,
        help_lab,
        class_sessions,
        competitions,
        competition_teams,
        training,
        audit,
        lab,
        watch,
        storage,
        school_login,
    ):
        api.include_router(module.router)
    return api

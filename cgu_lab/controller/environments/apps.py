"""Which apps an environment's notebooks offer beside JupyterLab (administrators decide).

The rules are core/apps.py's; this is the one place that changes an
environment's list, records who did it, and says what a notebook gets: the
list as JSON in `$CGU_APPS` (read by cgu_lab/notebook/apps). A change applies
to notebooks started afterwards; a running one keeps what it started with.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from ...core import apps as rules
from ...core import roles
from ...core.names import check_label
from ...store.models import Environment
from .. import audit
from .catalog import get_environment
from .schemas import AppOut


def offered(environment: Environment) -> list[AppOut]:
    """What the environment's notebooks offer (the built-ins when it declares nothing)."""
    apps = getattr(environment, "apps", None)
    return [AppOut(**app) for app in (rules.default_apps() if apps is None else apps)]


def notebook_setting(environment: Environment) -> str:
    """`$CGU_APPS` for a notebook of this environment ("": the built-ins)."""
    apps = getattr(environment, "apps", None)
    return "" if apps is None else json.dumps(apps, separators=(",", ":"))


async def set_apps(
    session: AsyncSession,
    actor: roles.Principal,
    name: str,
    apps: list[dict[str, Any]] | None,
) -> Environment:
    """Replace the environment's list (None: back to the built-ins), checked whole first."""
    roles.require_admin(actor, "choose an environment's apps")
    environment = await get_environment(session, check_label(name, "environment"))
    checked = rules.check_apps(apps)
    environment.apps = checked
    audit.record(
        session,
        actor.name,
        "environment.apps",
        f"environment:{environment.name}",
        apps=None if checked is None else [a["name"] for a in checked],
    )
    return environment

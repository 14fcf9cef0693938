"""The controller's page of the log-in hand-off to a notebook's origin (origin_auth.py):
the proxy's half (login.py) sends a browser without the origin's cookie here, and this
page sends it back with a one-time code once the controller's session says who it is
and that they may open the notebook."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ...core.errors import NotFound
from ...core.redirects import safe_next
from ..page_kit import page, platform_of
from .origin_auth import LOGIN_PATH

router = APIRouter(include_in_schema=False)


@router.get("/login/notebook")
async def notebook_login(
    request: Request, owner: str = "", name: str = "", state: str = "", next: str = ""
) -> Response:
    """The controller's half of the log-in hand-off to a notebook's origin (origin_auth.py)."""
    identity = await page(request)
    platform = platform_of(request)
    route = await platform.notebooks.routes.lookup(owner, name) if owner and name else None
    if route is None or not state or len(state) > 100:
        raise NotFound(f"{owner} has no notebook '{name}' that you may open")
    if identity.user_id != route.owner_id:
        principal = await platform.auth.principal(identity)
        if await platform.shares.access(principal, route.notebook_id) is None:
            raise NotFound(f"{owner} has no notebook '{name}' that you may open")
    plan = platform.settings.origins
    code = platform.origin_auth.issue(identity, route.notebook_id, plan.notebook_host(owner, name))
    prefix = f"/notebook/{quote(owner)}/{quote(name)}/"
    target = safe_next(next, prefix + "lab")
    query = urlencode({"code": code, "state": state, "next": target})
    return RedirectResponse(
        f"{plan.notebook_origin(owner, name)}{prefix}{LOGIN_PATH}?{query}", status_code=303
    )

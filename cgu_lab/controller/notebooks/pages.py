"""The notebooks' pages: the home page (my notebooks, or the log-in for a visitor), a
new notebook's form, the page that starts a stopped notebook before its link opens,
and the admin's page of the idle culler.

The auto-start page answers /notebook/auto-start/..., below the proxy's prefix: the
controller's dispatch (app.py, AUTO_START) sends it here rather than to the proxy.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ...core.errors import NotFound
from ...core.redirects import safe_next
from ...core.roles import may_manage_notebook
from ..page_kit import logged_in, page, platform_of, render, shell_pages

router = APIRouter(include_in_schema=False)
shell_pages(
    router,
    ("/notebooks", "notebooks", "My notebooks", ""),
    ("/admin/culling", "culling", "Idle culler", "admin"),
)


@router.get("/")
async def home(request: Request) -> Response:
    return RedirectResponse("/notebooks" if await logged_in(request) else "/login", status_code=303)


@router.get("/notebooks/new")
async def new_notebook_page(request: Request) -> Response:
    identity = await page(request)
    settings = platform_of(request).settings
    return await render(
        request,
        "new_notebook.html",
        "New notebook",
        identity,
        "notebooks",
        default_cpu=settings.default_cpu,
        default_memory=settings.default_memory,
    )


@router.get("/notebook/auto-start/{owner}/{name}")
async def auto_start_page(request: Request, owner: str, name: str, next: str = "") -> Response:
    identity = await page(request)
    platform = platform_of(request)
    principal = await platform.auth.principal(identity)
    async with platform.db.session() as session:
        nb, _ = await platform.notebooks.load(session, owner, name)
    can_start = may_manage_notebook(principal, nb.owner_id)
    if not can_start and await platform.shares.access(principal, nb.id) is None:
        raise NotFound(f"{owner} has no notebook '{name}'")
    lab = f"/notebook/{owner}/{name}/lab"
    target = safe_next(next, lab)
    if not target.startswith(f"/notebook/{owner}/{name}/"):
        target = lab
    if nb.state == "running":
        return RedirectResponse(target, status_code=303)
    return await render(
        request,
        "auto_start.html",
        f"Start {name}",
        identity,
        "notebooks",
        owner=owner,
        name=name,
        next=target,
        state=nb.state,
        message=nb.message if can_start else "",
        can_start=can_start,
    )

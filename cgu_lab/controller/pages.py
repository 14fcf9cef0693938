"""The web pages: server-rendered shells whose scripts call the REST API.

Pages authenticate with the session cookie only; an account with a one-time
password is sent to its account page until it chooses its own.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from .. import __version__
from ..core.errors import DomainError, Forbidden, NotFound
from ..core.redirects import safe_next
from ..core.roles import may_manage_notebook
from .accounts.auth import Identity
from .accounts.directory import get_group, get_user, require_manages_user
from .proxy.origin_auth import LOGIN_PATH
from .proxy.replies import origin_matches

templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
router = APIRouter(include_in_schema=False)


def platform_of(request: Request):
    return request.app.state.platform


def session_token(request: Request) -> str | None:
    """The log-in cookie's value (its name is the installation's: Settings.session_cookie)."""
    return request.cookies.get(platform_of(request).settings.session_cookie)


async def _identity(request: Request) -> Identity | None:
    token = session_token(request)
    return await platform_of(request).auth.from_session(token) if token else None


async def render(
    request: Request,
    template: str,
    title: str,
    identity: Identity | None,
    section: str = "",
    status_code: int = 200,
    **context,
) -> HTMLResponse:
    me = None
    if identity is not None:
        principal = await platform_of(request).auth.principal(identity)
        me = {
            "name": identity.name,
            "display_name": identity.display_name,
            "role": identity.role.value,
            "manages": bool(principal.managed_groups),
            "must_change_password": identity.must_change_password,
        }
    return templates.TemplateResponse(
        request,
        template,
        {
            "title": title,
            "me": me,
            "csrf": identity.csrf if identity else "",
            "section": section,
            "version": __version__,
            # Which backend serves this installation: pages offer what it has (the GPUs
            # page asks for the cluster's GPU products only on Kubernetes).
            "backend": platform_of(request).backend.name,
            **context,
        },
        status_code=status_code,
    )


class Redirect(Exception):
    """Answer a page request with a redirect instead (to log in, or to set a password)."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        self.location = location


async def page(request: Request, admin: bool = False, manager: bool = False) -> Identity:
    """The logged-in identity for a page; raises Redirect or Forbidden otherwise."""
    identity = await _identity(request)
    here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if identity is None:
        raise Redirect("/login?next=" + quote(here, safe=""))
    if identity.must_change_password and request.url.path != "/account":
        raise Redirect("/account?next=" + quote(here, safe=""))
    principal = await platform_of(request).auth.principal(identity)
    if admin and not principal.is_admin:
        raise Forbidden("this page is for administrators")
    if manager and not (principal.is_admin or principal.managed_groups):
        raise Forbidden("this page is for administrators and group managers")
    return identity


async def error_page(request: Request, error: DomainError) -> HTMLResponse:
    titles = {401: "Please log in", 403: "Not allowed", 404: "Not found", 409: "Not now"}
    return await render(
        request,
        "error.html",
        titles.get(error.status, "Something is wrong"),
        await _identity(request),
        message=error.message,
        status_code=error.status,
    )


# -- login -------------------------------------------------------------------


@router.get("/login")
async def login_form(request: Request, next: str = "", signed_out: str = "") -> Response:
    if await _identity(request) is not None:
        return RedirectResponse(safe_next(next), status_code=303)
    school = await platform_of(request).school_login.login_context(signed_out[:63])
    return await render(
        request, "login.html", "Log in", None, next=safe_next(next), name="", error="", **school
    )


@router.post("/login")
async def login(
    request: Request, name: str = Form(""), password: str = Form(""), next: str = Form("")
) -> Response:
    if not origin_matches(request.headers.get("origin", ""), request.headers.get("host", "")):
        raise Forbidden("log in from this site's own login page")
    client = request.client.host if request.client else "?"
    try:
        token, identity = await platform_of(request).auth.login(name, password, client)
    except DomainError as error:
        refused = await render(
            request,
            "login.html",
            "Log in",
            None,
            next=safe_next(next),
            name=name,
            error=error.message,
            status_code=error.status,
            **await platform_of(request).school_login.login_context(),
        )
        refused.headers.update(getattr(error, "headers", None) or {})  # Retry-After when slowed
        return refused
    target = safe_next(next)
    if identity.must_change_password:
        target = "/account?next=" + quote(target, safe="")
    response = RedirectResponse(target, status_code=303)
    settings = platform_of(request).settings
    response.set_cookie(
        settings.session_cookie,
        token,
        max_age=int(settings.session_hours * 3600),
        httponly=True,
        samesite="lax",
        secure=settings.https,
        path="/",
    )
    return response


@router.post("/logout")
async def logout(request: Request, csrf: str = Form("")) -> Response:
    identity = await _identity(request)
    token = session_token(request)
    target = "/login"
    if identity is not None and token:
        if not hmac.compare_digest(csrf, identity.csrf):
            raise Forbidden("reload the page and log out again")
        await platform_of(request).auth.logout(token)
        # A school login's user is offered their provider's own log-out (school_login/).
        target = await platform_of(request).school_login.after_logout(identity.user_id)
    response = RedirectResponse(target, status_code=303)
    settings = platform_of(request).settings
    response.delete_cookie(settings.session_cookie, path="/", secure=settings.https)
    return response


def shell_pages(router: APIRouter, *pages: tuple[str, str, str, str]) -> None:
    """Add pages that are only a frame around API calls, so all they differ in is
    a path, the template and navigation section they show, a title, and who may
    see them ("" anyone logged in, "manager" group managers, "admin")."""
    for path, section, title, who in pages:
        router.add_api_route(path, _shell_page(section, title, who), methods=["GET"])


def _shell_page(section: str, title: str, who: str) -> Callable[[Request], Awaitable[Response]]:
    async def show(request: Request) -> Response:
        identity = await page(request, admin=who == "admin", manager=who == "manager")
        return await render(request, f"{section}.html", title, identity, section)

    show.__name__ = f"{section}_page"
    return show


# -- pages ---------------------------------------------------------------------


@router.get("/")
async def home(request: Request) -> Response:
    return RedirectResponse("/notebooks" if await _identity(request) else "/login", status_code=303)


shell_pages(
    router,
    ("/notebooks", "notebooks", "My notebooks", ""),
    ("/storage", "storage", "Storage", ""),
    ("/account", "account", "My account", ""),
    ("/admin/users", "users", "Users", "manager"),
    ("/admin/groups", "groups", "Groups", "manager"),
    ("/admin/quotas", "quotas", "Quotas", "admin"),
    ("/admin/audit", "audit", "Audit log", "admin"),
    ("/admin/system", "system", "System", "admin"),
    ("/admin/gpus", "gpus", "GPUs", "admin"),
    ("/admin/culling", "culling", "Idle culler", "admin"),
    ("/admin/monitoring", "monitoring", "Monitoring", "admin"),
)


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


@router.get("/admin/groups/{name}")
async def group_page(request: Request, name: str) -> Response:
    identity = await page(request, manager=True)
    platform = platform_of(request)
    principal = await platform.auth.principal(identity)
    async with platform.db.session() as session:
        group = await get_group(session, name)
    if not (principal.is_admin or group.id in principal.managed_groups):
        raise NotFound(f"there is no group '{name}' that you manage")
    return await render(request, "group.html", f"Group {name}", identity, "groups", group=name)


@router.get("/admin/users/{name}")
async def user_page(request: Request, name: str) -> Response:
    """One account: groups, role, quota use, notebooks and recent audit entries."""
    identity = await page(request, manager=True)
    platform = platform_of(request)
    principal = await platform.auth.principal(identity)
    async with platform.db.session() as session:
        try:
            user = await get_user(session, name)
            await require_manages_user(session, principal, user)
        except Forbidden:
            raise NotFound(f"there is no user '{name}' that you manage") from None
    return await render(request, "user.html", f"User {name}", identity, "users", user=user.name)


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

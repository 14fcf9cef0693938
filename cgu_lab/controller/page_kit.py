"""What every page of the controller is built with; the pages themselves live in their
features' packages (`<feature>/pages.py`).

A page is a server-rendered shell whose scripts call the REST API. `page` is its
gate: pages authenticate with the session cookie only, and an account with a
one-time password is sent to its account page until it chooses its own. `render`
fills the layout every page shares (who is logged in, the navigation, the CSRF
token); `error_page` shows a refusal in that layout; `shell_pages` adds the pages
that are only a frame around API calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from .. import __version__
from ..core.errors import DomainError, Forbidden
from .accounts.auth import Identity

templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))


def platform_of(request: Request):
    return request.app.state.platform


def session_token(request: Request) -> str | None:
    """The log-in cookie's value (its name is the installation's: Settings.session_cookie)."""
    return request.cookies.get(platform_of(request).settings.session_cookie)


def signed_in(request: Request, token: str, target: str) -> Response:
    """A redirect to `target` that carries a new session's cookie: the one way a page
    signs someone in (the password form, a school's log-in)."""
    settings = platform_of(request).settings
    response = RedirectResponse(target, status_code=303)
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


async def logged_in(request: Request) -> Identity | None:
    """Who the session cookie names, or None: for pages that also answer a visitor."""
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
    identity = await logged_in(request)
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
        await logged_in(request),
        message=error.message,
        status_code=error.status,
    )


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

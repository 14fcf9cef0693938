"""The accounts' pages: logging in and out, my account, and the managers' pages of users
and groups (the lists, and one user or group).

The log-in form posts here, not to the API: it sets the session cookie the pages
and the API read. A school's own log-in (OIDC, LDAP) is `school_login/pages.py`'s.
"""

from __future__ import annotations

import hmac
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from ...core.errors import DomainError, Forbidden, NotFound
from ...core.redirects import safe_next
from ..page_kit import (
    logged_in,
    page,
    platform_of,
    render,
    session_token,
    shell_pages,
    signed_in,
)
from ..proxy.replies import origin_matches
from .directory import get_group, get_user, require_manages_user

router = APIRouter(include_in_schema=False)
shell_pages(
    router,
    ("/account", "account", "My account", ""),
    ("/admin/users", "users", "Users", "manager"),
    ("/admin/groups", "groups", "Groups", "manager"),
)


@router.get("/login")
async def login_form(request: Request, next: str = "", signed_out: str = "") -> Response:
    if await logged_in(request) is not None:
        return RedirectResponse(safe_next(next), status_code=303)
    school = await platform_of(request).school_login.login_context(signed_out[:63])
    return await render(
        request,
        "login.html",
        "Log in",
        None,
        next=safe_next(next),
        name="",
        error="",
        school_logins=school.school_logins,
        end_session=school.end_session,
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
        school = await platform_of(request).school_login.login_context()
        refused = await render(
            request,
            "login.html",
            "Log in",
            None,
            next=safe_next(next),
            name=name,
            error=error.message,
            status_code=error.status,
            school_logins=school.school_logins,
            end_session=school.end_session,
        )
        refused.headers.update(getattr(error, "headers", None) or {})  # Retry-After when slowed
        return refused
    target = safe_next(next)
    if identity.must_change_password:
        target = "/account?next=" + quote(target, safe="")
    return signed_in(request, token, target)


@router.post("/logout")
async def logout(request: Request, csrf: str = Form("")) -> Response:
    identity = await logged_in(request)
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

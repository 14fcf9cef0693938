"""The school login's pages: the button's redirect to the provider, the provider's
callback, the LDAP form's post, and a refusal page that says what to do next.

The callback is a top-level GET from the provider's site, so the browser-binding
cookie is SameSite=Lax (sent on that navigation, not on a cross-site subrequest),
host-only, HttpOnly and limited to /login/school.
"""

from __future__ import annotations

import math

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from ...core.errors import DomainError, Forbidden
from ...core.redirects import safe_next
from ..page_kit import platform_of, render, signed_in
from ..proxy.replies import origin_matches

router = APIRouter(include_in_schema=False)
COOKIE_PATH = "/login/school"
BINDING_SECONDS = 600
# Refusals that count as a guess for the log-in throttle; the rest (a directory that
# does not answer, a disabled account) are not the person's guess.
GUESSES = frozenset({"wrong_credentials", "password_missing", "invalid_name"})


def _binding_cookie(request: Request) -> str:
    return platform_of(request).settings.session_cookie.replace("session", "school")


def _signed_in(request: Request, token: str, target: str) -> Response:
    settings = platform_of(request).settings
    response = signed_in(request, token, safe_next(target))
    response.delete_cookie(_binding_cookie(request), path=COOKIE_PATH, secure=settings.https)
    return response


async def _refused(request: Request, error: DomainError, provider: str) -> Response:
    school = platform_of(request).school_login.providers.get(provider)
    return await render(
        request,
        "school_login_refused.html",
        "Log-in refused",
        None,
        message=error.message,
        code=error.code,
        school=school.name if school else "",
        provider=provider if school and school.kind == "oidc" else "",
        status_code=error.status,
    )


@router.get("/login/school/{provider}")
async def start(request: Request, provider: str, next: str = "") -> Response:
    """The "Log in with <school>" button: off to the provider's own login page."""
    try:
        url, browser = await platform_of(request).school_login.begin(provider, safe_next(next))
    except DomainError as error:
        return await _refused(request, error, provider)
    settings = platform_of(request).settings
    response = RedirectResponse(url, status_code=303)
    response.set_cookie(
        _binding_cookie(request),
        browser,
        max_age=BINDING_SECONDS,
        httponly=True,
        samesite="lax",
        secure=settings.https,
        path=COOKIE_PATH,
    )
    return response


@router.get("/login/school/{provider}/callback")
async def callback(
    request: Request,
    provider: str,
    state: str = "",
    code: str = "",
    error: str = "",
) -> Response:
    client = request.client.host if request.client else "?"
    try:
        token, target = await platform_of(request).school_login.finish(
            provider,
            state[:200],
            code[:2000],
            error[:200],
            request.cookies.get(_binding_cookie(request), ""),
            client,
        )
    except DomainError as refusal:
        return await _refused(request, refusal, provider)
    return _signed_in(request, token, target)


@router.post("/login/school/{provider}")
async def password_login(
    request: Request,
    provider: str,
    name: str = Form(""),
    password: str = Form(""),
    next: str = Form(""),
) -> Response:
    """An LDAP directory's form on the login page: the school's user name and password."""
    if not origin_matches(request.headers.get("origin", ""), request.headers.get("host", "")):
        raise Forbidden("log in from this site's own login page")
    client = request.client.host if request.client else "?"
    platform = platform_of(request)
    # Paced as password guesses are (accounts/security.py), under the school's own key.
    key = f"school:{provider}:{name.strip().lower()[:256]}"
    wait = platform.auth.throttle.check(key, client)
    if wait:
        refusal = DomainError(f"too many failed logins; try again in {math.ceil(wait)} seconds")
        refusal.status, refusal.code = 429, "too_many_requests"
        return await _refused(request, refusal, provider)
    try:
        token = await platform.school_login.password_login(provider, name, password[:1024], client)
    except DomainError as refusal:
        if refusal.code not in GUESSES:
            platform.auth.throttle.succeeded(key, client)
        return await _refused(request, refusal, provider)
    platform.auth.throttle.succeeded(key, client)
    return _signed_in(request, token, next)

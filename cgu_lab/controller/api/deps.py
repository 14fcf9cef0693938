"""Authentication and authorisation shared by every API route.

`actor` resolves the caller from the session cookie or a bearer token and
returns their `Principal`. Cookie-authenticated requests that change state
must carry the session's CSRF token in `X-CSRF-Token`, because pages and
notebooks share one origin. Accounts with a one-time password may only
change it until they do.
"""

from __future__ import annotations

import hmac
import re
from typing import Annotated

from fastapi import Depends, Request

from ...core.errors import Forbidden, Unauthenticated
from ...core.roles import Principal
from ..auth import SESSION_COOKIE, Identity
from ..root import Platform

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
# Routes an account with a one-time password may still use.
PASSWORD_CHANGE_ROUTES = frozenset({"/api/me", "/api/me/password"})
# What a notebook server may read with its own token, besides its own notebook's routes.
NOTEBOOK_TOKEN_READS = frozenset(
    {
        "/api/me",
        "/api/version",
        "/api/directory",
        "/api/shared-with-me",
        "/api/gpu-types",
        "/api/environments",
        "/api/groups",
        "/api/templates",
        "/api/assignments",
        "/api/courses",
    }
)
# What it may change: save its files as a template, hand in an assignment,
# mark course material as seen.
NOTEBOOK_TOKEN_WRITES = re.compile(r"^/api/(templates|assignments/\d+/submissions|courses/seen)$")
NOTEBOOK_ROUTE = re.compile(r"^/api/notebooks/(?P<owner>[^/]+)/(?P<name>[^/]+)(/.*)?$")


def platform(request: Request) -> Platform:
    return request.app.state.platform


async def identity(request: Request) -> Identity:
    found = await platform(request).auth.identify(
        request.cookies.get(SESSION_COOKIE), request.headers.get("Authorization")
    )
    if found is None:
        raise Unauthenticated("log in first (or send a valid API token)")
    if found.via == "session" and request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if not sent or not hmac.compare_digest(sent, found.csrf):
            raise Forbidden(
                "the request lacks this page's CSRF token; reload the page and try again"
            )
    if found.must_change_password and request.url.path not in PASSWORD_CHANGE_ROUTES:
        raise Forbidden("set a new password first (your account has a one-time password)")
    if found.via == "notebook":
        await _check_notebook_scope(request, found)
    return found


async def _check_notebook_scope(request: Request, found: Identity) -> None:
    """A notebook's own token acts for its owner, but only about that notebook."""
    path = request.url.path
    if request.method in SAFE_METHODS and (
        path in NOTEBOOK_TOKEN_READS or path == f"/api/users/{found.name}/quota"
    ):
        return
    if request.method == "POST" and NOTEBOOK_TOKEN_WRITES.match(path):
        return
    match = NOTEBOOK_ROUTE.match(path)
    if match:
        route = await platform(request).notebooks.route(match["owner"], match["name"])
        if route is not None and route.notebook_id == found.notebook_id:
            return
    raise Forbidden("a notebook's own token may only be used for that notebook")


async def actor(request: Request, who: Annotated[Identity, Depends(identity)]) -> Principal:
    return await platform(request).auth.principal(who)


PlatformDep = Annotated[Platform, Depends(platform)]
IdentityDep = Annotated[Identity, Depends(identity)]
ActorDep = Annotated[Principal, Depends(actor)]

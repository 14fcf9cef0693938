"""Authentication and authorisation shared by every API route.

`identity` resolves the caller: the identity the notebook proxy hands over for
JupyterLab's calls on a notebook's origin, else the session cookie or a bearer
token. Cookie-authenticated requests that change state must come from the
controller's own pages: the session's CSRF token in `X-CSRF-Token`, and no
foreign `Origin`. Accounts with a one-time password may only change it.

Every router declares the scope its routes need with `require_scope`; a
credential bound to one notebook (its token, its origin) may only name that
notebook in the path.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request

from ...core.errors import Forbidden, Unauthenticated
from ...core.roles import Principal
from ...core.scopes import SCOPES
from ...core.scopes import require as declared
from ..accounts.auth import Identity
from ..proxy.replies import origin_matches
from ..root import Platform

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
# The ASGI scope key under which the notebook proxy hands over the browser user's
# identity on a notebook's origin; never set from anything a client sends.
ORIGIN_IDENTITY = "cgu.origin_identity"
# Routes an account with a one-time password may still use.
PASSWORD_CHANGE_ROUTES = frozenset({"/api/me", "/api/me/password"})


def platform(request: Request) -> Platform:
    return request.app.state.platform


def _foreign_origin(request: Request) -> bool:
    """True when a browser says the request comes from another site or origin."""
    origin = request.headers.get("origin")
    if not origin:
        return request.headers.get("sec-fetch-site") in ("cross-site", "same-site")
    return not origin_matches(origin, request.headers.get("host", ""))


async def identity(request: Request) -> Identity:
    handed = request.scope.get(ORIGIN_IDENTITY)
    if handed is not None:
        return handed
    site = platform(request)
    found = await site.auth.identify(
        request.cookies.get(site.settings.session_cookie), request.headers.get("Authorization")
    )
    if found is None:
        raise Unauthenticated("log in first (or send a valid API token)")
    if found.via == "session" and request.method not in SAFE_METHODS:
        sent = request.headers.get(CSRF_HEADER, "")
        if _foreign_origin(request) or not sent or not hmac.compare_digest(sent, found.csrf):
            raise Forbidden(
                "the request lacks this page's CSRF token; reload the page and try again"
            )
    if found.must_change_password and request.url.path not in PASSWORD_CHANGE_ROUTES:
        raise Forbidden("set a new password first (your account has a one-time password)")
    return found


def require_scope(name: str):
    """A dependency refusing credentials without scope `name` (checked at import)."""
    declared(name)

    async def check(request: Request, who: Annotated[Identity, Depends(identity)]) -> None:
        if name not in who.scopes:
            raise Forbidden(
                f"this credential may not {SCOPES[name]}; use your own login or API token"
            )
        owner, nb = request.path_params.get("owner"), request.path_params.get("name")
        if who.notebook_id is None or owner is None:
            return  # not bound to a notebook, or a route about no notebook (its scope decides)
        route = await platform(request).notebooks.routes.lookup(owner, nb) if nb else None
        if route is None or route.notebook_id != who.notebook_id:
            raise Forbidden("this credential may only be used for its own notebook")

    return Depends(check)


async def actor(request: Request, who: Annotated[Identity, Depends(identity)]) -> Principal:
    return await platform(request).auth.principal(who)


PlatformDep = Annotated[Platform, Depends(platform)]
IdentityDep = Annotated[Identity, Depends(identity)]
ActorDep = Annotated[Principal, Depends(actor)]

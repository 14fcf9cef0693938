"""The proxy's half of the log-in hand-off to a notebook's origin (see origin_auth.py).

`_log_in` starts it for a page request without the origin's cookie: a random
`state` in a short-lived cookie of that origin (one per attempt, so several
tabs can log in at once), then off to the controller. `_login_callback`
finishes it: `state` must match its cookie, the one-time code must be fresh
and meant for this origin and notebook; then the origin's own cookie is set.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import parse_qs, quote, urlencode

from ...core.redirects import safe_next
from ..notebooks.routes import Route
from .origin_auth import STATE_SECONDS, cookie_name, state_cookie_name
from .replies import (
    PREFIX,
    cookies,
    header,
    original,
    redirect,
    send_json,
    send_problem,
    wants_page,
)


class LoginHandOff:
    async def _log_in(self, scope, send, route: Route) -> None:
        if not wants_page(scope):
            await send_json(
                send, 401, "log in first: reload the page (or send a valid API token)", "login"
            )
            return
        state = secrets.token_urlsafe(24)
        query = urlencode(
            {"owner": route.owner, "name": route.name, "state": state, "next": original(scope)}
        )
        name = f"{state_cookie_name(route.notebook_id)}-{state[:8]}"
        await redirect(
            send,
            f"{self.plan.controller_url}/login/notebook?{query}",
            self._cookie(name, state, route, STATE_SECONDS),
        )

    async def _login_callback(self, scope, send, route: Route) -> None:
        query = parse_qs((scope.get("query_string") or b"").decode("latin-1"))
        code, state = query.get("code", [""])[0], query.get("state", [""])[0]
        state_name = f"{state_cookie_name(route.notebook_id)}-{state[:8]}"
        expected = cookies(scope).get(state_name, "")
        grant = None
        if code and state and expected and hmac.compare_digest(state, expected):
            grant = self.origin_auth.redeem(code, route.notebook_id, header(scope, b"host"))
        if grant is None:
            lab = f"{PREFIX}{quote(route.owner)}/{quote(route.name)}/lab"
            await send_problem(
                scope,
                send,
                400,
                "the log-in to this notebook expired or did not start here; open it again",
                "login_failed",
                title="Log-in expired",
                links=[
                    ("Open the notebook again", lab),
                    ("Back to the cgu-lab portal", f"{self.plan.controller_url}/"),
                ],
            )
            return
        prefix = route.paths[0]
        target = safe_next(query.get("next", [""])[0], prefix + "lab")
        if not target.startswith(route.paths):
            target = prefix + "lab"
        value = self.origin_auth.cookie_value(
            grant.user_id, route.notebook_id, grant.session_digest
        )
        await redirect(
            send,
            target,
            [
                *self._cookie(cookie_name(route.notebook_id), value, route),
                *self._cookie(state_name, "", route, 0),
            ],
        )

"""Who is calling: the identity the controller's proxy vouches for.

The proxy sends the user's name, display name and access level in headers,
together with a secret that only the controller and this server know. A
request without the right secret is anonymous and refused, so reaching the
server's port directly, or forging the headers, gets nowhere.

On Kubernetes the notebook may instead sit behind an ingress that sets a
trusted user header (`trusted_header`, e.g. `kubeflow-userid`); that mode is
only safe behind a NetworkPolicy letting nothing but the ingress reach the pod.

`get_user` is also where a request is refused, with a 403 `{message, code}`
before the handler runs, when it has no platform user (jupyter_server would
still serve such callers static files and its version) or lies outside the
caller's share (`authorizer.request_refusal`: a read-only PUT, another file
for a single-file share).

Of the places such a guard could live, this one is the robust choice:

- every handler that can know its caller (every `JupyterHandler`: those of
  jupyter_server, jupyterlab_server and any extension) calls `get_user` in
  `prepare()`, before its method and whether or not it ever asks the
  Authorizer. A handler that is not a `JupyterHandler` never learns a user,
  so it can act for nobody; jupyter_server registers two (a trailing-slash
  redirect, robots.txt/favicon.ico), and the route walk in
  tests/security/test_notebook_routes.py flags any that answers a stranger;
- it holds for routes added at any time by any extension, where a hook
  patched onto the route table by our ExtensionApp would see only the routes
  registered before it ran, and would vanish if the extension were disabled;
- the identity provider is set on the server's command line by the backend,
  which a config file in the (owner-writable) home cannot override;
- it works the same whether the access comes from the proxy's headers or,
  asynchronously, from the controller (ingress mode).
"""

from __future__ import annotations

import hmac
import json
import os
from urllib.parse import unquote

from cachetools import TTLCache
from jupyter_server.auth.identity import IdentityProvider
from tornado import web
from traitlets import Float, Unicode, default

from ..core.collaboration import ROOM_HANDLER
from . import collaboration, controller_client, workspaces
from .authorizer import request_refusal, route_name
from .caller import CURRENT_HANDLER, CURRENT_USER, PlatformUser

USER_HEADER = "X-Cgu-User"
DISPLAY_HEADER = "X-Cgu-Display-Name"
ACCESS_HEADER = "X-Cgu-Access"
SCOPE_HEADER = "X-Cgu-Scope"
SECRET_HEADER = "X-Cgu-Proxy-Secret"  # noqa: S105 - a header name
VIA_HEADER = "X-Cgu-Via"
APP_HEADER = "X-Cgu-App"
ACCESS_LEVELS = ("owner", "edit", "read")
# Levels the proxy may vouch for; "visit" (a published demo's visitor) only through the
# proxy, which names the app (`APP_HEADER`): an ingress's answer never carries one.
PROXY_LEVELS = (*ACCESS_LEVELS, "visit")
# Trusted-header mode: users whose access is remembered at most (names come from a header).
GRANT_ENTRIES = 10_000
UNAUTHENTICATED = (
    "this notebook answers only through the cgu-lab platform: open it from your control panel"
)


# A path no file can have: a garbled scope header grants nothing.
NO_FILE = ("\x00",)


def parse_scope(header: str) -> tuple[str, ...]:
    """The X-Cgu-Scope header: a URL-encoded JSON list of paths ("" or absent: none)."""
    if not header:
        return ()
    try:
        paths = json.loads(unquote(header))
    except ValueError:
        return NO_FILE
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        return NO_FILE
    return tuple(p.strip("/") for p in paths)


class ProxyIdentityProvider(IdentityProvider):
    proxy_secret = Unicode(
        help="Secret the controller's proxy sends with every request (default: $CGU_PROXY_SECRET)."
    ).tag(config=True)

    trusted_header = Unicode(
        "",
        help=(
            "Kubernetes only: a header set by the cluster's ingress that names the user "
            "(e.g. kubeflow-userid). Used when no proxy secret is configured."
        ),
    ).tag(config=True)

    owner = Unicode(
        help="Platform name of this notebook's owner (default: $CGU_NOTEBOOK_OWNER)."
    ).tag(config=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        # user name or e-mail -> (access, scope, platform user), for grant_seconds;
        # bounded, as the names are a header's.
        self._grants: TTLCache[str, tuple[str | None, tuple[str, ...], str]] = TTLCache(
            GRANT_ENTRIES, self.grant_seconds
        )

    @default("proxy_secret")
    def _default_secret(self) -> str:
        # Taken out of the environment so that kernels and terminals do not inherit it.
        return os.environ.pop("CGU_PROXY_SECRET", "")

    @default("owner")
    def _default_owner(self) -> str:
        return os.environ.get("CGU_NOTEBOOK_OWNER", "")

    @default("token")
    def _token_default(self) -> str:
        return ""

    need_token = False

    @property
    def login_available(self) -> bool:
        return False

    grant_seconds = Float(
        5.0,
        help="Trusted-header mode: how long an answer about a user's access is reused.",
    ).tag(config=True)

    async def get_user(self, handler):
        CURRENT_USER.set(None)
        CURRENT_HANDLER.set(handler)
        if self.proxy_secret:
            user = self._from_proxy(handler)
        elif self.trusted_header:
            user = await self._from_ingress(handler)
        else:
            user = None
        if user is None:
            # Nothing here is for anonymous callers, not even the handlers jupyter_server
            # leaves open (`@allow_unauthenticated`: static files, version, logout page).
            self._refuse(handler, None, ("unauthenticated", UNAUTHENTICATED))

        refusal = request_refusal(handler, user)
        if refusal is not None:
            self._refuse(handler, user, refusal)
        workspaces.separate(handler, user)  # a visitor's layout is their own
        if route_name(handler) == ROOM_HANDLER and not hasattr(handler, "cgu_connection"):
            # A collaboration room: what this connection may send is decided per message.
            handler.cgu_connection = collaboration.attach(handler, user)
            # The room this request may create (its loading, saving and file watching
            # tasks inherit this context) is the server's, not this caller's.
            CURRENT_USER.set(None)
            CURRENT_HANDLER.set(None)
        return user

    def _refuse(self, handler, user: PlatformUser | None, refusal: tuple[str, str]) -> None:
        """Answer 403 `{message, code}` and stop (`web.Finish`): the handler never runs.

        Called from the handler's `prepare()`, before its method.
        """
        code, message = refusal
        log = self.log.debug if user is None else self.log.warning
        log(
            "cgu-lab: refused %s %s for %s (%s)",
            handler.request.method,
            handler.request.path,
            user.name if user else "an anonymous caller",
            code,
        )
        handler.set_status(403)
        handler.set_header("Content-Type", "application/json")
        handler.set_header("Cache-Control", "no-store")
        # tornado's own write/finish, not the handler's: some override `finish` with another
        # signature (jupyterlab_server's licenses handler), and a refusal is no user activity.
        web.RequestHandler.write(handler, json.dumps({"message": message, "code": code}))
        web.RequestHandler.finish(handler)
        raise web.Finish()

    def _user(self, handler, name: str, access: str, scope: tuple[str, ...]) -> PlatformUser:
        display = unquote(handler.request.headers.get(DISPLAY_HEADER, "")) or name
        user = PlatformUser(
            username=name, name=name, display_name=display, access=access, scope=scope
        )
        CURRENT_USER.set(user)
        return user

    def _from_proxy(self, handler) -> PlatformUser | None:
        """Local backend: the proxy vouches for the user and their access with the secret."""
        headers = handler.request.headers
        sent = headers.get(SECRET_HEADER, "")
        if not sent or not hmac.compare_digest(sent.encode(), self.proxy_secret.encode()):
            return None
        name = headers.get(USER_HEADER, "")
        access = headers.get(ACCESS_HEADER, "owner" if name == self.owner else "")
        if not name or access not in PROXY_LEVELS:
            return None
        if headers.get(VIA_HEADER) == "token":
            # Authenticated by an API token, not a browser cookie: no XSRF to fear.
            handler._token_authenticated = True
        user = self._user(handler, name, access, parse_scope(headers.get(SCOPE_HEADER, "")))
        if access == "visit":
            user.app = unquote(headers.get(APP_HEADER, ""))
        return user

    async def _from_ingress(self, handler) -> PlatformUser | None:
        """Kubernetes: the ingress names the user; their access is asked of the controller."""
        name = handler.request.headers.get(self.trusted_header, "")
        if not name:
            return None
        if name == self.owner:
            return self._user(handler, name, "owner", ())
        # Kubeflow's ingress names users by e-mail: the controller says who that is.
        access, scope, user = await self._grant(handler, name)
        if access not in ACCESS_LEVELS:
            return None
        return self._user(handler, user, access, scope)

    async def _grant(self, handler, name: str) -> tuple[str | None, tuple[str, ...], str]:
        """What the controller says `name` (a user name or an e-mail address) may do here,
        and which platform user that is (asked with the server's client, which the cgu-lab
        extension keeps in the server's settings; without it, nothing)."""
        hit = self._grants.get(name)
        if hit is not None:
            return hit
        client = handler.settings.get(controller_client.SETTING)
        try:
            if client is None:
                raise controller_client.ControllerError(
                    503, "the cgu_lab server extension is not loaded"
                )
            answer = await client.call("GET", client.notebook_path("access"), query={"user": name})
            grant = (
                answer.get("access"),
                tuple(answer.get("scope") or ()),
                answer.get("user") or name,
            )
        except controller_client.ControllerError as error:
            self.log.warning("cgu-lab: cannot ask the controller about %s: %s", name, error.message)
            grant = (None, (), name)  # no answer, no access
        self._grants[name] = grant
        return grant

    def validate_security(self, app, ssl_options=None) -> None:
        if not (self.proxy_secret or self.trusted_header):
            app.log.critical(
                "cgu-lab: no proxy secret and no trusted header configured; every request "
                "will be refused. Start notebooks through the cgu-lab controller."
            )

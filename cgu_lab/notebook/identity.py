"""Who is calling: the identity the controller's proxy vouches for.

The proxy sends the user's name, display name and access level in headers,
together with a secret that only the controller and this server know. A
request without the right secret is anonymous and refused, so reaching the
server's port directly, or forging the headers, gets nowhere.

On Kubernetes the notebook may instead sit behind an ingress that sets a
trusted user header (`trusted_header`, e.g. `kubeflow-userid`); that mode is
only safe behind a NetworkPolicy letting nothing but the ingress reach the pod.
"""

from __future__ import annotations

import contextvars
import hmac
import json
import os
import time
from dataclasses import dataclass, field
from urllib.parse import unquote

from jupyter_server.auth.identity import IdentityProvider, User
from traitlets import Float, Unicode, default

from .controller_client import ControllerError, controller_client

USER_HEADER = "X-Cgu-User"
DISPLAY_HEADER = "X-Cgu-Display-Name"
ACCESS_HEADER = "X-Cgu-Access"
SCOPE_HEADER = "X-Cgu-Scope"
SECRET_HEADER = "X-Cgu-Proxy-Secret"  # noqa: S105 - a header name
VIA_HEADER = "X-Cgu-Via"
ACCESS_LEVELS = ("owner", "edit", "read")


@dataclass
class PlatformUser(User):
    """A jupyter_server user with the access the platform grants them here."""

    access: str = "read"
    # Files a single-file share is limited to; empty for the whole notebook.
    scope: tuple[str, ...] = field(default_factory=tuple)


# The caller of the request being handled, for code that is not given the
# handler (the contents manager marks files read-only for read-only callers).
CURRENT_USER: contextvars.ContextVar[PlatformUser | None] = contextvars.ContextVar(
    "cgu_lab_current_user", default=None
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
        self._grants: dict[str, tuple[tuple[str | None, tuple[str, ...]], float]] = {}

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

    def get_user(self, handler):
        if self.proxy_secret:
            return self._from_proxy(handler)
        if self.trusted_header:
            return self._from_ingress(handler)
        return None

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
        if not name or access not in ACCESS_LEVELS:
            return None
        if headers.get(VIA_HEADER) == "token":
            # Authenticated by an API token, not a browser cookie: no XSRF to fear.
            handler._token_authenticated = True
        return self._user(handler, name, access, parse_scope(headers.get(SCOPE_HEADER, "")))

    async def _from_ingress(self, handler) -> PlatformUser | None:
        """Kubernetes: the ingress names the user; their access is asked of the controller."""
        name = handler.request.headers.get(self.trusted_header, "")
        if not name:
            return None
        if name == self.owner:
            return self._user(handler, name, "owner", ())
        access, scope = await self._grant(name)
        if access not in ("edit", "read"):
            return None
        return self._user(handler, name, access, scope)

    async def _grant(self, name: str) -> tuple[str | None, tuple[str, ...]]:
        now = time.monotonic()
        hit = self._grants.get(name)
        if hit is not None and hit[1] > now:
            return hit[0]
        client = controller_client()
        try:
            answer = await client.call("GET", client.notebook_path("access"), query={"user": name})
            grant = (answer.get("access"), tuple(answer.get("scope") or ()))
        except ControllerError as error:
            self.log.warning("cgu-lab: cannot ask the controller about %s: %s", name, error.message)
            grant = (None, ())  # no answer, no access
        self._grants[name] = (grant, now + self.grant_seconds)
        return grant

    def validate_security(self, app, ssl_options=None) -> None:
        if not (self.proxy_secret or self.trusted_header):
            app.log.critical(
                "cgu-lab: no proxy secret and no trusted header configured; every request "
                "will be refused. Start notebooks through the cgu-lab controller."
            )

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

import hmac
import os
from dataclasses import dataclass
from urllib.parse import unquote

from jupyter_server.auth.identity import IdentityProvider, User
from traitlets import Unicode, default

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
    scope: str = ""  # a single file the share is limited to; "" for the whole notebook


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

    def get_user(self, handler) -> PlatformUser | None:
        headers = handler.request.headers
        if self.proxy_secret:
            sent = headers.get(SECRET_HEADER, "")
            if not sent or not hmac.compare_digest(sent.encode(), self.proxy_secret.encode()):
                return None
            name = headers.get(USER_HEADER, "")
            access = headers.get(ACCESS_HEADER, "owner" if name == self.owner else "")
        elif self.trusted_header:
            name = headers.get(self.trusted_header, "")
            access = "owner" if name and name == self.owner else headers.get(ACCESS_HEADER, "")
        else:
            return None
        if not name or access not in ACCESS_LEVELS:
            return None
        display = unquote(headers.get(DISPLAY_HEADER, "")) or name
        if self.proxy_secret and headers.get(VIA_HEADER) == "token":
            # Authenticated by an API token, not a browser cookie: no XSRF to fear.
            handler._token_authenticated = True
        return PlatformUser(
            username=name,
            name=name,
            display_name=display,
            access=access,
            scope=unquote(headers.get(SCOPE_HEADER, "")),
        )

    def validate_security(self, app, ssl_options=None) -> None:
        if not (self.proxy_secret or self.trusted_header):
            app.log.critical(
                "cgu-lab: no proxy secret and no trusted header configured; every request "
                "will be refused. Start notebooks through the cgu-lab controller."
            )

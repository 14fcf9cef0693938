"""The jupyter_server ExtensionApp of cgu-lab: one route table under `cgu-lab/`.

The security of a shared notebook does not live here but in three classes the
backend names on the server's command line (`identity.ProxyIdentityProvider`,
which also refuses requests outside a share before any handler runs;
`authorizer.ShareAuthorizer`; `contents.ShareAwareContentsManager`, which
keeps trust the owner's). A command-line setting cannot be overridden by a
config file in the owner's home; an extension can be disabled by one. So this
app only checks, at start, that the server it runs in is wired that way, and
says so loudly when it is not.
"""

from __future__ import annotations

import os

from jupyter_server.extension.application import ExtensionApp
from traitlets import Unicode, default

from .authorizer import ShareAuthorizer
from .contents import ShareAwareContentsManager
from .handlers import route_table
from .identity import ProxyIdentityProvider

# The classes a platform notebook server must run with, by the ServerApp attribute holding each.
REQUIRED = {
    "identity_provider": ProxyIdentityProvider,
    "authorizer": ShareAuthorizer,
    "contents_manager": ShareAwareContentsManager,
}


class CguLabExtension(ExtensionApp):
    name = "cgu_lab"

    controller_url = Unicode(
        help="Where this server reaches the controller's API (default: $CGU_CONTROLLER_URL)."
    ).tag(config=True)

    public_url = Unicode(
        "/",
        help="Where the user's browser reaches the controller's pages (the control panel link).",
    ).tag(config=True)

    @default("controller_url")
    def _default_controller_url(self) -> str:
        return os.environ.get("CGU_CONTROLLER_URL", "")

    def initialize_settings(self) -> None:
        for attribute, required in REQUIRED.items():
            actual = getattr(self.serverapp, attribute, None)
            if not isinstance(actual, required):
                self.log.critical(
                    "cgu-lab: this server's %s is %s, not %s: shares are not enforced as the "
                    "platform means. Start notebooks through the cgu-lab controller.",
                    attribute,
                    type(actual).__name__,
                    required.__name__,
                )

    def initialize_handlers(self) -> None:
        self.handlers.extend(route_table())

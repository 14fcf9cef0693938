"""The jupyter_server ExtensionApp of cgu-lab: one route table under `cgu-lab/`."""

from __future__ import annotations

import os

from jupyter_server.extension.application import ExtensionApp
from traitlets import Unicode, default

from .handlers import route_table


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

    def initialize_handlers(self) -> None:
        self.handlers.extend(route_table())

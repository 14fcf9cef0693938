"""The jupyter_server ExtensionApp of cgu-lab: one route table under `cgu-lab/`.

The security of a shared notebook does not live here but in three classes the
backend names on the server's command line (`identity.ProxyIdentityProvider`,
which also refuses requests outside a share before any handler runs;
`authorizer.ShareAuthorizer`; `contents.ShareAwareContentsManager`, which
keeps trust the owner's). A command-line setting cannot be overridden by a
config file in the owner's home; an extension can be disabled by one. So this
app only checks, at start, that the server it runs in is wired that way, and
says so loudly when it is not.

Its settings are traits (`--CguLabExtension.<name>=` or a config file). The
controller's backends launch servers with environment variables, so each
trait's default is the variable it names; nothing else here reads the
environment for them. What the handlers share (the controller client, the
resource sampler) is made once here and kept in the server's settings.
"""

from __future__ import annotations

import os

from jupyter_server.extension.application import ExtensionApp
from traitlets import Float, Int, Unicode, default

from . import apps as notebook_apps
from . import controller_client, usage
from .authorizer import ShareAuthorizer
from .clipboard import clipboard_bridge
from .collaboration import SETTING as COLLABORATION
from .collaboration import Presence
from .collaboration.handlers import collaboration_routes
from .contents import ShareAwareContentsManager
from .handlers import route_table
from .identity import ProxyIdentityProvider
from .serial import serial_routes
from .transfer import allowance as disk
from .transfer import transfer_routes

# The classes a platform notebook server must run with, by the ServerApp attribute holding each.
REQUIRED = {
    "identity_provider": ProxyIdentityProvider,
    "authorizer": ShareAuthorizer,
    "contents_manager": ShareAwareContentsManager,
}


def _number(name: str) -> float | None:
    """An environment variable as a number; None when unset, empty or not a number."""
    value = os.environ.get(name, "")
    try:
        return float(value) if value else None
    except ValueError:
        return None


class CguLabExtension(ExtensionApp):
    name = "cgu_lab"

    controller_url = Unicode(
        help="Where this server reaches the controller's API (default: $CGU_CONTROLLER_URL)."
    ).tag(config=True)

    controller_socket = Unicode(
        help=(
            "The controller's Unix socket, used instead of controller_url's host and port "
            "when set (default: $CGU_CONTROLLER_SOCKET): a server in a private network "
            "cannot reach the host's loopback."
        )
    ).tag(config=True)

    public_url = Unicode(
        help=(
            "Where the user's browser reaches the controller's pages, the control panel link "
            "(default: $CGU_PUBLIC_URL, else /)."
        ),
    ).tag(config=True)

    api_token = Unicode(
        help=(
            "This notebook's own token for the controller's API (default: $CGU_API_TOKEN, "
            "taken out of the environment so that kernels and terminals do not inherit it)."
        ),
    ).tag(config=True)

    notebook_owner = Unicode(
        help="Platform name of this notebook's owner (default: $CGU_NOTEBOOK_OWNER)."
    ).tag(config=True)

    notebook_name = Unicode(help="This notebook's name (default: $CGU_NOTEBOOK_NAME).").tag(
        config=True
    )

    cpu_limit = Float(
        None,
        allow_none=True,
        help="CPU cores this notebook was given (default: $CGU_CPU_LIMIT; none: unlimited).",
    ).tag(config=True)

    memory_limit = Int(
        None,
        allow_none=True,
        help="Memory this notebook was given, in bytes (default: $CGU_MEM_LIMIT; none: unlimited).",
    ).tag(config=True)

    disk_allowance = Int(
        None,
        allow_none=True,
        help=(
            "Bytes the home may hold; saves, uploads, copies and extractions past it are "
            "refused before they start (default: $CGU_DISK_ALLOWANCE; none: only the disk's "
            "free space)."
        ),
    ).tag(config=True)

    apps = Unicode(
        help=(
            "The apps this notebook offers beside JupyterLab, as JSON (core/apps.py; "
            "default: $CGU_APPS, else the built-in desktop and VS Code where installed)."
        ),
    ).tag(config=True)

    @default("apps")
    def _default_apps(self) -> str:
        return os.environ.get("CGU_APPS", "")

    @default("controller_url")
    def _default_controller_url(self) -> str:
        return os.environ.get("CGU_CONTROLLER_URL", "")

    @default("controller_socket")
    def _default_controller_socket(self) -> str:
        return os.environ.get("CGU_CONTROLLER_SOCKET", "")

    @default("public_url")
    def _default_public_url(self) -> str:
        return os.environ.get("CGU_PUBLIC_URL") or "/"

    @default("api_token")
    def _default_api_token(self) -> str:
        return os.environ.pop("CGU_API_TOKEN", "")

    @default("notebook_owner")
    def _default_notebook_owner(self) -> str:
        return os.environ.get("CGU_NOTEBOOK_OWNER", "")

    @default("notebook_name")
    def _default_notebook_name(self) -> str:
        return os.environ.get("CGU_NOTEBOOK_NAME", "")

    @default("cpu_limit")
    def _default_cpu_limit(self) -> float | None:
        return _number("CGU_CPU_LIMIT")

    @default("memory_limit")
    def _default_memory_limit(self) -> int | None:
        memory = _number("CGU_MEM_LIMIT")
        return int(memory) if memory is not None else None

    @default("disk_allowance")
    def _default_disk_allowance(self) -> int | None:
        return disk.from_environment()

    def _link_jupyter_server_extension(self, serverapp) -> None:
        """Also tell jupyter-server-proxy which apps to run: it reads its config when it
        loads, and every extension is linked before any is loaded."""
        super()._link_jupyter_server_extension(serverapp)
        self.offered_apps = notebook_apps.configure_proxy(serverapp, self.apps, self.log)

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
        self.settings.update(
            {
                controller_client.SETTING: controller_client.ControllerClient(
                    self.controller_url,
                    self.api_token,
                    self.notebook_owner,
                    self.notebook_name,
                    socket=self.controller_socket,
                ),
                usage.SETTING: usage.Sampler(self.cpu_limit, self.memory_limit),
                notebook_apps.SETTING: getattr(self, "offered_apps", None),
                disk.SETTING: self._home_usage(),
                COLLABORATION: Presence(),
            }
        )

    def _home_usage(self) -> disk.HomeUsage:
        """The contents manager's measure of the home (one cache for every write path),
        given this app's allowance now and whenever the setting changes."""
        contents = self.serverapp.contents_manager
        if isinstance(contents, ShareAwareContentsManager):
            usage = contents.home_usage
        else:  # jupyter_server's own: the transfer routes still check
            usage = disk.HomeUsage(self.serverapp.root_dir)
        usage.allowance = self.disk_allowance

        def follow(change) -> None:
            usage.allowance = change["new"]

        self.observe(follow, "disk_allowance")
        return usage

    def initialize_handlers(self) -> None:
        self.handlers.extend(route_table())
        self.handlers.extend(serial_routes(self))
        # The kernels' clipboard (the browser's): its socket exists before any kernel starts.
        self.clipboard, clipboard_routes = clipboard_bridge(self)
        self.handlers.extend(clipboard_routes)
        self.handlers.extend(transfer_routes(self))
        self.handlers.extend(collaboration_routes())
        apps = getattr(self, "offered_apps", None)
        self.handlers.extend(notebook_apps.app_routes(apps, self.serverapp.web_app, self.log))

    async def stop_extension(self) -> None:
        """Remove the clipboard's socket, so that no kernel waits on a server that is gone."""
        clipboard = getattr(self, "clipboard", None)
        if clipboard is not None:
            clipboard.close()
        apps = getattr(self, "offered_apps", None)
        if apps is not None:
            apps.close()

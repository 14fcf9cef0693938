"""Apps beside JupyterLab in every notebook: a Linux desktop, VS Code, and admins' own.

The parts and why each is where it is:

- jupyter-server-proxy (the ecosystem's process launcher and proxy for
  notebook servers) starts, supervises, proxies and stops every app; this
  package only tells it which apps exist, through `ServerProxy.servers`,
  set while the extension is linked (before jupyter-server-proxy loads), so
  the list follows the environment's declaration (`$CGU_APPS`, registry.py);
- the desktop is TigerVNC's Xvnc with openbox and xterm on a unix socket
  (desktop_session.py), shown by noVNC in the lab extension (src/apps/),
  reached as a raw websocket by jupyter-server-proxy's `raw_socket_proxy`;
- read-only viewers watch it through a route of our own that filters the VNC
  protocol (rfb.py, handlers.py); everything else of the apps is for the
  owner and editors only (the request guard in authorizer.py);
- the notebook's database, PostgreSQL (database.py) or MariaDB
  (database_mariadb.py), starts on its first connection, its web client is
  DbGate (database_client.py), a browser opens as a window on the
  desktop (web_browser.py), RStudio comes from jupyter-rsession-proxy where an
  image has it (registry.py);
- a notebook its owner shows as a page with Voilà is an app of its own,
  `voila-<name>/`, listed in the home so that every start of the server runs it
  again while the controller publishes it (voila_demos.py).

Modules: `registry` (offered apps, proxy entries, the sockets' folder),
`desktop_session` (one desktop), `rfb` (the view-only filter) and
`rfb_screen` (its server side, which keeps the desktop's clipboard from
viewers), `handlers`.
"""

from __future__ import annotations

import os
from pathlib import Path

SETTING = "cgu_lab_apps"


def configure_proxy(serverapp, declared: str, log):
    """Make the apps (their sockets' folder) and put them in jupyter-server-proxy's config.

    Called while the extension is linked: jupyter-server-proxy reads
    `ServerProxy.servers` from the server's config only when it loads, after
    every extension was linked. Entries an admin put in a config file stay;
    ours replace those of the same name. Returns the `Apps` (None: no apps).
    """
    from ...core.errors import Invalid
    from .registry import Apps
    from .voila_demos import VoilaDemos

    try:
        apps = Apps.create(declared)
    except (Invalid, OSError) as error:
        log.warning("cgu-lab apps: none offered: %s", error)
        return None
    home = Path(os.environ.get("HOME", str(Path.home())))
    apps.voila = VoilaDemos.load(home, Path(serverapp.root_dir), log)
    servers = dict(serverapp.config.ServerProxy.get("servers", {}) or {})
    servers.update(apps.servers())
    serverapp.config.ServerProxy.servers = servers
    for name, reason in apps.missing.items():
        log.info("cgu-lab apps: %s is not offered: %s", name, reason)
    return apps


def app_routes(apps, web_app, log) -> list[tuple]:
    """The apps' routes; the pages shown with Voilà routed, then checked against the
    controller's publications once the server's loop runs (voila_demos.py); and the
    database's socket answered then (it was bound while the extension was linked, so
    early clients wait, not fail)."""
    from tornado.ioloop import IOLoop

    from ..controller_client import SETTING as CONTROLLER
    from .handlers import routes
    from .registry import common_entry

    if apps is None:
        return []
    if apps.database is not None:
        IOLoop.current().add_callback(apps.database.serve)
    if apps.voila is not None:
        apps.voila.register_all(web_app, common_entry())
        listed = set(apps.voila.shown)
        client = web_app.settings.get(CONTROLLER)
        IOLoop.current().add_callback(apps.voila.keep_published, web_app, client, listed, log)
    return routes(apps)

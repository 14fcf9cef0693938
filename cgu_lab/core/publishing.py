"""A teacher's demo site: which app of a notebook is published, and what a visitor may reach.

A notebook's owner publishes one of its web apps (a port through jupyter-server-proxy,
`proxy/<port>/`, or an app its environment declares, `<name>/`) to a course or to every
logged-in user. A visitor of such a demo may use that app and nothing else of the notebook:
no files, kernels, terminals, JupyterLab, nor another app. The rules here are the prefix a
publication may have and whether a request path lies under one; the proxy and the server
extension both apply them (the server extension again, as defence in depth).

Built-in apps are never published: the desktop, VS Code, the database and the browser are
sessions in the owner's name (a keystroke in VS Code's terminal is the owner's shell), so a
visitor of them would be the owner.
"""

from __future__ import annotations

import re

from .apps import BUILT_IN, RESERVED
from .errors import Invalid

MAX_TITLE = 100
_PORT = re.compile(r"^proxy/([1-9][0-9]{0,4})/$")
_APP = re.compile(r"^([a-z][a-z0-9-]{0,30}[a-z0-9])/$")
# The notebook server's own routes, and the built-in apps.
_NOT_APPS = RESERVED | frozenset(BUILT_IN)


def check_prefix(prefix: object) -> str:
    """The published app's path inside the notebook server, normalised to end with "/".

    `proxy/<port>/` (a port the owner serves on, 1-65535) or `<app>/` (an app the
    environment declares, as jupyter-server-proxy serves it); nothing else.
    """
    if not isinstance(prefix, str):
        raise Invalid("an app's path is text such as 'proxy/8501/' or 'myapp/'")
    value = prefix.strip().strip("/") + "/"
    port = _PORT.match(value)
    if port is not None:
        if int(port.group(1)) > 65535:
            raise Invalid(f"port {port.group(1)} does not exist: ports go up to 65535")
        return value
    app = _APP.match(value)
    if app is None:
        raise Invalid(
            f"'{prefix}' is not an app's path: publish 'proxy/<port>/' or a declared app's "
            "'<name>/'"
        )
    if app.group(1) in _NOT_APPS:
        raise Invalid(
            f"'{app.group(1)}' cannot be published: built-in apps and the notebook's own "
            "pages act in the owner's name"
        )
    return value


def app_of(rest: str, apps: tuple[str, ...]) -> str | None:
    """The published app a request path (after `/notebook/<owner>/<name>`) is under, or None.

    `rest` starts with "/". A path exactly at the app's root without its slash
    (`/proxy/8501`) counts too: jupyter-server-proxy redirects it to the slash.
    """
    path = rest.split("?", 1)[0].lstrip("/")
    if any(segment in (".", "..") for segment in path.split("/")):
        return None
    for app in apps:
        if path.startswith(app) or path == app.rstrip("/"):
            return app
    return None

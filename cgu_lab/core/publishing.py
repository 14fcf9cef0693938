"""A teacher's demo site: which app of a notebook is published, and what a visitor may reach.

A notebook's owner publishes one of its web apps (a port through jupyter-server-proxy,
`proxy/<port>/`, or an app its environment declares, `<name>/`) to a course or to every
logged-in user. A visitor of such a demo may use that app and nothing else of the notebook:
no files, kernels, terminals, JupyterLab, nor another app. The rules here are the prefix a
publication may have and whether a request path lies under one; the proxy and the server
extension both apply them (the server extension again, as defence in depth).

Built-in apps are never published: the desktop, VS Code, the database and the browser are
sessions in the owner's name (a keystroke in VS Code's terminal is the owner's shell), so a
visitor of them would be the owner. Nor is Voilà's server extension (`voila/`, where it is
installed): it renders any notebook of the home and runs its kernels at the server's own
`api/kernels`. A notebook shown with Voilà is a Voilà of its own, showing that one notebook,
whose every request stays under its app's path: the app `voila-<name>/` the server
extension starts and keeps (notebook/apps/voila_demos.py, `voila_app_name`,
`voila_arguments`). It is the one way: a command the owner would run by hand on a port
stops with the notebook, and nothing would run it again.

A demo an administrator made public is reached without a log-in: its anonymous visitors
are counted by a random cookie (`new_visitor`, `is_visitor`) and paced per address
(`Bucket`).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from .apps import BUILT_IN, RESERVED
from .errors import Invalid
from .paths import relative_path

MAX_TITLE = 100
_PORT = re.compile(r"^proxy/([1-9][0-9]{0,4})/$")
_APP = re.compile(r"^([a-z][a-z0-9-]{0,30}[a-z0-9])/$")
# The notebook server's own routes, the built-in apps, and server extensions that serve
# the whole home (Voilà's tree renders every notebook, its kernels are the server's).
_NOT_APPS = RESERVED | frozenset(BUILT_IN) | frozenset({"voila"})
_VISITOR = re.compile(r"^[A-Za-z0-9_-]{22}$")
VOILA_IDLE = 120
VOILA_PREFIX = "voila-"


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


def voila_notebook(notebook_path: str) -> str:
    """A notebook of the home Voilà may show: relative, inside the home, an .ipynb file."""
    path = relative_path(notebook_path, "notebook's path")
    if not path.endswith(".ipynb"):
        raise Invalid(f"'{notebook_path}' is not a notebook: Voilà shows an .ipynb file")
    return path


def voila_arguments(notebook: str, app_url: str, port: str) -> list[str]:
    """Voilà's arguments (after the program) to show one notebook as the app at `app_url`
    (the app's path from the origin's root, ending in "/"), listening on `port`.

    jupyter-server-proxy strips the app's prefix before Voilà sees a request, so Voilà
    serves at `/` (`server_url`) but writes its links, websockets included, under the
    app's path (`base_url`): every request a visitor's page makes stays inside the
    published app. Given one notebook, Voilà serves no tree of the home. Each page load
    starts a kernel, which Voilà keeps: one no page is connected to is shut down after
    VOILA_IDLE seconds, so visitors (a script's GETs too) cannot pile kernels up in the
    teacher's notebook.
    """
    return [
        notebook,
        "--no-browser",
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        "--Voila.server_url=/",
        f"--Voila.base_url={app_url}",
        f"--MappingKernelManager.cull_idle_timeout={VOILA_IDLE}",
        "--MappingKernelManager.cull_interval=30",
    ]


def voila_page(prefix: str) -> str | None:
    """The app name of a published prefix that may be a notebook shown with Voilà
    (`voila-<name>/`, as `voila_app_name` makes them), else None. An environment may
    declare an app of such a name too: the notebook's server, which knows its pages,
    tells them apart."""
    app = _APP.match(prefix)
    name = app.group(1) if app is not None else ""
    return name if name.startswith(VOILA_PREFIX) else None


def voila_app_name(notebook: str, taken: dict[str, str]) -> str:
    """The app name a notebook shown with Voilà is published as, `voila-<its name>/` once
    the slash is added: the one it has in `taken` (app name -> notebook), else a new one
    no other app has (`-2`, `-3`... after a name in use). It is a name `check_prefix`
    takes: lower-case letters, digits and hyphens, at most 32 characters."""
    for name, shown in taken.items():
        if shown == notebook:
            return name
    stem = notebook.rsplit("/", 1)[-1].removesuffix(".ipynb").lower()
    slug = "-".join(part for part in re.split(r"[^a-z0-9]+", stem) if part)[:20].strip("-")
    base = f"{VOILA_PREFIX}{slug}" if slug else f"{VOILA_PREFIX}page"
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}-{number}"
    return name


def new_visitor() -> str:
    """A random name for an anonymous visitor of a public demo (kept in a cookie): it
    counts them once, and names nothing else."""
    return secrets.token_urlsafe(16)


def is_visitor(value: str) -> bool:
    """Whether a cookie's value has the shape `new_visitor` gives (else a new one is given)."""
    return bool(_VISITOR.match(value))


@dataclass(frozen=True)
class Bucket:
    """A token bucket: `burst` requests at once, then `rate` a second.

    Anonymous visitors of a public demo are paced per address so that nobody can turn a
    teacher's notebook into a free web server, or fill its visitor count. Written here
    rather than taken from a rate-limiting library because the pace must follow the
    platform's one clock (tests move it); the rule is these few lines.
    """

    tokens: float
    at: float

    def take(self, now: float, rate: float, burst: float) -> tuple[Bucket, float]:
        """(the bucket after one more request at `now`, 0 when it may go now, else the
        seconds until it may)."""
        tokens = min(burst, self.tokens + max(0.0, now - self.at) * rate)
        if tokens >= 1.0:
            return Bucket(tokens - 1.0, now), 0.0
        return Bucket(tokens, now), (1.0 - tokens) / rate

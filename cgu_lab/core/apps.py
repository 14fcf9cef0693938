"""Apps a notebook offers beside JupyterLab: what an environment may declare.

An environment lists its apps (the store keeps the list, the System page edits
it, the backend hands it to every notebook of that environment in
`$CGU_APPS`, and the notebook's extension turns it into jupyter-server-proxy
servers). Some apps are built in and named only: `desktop` (a Linux desktop
through noVNC), `vscode` (code-server), `postgres` or `mariadb` (a database of the
notebook's own, PostgreSQL or MariaDB, with a web client: notebook/apps/database*.py),
`browser` (Chromium or Firefox on the desktop, in the notebook's own network) and
`rstudio` (RStudio Server through jupyter-rsession-proxy, where an
administrator's image provides it). Any other entry is an app the
administrator declares: a name, a title, the command that serves it over HTTP
(on `{unix_socket}` where the app can, which only its owner can reach; else on
`{port}` or a fixed port) and, optionally, an SVG icon.

Why the rules are narrow: the command runs as the notebook's user, so it can
do no more than that user's terminal, but the name becomes a URL path and a
launcher item, the title a label, the icon markup in the page. A name is a
short label, the command a list of arguments (no shell), its placeholders
only those jupyter-server-proxy fills in (`{port}`, `{unix_socket}`,
`{base_url}`), the icon plain SVG without scripts or event handlers.

`None` for an environment's apps means "the built-ins this machine has"; an
empty list means no apps at all.
"""

from __future__ import annotations

import re
import string
from typing import Any

from .errors import Invalid

DESKTOP = "desktop"
VSCODE = "vscode"
POSTGRES = "postgres"
MARIADB = "mariadb"
BROWSER = "browser"
RSTUDIO = "rstudio"
BUILT_IN = (DESKTOP, VSCODE, POSTGRES, MARIADB, BROWSER, RSTUDIO)
# A notebook has at most one database: both engines would claim `$DATABASE_URL`, which
# `%sql` and SQLAlchemy read, and a course teaches one of them (an administrator's choice).
DATABASES = (POSTGRES, MARIADB)
# What an environment without a list offers (where installed): a database, a browser and
# RStudio are a course's choice, declared per environment (the recipes do).
DEFAULT_BUILT_IN = (DESKTOP, VSCODE)
BUILT_IN_TITLES = {
    DESKTOP: "Linux desktop",
    VSCODE: "VS Code",
    POSTGRES: "PostgreSQL",
    MARIADB: "MariaDB",
    BROWSER: "Web browser",
    RSTUDIO: "RStudio",
}
# Built-ins that run inside the desktop (the browser is a window on it).
ON_DESKTOP = frozenset({BROWSER})
# Built-ins an administrator may replace with their own command: before RStudio was built
# in, the System page's example declared `rstudio` by hand, and such lists stay valid.
REPLACEABLE = frozenset({RSTUDIO})
MAX_APPS = 20
MAX_ARGS = 40
MAX_ARG_LENGTH = 500
MAX_TITLE = 60
MAX_ICON = 8192
NAME_PATTERN = r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$"
PLACEHOLDERS = frozenset({"port", "unix_socket", "base_url"})
# Names that already mean something under a notebook's base URL.
RESERVED = frozenset(
    {
        "api",
        "lab",
        "tree",
        "files",
        "view",
        "static",
        "nbconvert",
        "proxy",
        "cgu-lab",
        "server-proxy",
        "terminals",
        "kernelspecs",
        "login",
        "logout",
        "notebooks",
    }
)
_NAME = re.compile(NAME_PATTERN)
_UNSAFE_SVG = re.compile(r"<\s*script|\bon[a-z]+\s*=|javascript:|<\s*foreignObject", re.I)


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise Invalid(
            f"app name {name!r} must be 2-32 lowercase letters, digits or '-', "
            "starting with a letter"
        )
    if name in RESERVED:
        raise Invalid(f"app name '{name}' is taken by the notebook server itself; choose another")
    return name


def _check_argument(argument: Any) -> str:
    if not isinstance(argument, str) or not argument or len(argument) > MAX_ARG_LENGTH:
        raise Invalid(f"each command argument must be text of 1-{MAX_ARG_LENGTH} characters")
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(argument) if f is not None]
    except ValueError as error:
        raise Invalid(f"command argument {argument!r} has an unbalanced brace: {error}") from None
    unknown = sorted(set(fields) - PLACEHOLDERS)
    if unknown:
        raise Invalid(
            f"command argument {argument!r} names {{{unknown[0]}}}; only {{port}}, "
            "{unix_socket} and {base_url} are filled in"
        )
    return argument


def check_icon(icon: Any) -> str:
    if icon in (None, ""):
        return ""
    if not isinstance(icon, str) or len(icon) > MAX_ICON:
        raise Invalid(f"an app's icon is SVG markup of at most {MAX_ICON} characters")
    text = icon.strip()
    if not text.startswith("<svg") or not text.endswith("</svg>"):
        raise Invalid("an app's icon must be one <svg>...</svg> element")
    if _UNSAFE_SVG.search(text):
        raise Invalid("an app's icon may not hold scripts, event handlers or foreign objects")
    return text


def listens_on_socket(command: list[Any]) -> bool:
    """Whether a declared command serves on `{unix_socket}` rather than a TCP port.

    Why it matters: on one machine every user's processes share the loopback
    interface, and jupyter-server-proxy puts nothing in front of an app's port,
    so another student's kernel could reach an app that listens on TCP as if it
    were its owner. A socket in the notebook's private apps folder cannot be
    reached by anyone else; the System page recommends it for apps that can.
    """
    return any(isinstance(a, str) and "{unix_socket}" in a for a in command)


def check_app(entry: Any) -> dict[str, Any]:
    """One declared app, checked and normalised: a built-in by name, or a full declaration."""
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, dict):
        raise Invalid("each app is a built-in's name or an object with name, title and command")
    name = check_name(entry.get("name"))
    unknown = sorted(set(entry) - {"name", "title", "command", "port", "icon"})
    if unknown:
        raise Invalid(f"app '{name}' has an unknown field '{unknown[0]}'")
    if name in REPLACEABLE and entry.get("command"):
        pass  # the administrator's own, checked below like any declared app
    elif name in BUILT_IN:
        if any(entry.get(k) for k in ("command", "port", "icon")):
            raise Invalid(f"'{name}' is built in: give only its name (and a title)")
        title = entry.get("title") or BUILT_IN_TITLES[name]
        return {"name": name, "title": _check_title(title)}
    command = entry.get("command")
    if not isinstance(command, list) or not command or len(command) > MAX_ARGS:
        raise Invalid(f"app '{name}' needs a command: a list of 1-{MAX_ARGS} arguments")
    port = entry.get("port")
    if port is not None and (
        isinstance(port, bool) or not isinstance(port, int) or not 1024 <= port <= 65535
    ):
        raise Invalid(f"app '{name}': port must be 1024-65535, or empty to pick a free one")
    if port is not None and listens_on_socket(command):
        raise Invalid(
            f"app '{name}' listens on {{unix_socket}}: it takes no port; leave the port empty"
        )
    return {
        "name": name,
        "title": _check_title(entry.get("title") or name),
        "command": [_check_argument(a) for a in command],
        "port": port,
        "icon": check_icon(entry.get("icon")),
    }


def _check_title(title: Any) -> str:
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE:
        raise Invalid(f"an app's title is text of 1-{MAX_TITLE} characters")
    return title.strip()


def check_apps(entries: Any) -> list[dict[str, Any]] | None:
    """An environment's whole list (None: the built-ins), names unique."""
    if entries is None:
        return None
    if not isinstance(entries, list) or len(entries) > MAX_APPS:
        raise Invalid(f"an environment offers a list of at most {MAX_APPS} apps")
    apps = [check_app(e) for e in entries]
    names = [a["name"] for a in apps]
    for name in names:
        if names.count(name) > 1:
            raise Invalid(f"app '{name}' is listed twice")
    databases = [name for name in names if name in DATABASES]
    if len(databases) > 1:
        raise Invalid(
            f"an environment offers one database per notebook: {' or '.join(databases)}, not both"
        )
    return apps


def default_apps() -> list[dict[str, Any]]:
    """What an environment without a list offers: the default built-ins (where installed)."""
    return [{"name": n, "title": BUILT_IN_TITLES[n]} for n in DEFAULT_BUILT_IN]

"""Where each notebook lives in the browser: its own origin, never the controller's.

A notebook's pages run code its owner wrote (and outputs anyone can plant), so
the browser must treat them as a different site from the controller and from
every other notebook. Each notebook gets the host `<owner>--<name>.<domain>`
(JupyterHub's subdomain mode); `*.localhost` resolves to loopback in every
browser, so one machine needs no DNS. Where no wildcard name can be had (a
bare IP address), all notebooks share one separate origin on another port:
isolated from the controller, not from each other (the System page says so).

The path stays `/notebook/<owner>/<name>/` on every origin so that a notebook
server's base URL does not depend on where it is served.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

LABEL = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_LABEL = 63
SEPARATOR = "--"
HASH_CHARS = 10


def _plain(part: str) -> bool:
    """A name usable as-is: DNS-safe and free of the separator."""
    return bool(LABEL.match(part)) and SEPARATOR not in part


def notebook_slug(owner: str, name: str) -> str:
    """The DNS label of a notebook's origin; always valid and never shared.

    Plain names give `owner--name`, which holds exactly one `--`. Anything else
    (dots or underscores in the user name, a `--` inside a part, too long) gives
    `owner--name--<hash>` with the parts reduced to DNS characters: two `--`, so
    it can never equal a plain slug, and the hash of the exact names keeps two
    reduced forms apart.
    """
    if _plain(owner) and _plain(name) and len(owner) + len(name) + 2 <= MAX_LABEL:
        return f"{owner}{SEPARATOR}{name}"
    digest = hashlib.sha256(f"{owner}/{name}".encode()).hexdigest()[:HASH_CHARS]

    def reduce(part: str, room: int) -> str:
        text = re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", part.lower())).strip("-")
        return text[:room].strip("-") or "x"

    room = (MAX_LABEL - HASH_CHARS - 3 * len(SEPARATOR)) // 2
    return f"{reduce(owner, room)}{SEPARATOR}{reduce(name, room)}{SEPARATOR}{digest}"


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class OriginPlan:
    """How notebook origins are formed for one installation.

    `domain` set: subdomain mode (`<slug>.<domain>`, same port as the
    controller unless `port` is given). `domain` empty: port mode, every
    notebook on `<controller host>:<port>`.
    """

    controller_url: str  # e.g. http://127.0.0.1:8000 (no trailing slash)
    domain: str = ""
    port: int | None = None

    @property
    def scheme(self) -> str:
        return urlsplit(self.controller_url).scheme or "http"

    @property
    def subdomains(self) -> bool:
        return bool(self.domain)

    def _controller_port(self) -> int | None:
        return urlsplit(self.controller_url).port

    def notebook_host(self, owner: str, name: str) -> str:
        """The Host (with port when not the scheme's default) of a notebook's origin."""
        if self.subdomains:
            host = f"{notebook_slug(owner, name)}.{self.domain}"
            port = self.port or self._controller_port()
        else:
            host = urlsplit(self.controller_url).hostname or "127.0.0.1"
            if ":" in host:
                host = f"[{host}]"
            port = self.port
        default = 443 if self.scheme == "https" else 80
        return f"{host}:{port}" if port and port != default else host

    def notebook_origin(self, owner: str, name: str) -> str:
        return f"{self.scheme}://{self.notebook_host(owner, name)}"

    def notebook_url(self, owner: str, name: str, path: str = "lab") -> str:
        return f"{self.notebook_origin(owner, name)}/notebook/{owner}/{name}/{path.lstrip('/')}"

    def slug_of_host(self, host: str) -> str | None:
        """The slug a Host header names in subdomain mode, or None (not a notebook host)."""
        if not self.subdomains or not host:
            return None
        name = host.lower()
        if name.startswith("["):
            return None
        name = name.rsplit(":", 1)[0] if ":" in name else name
        suffix = "." + self.domain.lower()
        if not name.endswith(suffix):
            return None
        slug = name[: -len(suffix)]
        return slug if slug and "." not in slug and SEPARATOR in slug else None

    def describe(self) -> dict:
        """For the System page: where notebooks live and how isolated they are."""
        if self.subdomains:
            # The port as notebook_host adds it: a pattern without it is not an address
            # a person can open (http://<owner>--<name>.localhost answers nothing on 8000).
            host = self.notebook_host("owner", "name").replace("owner--name", "<owner>--<name>", 1)
            return {
                "mode": "subdomains",
                "pattern": f"{self.scheme}://{host}",
                "isolation": "each notebook on its own origin, apart from the controller "
                "and from every other notebook",
            }
        return {
            "mode": "port",
            "pattern": f"{self.scheme}://<controller host>:{self.port}",
            "isolation": "notebooks are isolated from the controller but not from each "
            "other: set a wildcard notebook domain (--notebook-domain) to separate them",
        }

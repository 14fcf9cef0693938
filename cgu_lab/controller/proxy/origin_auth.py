"""Logging a browser in on a notebook's origin without giving it the controller's cookie.

The controller's session cookie stays on the controller's host. A notebook's
origin gets its own host-only, path-bound, short-lived cookie through a
redirect hand-off, as JupyterHub does between the hub and single-user servers:

1. the proxy, asked for a page on the notebook's origin without its cookie,
   sets a random `state` cookie there and redirects to the controller;
2. the controller, where the browser's session is, checks the user's access and
   redirects back with a one-time code bound to that origin, user, session and
   notebook (valid for a minute, stored hashed, in memory);
3. the proxy checks `state` against its cookie, redeems the code in-process
   (the code never reaches the notebook's server) and sets the origin cookie.

The origin cookie is signed and names the controller session it came from;
every request re-checks that session (cached for seconds), so logging out, a
password change or a disabled account ends the notebook's access too. Shares
are checked per request by the proxy as before.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass, replace
from pathlib import Path

from cachetools import TTLCache

from ...core.scopes import lab_scopes
from ..accounts.auth import Authenticator, Identity
from ..clock import Clock

CODE_SECONDS = 60.0
STATE_SECONDS = 600
COOKIE_SECONDS = 3600
RENEW_BELOW = COOKIE_SECONDS // 2
LOGIN_PATH = "_cgu_login"  # below /notebook/<owner>/<name>/, answered by the proxy
MAX_CODES = 10_000


def cookie_name(notebook_id: int) -> str:
    return f"cgu-nb-{notebook_id}"


def state_cookie_name(notebook_id: int) -> str:
    return f"cgu-nb-state-{notebook_id}"


def _load_key(directory: Path) -> bytes:
    """This installation's signing key, created once and readable by the controller alone."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / "origin-cookie-key"
    try:
        return bytes.fromhex(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        key = secrets.token_bytes(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(key.hex())
        return key


@dataclass(frozen=True)
class Code:
    user_id: int
    session_digest: str
    notebook_id: int
    host: str


@dataclass(frozen=True)
class OriginCookie:
    user_id: int
    notebook_id: int
    session_digest: str
    expires: int
    # Read with less than RENEW_BELOW seconds left: the proxy sets a fresh one.
    needs_renewal: bool = False


class OriginAuth:
    def __init__(
        self, auth: Authenticator, secrets_dir: Path, clock: Clock, key: bytes | None = None
    ) -> None:
        """`clock`: the cookies' and codes' lifetimes follow it."""
        self.auth = auth
        self.clock = clock
        self.key = key or _load_key(secrets_dir)
        # Unused codes, by their hash, for CODE_SECONDS; a flood of log-ins evicts the oldest.
        self._codes: TTLCache[str, Code] = TTLCache(MAX_CODES, CODE_SECONDS, timer=clock.monotonic)

    # -- one-time codes (controller side issues, proxy side redeems) ---------

    def issue(self, identity: Identity, notebook_id: int, host: str) -> str:
        """A one-time code for this session's user on one notebook's origin."""
        code = secrets.token_urlsafe(32)
        self._codes[hashlib.sha256(code.encode()).hexdigest()] = Code(
            identity.user_id, identity.session_digest, notebook_id, host.lower()
        )
        return code

    def redeem(self, code: str, notebook_id: int, host: str) -> Code | None:
        """The code's grant if it is fresh, unused and meant for this origin and notebook."""
        found = self._codes.pop(hashlib.sha256(code.encode()).hexdigest(), None)
        if found is None:
            return None
        if found.notebook_id != notebook_id or found.host != host.lower():
            return None
        return found

    # -- the origin cookie ----------------------------------------------------

    def _mac(self, payload: str) -> str:
        digest = hmac.new(self.key, payload.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def cookie_value(self, user_id: int, notebook_id: int, session_digest: str) -> str:
        expires = int(self.clock.now().timestamp()) + COOKIE_SECONDS
        payload = f"v1.{user_id}.{notebook_id}.{session_digest}.{expires}"
        return f"{payload}.{self._mac(payload)}"

    def read_cookie(self, value: str, notebook_id: int) -> OriginCookie | None:
        """The cookie's content if its signature holds, it is fresh and for this notebook."""
        payload, _, mac = value.rpartition(".")
        if not payload or not hmac.compare_digest(mac, self._mac(payload)):
            return None
        parts = payload.split(".")
        if len(parts) != 5 or parts[0] != "v1":
            return None
        try:
            cookie = OriginCookie(int(parts[1]), int(parts[2]), parts[3], int(parts[4]))
        except ValueError:
            return None
        now = self.clock.now().timestamp()
        if cookie.notebook_id != notebook_id or cookie.expires < now:
            return None
        return replace(cookie, needs_renewal=cookie.expires - now < RENEW_BELOW)

    async def identify(self, cookie: OriginCookie) -> Identity | None:
        """The browser user behind an origin cookie, while its controller session lives."""
        session = await self.auth.from_session_digest(cookie.session_digest)
        if session is None or session.user_id != cookie.user_id or session.must_change_password:
            return None
        return session

    @staticmethod
    def for_lab(identity: Identity, notebook_id: int, access: str) -> Identity:
        """The identity JupyterLab's calls to the controller carry on a notebook's origin."""
        return replace(
            identity, via="origin", csrf="", notebook_id=notebook_id, scopes=lab_scopes(access)
        )

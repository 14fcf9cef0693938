"""Secrets: password hashing, random tokens and failed-login throttling.

Passwords use Argon2 (argon2-cffi). Session and API tokens are 256-bit random
strings, so a plain SHA-256 of them is enough to store; the raw token exists
only in the user's cookie or script.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections import defaultdict, deque

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from ..core.errors import Invalid

_hasher = PasswordHasher()
MIN_PASSWORD = 8


async def hash_password(password: str) -> str:
    """An Argon2 hash, computed in a worker thread: its deliberate cost must not stall
    the event loop that also serves the notebook proxy."""
    check_password_strength(password)
    return await asyncio.to_thread(_hasher.hash, password)


def verify_password(password_hash: str | None, password: str) -> bool:
    if not password_hash:
        return False
    try:
        return _hasher.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


# A real hash to verify against when the user does not exist, so a login for an
# unknown name takes as long as a wrong password.
DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))


def check_password_strength(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise Invalid(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > 1024:
        raise Invalid("a password may have at most 1024 characters")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def new_password() -> str:
    """A one-time password people can type: 4 groups of 4 from an unambiguous alphabet."""
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
    return "-".join("".join(secrets.choice(alphabet) for _ in range(4)) for _ in range(4))


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class LoginThrottle:
    """Limits failed logins in a sliding window: few per account, more per address.

    The per-address limit is generous because a whole class may share one
    address behind a campus NAT or a reverse proxy.
    """

    def __init__(self, per_account: int = 8, per_address: int = 100, window: float = 900.0) -> None:
        self.limits = {"user": per_account, "addr": per_address}
        self.window = window
        self._failures: dict[str, deque[float]] = defaultdict(deque)

    def _recent(self, key: str, now: float) -> deque[float]:
        failures = self._failures[key]
        while failures and now - failures[0] > self.window:
            failures.popleft()
        return failures

    def retry_after(self, *keys: str) -> float:
        """Seconds until a login for these keys ("user:x", "addr:y") may be tried again."""
        now = time.monotonic()
        wait = 0.0
        for key in keys:
            failures = self._recent(key, now)
            if len(failures) >= self.limits[key.split(":", 1)[0]]:
                wait = max(wait, self.window - (now - failures[0]))
        return wait

    def failed(self, *keys: str) -> None:
        now = time.monotonic()
        for key in keys:
            self._recent(key, now).append(now)

    def succeeded(self, *keys: str) -> None:
        for key in keys:
            if key.startswith("user:"):
                self._failures.pop(key, None)

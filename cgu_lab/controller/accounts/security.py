"""Secrets: password hashing, random tokens and failed-login throttling.

Passwords use Argon2 (argon2-cffi). Session and API tokens are 256-bit random
strings, so a plain SHA-256 of them is enough to store; the raw token exists
only in the user's cookie or script.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from cachetools import LRUCache

from ...core.errors import Invalid
from ..clock import Clock

log = logging.getLogger("cgu_lab.security")

MIN_PASSWORD = 8
# CGU_LAB_PASSWORD_HASH_COST: unset (or "default") is argon2-cffi's recommended cost
# (RFC 9106's low-memory profile). "test" is the smallest cost Argon2 allows, for test
# suites that log in hundreds of times (each full-cost hash or check takes tens of
# milliseconds of CPU and 64 MiB). Only that exact word lowers it, and it is read from the
# environment only, never from a settings file; any other value stops the controller, so
# a typo never weakens a production installation quietly. Every hash carries its own
# parameters, so hashes made at either cost verify under the other.
PASSWORD_HASH_COST = "CGU_LAB_PASSWORD_HASH_COST"  # noqa: S105 - a variable's name


def _hasher_for(cost: str) -> PasswordHasher:
    if cost in ("", "default"):
        return PasswordHasher()
    if cost == "test":
        log.warning(
            "%s=test: passwords are hashed at the lowest cost (tests only)", PASSWORD_HASH_COST
        )
        return PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    raise ValueError(f"{PASSWORD_HASH_COST} may be unset, 'default' or 'test', not {cost!r}")


_hasher = _hasher_for(os.environ.get(PASSWORD_HASH_COST, "").strip())


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


@dataclass
class _Failures:
    """Recent failed logins of one key, oldest first; `next_at` paces the next try."""

    times: deque[float] = field(default_factory=deque)
    next_at: float = 0.0


class LoginThrottle:
    """Slows password guessing without letting a guesser lock the real user out.

    Three measures, none of which is a lock on the account:
    - per (account, address) pair: a few free failures, then an exponential
      delay between tries, capped (`pair_free`, `pair_cap`);
    - per address: a generous limit of failures in the window (`per_address`),
      generous because a whole class may share one address behind a campus
      NAT or a reverse proxy;
    - per account, over all addresses: when an account collects many
      failures (`account_free`), tries from addresses that themselves failed
      on it recently are paced account-wide (`account_cap` at most), so a
      guesser spread over many addresses gets few guesses. A try from an
      address with no recent failure on the account is never held back: the
      owner, from their own address, always gets in.
    A try counts as a failure from the moment it is let through (so parallel
    tries cannot slip past the count) and is taken back if it succeeds.
    """

    def __init__(
        self,
        pair_free: int = 5,
        pair_cap: float = 300.0,
        per_address: int = 100,
        account_free: int = 20,
        account_cap: float = 60.0,
        window: float = 900.0,
        clock: Callable[[], float] | None = None,
        max_keys: int = 100_000,
    ) -> None:
        self.pair_free = pair_free
        self.pair_cap = pair_cap
        self.per_address = per_address
        self.account_free = account_free
        self.account_cap = account_cap
        self.window = window
        # Seconds that never go backwards: the platform clock's monotonic(), passed in.
        self.clock = clock or Clock().monotonic
        self.max_keys = max_keys
        # Bounded: a flood of made-up names or addresses evicts the entries tried least
        # recently (those whose failures are oldest) instead of growing without end.
        self._pairs: LRUCache[tuple[str, str], _Failures] = LRUCache(max_keys)
        self._addresses: LRUCache[str, _Failures] = LRUCache(max_keys)
        self._accounts: LRUCache[str, _Failures] = LRUCache(max_keys)

    def _recent(self, table: LRUCache, key, now: float) -> _Failures:
        entry = table.get(key)
        if entry is None:
            entry = table[key] = _Failures()
        while entry.times and now - entry.times[0] > self.window:
            entry.times.popleft()
        return entry

    @staticmethod
    def _delay(excess: int, cap: float) -> float:
        """1, 2, 4, ... seconds for the 1st, 2nd, 3rd ... failure beyond the free ones."""
        return min(cap, 2.0 ** min(max(0, excess - 1), 32))

    def check(self, account: str, address: str) -> float:
        """0 when a login may be tried now (and then counts it as failed until
        `succeeded`), else the seconds to wait before trying again."""
        now = self.clock()
        pair = self._recent(self._pairs, (account, address), now)
        where = self._recent(self._addresses, address, now)
        user = self._recent(self._accounts, account, now)
        waits = [pair.next_at - now]
        if len(where.times) >= self.per_address:
            waits.append(where.times[0] + self.window - now)
        paced = bool(pair.times) and len(user.times) >= self.account_free
        if paced:
            waits.append(user.next_at - now)
        wait = max(waits)
        if wait > 0:
            return wait
        for entry in (pair, where, user):
            entry.times.append(now)
        if len(pair.times) >= self.pair_free:
            excess = len(pair.times) - self.pair_free + 1
            pair.next_at = now + self._delay(excess, self.pair_cap)
        if paced:
            excess = len(user.times) - self.account_free + 1
            user.next_at = now + self._delay(excess, self.account_cap)
        return 0.0

    def succeeded(self, account: str, address: str) -> None:
        """The try was right: forget the pair's failures and take back the counted one."""
        self._pairs.pop((account, address), None)
        for table, key in ((self._addresses, address), (self._accounts, account)):
            entry = table.get(key)
            if entry is not None and entry.times:
                entry.times.pop()

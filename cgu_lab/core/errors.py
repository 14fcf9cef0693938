"""Domain errors, each carrying a sentence a student can act on.

The controller maps each class to one HTTP status in one place; the message
is shown as it is, so it must name the thing, the limit and what to do.
"""

from __future__ import annotations


class DomainError(Exception):
    """Base of every refusal the platform explains to the user."""

    status = 400
    code = "invalid"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class Invalid(DomainError):
    status = 400
    code = "invalid"


class Unauthenticated(DomainError):
    status = 401
    code = "unauthenticated"


class Forbidden(DomainError):
    status = 403
    code = "forbidden"


class NotFound(DomainError):
    status = 404
    code = "not_found"


class Conflict(DomainError):
    status = 409
    code = "conflict"


class QuotaExceeded(DomainError):
    status = 403
    code = "quota_exceeded"


class Unavailable(DomainError):
    """The request is valid but the platform cannot serve it now (no free GPU...)."""

    status = 503
    code = "unavailable"


class NotSupported(DomainError):
    """A feature the running backend does not offer; the message names the backend."""

    status = 501
    code = "not_supported"


class TooManyRequests(DomainError):
    """Slowed down (failed logins); `retry_after` is the whole seconds to wait.

    The wait also travels in `details` so a JSON client sees it in the body,
    and in `headers` for the handlers that send a Retry-After header.
    """

    status = 429
    code = "too_many_requests"

    def __init__(self, message: str, retry_after: float, **details: object) -> None:
        seconds = max(1, int(-(-retry_after // 1)))
        super().__init__(message, retry_after=seconds, **details)
        self.retry_after = seconds
        self.headers = {"Retry-After": str(seconds)}


class DatabaseBusy(Unavailable):
    """The database is held by someone else (a lock, a long migration) or out of reach:
    the request may simply be sent again, after `retry_after` seconds (in the body and a
    Retry-After header), so it is a 503 with a sentence, not a 500."""

    code = "database_busy"
    RETRY_AFTER = 5

    def __init__(self, kind: str = "busy") -> None:
        message = (
            "the platform's database is busy (another task holds it); "
            f"try again in {self.RETRY_AFTER} seconds"
            if kind == "busy"
            else "the platform cannot reach its database right now; "
            f"try again in {self.RETRY_AFTER} seconds"
        )
        super().__init__(message, database=kind, retry_after=self.RETRY_AFTER)
        self.headers = {"Retry-After": str(self.RETRY_AFTER)}

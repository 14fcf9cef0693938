"""A refused school login: a sentence the person can act on, and a code for tests and
the audit log. Shown on a page with a way back to the login (pages.py), never a trace."""

from __future__ import annotations

from ...core.errors import DomainError


class Refused(DomainError):
    """The provider's or directory's answer does not let this person in."""

    status = 401
    code = "school_login_refused"

    def __init__(self, message: str, code: str, status: int = 401) -> None:
        super().__init__(message)
        self.code = code
        self.status = status

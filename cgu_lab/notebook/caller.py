"""Who is calling this notebook server, as the platform sees them.

Apart from identity.py (which learns it) and authorizer.py (which decides on it) so
that both, and the contents manager, read one definition without importing each other.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field

from jupyter_server.auth.identity import User
from tornado import web


@dataclass
class PlatformUser(User):
    """A jupyter_server user with the access the platform grants them here."""

    access: str = "read"
    # Files a single-file share is limited to; empty for the whole notebook.
    scope: tuple[str, ...] = field(default_factory=tuple)
    # A published demo's visitor (access "visit"): the one app path they may use.
    app: str = ""


# The caller of the request being handled, for code that is not given the
# handler (the contents manager marks files read-only for read-only callers).
CURRENT_USER: contextvars.ContextVar[PlatformUser | None] = contextvars.ContextVar(
    "cgu_lab_current_user", default=None
)
# The handler of that request, for the contents manager's refusals: jupyter_server's
# contents handlers answer an error as `{message, reason}`, and a refusal the student
# must act on (the disk allowance) is `{message, code, ...figures}` like every other.
CURRENT_HANDLER: contextvars.ContextVar[web.RequestHandler | None] = contextvars.ContextVar(
    "cgu_lab_current_handler", default=None
)

"""Account answers built below the service (a class list's import), kept apart from
`service.py` so that `roster_import.py`, which the service calls, can build them too."""

from __future__ import annotations

from ..api.schemas import ImportResult


class ImportOut(ImportResult):
    invited: list[str] = []

"""The route table: where the proxy sends each notebook's requests.

It exists apart from the notebook service so the proxy, which forwards every
request, depends on a small in-memory table and not on everything that creates,
starts and stops notebooks. The table is updated on every state change and
filled again from the database (`reconcile`) when the controller starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select

from ...backends.base import Backend
from ...core.lifecycle import State
from ...store.db import Database
from ...store.models import Notebook, User

# The actor recorded for what the controller does on its own.
SYSTEM = "system"


def base_path(owner: str, name: str) -> str:
    return f"/notebook/{owner}/{name}/"


@dataclass(frozen=True)
class Route:
    """What the proxy needs to forward a request: kept in memory, updated on every change."""

    notebook_id: int
    owner_id: int
    owner: str
    name: str
    state: State
    target: str | None
    secret: str


class RouteTable:
    def __init__(self, db: Database, backend: Backend) -> None:
        self.db = db
        self.backend = backend
        self._routes: dict[tuple[str, str], Route] = {}

    def update(self, nb: Notebook, owner: str) -> None:
        """Record the notebook's current state (and address, once it runs)."""
        state = State(nb.state)
        target = (
            self.backend.endpoint(nb.backend_state)
            if state is State.RUNNING and nb.backend_state
            else None
        )
        self._routes[(owner, nb.name)] = Route(
            nb.id, nb.owner_id, owner, nb.name, state, target, nb.proxy_secret
        )

    def forget(self, owner: str, name: str) -> None:
        self._routes.pop((owner, name), None)

    def items(self) -> list[tuple[tuple[str, str], Route]]:
        return list(self._routes.items())

    def by_id(self, notebook_id: int) -> Route | None:
        return next((r for r in self._routes.values() if r.notebook_id == notebook_id), None)

    async def lookup(self, owner: str, name: str) -> Route | None:
        route = self._routes.get((owner, name))
        if route is not None:
            return route
        async with self.db.session() as session:
            row = await session.execute(
                select(Notebook)
                .join(User, User.id == Notebook.owner_id)
                .where(User.name == owner, Notebook.name == name)
            )
            nb = row.scalar_one_or_none()
        if nb is None:
            return None
        self.update(nb, owner)
        return self._routes[(owner, name)]

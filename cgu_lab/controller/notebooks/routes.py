"""The route table: where the proxy sends each notebook's requests.

It exists apart from the notebook service so the proxy, which forwards every
request, depends on a small in-memory table and not on everything that creates,
starts and stops notebooks. The table is updated on every state change and
filled again from the database (`reconcile`) when the controller starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from sqlalchemy import select

from ...backends.base import Backend
from ...core.lifecycle import State
from ...store.db import Database
from ...store.models import Notebook, User


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
    # Where the server answers when not at base_path (Backend.notebook_path): JupyterLab's
    # links use it, so the proxy routes it to this notebook too and forwards under it.
    server_path: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        """The paths this notebook is reached at on its origin (cookies go on each)."""
        own = base_path(quote(self.owner), quote(self.name))
        return (own, self.server_path) if self.server_path else (own,)


class RouteTable:
    def __init__(self, db: Database, backend: Backend) -> None:
        self.db = db
        self.backend = backend
        self._routes: dict[tuple[str, str], Route] = {}
        self._by_server_path: dict[str, tuple[str, str]] = {}

    def update(self, nb: Notebook, owner: str) -> None:
        """Record the notebook's current state (and address, once it runs)."""
        state = State(nb.state)
        target = (
            self.backend.endpoint(nb.backend_state)
            if state is State.RUNNING and nb.backend_state
            else None
        )
        server_path = self.backend.notebook_path(owner, nb.name)
        self._routes[(owner, nb.name)] = Route(
            nb.id, nb.owner_id, owner, nb.name, state, target, nb.proxy_secret, server_path
        )
        if server_path:
            self._by_server_path[server_path] = (owner, nb.name)

    def forget(self, owner: str, name: str) -> None:
        route = self._routes.pop((owner, name), None)
        if route is not None and route.server_path:
            self._by_server_path.pop(route.server_path, None)

    def at_server_path(self, first: str, second: str) -> Route | None:
        """The notebook whose server answers at `/notebook/<first>/<second>/` where that is
        not its owner and name (Kubeflow's namespace and object name). Only a running
        server's pages link there, and every running notebook is in the table (reconcile
        adopts them at the controller's start), so no database read is needed."""
        key = self._by_server_path.get(base_path(first, second))
        return self._routes.get(key) if key is not None else None

    def items(self) -> list[tuple[tuple[str, str], Route]]:
        return list(self._routes.items())

    def by_id(self, notebook_id: int) -> Route | None:
        return next((r for r in self._routes.values() if r.notebook_id == notebook_id), None)

    async def lookup(self, owner: str, name: str) -> Route | None:
        route = self._routes.get((owner, name))
        if route is not None:
            return route
        async with self.db.reading() as session:
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

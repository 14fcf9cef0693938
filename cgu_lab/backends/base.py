"""The interface between the controller and the place notebooks run."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.gpus import Device


@dataclass(frozen=True)
class EnvironmentSpec:
    name: str
    image: str = ""
    local_prefix: str = ""


@dataclass(frozen=True)
class NotebookSpec:
    """Everything a backend needs to run one notebook server."""

    id: int
    owner: str
    name: str
    base_path: str  # "/notebook/<owner>/<name>/", the server's base_url
    environment: EnvironmentSpec
    cpu_milli: int
    memory: int
    gpu_type: str | None
    gpus: int
    proxy_secret: str  # the notebook server accepts identity only with this secret
    controller_url: str
    # Device placement made by the controller (local backend): GPU UUIDs or
    # indices, plus type-specific settings such as MPS limits.
    devices: tuple[str, ...] = ()
    device_env: Mapping[str, str] = field(default_factory=dict)
    api_token: str = ""


@dataclass(frozen=True)
class Observation:
    """What a backend sees of a notebook it was asked about."""

    alive: bool
    ready: bool = False
    detail: str = ""


ProgressCallback = Callable[[int, str], Awaitable[None]]


class BackendError(Exception):
    """A backend could not do what was asked; the message is shown to the user."""


class Backend(abc.ABC):
    """One implementation per place notebooks run; the controller holds exactly one."""

    name: str = "abstract"

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Prepare long-lived resources (clients, directories)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what `open` took; running notebooks keep running."""

    @abc.abstractmethod
    async def start(self, spec: NotebookSpec, progress: ProgressCallback) -> dict[str, Any]:
        """Start the server and return once it answers; the result is its backend_state.

        Raises BackendError with a readable message when it cannot start; in
        that case nothing of the attempt is left running.
        """

    @abc.abstractmethod
    async def stop(self, spec: NotebookSpec, state: Mapping[str, Any]) -> None:
        """Stop the server and everything it started (kernels, terminals)."""

    @abc.abstractmethod
    async def observe(self, spec: NotebookSpec, state: Mapping[str, Any]) -> Observation:
        """Whether a notebook recorded as running is still there and answering."""

    @abc.abstractmethod
    def endpoint(self, state: Mapping[str, Any]) -> str:
        """The base URL (scheme://host:port) the proxy forwards this notebook's requests to."""

    @abc.abstractmethod
    async def sweep(self, keep: set[int]) -> list[int]:
        """Stop servers of this installation that are not in `keep`; return their ids.

        Called once at controller start so that a crash never leaves orphans.
        """

    @abc.abstractmethod
    async def remove_storage(self, owner: str, name: str) -> None:
        """Delete (or move aside) the files of a deleted notebook."""

    async def inventory(self) -> list[Device]:
        """The GPU devices notebooks can be given; none by default."""
        return []

    def describe(self) -> dict[str, Any]:
        """Facts for the admin page: how limits are enforced, what is supported."""
        return {"name": self.name}

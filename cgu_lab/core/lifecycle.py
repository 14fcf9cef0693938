"""The states of a notebook and the moves between them.

A notebook is `stopped`, `queued` (waiting for a GPU), `starting`, `running`
or `stopping`. Starting and running notebooks hold their resources (quota and
GPUs); a stopping one still holds them until its server is really gone, so a
quick restart can never count the same GPU twice. A queued one holds nothing:
its quota is checked again when its turn comes.
"""

from __future__ import annotations

import enum

from .errors import Conflict


class State(str, enum.Enum):
    STOPPED = "stopped"
    QUEUED = "queued"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"


HOLDING = frozenset({State.STARTING, State.RUNNING, State.STOPPING})

_MOVES = {
    State.STOPPED: {State.STARTING, State.QUEUED},
    State.QUEUED: {State.STARTING, State.STOPPED},
    State.STARTING: {State.RUNNING, State.STOPPING, State.STOPPED},
    State.RUNNING: {State.STOPPING, State.STOPPED},
    State.STOPPING: {State.STOPPED},
}


def holds_resources(state: State) -> bool:
    return state in HOLDING


def can_move(current: State, target: State) -> bool:
    return target in _MOVES[current]


def require_move(current: State, target: State, notebook: str) -> None:
    if not can_move(current, target):
        raise Conflict(
            f"notebook '{notebook}' is {current.value}; it cannot become {target.value} now"
        )

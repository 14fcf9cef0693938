"""A class pressing Start at once: every start arrives, none is lost or stopped.

The local backend paces launches to a few at a time (local_servers.StartQueue, here
two, as on a 2-core runner); the others wait in line with their place shown in the
start's progress, and their wait counts against no timeout. Behaviour only: how long
the burst takes is benchmarks/class_burst.py's business, never a test's.
"""

from __future__ import annotations

import concurrent.futures
import json

import pytest

from .harness import running_controller

# The controller process's own StartQueue under a burst of real launches (end to end).
pytestmark = pytest.mark.end_to_end

BURST = 8


@pytest.fixture(scope="module")
def site():
    # Two launches at once whatever the runner's cores, so that a burst of 8 must queue;
    # a start timeout that a loaded runner meets even for the last in line.
    pace = {"CGU_LAB_PARALLEL_STARTS": "2", "CGU_LAB_START_TIMEOUT": "120"}
    with running_controller([(f"burst{i}", "student") for i in range(BURST)], env=pace) as ctl:
        yield ctl


def start_and_follow(client, user: str) -> list[dict]:
    """Press Start and read the start's progress until it is done."""
    client.ok("POST", f"/api/notebooks/{user}/lab/start", 202)
    events = []
    with client.stream("GET", f"/api/notebooks/{user}/lab/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if events[-1]["done"]:
                    break
    return events


def test_a_burst_of_starts_loses_none(site):
    users = [f"burst{i}" for i in range(BURST)]
    clients = [site.client(user) for user in users]
    try:
        for client in clients:
            body = {"name": "lab", "cpu": 1, "memory": "1Gi"}
            client.ok("POST", "/api/notebooks", 201, json=body)
        with concurrent.futures.ThreadPoolExecutor(BURST) as pool:
            followed = list(pool.map(start_and_follow, clients, users))
        for user, events in zip(users, followed, strict=True):
            last = events[-1]
            assert last["done"] and last["ok"], f"{user}: {last}"
        messages = [e["message"] for events in followed for e in events]
        # Eight starts and two at a time: some waited, and were told their place.
        assert any("in line" in m for m in messages), messages
        for client, user in zip(clients, users, strict=True):
            notebook = client.ok("GET", f"/api/notebooks/{user}/lab")
            assert notebook["state"] == "running", notebook
            status = client.get(f"/notebook/{user}/lab/api/status")
            assert status.status_code == 200, status.text
    finally:
        for client in clients:
            client.close()

"""A started notebook's address is waited for until it takes connections."""

from __future__ import annotations

import asyncio
import socket

from cgu_lab.backends.reachable import takes_connections


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_address_that_listens_late_is_waited_for():
    port = free_port()

    async def scenario() -> tuple[bool, int]:
        accepted = []

        async def serve() -> asyncio.base_events.Server:
            await asyncio.sleep(1.0)
            return await asyncio.start_server(
                lambda r, w: (accepted.append(1), w.close()), "127.0.0.1", port
            )

        server_task = asyncio.create_task(serve())
        answered = await takes_connections(f"http://127.0.0.1:{port}/x", seconds=10, every=0.1)
        server = await server_task
        await asyncio.sleep(0.1)
        server.close()
        await server.wait_closed()
        return answered, len(accepted)

    answered, accepted = asyncio.run(scenario())
    assert answered and accepted == 1


def test_an_address_that_never_listens_gives_up_after_its_time():
    port = free_port()
    answered = asyncio.run(takes_connections(f"http://127.0.0.1:{port}", seconds=0.5, every=0.1))
    assert answered is False

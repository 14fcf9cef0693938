"""A teacher's public demo site, with real processes.

A demo an administrator made public is used without a log-in: its app alone (a page and
its websocket), never the notebook's files, kernels, terminals, JupyterLab or other ports;
each anonymous visitor is counted once (by a cookie) and an address is paced. (A notebook
shown with Voilà, the server's own app, is tests/test_voila_pages.py's.)

The controller is a process of this module's own, pacing anonymous visitors so that an
address's PUBLIC_BURST+1st request is refused; each test's anonymous client connects from
an address of its own (a loopback address), so no test spends another's requests.
"""

import asyncio
import json

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from cgu_lab.core import publishing

from .conftest import STANDARD_USERS
from .harness import notebook_host, running_controller, set_cookies
from .test_notebooks import execute
from .test_publishing import START_APPS

pytestmark = [pytest.mark.integration, pytest.mark.end_to_end]

OWNER, NAME = "teacher", "stage"
SITE = f"/notebook/{OWNER}/{NAME}"
PUBLIC_BURST = 12


@pytest.fixture(scope="module")
def controller():
    pace = {"CGU_LAB_DEMO_PUBLIC_BURST": str(PUBLIC_BURST), "CGU_LAB_DEMO_PUBLIC_RATE": "0.001"}
    with running_controller(STANDARD_USERS, env=pace) as ctl:
        yield ctl


@pytest.fixture(scope="module")
def site(controller):
    return controller


@pytest.fixture(scope="module")
def stage(controller, admin, teacher, alice, bob):
    """The teacher's running notebook with a page, another page and a websocket echo app;
    alice in the teacher's course, bob in another."""
    for course, student in (("stage101", "alice"), ("elsewhere101", "bob")):
        admin.ok("POST", "/api/groups", 201, json={"name": course})
        admin.ok("PUT", f"/api/groups/{course}/members/{student}", json={"manager": False})
    admin.ok("PUT", "/api/groups/stage101/members/teacher", json={"manager": True})
    teacher.ok("POST", "/api/notebooks", 201, json={"name": NAME, "cpu": 1, "memory": "1Gi"})
    teacher.ok("POST", f"/api/notebooks/{OWNER}/{NAME}/start?wait=true", 202)
    kernel = teacher.post(f"{SITE}/api/kernels", json={"name": "python3"})
    assert kernel.status_code == 201, kernel.text
    url, headers, connect = teacher.notebook_socket(
        f"{SITE}/api/kernels/{kernel.json()['id']}/channels"
    )
    printed = asyncio.run(execute(url, headers, START_APPS, **connect))
    page, other, echo = json.loads(printed.strip().splitlines()[-1])
    return {"page": page, "other": other, "echo": echo, "kernel": kernel.json()["id"]}


def stranger(controller, address: str) -> httpx.Client:
    """A browser that never logged in, on the notebook's origin, from `address`."""
    host = notebook_host(controller.url, OWNER, NAME)
    return controller.anonymous(address, headers={"Host": host}, follow_redirects=False)


def publish(teacher, port: int, course: str | None = "stage101") -> dict:
    body = {"app": f"proxy/{port}/", "course": course, "title": "public page"}
    return teacher.ok("POST", f"/api/notebooks/{OWNER}/{NAME}/demos", 201, json=body)


def make_public(admin, demo: dict, public: bool = True) -> dict:
    return admin.ok(
        "PUT", f"/api/notebooks/{OWNER}/{NAME}/demos/{demo['id']}/public", json={"public": public}
    )


def not_served(response) -> None:
    """Refused before the notebook server saw it: the log-in (401 for a script, a redirect
    to the controller's log-in for a page), the demo's 403, or 404 for a path whose dots
    lead out of the notebook."""
    assert response.status_code in (302, 303, 401, 403, 404), (response.status_code, response.text)
    assert "teacher demo page" not in response.text and '"content"' not in response.text


def test_a_public_demo_is_used_without_a_log_in_and_nothing_else(controller, stage, admin, teacher):
    demo = publish(teacher, stage["page"])
    app = f"{SITE}/proxy/{stage['page']}/"
    with stranger(controller, "127.0.0.21") as anonymous:
        assert anonymous.get(app).status_code == 401  # published to a course: log in
        # Only an administrator makes a demo public, not its owner.
        refused = teacher.put(
            f"/api/notebooks/{OWNER}/{NAME}/demos/{demo['id']}/public", json={"public": True}
        )
        assert refused.status_code == 403 and refused.json()["code"]
        assert make_public(admin, demo)["public"] is True

        first = anonymous.get(app)
        assert first.status_code == 200 and "teacher demo page" in first.text
        visitor = {k: v for k, v in set_cookies(first).items() if k.startswith("cgu-visitor-")}
        assert len(visitor) == 1 and publishing.is_visitor(next(iter(visitor.values())))
        again = anonymous.get(f"{app}index.html")
        assert again.status_code == 200 and not set_cookies(again)  # the same visitor

        xsrf = {"X-XSRFToken": "x", "Cookie": "_xsrf=x"}
        for path in (
            "/api/contents",
            "/api/contents/site/index.html",
            "/files/site/index.html",
            "/api/kernels",
            f"/api/kernels/{stage['kernel']}",
            "/api/terminals",
            "/lab",
            "/cgu-lab/info",
            "/vscode/",
            f"/proxy/{stage['other']}/",
            f"/proxy/{stage['page']}/%2E%2E/%2E%2E/api/contents",
            f"/proxy/{stage['page']}/%2e%2e%2f%2e%2e%2fapi%2fcontents",
        ):
            not_served(anonymous.get(SITE + path, headers={"Accept": "application/json"}))
        not_served(anonymous.get(f"{SITE}/lab", headers={"Accept": "text/html"}))
        not_served(anonymous.post(f"{SITE}/api/kernels", json={"name": "python3"}, headers=xsrf))
        not_served(anonymous.post(f"{SITE}/api/terminals", headers=xsrf))
        # ... nor a kernel's websocket without a session.
        host = notebook_host(controller.url, OWNER, NAME)
        kernel = f"ws://{host}{SITE}/api/kernels/{stage['kernel']}/channels"
        connect = {"host": "127.0.0.1", "port": httpx.URL(controller.url).port}
        with pytest.raises((InvalidStatus, ConnectionClosed)):
            asyncio.run(execute(kernel, {"Origin": f"http://{host}"}, "1+1", **connect))

    # A second anonymous visitor; the first, counted once.
    with stranger(controller, "127.0.0.22") as other:
        assert other.get(app).status_code == 200
    counted = next(
        d
        for d in teacher.ok("GET", f"/api/notebooks/{OWNER}/{NAME}/demos")
        if d["id"] == demo["id"]
    )
    assert (counted["visitors"], counted["anonymous_visitors"]) == (2, 2), counted

    # No longer public: the log-in again, at once.
    assert make_public(admin, demo, False)["public"] is False
    with stranger(controller, "127.0.0.21") as anonymous:
        assert anonymous.get(app).status_code == 401
    teacher.ok("DELETE", f"/api/notebooks/{OWNER}/{NAME}/demos/{demo['id']}")


def test_an_address_without_a_log_in_is_paced(controller, stage, admin, teacher):
    demo = publish(teacher, stage["page"], course=None)
    make_public(admin, demo)
    app = f"{SITE}/proxy/{stage['page']}/"
    with stranger(controller, "127.0.0.23") as anonymous:
        codes = [anonymous.get(app).status_code for _ in range(PUBLIC_BURST)]
        assert codes == [200] * PUBLIC_BURST
        slowed = anonymous.get(app)
        assert slowed.status_code == 429 and slowed.json()["code"] == "too_many_requests"
        assert int(slowed.headers["retry-after"]) >= 1
        # Paths outside the demo are the log-in's, not paced: the owner can still log in.
        assert anonymous.get(f"{SITE}/api/contents").status_code == 401
    # Another address is not held back by that one.
    with stranger(controller, "127.0.0.24") as fresh:
        assert fresh.get(app).status_code == 200
    teacher.ok("DELETE", f"/api/notebooks/{OWNER}/{NAME}/demos/{demo['id']}")


def test_a_public_demo_s_websocket_ends_when_it_is_no_longer_public(
    controller, stage, admin, teacher
):
    demo = make_public(admin, publish(teacher, stage["echo"]))
    host = notebook_host(controller.url, OWNER, NAME)
    url = f"ws://{host}{SITE}/proxy/{stage['echo']}/"
    connect = {"host": "127.0.0.1", "port": httpx.URL(controller.url).port}
    headers = {"Origin": f"http://{host}"}

    async def talk_then_lose_it() -> tuple[str, int | None]:
        async with websockets.connect(url, additional_headers=headers, **connect) as ws:
            await ws.send("hello")
            answer = await ws.recv()
            make_public(admin, demo, False)  # the admin's change closes it at once
            with pytest.raises(ConnectionClosed):
                while True:
                    await asyncio.wait_for(ws.recv(), 60)
            return answer, ws.close_code

    assert asyncio.run(talk_then_lose_it()) == ("echo:hello", 1008)
    with pytest.raises((InvalidStatus, ConnectionClosed)):
        asyncio.run(talk_then_lose_it())
    teacher.ok("DELETE", f"/api/notebooks/{OWNER}/{NAME}/demos/{demo['id']}")


def test_public_bad_input(controller, stage, admin, teacher, alice):
    demo = publish(teacher, stage["page"])
    base = f"/api/notebooks/{OWNER}/{NAME}/demos"
    for body in ({}, {"public": "yes please"}, {"public": True, "extra": 1}):
        response = admin.put(f"{base}/{demo['id']}/public", json=body)
        assert 400 <= response.status_code < 500 and response.json()["code"], body
    assert admin.put(f"{base}/999999/public", json={"public": True}).status_code == 404
    assert alice.put(f"{base}/{demo['id']}/public", json={"public": True}).status_code in (403, 404)
    teacher.ok("DELETE", f"{base}/{demo['id']}")


# -- the rules alone (core/publishing.py) ------------------------------------------------------


def test_the_pace_of_an_address():
    bucket = publishing.Bucket(3.0, 0.0)
    waits = []
    for _ in range(4):
        bucket, wait = bucket.take(0.0, rate=1.0, burst=3.0)
        waits.append(wait)
    assert waits == [0.0, 0.0, 0.0, 1.0]
    bucket, wait = bucket.take(0.5, rate=1.0, burst=3.0)
    assert wait == pytest.approx(0.5)
    bucket, wait = bucket.take(1.0, rate=1.0, burst=3.0)
    assert wait == 0.0
    # A long pause refills up to the burst, no more.
    bucket, _ = bucket.take(1000.0, rate=1.0, burst=3.0)
    assert bucket.tokens == 2.0


def test_a_visitor_cookie():
    assert publishing.is_visitor(publishing.new_visitor())
    for forged in ("", "x", "a" * 21, "a" * 23, "a" * 21 + ";", "../../aaaaaaaaaaaaaaaaaaa"):
        assert not publishing.is_visitor(forged), forged

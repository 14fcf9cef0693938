"""The Apps launcher in a notebook pod on the real one-node cluster.

The notebook image (scripts/kube-images.sh) carries the desktop's programs (Debian's
Xvnc, openbox, xterm) and VS Code (code-server with its Node.js), so a notebook on
Kubernetes offers both, as on one machine. Through the controller's proxy on the
notebook's own origin, as a browser would: the desktop's VNC websocket answers with
the desktop session, keys typed into its terminal run a command in the pod as the
notebook's user (the file it makes is read back through JupyterLab's contents API,
from the home volume), and VS Code answers with its workbench for the home folder.
The cluster and controller are test_kube_cluster.py's; the student is this module's own,
so that its namespace is not one the other module's teardown left Terminating.
"""

from __future__ import annotations

import asyncio
import time

import pytest
import websockets

from . import test_kube_cluster as cluster
from .test_desktop_view import Rfb
from .test_kube_cluster import CPU, start

# The cluster module's fixtures and marks, used here under the same names.
pytestmark = cluster.pytestmark
kube, admin, controller = cluster.kube, cluster.admin, cluster.controller

STUDENT = "kapps"
NAME = "apps"


@pytest.fixture(scope="module")
def student(controller):
    controller.create_user(STUDENT)
    with controller.client(STUDENT) as session:
        yield session


class _Socket:
    """The `websockets` connection under the names test_desktop_view's Rfb reads and writes."""

    def __init__(self, ws) -> None:
        self.ws = ws

    async def read_message(self):
        return await self.ws.recv()

    async def write_message(self, data: bytes, binary: bool = True) -> None:
        await self.ws.send(data)


def exists(session, path: str) -> bool:
    found = session.get(f"/notebook/{STUDENT}/{NAME}/api/contents/{path}?content=0")
    return found.status_code == 200


async def type_in_desktop(session, command: str, made: str, seconds: float = 60) -> str:
    """Open the desktop, type `command` into its terminal until file `made` appears in the
    home (the terminal may still be starting when the first keys arrive); the desktop's name."""
    url, headers, connect = session.notebook_socket(f"/notebook/{STUDENT}/{NAME}/desktop/")
    connect["host"] = session.base_url.host
    opening = websockets.connect(url, additional_headers=headers, open_timeout=90, **connect)
    async with opening as ws:
        rfb = Rfb(_Socket(ws))
        name = await rfb.handshake()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await rfb.click(100, 100)  # inside the terminal
            await rfb.type(command)
            for _ in range(10):
                if await asyncio.to_thread(exists, session, made):
                    return name
                await asyncio.sleep(0.5)
        raise AssertionError(f"what was typed into the desktop never made {made}")


def test_the_desktop_and_vs_code_run_in_the_notebook_pod(kube, student):
    image = kube["CGU_NOTEBOOK_IMAGE"]
    body = {"name": NAME, "image": image, "cpu": CPU, "memory": "1Gi"}
    student.ok("POST", "/api/notebooks", 201, json=body)
    start(student, NAME, owner=STUDENT)

    listed = student.ok("GET", f"/notebook/{STUDENT}/{NAME}/cgu-lab/apps")
    assert [app["name"] for app in listed["apps"]] == ["desktop", "vscode"], listed["missing"]

    began = time.monotonic()
    name = asyncio.run(type_in_desktop(student, "id -u > ~/typed-in-the-pod", "typed-in-the-pod"))
    print(f"\ndesktop in a pod: open -> a typed command ran: {time.monotonic() - began:.1f} s")
    assert name == "Linux desktop"
    typed = student.ok("GET", f"/notebook/{STUDENT}/{NAME}/api/contents/typed-in-the-pod")
    assert typed["content"].strip() == "1000"  # jovyan, the notebook's user

    # code-server starts on first use and opens the home as its folder.
    began = time.monotonic()
    redirect = student.get(f"/notebook/{STUDENT}/{NAME}/vscode/", timeout=120)
    assert redirect.status_code == 302, redirect.text[:300]
    assert redirect.headers["location"].startswith("./?folder=")
    workbench = student.get(f"/notebook/{STUDENT}/{NAME}/vscode/{redirect.headers['location'][2:]}")
    print(f"VS Code in a pod: first request -> workbench: {time.monotonic() - began:.1f} s")
    assert workbench.status_code == 200 and b"vscode" in workbench.content.lower()

    student.ok("POST", f"/api/notebooks/{STUDENT}/{NAME}/stop?wait=true", 202)
    student.ok("DELETE", f"/api/notebooks/{STUDENT}/{NAME}")

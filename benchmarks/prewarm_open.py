"""A student's click on a class session's notebook: pre-warmed (cgu-lab) beside a cold start.

cgu-lab: a course of STUDENTS students and a template with one file; the teacher books a
class session, the controller's loop (every second here) pre-warms every student's
notebook. The figure is one student's click as the My notebooks page sends it: `POST
.../sessions/<id>/open`, then the JupyterLab page through the proxy on the notebook's
own origin (the first visit walks the log-in hand-off, as a browser's does), until the
page arrives. Aim: under 1 s.

Beside it, on the same host in the same run, the same click when nothing was pre-warmed:
- cgu-lab, a cold start from the same template (create and start, follow the progress
  until ready, fetch the page);
- the peer, JupyterHub (latest, LocalProcessSpawner; jupyterhub_peer.py), which has no
  booking or pre-warm: start the server, follow the progress, fetch `/user/<u>/lab`.

The host's load is printed at the start and the end (2 shared cores here: the figures
move with it).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from datetime import datetime, timedelta, timezone

from class_burst import CguLab, JupyterHub, load
from jupyterhub_peer import version
from platform_under_test import now

STUDENTS = 3
COURSE = "pw-course"
TASK = {
    "type": "notebook",
    "format": "json",
    "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
}


def wait(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    raise RuntimeError(f"{what}: not after {seconds} s")


def follow(client, owner: str, name: str) -> None:
    with client.stream("GET", f"/api/notebooks/{owner}/{name}/events") as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if event["done"]:
                    if not event.get("ok"):
                        raise RuntimeError(f"{owner}/{name}: {event.get('message')}")
                    return


def page(client, owner: str, name: str) -> None:
    answer = client.get(f"/notebook/{owner}/{name}/lab", headers={"Accept": "text/html"})
    if answer.status_code != 200:
        raise RuntimeError(f"{owner}/{name}: /lab answered {answer.status_code}")


def cgu_lab() -> tuple[list[float], list[float]]:
    """(pre-warmed clicks, cold clicks), in seconds."""
    lab = CguLab(timeout=120)
    lab.controller.env["CGU_LAB_CLASS_SESSION_INTERVAL"] = "1"
    lab.controller.create_user("pw-teacher", "teacher")
    try:
        students = lab.open([f"s{i}" for i in range(STUDENTS)])
        with lab.controller.client("cb-admin") as admin:
            admin.ok("POST", "/api/groups", 201, json={"name": COURSE})
            admin.ok("PUT", f"/api/groups/{COURSE}/members/pw-teacher", json={"manager": True})
            for student in students:
                admin.ok("PUT", f"/api/groups/{COURSE}/members/{student}", json={"manager": False})
        with lab.controller.client("pw-teacher") as teacher:
            body = {"name": "prep", "memory": "512Mi", "start": True}
            teacher.ok("POST", "/api/notebooks", 201, json=body)
            follow(teacher, "pw-teacher", "prep")
            base = "/notebook/pw-teacher/prep/api/contents"
            teacher.ok("PUT", f"{base}/week1", 201, json={"type": "directory"})
            teacher.ok("PUT", f"{base}/week1/task.ipynb", 201, json=TASK)
            template = {
                "name": "pw-lab",
                "notebook": "prep",
                "paths": ["week1"],
                "visibility": "group",
                "group": COURSE,
                "cpu": 1,
                "memory": "1Gi",
            }
            teacher.ok("POST", "/api/templates", 201, json=template)
            teacher.ok("POST", "/api/notebooks/pw-teacher/prep/stop?wait=true", 202)
            starts = datetime.now(timezone.utc) + timedelta(minutes=3)
            window = {"starts_at": starts.isoformat()}
            window["ends_at"] = (starts + timedelta(minutes=60)).isoformat()
            booked = teacher.ok(
                "POST",
                f"/api/courses/{COURSE}/sessions",
                201,
                json={"title": "Bench lab", "template": "pw-lab", **window},
            )
            path = f"/api/courses/{COURSE}/sessions/{booked['id']}"

            def all_running():
                people = teacher.ok("GET", path)["people"]
                ready = [p for p in people if p["state"] == "running"]
                return people if len(ready) == len(students) else None

            wait(all_running, 240, "every seat pre-warmed and running")
        warm, cold = [], []
        for student in students:
            client = lab.clients[student]
            started = now()
            opened = client.ok("POST", f"{path}/open")
            page(client, student, opened["notebook"])
            warm.append(now() - started)
        for student in students:
            client = lab.clients[student]
            started = now()
            body = {"name": "cold", "template": "pw-lab", "start": True}
            client.ok("POST", "/api/notebooks", 201, json=body)
            follow(client, student, "cold")
            page(client, student, "cold")
            cold.append(now() - started)
        return warm, cold
    finally:
        lab.close()


def hub() -> list[float]:
    peer = JupyterHub(timeout=120)
    try:
        users = peer.open([f"pw{i}" for i in range(STUDENTS)])
        clicks = []
        for user in users:
            started = now()
            peer.start(user)
            clicks.append(now() - started)
        return clicks
    finally:
        peer.hub.stop()


def line(label: str, values: list[float]) -> str:
    each = ", ".join(f"{v:.2f}" for v in values)
    return f"{label:<44} median {statistics.median(values):6.2f} s  (each: {each})"


def main() -> None:
    print(f"host: {os.cpu_count()} cores, load {load()} at the start; peer: JupyterHub {version()}")
    warm, cold = cgu_lab()
    peer = hub()
    print(f"load {load()} at the end")
    print(f"== a student's click on a class session's notebook ({STUDENTS} students) ==")
    print(line("cgu-lab, pre-warmed for the session", warm) + "  (aim: under 1 s)")
    print(line("cgu-lab, cold start from the template", cold))
    print(line("JupyterHub (peer), cold start: no pre-warm", peer))


if __name__ == "__main__":
    main()

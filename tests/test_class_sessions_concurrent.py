"""Two teachers of different courses book the same window at the same instant, where the
platform can hold only one of the sessions: exactly one booking is made, the other is
refused with what is left. On SQLite and on a real PostgreSQL, where transactions run
concurrently and only the bookings' own lock keeps both from passing the capacity check
(controller/class_sessions/service.py, `_one_booking_at_a_time`).

In process (tests/inprocess.py): the two requests come from two threads into the app's
one event loop, so their transactions interleave at every database call.
"""

from __future__ import annotations

import concurrent.futures
import shutil
import threading
import uuid
from datetime import timedelta

import psycopg
import pytest
from sqlalchemy.engine import make_url

from .conftest import STANDARD_USERS, postgres_url, requires_postgres
from .harness import reachable_dir
from .inprocess import InProcess

COURSES = ("race-a", "race-b")
TEMPLATE = "race-lab"
ROUNDS = 3


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgresql", marks=[requires_postgres, pytest.mark.postgres])],
)
def site(request):
    """The app in process on a fresh database; room for 6 CPUs of class sessions."""
    base = reachable_dir()
    settings = {"class_session_interval": 86400, "cull_interval": 86400}
    settings |= {"class_cpu_capacity": "6", "class_memory_capacity": "64Gi"}
    admin_dsn = name = None
    if request.param == "postgresql":
        server = make_url(postgres_url())
        name = f"cgu_race_{uuid.uuid4().hex[:12]}"
        admin_dsn = server.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(admin_dsn, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        settings["db_url"] = server.set(database=name).render_as_string(hide_password=False)
    app = InProcess(base / "data", **settings).start()
    for user, role in STANDARD_USERS:
        app.create_user(user, role)
    yield app
    app.stop()
    shutil.rmtree(base, ignore_errors=True)
    if admin_dsn is not None:
        with psycopg.connect(admin_dsn, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def courses(site, login, admin):
    """Two courses of two students each, each with its own teacher; a public template of
    2 CPUs, so each course's session holds 4 CPUs and only one fits the 6."""
    for index, course in enumerate(COURSES):
        teacher = f"race-t{index}"
        login(teacher, "teacher")
        admin.ok("POST", "/api/groups", 201, json={"name": course})
        admin.ok("PUT", f"/api/groups/{course}/members/{teacher}", json={"manager": True})
        for student in (f"race-s{index}a", f"race-s{index}b"):
            login(student, "student")
            admin.ok("PUT", f"/api/groups/{course}/members/{student}", json={"manager": False})
    admin.ok("POST", "/api/notebooks", 201, json={"name": "race-prep", "memory": "512Mi"})
    body = {"name": TEMPLATE, "notebook": "race-prep", "visibility": "public"}
    admin.ok("POST", "/api/templates", 201, json={**body, "cpu": 2, "memory": "1Gi"})
    return [(course, login(f"race-t{index}")) for index, course in enumerate(COURSES)]


def test_two_courses_booking_at_once_cannot_both_pass_the_capacity(site, courses):
    for round_ in range(ROUNDS):
        start = site.clock.now() + timedelta(hours=2 + 3 * round_)
        window = {
            "starts_at": start.isoformat(),
            "ends_at": (start + timedelta(hours=1)).isoformat(),
        }
        together = threading.Barrier(len(courses))

        def book(course_and_teacher, window=window, together=together, round_=round_):
            course, teacher = course_and_teacher
            body = {"title": f"{course} {round_}", "template": TEMPLATE, **window}
            together.wait()
            return course, teacher.post(f"/api/courses/{course}/sessions", json=body)

        with concurrent.futures.ThreadPoolExecutor(len(courses)) as pool:
            answers = list(pool.map(book, courses))
        codes = sorted(answer.status_code for _, answer in answers)
        assert codes == [201, 409], [answer.text for _, answer in answers]
        (refused,) = [answer.json() for _, answer in answers if answer.status_code == 409]
        assert refused["code"] == "conflict"
        assert "4 CPUs asked, 2 CPUs left" in refused["message"]
        # One session more each round, in whichever course won.
        booked = [
            session["title"]
            for course, teacher in courses
            for session in teacher.ok("GET", f"/api/courses/{course}/sessions")["sessions"]
        ]
        assert len(booked) == round_ + 1, booked

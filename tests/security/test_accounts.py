"""Security review, issue 9 (items 2, 3 and part of 8): each attack replayed, refused now.

- Two platform users derived the same Unix account (and so shared files).
- A group manager (TA) adopted any account by adding it to their group, then
  reset its password, edited the admin's profile, changed a teacher's quota.
- `/api/directory?q=%%` listed everyone (LIKE wildcards); eight wrong
  passwords from anyone locked the real user out.

The attacks run over HTTP against the controller app in the test's process
(tests/inprocess.py: its real API, store and local backend, no notebook server needed);
the rules and the Unix account map are also checked on their own.
"""

from __future__ import annotations

import math
import os
import pwd
import subprocess
import time
import uuid

import httpx
import pytest
from sqlalchemy import select

from cgu_lab.backends.base import BackendError
from cgu_lab.backends.local_accounts import (
    MAX_UNIX_NAME,
    Accounts,
    account_stem,
    check_unix_names,
    installation_tag,
    unix_name,
)
from cgu_lab.controller.accounts.security import LoginThrottle
from cgu_lab.core.errors import Conflict, Forbidden
from cgu_lab.core.roles import Principal, Role, manages_account, require_manages_account
from cgu_lab.store.db import Database
from cgu_lab.store.models import UnixAccount, User

from ..harness import PASSWORD

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="per-user Unix accounts need root")
# The user name that derived eve.x's Unix name before the fix.
EVE_TWIN = "eve-x-" + account_stem("eve.x").rsplit("-", 1)[1]
QUOTA = {"cpu": 1, "memory": "1Gi", "gpus": {}, "notebooks": 1}


def userdel(name: str) -> None:
    subprocess.run(["userdel", name], capture_output=True, check=False)


# -- the rules, on their own -----------------------------------------------------


def test_only_admins_change_staff_and_managers_need_all_of_a_students_groups():
    ta = Principal(
        id=1, name="ta", role=Role.TA, groups=frozenset({1}), managed_groups=frozenset({1})
    )
    admin = Principal(id=2, name="root", role=Role.ADMIN)
    assert manages_account(ta, Role.STUDENT, frozenset({1}))
    assert not manages_account(ta, Role.STUDENT, frozenset({1, 2}))  # also another course's
    assert not manages_account(ta, Role.STUDENT, frozenset())  # nobody's student
    for staff in (Role.TA, Role.TEACHER, Role.ADMIN):
        assert not manages_account(ta, staff, frozenset({1}))
        assert manages_account(admin, staff, frozenset())
    with pytest.raises(Forbidden, match="only administrators may reset the password"):
        require_manages_account(ta, "t2", Role.TEACHER, frozenset({1}), "reset the password")


def test_unix_names_carry_the_installation_and_stay_valid():
    tag = installation_tag(uuid.uuid4().hex)
    assert len(tag) == 5
    for user in ("alice", "eve.x", EVE_TWIN, "a" * 64, "x_y.z-1", "0day"):
        name = unix_name(user, tag)
        assert name.startswith(f"cgu-{tag}-") and len(name) <= MAX_UNIX_NAME
        assert name[0].isalpha() and all(c.isalnum() or c in "-_" for c in name)
    assert unix_name("alice", tag) != unix_name("alice", installation_tag("another"))
    # The derivation alone still collides; the stored map below is what refuses it.
    assert unix_name("eve.x", tag) == unix_name(EVE_TWIN, tag)


@pytest.fixture
def db(tmp_path, jp_asyncio_loop):
    database = Database(f"sqlite:///{tmp_path / 'store.sqlite'}")
    database.upgrade_sync()
    yield database
    jp_asyncio_loop.run_until_complete(database.close())


async def test_a_name_whose_unix_account_is_taken_is_refused_at_creation(db):
    async with db.session() as session:
        session.add(User(name="eve.x", role="student"))
        session.add(User(name="plain-x-0123abcd", role="student"))
    async with db.session() as session:
        with pytest.raises(Conflict, match=r"same as that of 'eve\.x'"):
            await check_unix_names(session, [EVE_TWIN])
        twin = "plain.x-0123abcd"
        if account_stem(twin) == "plain-x-0123abcd":  # only when the hash lines up
            with pytest.raises(Conflict):
                await check_unix_names(session, [twin])
        with pytest.raises(Conflict, match="would share one system account"):
            await check_unix_names(session, ["ab.c", "ab-c-" + account_stem("ab.c")[-8:]])
        await check_unix_names(session, ["eve-y", "eve.y"])
        with pytest.raises(Conflict, match="not 'zed''s"):
            await check_unix_names(session, ["zed"], lambda name: f"it is not '{name}''s")


async def test_a_plain_name_then_its_dotted_twin_is_refused_too(db):
    async with db.session() as session:
        session.add(User(name=EVE_TWIN, role="student"))
    async with db.session() as session:
        with pytest.raises(Conflict, match=f"same as that of '{EVE_TWIN}'"):
            await check_unix_names(session, ["eve.x"])


@needs_root
async def test_the_unix_account_map_is_stored_and_one_to_one(db):
    """Two users an older version let in with colliding names never share an account."""
    instance = uuid.uuid4().hex
    accounts = Accounts("per-user", instance=instance, db_url=str(db.url))
    async with db.session() as session:
        session.add_all([User(name="eve.x", role="student"), User(name=EVE_TWIN, role="student")])
    name = unix_name("eve.x", installation_tag(instance))
    try:
        first = await accounts.account("eve.x")
        assert first.name == name and first.uid is not None
        entry = pwd.getpwnam(name)
        assert instance in entry.pw_gecos and "eve.x" in entry.pw_gecos
        with pytest.raises(BackendError, match=r"already belongs to 'eve\.x'"):
            await accounts.account(EVE_TWIN)
        assert await accounts.account("eve.x") == first
        async with db.session() as session:
            rows = (await session.scalars(select(UnixAccount))).all()
        assert [(row.name, row.uid) for row in rows] == [(name, first.uid)]
    finally:
        userdel(name)


@needs_root
async def test_a_system_account_we_did_not_make_is_never_adopted(db):
    instance = uuid.uuid4().hex
    accounts = Accounts("per-user", instance=instance, db_url=str(db.url))
    name = unix_name("mallory", installation_tag(instance))
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--comment", "somebody else", name],
        check=True,
        capture_output=True,
    )
    try:
        async with db.session() as session:
            session.add(User(name="mallory", role="student"))
        assert "already exists on this host" in accounts.clash("mallory")
        with pytest.raises(BackendError, match="not made by this installation"):
            await accounts.account("mallory")
        assert accounts.clash("someone-new") is None
    finally:
        userdel(name)


# -- the login throttle, on its own ---------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fail(throttle: LoginThrottle, account: str, address: str) -> float:
    """One wrong try: 0 if it was let through (and counted), else the wait."""
    return throttle.check(account, address)


def test_throttle_backs_off_per_pair_and_never_locks_out_a_clean_address():
    clock = Clock()
    throttle = LoginThrottle(clock=clock)
    waits = [fail(throttle, "bob", "10.0.0.66") for _ in range(5)]
    assert waits == [0.0] * 5
    assert throttle.check("bob", "10.0.0.66") == pytest.approx(1.0)
    delays = []
    for _ in range(12):
        clock.now += throttle.check("bob", "10.0.0.66")
        assert throttle.check("bob", "10.0.0.66") == 0.0
        delays.append(throttle.check("bob", "10.0.0.66"))
    assert delays[:4] == pytest.approx([2.0, 4.0, 8.0, 16.0])
    assert max(delays) == pytest.approx(300.0)  # capped
    # Bob, from home, is not held back, and his success is not counted as a failure.
    assert throttle.check("bob", "192.0.2.7") == 0.0
    throttle.succeeded("bob", "192.0.2.7")
    assert throttle.check("bob", "192.0.2.7") == 0.0


def test_throttle_paces_an_account_attacked_from_many_addresses():
    clock = Clock()
    throttle = LoginThrottle(clock=clock, account_free=20)
    for i in range(20):  # a botnet: one try per address
        assert throttle.check("bob", f"10.1.0.{i}") == 0.0
    # Addresses that failed on bob now share one slow lane...
    assert throttle.check("bob", "10.1.0.1") == 0.0
    assert throttle.check("bob", "10.1.0.2") > 0
    assert throttle.check("bob", "10.1.0.3") > 0
    # ...while an address with no failure on bob gets in at once, however loud the attack.
    assert throttle.check("bob", "192.0.2.7") == 0.0
    throttle.succeeded("bob", "192.0.2.7")


def test_throttle_limits_one_address_generously_and_forgets_after_the_window():
    clock = Clock()
    throttle = LoginThrottle(clock=clock, per_address=100, window=900)
    for i in range(100):  # a classroom behind one NAT, each mistyping once
        assert throttle.check(f"student{i}", "10.9.9.9") == 0.0
    assert throttle.check("student-late", "10.9.9.9") > 0
    assert throttle.check("student-late", "10.9.9.10") == 0.0
    clock.now += 901
    assert throttle.check("student-late", "10.9.9.9") == 0.0


def test_throttle_memory_is_bounded():
    throttle = LoginThrottle(max_keys=1000)
    for i in range(5000):
        throttle.check(f"made-up-{i}", f"10.{i // 250}.{i % 250}.1")
    assert len(throttle._pairs) <= 1000 and len(throttle._accounts) <= 1000


# -- the attacks, against the controller (in this process) ----------------------------


@pytest.fixture(scope="module")
def course(site, admin):
    """Course x (teacher + TA ta-x, student dave) and course y (teacher-y, students carol, erin)."""
    for group in ("course-x", "course-y"):
        admin.ok("POST", "/api/groups", 201, json={"name": group})
    people = [
        ("ta-x", "ta", None),
        ("teacher-y", "teacher", None),
        ("dave", "student", "course-x"),
        ("carol", "student", "course-y"),
        ("erin", "student", "course-y"),
    ]
    for name, role, group in people:
        body = {"name": name, "role": role, "password": PASSWORD, "group": group}
        admin.ok("POST", "/api/users", 201, json={k: v for k, v in body.items() if v})
    for group, manager in (
        ("course-x", "ta-x"),
        ("course-x", "teacher"),
        ("course-y", "teacher-y"),
    ):
        admin.ok("PUT", f"/api/groups/{group}/members/{manager}", json={"manager": True})
    return site


@pytest.fixture(scope="module")
def ta(course):
    with course.client("ta-x") as session:
        yield session


def member_names(admin, group: str) -> set[str]:
    return {m["name"] for m in admin.ok("GET", f"/api/groups/{group}/members")}


def test_ta_cannot_adopt_a_student_of_another_course(course, ta, admin):
    response = ta.put("/api/groups/course-x/members/carol", json={"manager": False})
    assert response.status_code == 202, response.text
    assert response.json()["code"] == "invited" and "accept" in response.json()["message"]
    assert "carol" not in member_names(admin, "course-x")
    refused = ta.post("/api/users/carol/password")
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert ta.patch("/api/users/carol", json={"email": "ta@evil.example"}).status_code == 403
    assert ta.put("/api/users/carol/quota", json=QUOTA).status_code == 403
    with course.client("carol") as carol:  # her password still works
        assert carol.ok("GET", "/api/me")["email"] == ""


def test_ta_cannot_add_the_admin_nor_touch_their_account(course, ta, admin):
    assert ta.put("/api/groups/course-x/members/root-admin", json={}).status_code == 202
    assert "root-admin" not in member_names(admin, "course-x")
    # Even with the admin in the TA's course (the admin's own act), the account is not the TA's.
    admin.ok("PUT", "/api/groups/course-x/members/root-admin", json={"manager": False})
    edit = ta.patch("/api/users/root-admin", json={"display_name": "pwned", "email": "x@evil"})
    assert edit.status_code == 403 and "staff accounts" in edit.json()["message"]
    assert ta.post("/api/users/root-admin/password").status_code == 403
    assert ta.delete("/api/groups/course-x/members/root-admin").status_code == 403
    me = admin.ok("GET", "/api/me")
    assert me["display_name"] != "pwned" and me["email"] != "x@evil"


def test_ta_cannot_change_a_teachers_quota_or_role_in_the_course(course, ta, admin):
    response = ta.put("/api/users/teacher/quota", json=QUOTA)
    assert response.status_code == 403 and "teacher" in response.json()["message"]
    assert admin.ok("GET", "/api/users/teacher/quota")["source"] == "default"
    assert (
        ta.put("/api/groups/course-x/members/teacher", json={"manager": False}).status_code == 403
    )
    assert ta.delete("/api/groups/course-x/members/teacher").status_code == 403
    assert "teacher" in member_names(admin, "course-x")


def test_a_teacher_cannot_reset_another_teachers_password(course, teacher, admin):
    admin.ok("PUT", "/api/groups/course-x/members/teacher-y", json={"manager": False})
    assert teacher.post("/api/users/teacher-y/password").status_code == 403
    assert teacher.patch("/api/users/teacher-y", json={"display_name": "x"}).status_code == 403
    assert teacher.put("/api/users/teacher-y/quota", json=QUOTA).status_code == 403
    with course.client("teacher-y") as teacher_y:
        assert teacher_y.ok("GET", "/api/me")["display_name"] == "teacher-y"


def test_managers_still_run_their_own_students(course, ta, admin):
    assert ta.ok("POST", "/api/users/dave/password")["one_time_password"]
    assert ta.ok("PATCH", "/api/users/dave", json={"email": "dave@uni.example"})["email"]
    assert ta.ok("PUT", "/api/users/dave/quota", json=QUOTA)["limits"]["notebooks"] == 1
    # New accounts created into the TA's course join it directly...
    ta.ok("POST", "/api/users", 201, json={"name": "gina", "group": "course-x"})
    roster = "username\nfrank\ncarol\ndave\n"
    result = ta.ok("POST", "/api/groups/course-x/import", json={"csv": roster})
    assert [c["name"] for c in result["created"]] == ["frank"]
    assert result["enrolled"] == ["frank"] and result["already_members"] == ["dave"]
    # ...an existing student of another course is only invited.
    assert result["invited"] == ["carol"]
    assert {"gina", "frank", "dave"} <= member_names(admin, "course-x")
    assert "carol" not in member_names(admin, "course-x")


def test_an_invitation_is_answered_by_its_owner_only(course, ta, admin, alice):
    ta.put("/api/groups/course-x/members/carol", json={})
    assert alice.post("/api/me/invitations/course-x").status_code == 404
    with course.client("carol") as carol:
        pending = carol.ok("GET", "/api/me/invitations")
        assert [(i["group"], i["invited_by"], i["manager"]) for i in pending] == [
            ("course-x", "ta-x", False)
        ]
        carol.ok("POST", "/api/me/invitations/course-x")
        assert carol.ok("GET", "/api/me/invitations") == []
        assert {g["name"] for g in carol.ok("GET", "/api/me")["groups"]} == {
            "course-x",
            "course-y",
        }
    assert "carol" in member_names(admin, "course-x")
    # Carol is in the TA's course now, but also in course y: still not the TA's to take over.
    assert ta.post("/api/users/carol/password").status_code == 403
    # Declining leaves the account where it was.
    assert ta.put("/api/groups/course-x/members/erin", json={}).status_code == 202
    with course.client("erin") as erin:
        erin.ok("DELETE", "/api/me/invitations/course-x")
        assert erin.post("/api/me/invitations/course-x").status_code == 404
    assert "erin" not in member_names(admin, "course-x")
    events = admin.ok("GET", "/api/audit?target=group:course-x&limit=200")
    actions = {e["action"] for e in events}
    assert {"group.invited", "group.invitation_accepted", "group.invitation_declined"} <= actions


def test_a_user_name_sharing_a_unix_account_is_refused(course, ta, admin):
    admin.ok("POST", "/api/users", 201, json={"name": "eve.x", "password": PASSWORD})
    response = admin.post("/api/users", json={"name": EVE_TWIN, "password": PASSWORD})
    assert response.status_code == 409, response.text
    assert "eve.x" in response.json()["message"] and response.json()["code"] == "conflict"
    roster = f"username\nhank\n{EVE_TWIN}\n"
    imported = ta.post("/api/groups/course-x/import", json={"csv": roster})
    assert imported.status_code == 409 and "eve.x" in imported.json()["message"]
    assert admin.get("/api/users/hank").status_code == 404  # all or nothing
    with pytest.raises(RuntimeError, match=r"eve\.x"):  # nor does the command line
        course.cli("admin", "create-user", EVE_TWIN, "--password-stdin", stdin=PASSWORD + "\n")
    assert admin.get(f"/api/users/{EVE_TWIN}").status_code == 404


@needs_root
def test_a_user_name_whose_system_account_exists_is_refused(course, admin):
    instance = (course.data_dir / "instance-id").read_text().strip()
    name = unix_name("mallet", installation_tag(instance))
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--comment", "not ours", name],
        check=True,
        capture_output=True,
    )
    try:
        response = admin.post("/api/users", json={"name": "mallet", "password": PASSWORD})
        assert response.status_code == 409
        assert f"'{name}' already exists on this host" in response.json()["message"]
    finally:
        userdel(name)


def test_directory_search_treats_wildcards_as_letters(course, alice, admin):
    for query in ("%%", "__", "%_", "\\%"):
        found = alice.ok("GET", "/api/directory", params={"q": query})
        assert found["users"] == [] and found["groups"] == [], query
        assert admin.ok("GET", "/api/users", params={"q": query}) == []
    found = alice.ok("GET", "/api/directory", params={"q": "car"})
    assert "carol" in {u["name"] for u in found["users"]}


def login_from(course, address: str, name: str, password: str) -> httpx.Response:
    with course.anonymous(address=address) as client:
        return client.post("/login", data={"name": name, "password": password, "next": "/"})


def test_a_guesser_elsewhere_does_not_lock_the_owner_out(course):
    began = time.monotonic()
    statuses, slowed_at, told = [], None, None
    for i in range(20):
        response = login_from(course, "127.0.0.2", "erin", f"guess-{i}")
        statuses.append(response.status_code)
        if response.status_code == 429:
            slowed_at, told = time.monotonic(), int(response.headers["retry-after"])
    elapsed = time.monotonic() - began
    assert statuses[:5] == [401] * 5
    # Beyond 5 free tries, one more each time the doubling wait (1, 2, 4, ... s) has run
    # out: k extra tries take 2**k - 1 s, however slow the machine makes the 20 requests.
    assert 429 in statuses and statuses.count(401) <= 5 + math.floor(math.log2(elapsed + 1))
    # The right password from the guesser's address waits too, until the wait it was told
    # is over (whole seconds, rounded up). A loaded machine, where argon2 takes seconds,
    # can reach that end before asking: then it may pass.
    asked = time.monotonic()
    slowed = login_from(course, "127.0.0.2", "erin", PASSWORD)
    if slowed.status_code == 429:
        assert "try again in" in slowed.text
    else:
        assert slowed.status_code == 303 and asked - slowed_at >= told - 1, (statuses, told)
    # Erin, from her own address, logs in at once.
    response = login_from(course, "127.0.0.3", "erin", PASSWORD)
    assert response.status_code == 303, response.text

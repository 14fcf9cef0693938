"""Course competitions through the API, with the real scorer sandbox (an account of its
own, no network, rlimits): the hidden-test-set leak suite, limits, ties, late entries,
public and private leaderboards before and after the end, teams, the teacher's view.

The app runs in this process (tests/inprocess.py) so that the platform's clock, which
the rules read, can be moved (`site.clock`) and the scoring queue drained, with no sleeps.
"""

from __future__ import annotations

import concurrent.futures
import json
import pwd
import subprocess
import threading
from datetime import datetime, timedelta, timezone

import pytest

from cgu_lab.backends.competition_sandbox import scorer_name
from cgu_lab.controller import audit
from cgu_lab.controller.competitions import files
from cgu_lab.core.competition import in_public

from .harness import http_client

pytestmark = pytest.mark.integration

START = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)
END = START + timedelta(days=7)
SECRET = "secret-label"  # every hidden solution cell holds it; no student answer may
ROWS = 200
CSV = {"Content-Type": "text/csv"}


@pytest.fixture(scope="module")
def inprocess_settings():
    # The clock goes a week ahead and back again: sessions must outlast the competition.
    return {"session_hours": 24 * 60}


@pytest.fixture(scope="module")
def site(in_process):
    # During the competition from the first login on (sessions start on this clock too).
    in_process.clock.set(START + timedelta(hours=1))
    return in_process


@pytest.fixture(scope="module")
def clock(site):
    moved = site.clock
    yield moved
    instance = (site.data_dir / "instance-id").read_text().strip()
    subprocess.run(["userdel", scorer_name(instance)], check=False, capture_output=True)


@pytest.fixture(scope="module")
def course(site, login, admin, teacher, clock):
    site.create_user("carol")
    site.create_user("mallory")
    teacher.ok("POST", "/api/groups", 201, json={"name": "ml"})
    admin.ok("POST", "/api/groups/ml/import", json={"csv": "username\nalice\nbob\ncarol\n"})
    return "ml"


def solution_rows() -> dict[str, str]:
    return {str(i): f"{SECRET}-{i % 3}" for i in range(1, ROWS + 1)}


def as_csv(rows: dict[str, str], column: str = "prediction") -> str:
    return f"id,{column}\n" + "".join(f"{k},{v}\n" for k, v in rows.items())


def drain(site) -> None:
    site.call(site.platform.competition_entries.drain)


def make(teacher, name: str, solution: dict | None = None, **extra) -> dict:
    body = {
        "name": name,
        "title": f"Challenge {name}",
        "description": "# Predict\nUse **train.csv**. <script>alert(1)</script>"
        " [x](javascript:alert(1))",
        "starts_at": START.isoformat(),
        "ends_at": END.isoformat(),
        "metric": "accuracy",
        "per_day": 50,
        **extra,
    }
    competition = teacher.ok("POST", "/api/groups/ml/competitions", 201, json=body)
    cid = competition["id"]
    teacher.ok(
        "PUT",
        f"/api/competitions/{cid}/files/train?name=train.csv",
        content="x,y\n1,2\n",
        headers=CSV,
    )
    teacher.ok("PUT", f"/api/competitions/{cid}/files/test", content="id,x\n1,2\n", headers=CSV)
    if body["metric"] != "custom":
        text = as_csv(solution or solution_rows())
        teacher.ok("PUT", f"/api/competitions/{cid}/files/solution", content=text, headers=CSV)
    return competition


def submit(client, cid: int, rows: dict[str, str], status: int = 201) -> dict:
    return client.ok(
        "POST",
        f"/api/competitions/{cid}/entries?name=mine.csv",
        status,
        content=as_csv(rows),
        headers=CSV,
    )


def salt(site, cid: int) -> str:
    from cgu_lab.store.competition_models import Competition

    async def read() -> str:
        async with site.platform.db.session() as session:
            return (await session.get(Competition, cid)).split_salt

    return site.call(read)


def test_a_teacher_creates_a_competition_members_see_it(site, course, teacher, alice, login):
    competition = make(teacher, "digits")
    cid = competition["id"]
    seen = alice.ok("GET", f"/api/competitions/{cid}")
    assert seen["phase"] == "open" and not seen["manage"]
    assert set(seen["files"]) == {"train", "test"}  # not even that a solution exists
    assert "<script>" not in seen["description_html"]
    assert "&lt;script&gt;" in seen["description_html"]
    assert 'href="javascript:' not in seen["description_html"]  # left as text
    assert "<h1>Predict</h1>" in seen["description_html"]
    page = alice.get(f"/competitions/{cid}")
    assert page.status_code == 200 and "<script>alert" not in page.text
    assert alice.get(f"/api/competitions/{cid}/files/train").text == "x,y\n1,2\n"
    assert [c["id"] for c in alice.ok("GET", "/api/competitions")] == [cid]
    mallory = login("mallory")
    for path in ("", "/files/train", "/leaderboard", "/entries/mine", "/teams"):
        refused = mallory.get(f"/api/competitions/{cid}{path}")
        assert refused.status_code == 404, path
        assert refused.json()["code"] == "not_found"
    assert mallory.get(f"/competitions/{cid}").status_code == 404
    denied = alice.post(
        "/api/groups/ml/competitions",
        json={
            "name": "mine",
            "starts_at": START.isoformat(),
            "ends_at": END.isoformat(),
            "metric": "mae",
        },
    )
    assert denied.status_code == 403
    upload = alice.put(
        f"/api/competitions/{cid}/files/solution", content="id,prediction\n", headers=CSV
    )
    assert upload.status_code == 403


def test_the_hidden_set_is_never_served(site, course, teacher, alice, clock):
    cid = make(teacher, "hidden")["id"]
    entry = submit(alice, cid, {str(i): "guess" for i in range(1, ROWS + 1)})
    drain(site)
    for who in (alice, teacher):
        for kind in ("solution", "script", "inputs"):
            refused = who.get(f"/api/competitions/{cid}/files/{kind}")
            assert refused.status_code == 404, (kind, refused.text)
            assert SECRET not in refused.text
    for path in (
        "/files/..%2Fhidden%2Fsolution.csv",
        "/files/../hidden/solution.csv",
        "/files/%2e%2e/hidden/solution.csv",
        "/files/solution.csv",
        "/files/train/../../hidden/solution.csv",
    ):
        answer = alice.get(f"/api/competitions/{cid}{path}")
        assert answer.status_code in (400, 404), path
        assert SECRET not in answer.text
    clock.set(END + timedelta(hours=1))
    try:
        for path in (
            "",
            "/leaderboard",
            "/leaderboard?board=private",
            "/entries/mine",
            "/teams",
            "/files/train",
            "/files/test",
        ):
            answer = alice.get(f"/api/competitions/{cid}{path}")
            assert answer.status_code == 200, path
            assert SECRET not in answer.text, path
            assert "log" not in (answer.json()[0] if path == "/entries/mine" else {})
        for path in ("/entries", "/entries.csv"):
            assert alice.get(f"/api/competitions/{cid}{path}").status_code == 403
        assert SECRET not in alice.get(f"/competitions/{cid}").text
    finally:
        clock.set(START + timedelta(hours=1))
    # On disk: the controller's alone; the scorer account cannot open it either.
    solution = files.path_of(site.data_dir, cid, "solution")
    assert solution.stat().st_mode & 0o777 == 0o600
    assert (site.data_dir / "competitions").stat().st_mode & 0o777 == 0o700
    scorer = pwd.getpwnam(scorer_name((site.data_dir / "instance-id").read_text().strip()))
    assert scorer.pw_uid != 0
    peek = subprocess.run(
        [
            "setpriv",
            f"--reuid={scorer.pw_uid}",
            f"--regid={scorer.pw_gid}",
            "--clear-groups",
            "cat",
            str(solution),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert peek.returncode != 0 and SECRET not in peek.stdout
    assert entry["state"] == "queued"


def test_crafted_files_get_a_message_about_themselves_only(site, course, teacher, bob):
    cid = make(teacher, "crafted")["id"]
    numbers = {str(i): str(i * 1.5) for i in range(1, ROWS + 1)}
    regression = make(teacher, "crafted-rmse", solution=numbers, metric="rmse")["id"]
    attempts = [
        (cid, "id,prediction\n" + "".join(f"{i},x\n" for i in range(1, ROWS))),  # one missing
        (cid, "id,prediction\n999999,x\n" + "".join(f"{i},x\n" for i in range(1, ROWS + 1))),
        (cid, "id,label\n1,x\n"),
        (cid, "\xff\xfe not utf-8".encode("latin-1").decode("latin-1")),
        (cid, "id,prediction\n=cmd|' /C calc'!A0,x\n"),
        (regression, "id,prediction\n" + "".join(f"{i},{SECRET}\n" for i in range(1, ROWS + 1))),
        (regression, "id,prediction\n" + "".join(f"{i},nan\n" for i in range(1, ROWS + 1))),
    ]
    for competition, text in attempts:
        bob.ok(
            "POST",
            f"/api/competitions/{competition}/entries",
            201,
            content=text.encode(),
            headers=CSV,
        )
    bob.ok(
        "POST",
        f"/api/competitions/{cid}/entries",
        201,
        content=b"id,prediction\n\xff\xfe,1\n",
        headers=CSV,
    )
    drain(site)
    mine = bob.ok("GET", f"/api/competitions/{cid}/entries/mine") + bob.ok(
        "GET", f"/api/competitions/{regression}/entries/mine"
    )
    assert {e["state"] for e in mine} == {"failed"}, mine
    for entry in mine:
        assert entry["message"], entry
        assert "log" not in entry
    texts = " ".join(e["message"] for e in mine)
    assert "1.5" not in texts and "secret-label-" not in texts  # no solution cell
    assert "not UTF-8" in texts and "lacks the column prediction" in texts
    # Failed files do not count against the limits.
    assert bob.ok("GET", f"/api/competitions/{cid}")["per_day"] == 50


SCRIPT = """
import socket, sys
seen = []
try:
    open({other!r}).read(); seen.append("read-ok")
except OSError:
    seen.append("read-refused")
try:
    open("/etc/shadow").read(); seen.append("shadow-ok")
except OSError:
    seen.append("shadow-refused")
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3); seen.append("net-ok")
except OSError:
    seen.append("net-refused")
print(open(sys.argv[1]).read())
print(" ".join(seen))
print(0.0 if "ok" in " ".join(seen).replace("refused", "") else 1.0)
"""


def test_a_teachers_script_runs_sandboxed_and_its_output_stays_with_staff(
    site, course, teacher, alice
):
    other = files.path_of(site.data_dir, make(teacher, "other")["id"], "solution")
    cid = make(teacher, "scripted", metric="custom", higher_is_better=True)["id"]
    script = SCRIPT.format(other=str(other), port=site.port)
    teacher.ok("PUT", f"/api/competitions/{cid}/files/script", content=script, headers=CSV)
    teacher.ok(
        "PUT",
        f"/api/competitions/{cid}/files/solution",
        content=as_csv(solution_rows()),
        headers=CSV,
    )
    site.serve()  # a real port the script tries to reach
    submit(alice, cid, {str(i): "x" for i in range(1, ROWS + 1)})
    drain(site)
    (entry,) = alice.ok("GET", f"/api/competitions/{cid}/entries/mine")
    assert entry["state"] == "scored" and entry["public_score"] == 1.0, entry
    assert SECRET not in str(entry)
    (seen,) = teacher.ok("GET", f"/api/competitions/{cid}/entries")
    assert "read-refused shadow-refused net-refused" in seen["log"]
    assert SECRET in seen["log"]  # the teacher's script printed rows: staff see them

    crashing = "import sys\nprint(open(sys.argv[1]).read())\nraise SystemExit(3)\n"
    teacher.ok("PUT", f"/api/competitions/{cid}/files/script", content=crashing, headers=CSV)
    submit(alice, cid, {str(i): "x" for i in range(1, ROWS + 1)})
    greedy = "x = bytearray(2**31)\nprint(1)\n"
    teacher.ok(
        "PATCH", f"/api/competitions/{cid}", json={"memory_limit": 256 * 2**20, "time_limit": 2}
    )
    drain(site)
    teacher.ok("PUT", f"/api/competitions/{cid}/files/script", content=greedy, headers=CSV)
    submit(alice, cid, {str(i): "x" for i in range(1, ROWS + 1)})
    drain(site)
    slow = "import time\ntime.sleep(30)\nprint(1)\n"
    teacher.ok("PUT", f"/api/competitions/{cid}/files/script", content=slow, headers=CSV)
    submit(alice, cid, {str(i): "x" for i in range(1, ROWS + 1)})
    drain(site)
    latest = alice.ok("GET", f"/api/competitions/{cid}/entries/mine")[:3]
    assert [e["state"] for e in latest] == ["error"] * 3, latest
    for entry in latest:
        assert "your course's staff can see" in entry["message"]
        assert SECRET not in str(entry)
    logs = [e["log"] for e in teacher.ok("GET", f"/api/competitions/{cid}/entries")[:3]]
    assert "too long" in logs[0] and "MemoryError" in logs[1] and SECRET in logs[2]


def test_limits_per_day_and_in_total(site, course, teacher, carol_client, clock):
    cid = make(teacher, "limited", per_day=2, total=3)["id"]
    rows = {str(i): "x" for i in range(1, ROWS + 1)}
    submit(carol_client, cid, rows)
    submit(carol_client, cid, rows)
    refused = carol_client.post(
        f"/api/competitions/{cid}/entries", content=as_csv(rows), headers=CSV
    )
    assert refused.status_code == 429
    body = refused.json()
    assert body["code"] == "submission_limit" and "today's 2" in body["message"]
    assert int(refused.headers["Retry-After"]) == body["details"]["retry_after"]
    clock.advance(days=1)
    try:
        submit(carol_client, cid, rows)
        final = carol_client.post(
            f"/api/competitions/{cid}/entries", content=as_csv(rows), headers=CSV
        )
        assert final.status_code == 429 and "all 3" in final.json()["message"]
    finally:
        clock.set(clock.now() - timedelta(days=1))
    drain(site)


@pytest.fixture(scope="module")
def carol_client(login, course):
    return login("carol")


def test_late_and_early_entries_are_refused(site, course, teacher, alice, clock):
    cid = make(teacher, "timing")["id"]
    rows = {str(i): "x" for i in range(1, ROWS + 1)}
    for moment, code in (
        (END, "competition_closed"),
        (START - timedelta(minutes=1), "competition_not_started"),
    ):
        clock.set(moment)
        try:
            refused = alice.post(
                f"/api/competitions/{cid}/entries", content=as_csv(rows), headers=CSV
            )
        finally:
            clock.set(START + timedelta(hours=1))
        assert refused.status_code == 403
        assert refused.json()["code"] == code and refused.json()["message"]
    assert alice.ok("GET", f"/api/competitions/{cid}/entries/mine") == []


def test_boards_public_during_private_after_ties_to_the_earlier(
    site, course, teacher, alice, bob, carol_client, clock
):
    cid = make(teacher, "boards")["id"]
    truth = solution_rows()
    key = salt(site, cid)
    public = {i for i in truth if in_public(key, i, 0.5)}
    # Alice is right on the public part, Bob on the private one; Carol ties with Alice, later.
    alice_rows = {i: (v if i in public else "wrong") for i, v in truth.items()}
    bob_rows = {i: (v if i not in public else "wrong") for i, v in truth.items()}
    submit(alice, cid, alice_rows)
    clock.advance(minutes=5)
    submit(carol_client, cid, alice_rows)
    submit(bob, cid, bob_rows)
    submit(teacher, cid, truth)  # staff entries are never ranked
    clock.set(clock.now() - timedelta(minutes=5))
    drain(site)
    board = alice.ok("GET", f"/api/competitions/{cid}/leaderboard")
    assert [(r["rank"], r["participant"], r["score"]) for r in board["rows"]] == [
        (1, "alice", 1.0),
        (2, "carol", 1.0),
        (3, "bob", 0.0),
    ]
    assert board["rows"][0]["mine"] and not board["final"]
    hidden = alice.get(f"/api/competitions/{cid}/leaderboard?board=private")
    assert (
        hidden.status_code == 403
        and "revealed when the competition ends" in hidden.json()["message"]
    )
    assert alice.ok("GET", f"/api/competitions/{cid}/entries/mine")[0]["private_score"] is None
    assert (
        teacher.ok("GET", f"/api/competitions/{cid}/leaderboard?board=private")["rows"][0][
            "participant"
        ]
        == "bob"
    )
    clock.set(END)
    try:
        final = alice.ok("GET", f"/api/competitions/{cid}/leaderboard?board=private")
        assert final["final"]
        assert [r["participant"] for r in final["rows"]] == ["bob", "alice", "carol"]
        assert alice.ok("GET", f"/api/competitions/{cid}/entries/mine")[0]["private_score"] == 0.0
    finally:
        clock.set(START + timedelta(hours=1))
    export = teacher.get(f"/api/competitions/{cid}/entries.csv")
    assert export.status_code == 200 and export.headers["content-type"].startswith("text/csv")
    lines = export.text.strip().splitlines()
    assert lines[0].startswith("entry,submitted_at,user,team,state") and len(lines) == 5

    async def actions() -> list[str]:
        async with site.platform.db.session() as session:
            return [e.action for e in await audit.query(session, target="competition:ml/boards")]

    events = site.call(actions)
    assert events.count("competition.entry") == 4 and events.count("competition.scored") == 4


def follow_board(session, path: str, subscribed: threading.Event, enough) -> list[dict]:
    """The boards streamed at `path` until `enough(board)`; `subscribed` is set once the
    first board (the one as it was on connecting) has arrived."""
    boards = []
    with session.stream("GET", path) as stream:
        assert stream.status_code == 200, stream.read()
        for line in stream.iter_lines():
            if line.startswith("data: "):
                boards.append(json.loads(line[6:]))
                subscribed.set()
                if enough(boards[-1]):
                    break
    return boards


def test_open_pages_follow_the_board_as_scores_arrive(site, course, teacher, alice, bob, login):
    cid = make(teacher, "followed")["id"]
    path = f"/api/competitions/{cid}/leaderboard/events"
    # Who may not look is answered at once, as for the board itself, not with a stream.
    mallory = login("mallory")
    assert mallory.get(path).status_code == 404
    private = alice.get(f"{path}?board=private")
    assert private.status_code == 403 and "revealed" in private.json()["message"]
    followers = {name: http_client(site, name) for name in ("alice", "bob")}
    ready = {name: threading.Event() for name in followers}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = {
            name: pool.submit(
                follow_board, session, path, ready[name], lambda board: len(board["rows"]) == 2
            )
            for name, session in followers.items()
        }
        assert all(event.wait(30) for event in ready.values()), "a page got no first board"
        truth = solution_rows()
        submit(alice, cid, truth)
        drain(site)  # scored: every open page is told, none asked
        submit(bob, cid, {i: "wrong" for i in truth})
        drain(site)
        seen = {name: future.result(timeout=60) for name, future in futures.items()}
    for name, boards in seen.items():
        assert boards[0]["rows"] == []  # as it was on connecting
        last = boards[-1]["rows"]
        assert [(r["participant"], r["score"]) for r in last] == [("alice", 1.0), ("bob", 0.0)]
        assert [r["participant"] for r in last if r["mine"]] == [name]  # each page its own row
    # A deleted competition ends the stream of a page still open on it.
    session = http_client(site, "alice")
    subscribed = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        open_page = pool.submit(follow_board, session, path, subscribed, lambda board: False)
        assert subscribed.wait(30)
        teacher.ok("DELETE", f"/api/competitions/{cid}")
        assert len(open_page.result(timeout=60)[-1]["rows"]) == 2


def test_teams_share_entries_and_limits(site, course, teacher, alice, carol_client, bob):
    cid = make(teacher, "teams", teams=True, max_team_size=2, total=2)["id"]
    teacher.ok("PUT", f"/api/competitions/{cid}/teams/owls", json={"members": ["alice", "carol"]})
    too_many = teacher.put(
        f"/api/competitions/{cid}/teams/big", json={"members": ["alice", "bob", "carol"]}
    )
    assert too_many.status_code == 400
    stranger = teacher.put(f"/api/competitions/{cid}/teams/x", json={"members": ["mallory"]})
    assert stranger.status_code == 400 and "mallory" in stranger.json()["message"]
    assert (
        alice.put(f"/api/competitions/{cid}/teams/mine", json={"members": ["alice"]}).status_code
        == 403
    )
    rows = {str(i): "x" for i in range(1, ROWS + 1)}
    submit(alice, cid, rows)
    submit(carol_client, cid, rows)
    refused = alice.post(f"/api/competitions/{cid}/entries", content=as_csv(rows), headers=CSV)
    assert refused.status_code == 429  # the team's two entries are used
    drain(site)
    assert len(carol_client.ok("GET", f"/api/competitions/{cid}/entries/mine")) == 2
    board = bob.ok("GET", f"/api/competitions/{cid}/leaderboard")
    assert [(r["participant"], r["team"], r["entries"]) for r in board["rows"]] == [
        ("owls", True, 2)
    ]


def test_jupyterlab_submits_for_the_notebooks_owner_only(site, course, teacher, alice, bob):
    cid = make(teacher, "from-lab")["id"]
    alice.ok("POST", "/api/notebooks", 201, json={"name": "lab", "cpu": 1, "memory": "1Gi"})
    alice.ok("POST", "/api/notebooks/alice/lab/start?wait=true", 202)
    site.settle("alice", "lab")
    lab = "/notebook/alice/lab/cgu-lab/competitions"
    listed = alice.ok("GET", lab)
    assert cid in [c["id"] for c in listed]
    assert all(c["url"].startswith("http") and SECRET not in str(c) for c in listed)
    rows = as_csv({str(i): "x" for i in range(1, ROWS + 1)})
    entry = alice.ok("POST", f"{lab}/{cid}/entries?file=p.csv", 201, content=rows, headers=CSV)
    assert (entry["file_name"], entry["user"]) == ("p.csv", "alice")
    # Someone the owner lets edit the notebook cannot submit in the owner's name.
    share = {"grantee": "bob", "access": "edit"}
    alice.ok("POST", "/api/notebooks/alice/lab/shares", 201, json=share)
    refused = bob.post(f"{lab}/{cid}/entries", content=rows, headers=CSV)
    assert refused.status_code == 403, refused.text
    assert bob.get(lab).status_code == 403
    drain(site)
    (scored,) = alice.ok("GET", f"{lab}/{cid}/entries/mine")
    assert scored["state"] == "scored" and "log" not in scored


def test_deleting_a_competition_removes_its_files_and_entries(site, course, teacher, alice):
    cid = make(teacher, "gone")["id"]
    submit(alice, cid, {str(i): "x" for i in range(1, ROWS + 1)})
    drain(site)
    assert alice.delete(f"/api/competitions/{cid}").status_code == 403
    teacher.ok("DELETE", f"/api/competitions/{cid}")
    assert alice.get(f"/api/competitions/{cid}/entries/mine").status_code == 404
    assert not files.folder(site.data_dir, cid).exists()

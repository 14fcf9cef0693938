"""Teams students form themselves (controller/competitions/teams.py): creating, joining with
the code, leaving; every refusal with its status and nothing changed; two joins racing
for the last seat; the team's limits for a student who joined; the code kept from
anyone outside the team.

Runs in process, with the course, clock and helpers of tests/test_competitions.py.
"""
# ruff: noqa: F811 - that file's fixtures, imported below, are these tests' parameters

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from cgu_lab.controller import audit

from .test_competitions import (  # noqa: F401 - module fixtures shared with that file
    CSV,
    END,
    ROWS,
    START,
    as_csv,
    carol_client,
    clock,
    course,
    drain,
    inprocess_settings,
    make,
    site,
    submit,
)

pytestmark = pytest.mark.integration

ROW_VALUES = {str(i): "x" for i in range(1, ROWS + 1)}


@pytest.fixture(scope="module")
def more(site, admin, course, login):
    """Two more students of the course: dave and erin."""
    site.create_user("dave")
    site.create_user("erin")
    admin.ok("POST", "/api/groups/ml/import", json={"csv": "username\ndave\nerin\n"})
    return login("dave"), login("erin")


def teams_of(teacher, cid: int) -> list[dict]:
    return teacher.ok("GET", f"/api/competitions/{cid}/teams")


def refused(answer, status: int, code: str | None = None) -> dict:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["message"] and body["code"], body
    if code is not None:
        assert body["code"] == code, body
    return body


def test_students_create_join_and_leave(site, course, teacher, alice, bob, carol_client):
    cid = make(teacher, "t-happy", teams=True, max_team_size=3)["id"]
    assert refused(alice.get(f"/api/competitions/{cid}/my-team"), 404, "no_team")
    created = alice.ok("POST", f"/api/competitions/{cid}/my-team", 201, json={"name": " Owls "})
    code = created["join_code"]
    assert created["name"] == "owls" and created["members"] == ["alice"]
    assert created["max_team_size"] == 3 and len(code) >= 12
    assert alice.ok("GET", f"/api/competitions/{cid}/my-team") == created
    joined = bob.ok("POST", f"/api/competitions/{cid}/my-team/join", json={"code": code})
    assert joined["members"] == ["alice", "bob"] and joined["join_code"] == code
    # The code is the members' only: not in the teams list, not for a non-member.
    for who in (teacher, bob, carol_client):
        listing = who.get(f"/api/competitions/{cid}/teams")
        assert listing.json() == [{"name": "owls", "members": ["alice", "bob"]}]
        assert code not in listing.text
    outside = carol_client.get(f"/api/competitions/{cid}/my-team")
    refused(outside, 404, "no_team")
    assert code not in outside.text
    assert code not in carol_client.get(f"/competitions/{cid}").text
    left = bob.ok("DELETE", f"/api/competitions/{cid}/my-team")
    assert "owls" in left["message"]
    assert alice.ok("GET", f"/api/competitions/{cid}/my-team")["members"] == ["alice"]
    alice.ok("DELETE", f"/api/competitions/{cid}/my-team")
    assert teams_of(teacher, cid) == []  # the last member leaving removed it

    async def actions() -> list[str]:
        async with site.platform.db.session() as session:
            found = await audit.query(session, target="competition:ml/t-happy")
            return [e.action for e in found]

    events = site.call(actions)
    assert events.count("competition.team.created") == 1
    assert events.count("competition.team.joined") == 1
    assert events.count("competition.team.left") == 2


def test_a_team_the_teacher_forms_has_a_code_for_its_members(
    site, course, teacher, alice, carol_client
):
    cid = make(teacher, "t-staff", teams=True, max_team_size=2)["id"]
    teacher.ok("PUT", f"/api/competitions/{cid}/teams/herons", json={"members": ["carol"]})
    mine = carol_client.ok("GET", f"/api/competitions/{cid}/my-team")
    assert mine["name"] == "herons" and mine["join_code"]
    assert mine["join_code"] not in teacher.get(f"/api/competitions/{cid}/teams").text
    joined = alice.ok(
        "POST", f"/api/competitions/{cid}/my-team/join", json={"code": mine["join_code"]}
    )
    assert joined["members"] == ["alice", "carol"]
    # The managers keep forming teams as before.
    teacher.ok("PUT", f"/api/competitions/{cid}/teams/herons", json={"members": ["carol"]})
    assert teams_of(teacher, cid) == [{"name": "herons", "members": ["carol"]}]


def test_every_refusal_says_why_and_changes_nothing(
    site, course, teacher, alice, bob, carol_client, login, clock
):
    cid = make(teacher, "t-refuse", teams=True, max_team_size=2)["id"]
    base = f"/api/competitions/{cid}/my-team"
    code = alice.ok("POST", base, 201, json={"name": "full"})["join_code"]
    bob.ok("POST", f"{base}/join", json={"code": code})
    expected = [{"name": "full", "members": ["alice", "bob"]}]

    refused(carol_client.post(f"{base}/join", json={"code": code}), 409, "team_full")
    refused(carol_client.post(f"{base}/join", json={"code": "not-the-code"}), 404, "no_team")
    refused(carol_client.post(f"{base}/join", json={"code": code[:-1]}), 404, "no_team")
    refused(bob.post(base, json={"name": "other"}), 409, "already_in_team")
    refused(bob.post(f"{base}/join", json={"code": code}), 409, "already_in_team")
    refused(carol_client.post(base, json={"name": "FULL"}), 409, "team_name_taken")
    refused(carol_client.post(base, json={"name": "no spaces!"}), 400)
    refused(carol_client.post(base, json={"name": "x", "extra": 1}), 400)
    refused(carol_client.post(f"{base}/join", json={}), 400)
    refused(login("mallory").post(f"{base}/join", json={"code": code}), 404)  # not in the course
    refused(teacher.post(f"{base}/join", json={"code": code}), 403, "forbidden")
    refused(teacher.post(base, json={"name": "staff"}), 403, "forbidden")
    refused(carol_client.delete(base), 404, "no_team")
    assert teams_of(teacher, cid) == expected

    # Carol submits on her own: she can neither join nor create a team then.
    submit(carol_client, cid, ROW_VALUES)
    bob.ok("DELETE", base)
    own = refused(carol_client.post(f"{base}/join", json={"code": code}), 409, "own_entries")
    assert "ask your teacher" in own["message"]
    refused(carol_client.post(base, json={"name": "solo"}), 409, "own_entries")
    bob.ok("POST", f"{base}/join", json={"code": code})
    assert teams_of(teacher, cid) == expected

    # Once the team has entries, its members stay.
    submit(alice, cid, ROW_VALUES)
    refused(bob.delete(base), 409, "team_has_entries")
    assert bob.ok("GET", base)["entries"] == 1

    # After the end nothing changes.
    clock.set(END + timedelta(minutes=1))
    try:
        refused(alice.delete(base), 409, "competition_ended")
        refused(carol_client.post(base, json={"name": "late"}), 409, "competition_ended")
        refused(carol_client.post(f"{base}/join", json={"code": code}), 409, "competition_ended")
        assert bob.ok("GET", base)["name"] == "full"  # still readable
    finally:
        clock.set(START + timedelta(hours=1))
    assert teams_of(teacher, cid) == expected

    single = make(teacher, "t-single")["id"]
    solo = f"/api/competitions/{single}/my-team"
    refused(alice.post(solo, json={"name": "owls"}), 409, "teams_off")
    refused(alice.post(f"{solo}/join", json={"code": code}), 409, "teams_off")
    refused(alice.get(solo), 409, "teams_off")
    assert teams_of(teacher, single) == []
    drain(site)


def test_two_joins_for_the_last_seat_one_wins(site, course, teacher, alice, more):
    dave, erin = more
    for round_ in range(3):
        cid = make(teacher, f"t-race-{round_}", teams=True, max_team_size=2)["id"]
        base = f"/api/competitions/{cid}/my-team"
        code = alice.ok("POST", base, 201, json={"name": "racers"})["join_code"]
        start = threading.Barrier(2)
        answers: dict[str, int] = {}

        def join(name: str, client, start, answers, base, code) -> None:
            start.wait()
            answers[name] = client.post(f"{base}/join", json={"code": code}).status_code

        threads = [
            threading.Thread(target=join, args=(name, client, start, answers, base, code))
            for name, client in (("dave", dave), ("erin", erin))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sorted(answers.values()) == [200, 409], answers
        (team,) = teams_of(teacher, cid)
        assert len(team["members"]) == 2 and "alice" in team["members"]
        winner = next(name for name, status in answers.items() if status == 200)
        assert winner in team["members"]


def test_a_joined_students_entries_count_against_the_teams_limits(
    site, course, teacher, alice, bob
):
    cid = make(teacher, "t-limits", teams=True, max_team_size=3, total=2)["id"]
    base = f"/api/competitions/{cid}/my-team"
    code = alice.ok("POST", base, 201, json={"name": "pair"})["join_code"]
    bob.ok("POST", f"{base}/join", json={"code": code})
    first = submit(alice, cid, ROW_VALUES)
    second = submit(bob, cid, ROW_VALUES)
    assert first["team"] == second["team"] == "pair"
    for who in (alice, bob):
        over = who.post(f"/api/competitions/{cid}/entries", content=as_csv(ROW_VALUES), headers=CSV)
        assert over.status_code == 429, over.text
    drain(site)
    assert len(bob.ok("GET", f"/api/competitions/{cid}/entries/mine")) == 2
    board = teacher.ok("GET", f"/api/competitions/{cid}/leaderboard")
    assert [(r["participant"], r["team"], r["entries"]) for r in board["rows"]] == [
        ("pair", True, 2)
    ]

"""Code competitions through the API, with the real sandbox: a student's notebook runs in
a real ipykernel (nbclient) as the scorer account, with no network, on the hidden inputs,
and its predictions are scored as an uploaded file is.

What a failed run tells the student (cell and builtin exception name, the limit hit, no
predictions file) and that it never carries the hidden inputs; that the notebook can open
neither a socket nor the solution; the time and memory limits; the forbidden paths
(another student's entries, a student fetching the inputs).
"""

from __future__ import annotations

import json
import socket
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cgu_lab.backends.competition_sandbox import scorer_name
from cgu_lab.controller.competitions import files

pytestmark = pytest.mark.integration

START = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)
END = START + timedelta(days=7)
HIDDEN_INPUT = "hidden-feature"  # every inputs cell holds it; no student answer may
ROWS = 40
CSV = {"Content-Type": "text/csv"}
IPYNB = {"Content-Type": "application/x-ipynb+json"}


@pytest.fixture(scope="module")
def site(in_process):
    # During the competition from the first login on (sessions start on this clock too).
    in_process.clock.set(START + timedelta(hours=1))
    return in_process


@pytest.fixture(scope="module")
def course(site, login, admin, teacher):
    site.create_user("carol")
    teacher.ok("POST", "/api/groups", 201, json={"name": "code"})
    admin.ok("POST", "/api/groups/code/import", json={"csv": "username\nalice\nbob\n"})
    yield "code"
    instance = (site.data_dir / "instance-id").read_text().strip()
    subprocess.run(["userdel", scorer_name(instance)], check=False, capture_output=True)


def notebook(*sources: str, markdown: str = "") -> str:
    cells = [{"cell_type": "markdown", "id": "m0", "metadata": {}, "source": markdown}]
    cells += [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {},
            "source": source,
            "outputs": [],
            "execution_count": None,
        }
        for i, source in enumerate(sources)
    ]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})


READ = (
    "import csv, os\n"
    "rows = list(csv.DictReader(open(os.environ['CGU_COMPETITION_INPUT'])))\n"
    "print(rows[:3])"
)
WRITE = (
    "with open(os.environ['CGU_COMPETITION_OUTPUT'], 'w') as out:\n"
    "    out.write('id,prediction\\n')\n"
    "    for row in rows:\n"
    "        out.write(row['id'] + ',' + ('yes' if int(row['x']) % 2 else 'no') + '\\n')"
)


def make(teacher, name: str, **extra) -> int:
    body = {
        "name": name,
        "title": f"Code {name}",
        "starts_at": START.isoformat(),
        "ends_at": END.isoformat(),
        "metric": "accuracy",
        "per_day": 50,
        "kind": "code",
        "time_limit": 30,
        **extra,
    }
    competition = teacher.ok("POST", "/api/groups/code/competitions", 201, json=body)
    assert competition["kind"] == "code" and not competition["ready"]
    cid = competition["id"]
    inputs = "id,x,note\n" + "".join(f"{i},{i * 7},{HIDDEN_INPUT}-{i}\n" for i in range(ROWS))
    solution = "id,prediction\n" + "".join(
        f"{i},{'yes' if i * 7 % 2 else 'no'}\n" for i in range(ROWS)
    )
    teacher.ok("PUT", f"/api/competitions/{cid}/files/solution", content=solution, headers=CSV)
    ready = teacher.ok("PUT", f"/api/competitions/{cid}/files/inputs", content=inputs, headers=CSV)
    assert ready["ready"] and ready["files"]["inputs"]["bytes"] == len(inputs)
    return cid


def send(client, cid: int, text: str, status: int = 201) -> dict:
    return client.ok(
        "POST",
        f"/api/competitions/{cid}/entries?name=mine.ipynb",
        status,
        content=text,
        headers=IPYNB,
    )


def scored(site, client, cid: int, entry_id: int) -> dict:
    site.call(site.platform.competition_entries.drain)
    mine = client.ok("GET", f"/api/competitions/{cid}/entries/mine")
    return next(e for e in mine if e["id"] == entry_id)


def staff_log(teacher, cid: int, entry_id: int) -> str:
    every = teacher.ok("GET", f"/api/competitions/{cid}/entries")
    return next(e for e in every if e["id"] == entry_id)["log"]


def test_a_good_notebook_runs_and_scores(site, course, teacher, alice):
    cid = make(teacher, "good")
    entry = send(alice, cid, notebook(READ, WRITE, markdown="# My model"))
    assert entry["state"] == "queued"
    done = scored(site, alice, cid, entry["id"])
    assert done["state"] == "scored", done
    assert done["public_score"] == 1.0 and done["message"] == ""
    board = alice.ok("GET", f"/api/competitions/{cid}/leaderboard")
    assert [(r["participant"], r["score"], r["mine"]) for r in board["rows"]] == [
        ("alice", 1.0, True)
    ]
    # The staff see the notebook's output; the student's own view never does.
    assert HIDDEN_INPUT in staff_log(teacher, cid, entry["id"])
    assert HIDDEN_INPUT not in json.dumps(alice.ok("GET", f"/api/competitions/{cid}/entries/mine"))
    # Its predictions are scored as an uploaded file would be: half right is 0.5-ish.
    half = WRITE.replace("% 2 else", "% 2 and int(row['id']) < 20 else")
    worse = scored(site, alice, cid, send(alice, cid, notebook(READ, half))["id"])
    assert worse["state"] == "scored" and worse["public_score"] < 1.0


def test_a_failing_cell_tells_its_number_and_type_only(site, course, teacher, bob):
    cid = make(teacher, "failing")
    leak = "raise ValueError(str(rows[:5]))"
    entry = send(bob, cid, notebook(READ, leak, WRITE))
    done = scored(site, bob, cid, entry["id"])
    assert done["state"] == "failed"
    assert "cell 3" in done["message"] and "ValueError" in done["message"]
    assert HIDDEN_INPUT not in json.dumps(done)
    assert HIDDEN_INPUT in staff_log(teacher, cid, entry["id"])
    # A class of the student's own is a channel of its own: its name is not repeated.
    named = "raise type('X_' + rows[1]['note'].replace('-', '_'), (Exception,), {})()"
    entry = send(bob, cid, notebook(READ, named))
    done = scored(site, bob, cid, entry["id"])
    assert done["state"] == "failed" and "cell 3" in done["message"]
    assert HIDDEN_INPUT.replace("-", "_") not in done["message"]
    assert "outside Python's builtins" in done["message"]
    # Failed runs do not count, and a notebook writing nothing is told so.
    entry = send(bob, cid, notebook(READ))
    done = scored(site, bob, cid, entry["id"])
    assert done["state"] == "failed" and "wrote no predictions file" in done["message"]


def test_the_notebook_reaches_no_network_and_no_hidden_file(site, course, teacher, alice):
    cid = make(teacher, "escape")
    solution = files.path_of(site.data_dir, cid, "solution")
    listener = socket.create_server(("127.0.0.1", 0))  # the host's loopback: a real listener
    port = listener.getsockname()[1]
    probe = (
        "import socket, os\n"
        "for host in ('127.0.0.1', '1.1.1.1'):\n"
        "    try:\n"
        f"        socket.create_connection((host, {int(port)}), timeout=3)\n"
        "        print('NET-OPEN', host)\n"
        "    except OSError as error:\n"
        "        print('NET-BLOCKED', host, type(error).__name__)\n"
        "try:\n"
        f"    print('READ-OPEN', open({str(solution)!r}).read())\n"
        "except OSError as error:\n"
        "    print('READ-BLOCKED', type(error).__name__)\n"
        "print('PROCS', sorted(p for p in os.listdir('/proc') if p.isdigit()))"
    )
    with listener:
        entry = send(alice, cid, notebook(READ, probe, WRITE))
        done = scored(site, alice, cid, entry["id"])
    assert done["state"] == "scored"
    log = staff_log(teacher, cid, entry["id"])
    assert "NET-OPEN" not in log and log.count("NET-BLOCKED") == 2
    # Refused (PermissionError), or not even there (the data directory is below /tmp,
    # which the run replaces with its own).
    assert "READ-BLOCKED" in log and "READ-OPEN" not in log
    # In a PID namespace of its own: the controller and other scorings are not there.
    procs = json.loads(log.split("PROCS ")[1].splitlines()[0].replace("'", '"'))
    assert len(procs) < 10


def test_time_and_memory_limits(site, course, teacher, alice):
    cid = make(teacher, "limits", time_limit=3, memory_limit=1024 * 2**20)
    slow = send(alice, cid, notebook(READ, "import time\ntime.sleep(120)", WRITE))
    done = scored(site, alice, cid, slow["id"])
    assert done["state"] == "failed"
    assert "longer than the competition's 3 s" in done["message"] and "cell 3" in done["message"]
    greedy = send(alice, cid, notebook(READ, "x = bytearray(4 * 2**30)", WRITE))
    done = scored(site, alice, cid, greedy["id"])
    assert done["state"] == "failed"
    assert "more memory than the competition's 1024 MiB" in done["message"]


def test_forbidden_paths(site, course, teacher, alice, bob, login):
    cid = make(teacher, "forbidden")
    entry = send(alice, cid, notebook(READ, WRITE))
    scored(site, alice, cid, entry["id"])
    for client in (alice, bob, teacher):
        for path in ("/files/inputs", "/files/solution", "/files/..%2Fhidden%2Finputs.csv"):
            answer = client.get(f"/api/competitions/{cid}{path}")
            assert answer.status_code in (400, 404), (path, answer.text)
            assert HIDDEN_INPUT not in answer.text
    # Bob sees neither Alice's entry nor everyone's; a non-member not even the competition.
    assert entry["id"] not in [
        e["id"] for e in bob.ok("GET", f"/api/competitions/{cid}/entries/mine")
    ]
    for path in ("/entries", "/entries.csv"):
        assert bob.get(f"/api/competitions/{cid}{path}").status_code == 403
    carol = login("carol")
    assert carol.get(f"/api/competitions/{cid}").status_code == 404
    refused = carol.post(f"/api/competitions/{cid}/entries", content=notebook(READ), headers=IPYNB)
    assert refused.status_code == 404
    # A student cannot upload the inputs (or anything) either.
    up = bob.put(f"/api/competitions/{cid}/files/inputs", content="id,x\n1,2\n", headers=CSV)
    assert up.status_code == 403
    # A predictions CSV or a broken notebook is refused up front with a message, not run.
    for text in ("id,prediction\n1,yes\n", '{"cells": 3}', notebook()[:-1]):
        answer = bob.post(f"/api/competitions/{cid}/entries", content=text, headers=IPYNB)
        assert answer.status_code == 400 and answer.json()["code"], answer.text
    # Nothing a student sees of the competition carries the inputs.
    for path in ("", "/leaderboard", "/entries/mine", "/files/test"):
        assert HIDDEN_INPUT not in alice.get(f"/api/competitions/{cid}{path}").text
    assert "inputs" not in alice.ok("GET", f"/api/competitions/{cid}")["files"]
    assert HIDDEN_INPUT not in alice.get(f"/competitions/{cid}").text
    inputs = files.path_of(site.data_dir, cid, "inputs")
    assert inputs.stat().st_mode & 0o777 == 0o600


# -- a run is one cgroup: memory of all its processes, tasks, CPU; killed whole ----------


def run_groups(site) -> set[str]:
    """The competition runs' cgroups of this installation that exist now."""
    from cgu_lab.backends.local_limits import Limiter

    limiter = Limiter(tag=(site.data_dir / "instance-id").read_text().strip())
    return limiter.groups("run")


def scorer_processes(site) -> list[str]:
    instance = (site.data_dir / "instance-id").read_text().strip()
    found = subprocess.run(["pgrep", "-u", scorer_name(instance)], capture_output=True, text=True)
    return found.stdout.split()


def test_a_runs_children_share_its_memory_limit(site, course, teacher, alice):
    # 4 children touching 600 MiB each under 1 GiB: the limit was per process (RLIMIT_AS),
    # so such an entry scored (4 x 1 GiB under 2 GiB held 4.3 GiB). In the run's cgroup
    # the kernel kills them, and the run fails for memory.
    cid = make(teacher, "children", memory_limit=1024 * 2**20)
    greedy = (
        "import os, time\n"
        "children = []\n"
        "for i in range(4):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        try:\n"
        "            held = bytearray(600 * 2**20)\n"
        "            time.sleep(4)\n"
        "        finally:\n"
        "            os._exit(0)\n"
        "    children.append(pid)\n"
        "print('ENDED', [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in children])"
    )
    entry = send(alice, cid, notebook(READ, greedy, WRITE))
    done = scored(site, alice, cid, entry["id"])
    assert done["state"] == "failed", staff_log(teacher, cid, entry["id"])
    assert "more memory than the competition's 1024 MiB" in done["message"]
    assert "for its memory ceiling" in staff_log(teacher, cid, entry["id"])
    assert run_groups(site) == set() and scorer_processes(site) == []


def test_a_fork_bomb_stays_under_the_runs_task_limit(site, course, teacher, alice):
    from cgu_lab.backends.competition_sandbox import RUN_PIDS

    cid = make(teacher, "forks")
    bomb = (
        "import os, time\n"
        "forked = 0\n"
        "try:\n"
        "    for _ in range(1000):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        forked += 1\n"
        "except OSError as error:\n"
        "    print('REFUSED', type(error).__name__)\n"
        "print('FORKED', forked)\n"
        "rows = [line.strip().split(':') for line in open('/proc/self/cgroup')]\n"
        "path = [r[2] for r in rows if 'cpu' in r[1].split(',')][0]\n"
        "print('QUOTA', open(f'/sys/fs/cgroup/cpu{path}/cpu.cfs_quota_us').read().strip())"
    )
    # The sleepers hold every task the run may have: it cannot go on (it fails).
    entry = send(alice, cid, notebook(READ, bomb, WRITE))
    assert scored(site, alice, cid, entry["id"])["state"] == "failed"
    log = staff_log(teacher, cid, entry["id"])
    forked = int(log.split("FORKED ")[1].split()[0])
    # Before: the scorer account's RLIMIT_NPROC (128, shared by every scoring) was all.
    assert "REFUSED BlockingIOError" in log and 0 < forked < RUN_PIDS
    assert log.split("QUOTA ")[1].split()[0] == "100000"  # one CPU
    # Its 60-second sleepers went with the run, and so did its cgroup.
    assert run_groups(site) == set() and scorer_processes(site) == []


def test_dev_shm_and_var_tmp_are_a_runs_own(site, course, teacher, alice, bob):
    cid = make(teacher, "shm")
    mark = f"cgu-left-{cid}"
    leave = (
        "import os\n"
        f"for folder in ('/dev/shm', '/var/tmp', '/tmp'):\n"
        f"    open(os.path.join(folder, {mark!r}), 'w').write('left for the next run')\n"
        "print('LEFT', sorted(os.listdir('/dev/shm')))"
    )
    first = send(alice, cid, notebook(READ, leave, WRITE))
    assert scored(site, alice, cid, first["id"])["state"] == "scored"
    assert f"LEFT ['{mark}']" in staff_log(teacher, cid, first["id"])
    # Gone with the run: the host's folders never had it.
    assert not (Path("/dev/shm") / mark).exists() and not (Path("/var/tmp") / mark).exists()
    look = (
        "import os\n"
        "print('SEEN', [n for f in ('/dev/shm', '/var/tmp', '/tmp') for n in os.listdir(f)])"
    )
    second = send(bob, cid, notebook(READ, look, WRITE))
    assert scored(site, bob, cid, second["id"])["state"] == "scored"
    assert mark not in staff_log(teacher, cid, second["id"])

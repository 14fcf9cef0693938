"""Code competitions that ask for a GPU: each run takes one device of the competition's
GPU type from the pool notebooks use, sees it as CUDA_VISIBLE_DEVICES, waits (queued,
"waiting for a GPU") while none is free, and gives it back when it ends.

No GPU is on this machine, so an admin declares one (as tests/test_gpus_and_culling.py
does); the runs are real ones in the scorer's sandbox (tests/test_competitions_code.py).
"""

# ruff: noqa: F811 - that file's fixtures, imported below, are these tests' parameters
from __future__ import annotations

import time

import pytest

from .test_competitions_code import (  # noqa: F401 - fixtures used by name
    READ,
    WRITE,
    course,
    make,
    notebook,
    scored,
    send,
    site,
    staff_log,
)
from .test_gpus_and_culling import state

pytestmark = pytest.mark.integration

DEVICE = "GPU-comp-0"
SHOW = "import os\nprint('CVD=' + repr(os.environ.get('CUDA_VISIBLE_DEVICES')))"


@pytest.fixture(scope="module")
def gpu(admin):
    """One declared device and a whole-GPU type on it; students may hold one."""
    admin.ok("PUT", "/api/gpu-types/comp", json={"display_name": "Competition GPU"})
    admin.ok("POST", "/api/gpus", 201, json={"device_id": DEVICE, "model": "NVIDIA Test"})
    admin.ok(
        "PUT",
        "/api/quotas/default",
        json={"cpu": 4, "memory": "8Gi", "notebooks": 3, "gpus": {"comp": 1}},
    )
    return "comp"


def mine(client, cid: int, entry_id: int) -> dict:
    return next(
        e for e in client.ok("GET", f"/api/competitions/{cid}/entries/mine") if e["id"] == entry_id
    )


def wait_for(read, check, what: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if check(value):
            return value
        assert time.monotonic() < deadline, f"{what}: still {value}"
        time.sleep(0.2)


def holders(admin) -> list[str]:
    return next(g for g in admin.ok("GET", "/api/gpus") if g["device_id"] == DEVICE)["holders"]


def test_an_unknown_gpu_type_is_refused(site, course, teacher, gpu):
    body = {
        "name": "nogpu",
        "starts_at": "2027-03-01T09:00:00+00:00",
        "ends_at": "2027-03-08T09:00:00+00:00",
        "metric": "accuracy",
        "kind": "code",
        "gpu_type": "no-such-type",
    }
    refused = teacher.post("/api/groups/code/competitions", json=body)
    assert refused.status_code == 400, refused.text
    assert "no-such-type" in refused.json()["message"] and refused.json()["code"] == "invalid"
    # A predictions competition runs no student code, so it takes no GPU.
    wrong = teacher.post(
        "/api/groups/code/competitions", json={**body, "kind": "predictions", "gpu_type": gpu}
    )
    assert wrong.status_code == 400 and "code competition" in wrong.json()["message"]
    cid = make(teacher, "later")
    patched = teacher.patch(f"/api/competitions/{cid}", json={"gpu_type": "no-such-type"})
    assert patched.status_code == 400 and "no-such-type" in patched.json()["message"]
    path = f"/api/competitions/{cid}"
    assert teacher.ok("PATCH", path, json={"gpu_type": gpu})["gpu_type"] == gpu
    assert teacher.ok("PATCH", path, json={"gpu_type": ""})["gpu_type"] is None


def test_runs_take_the_gpu_wait_for_it_and_give_it_back(
    site, course, teacher, admin, alice, bob, gpu
):
    cid = make(teacher, "gpu", gpu_type=gpu, time_limit=120)
    assert teacher.ok("GET", f"/api/competitions/{cid}")["gpu_type"] == gpu
    slow = notebook(READ, SHOW, "import time\ntime.sleep(6)", WRITE)
    first = send(alice, cid, slow)
    held = wait_for(
        lambda: mine(alice, cid, first["id"]),
        lambda e: e["gpu_type"] == gpu and e["state"] == "scoring",
        "the first run taking the GPU",
    )
    assert held["message"] == ""
    assert holders(admin) == [f"competition entry {first['id']}"]
    # The second run waits for the one device, queued, and its student reads why.
    second = send(bob, cid, notebook(READ, SHOW, WRITE))
    waiting = wait_for(
        lambda: mine(bob, cid, second["id"]),
        lambda e: e["message"].startswith(f"waiting for a GPU ({gpu})"),
        "the second run waiting",
    )
    assert waiting["state"] == "queued" and waiting["gpu_type"] is None
    done = scored(site, bob, cid, second["id"])
    assert done["state"] == "scored" and done["public_score"] == 1.0, done
    assert done["gpu_type"] == gpu and done["message"] == ""
    assert mine(alice, cid, first["id"])["state"] == "scored"
    for entry in (first, second):
        assert f"CVD='{DEVICE}'" in staff_log(teacher, cid, entry["id"])
    every = teacher.ok("GET", f"/api/competitions/{cid}/entries")
    assert {e["gpu_type"] for e in every} == {gpu}
    assert (
        teacher.get(f"/api/competitions/{cid}/entries.csv")
        .text.splitlines()[0]
        .endswith(",gpu_type")
    )
    # Both runs gave the device back: a notebook takes it now.
    assert holders(admin) == []
    alice.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "gpu", "cpu": 0.5, "memory": "512Mi", "gpu_type": gpu, "gpus": 1},
    )
    started = alice.ok("POST", "/api/notebooks/alice/gpu/start?wait=true", 202)
    assert started["devices"] == [DEVICE], started
    assert state(alice, "alice", "gpu")["devices"] == [DEVICE]
    alice.ok("POST", "/api/notebooks/alice/gpu/stop?wait=true", 202)


def test_a_competition_without_a_gpu_type_runs_without_one(site, course, teacher, alice):
    cid = make(teacher, "cpu")
    assert teacher.ok("GET", f"/api/competitions/{cid}")["gpu_type"] is None
    done = scored(site, alice, cid, send(alice, cid, notebook(READ, SHOW, WRITE))["id"])
    assert done["state"] == "scored" and done["gpu_type"] is None, done
    assert "CVD=None" in staff_log(teacher, cid, done["id"])


def test_a_gpu_type_a_competition_runs_on_cannot_be_deleted(site, course, teacher, admin):
    admin.ok("PUT", "/api/gpu-types/kept", json={"display_name": "Kept while asked for"})
    cid = make(teacher, "kept", gpu_type="kept")
    refused = admin.delete("/api/gpu-types/kept")
    assert refused.status_code == 409, refused.text
    assert "kept" in refused.json()["message"] and refused.json()["details"]["competitions"] == [
        "kept"
    ]
    teacher.ok("PATCH", f"/api/competitions/{cid}", json={"gpu_type": ""})
    admin.ok("DELETE", "/api/gpu-types/kept")

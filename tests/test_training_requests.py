"""A training job's request is checked before anything is made: a command that is not a
shell line, too many workers or GPUs without a type are 400s a student can act on, and
nothing is left behind (schemathesis found the unclosed quote as a 500)."""

import pytest

BASE = {"name": "run", "image": "pytorch", "workers": 1, "cpu": "1", "memory": "1Gi"}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"command": "python train.py --name 'run 1"}, "close every quote"),
        ({"command": "python train.py \\"}, "cannot be read as a shell line"),
        ({"command": "  "}, "give the command each replica runs"),
        ({"command": "python train.py", "workers": 500}, "workers: must be at most"),
        ({"command": "python train.py", "gpus": 1}, "choose a GPU type"),
    ],
)
def test_a_bad_request_is_a_400_that_says_what_to_fix(alice, change, words):
    response = alice.post("/api/training", json={**BASE, **change})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == "invalid" and words in body["message"], body
    assert all(job["name"] != "run" for job in alice.ok("GET", "/api/training"))

"""The disk allowance (issue 13): set per user, per group and as the platform default,
bounded by a group's budget when its manager gives it, refused in sentences when
malformed, and carried to each notebook server, whose upload check refuses what
would pass it with the limit and the use in the message.

Issue 23 item 18: the check also holds where the bytes arrive, the contents API
(`PUT api/contents/...` with content or in chunks, `POST` with `copy_from`, new
files), in a real jupyter_server with the extension (pytest-jupyter), and through
the controller's proxy; the home's use is cached and moved by each write.

The rules run without a server; the API and the notebook run on the controller in
the test's process with real notebook servers (conftest's `notebook_servers` layer).
"""

import base64
import json
import os

import pytest
from tornado.httpclient import HTTPClientError

from cgu_lab.backends.base import EnvironmentSpec, NotebookSpec, QuotaSpec
from cgu_lab.backends.kube_objects import notebook_env
from cgu_lab.backends.kube_settings import KubeSettings
from cgu_lab.core import quota
from cgu_lab.core.errors import Invalid, QuotaExceeded
from cgu_lab.core.quota import Limits
from cgu_lab.notebook.transfer.allowance import HomeUsage

from .harness import extension_server_config
from .test_notebooks import server_process
from .test_server_extension import as_user

pytestmark = pytest.mark.notebook_servers

GIB = 2**30
MIB = 2**20
GROUP = "disk-course"
BUDGET = {"cpu": 4, "memory": "8Gi", "gpus": {}, "notebooks": 2, "disk": "10Gi"}
# What the group manager gives alice: a home of 5 MiB, enough for a fresh one.
ALICE = {"cpu": 1, "memory": "2Gi", "gpus": {}, "notebooks": 1, "disk": "5Mi"}


# -- the rules --------------------------------------------------------------------------


def test_disk_amounts_are_read_like_memory_and_refused_in_disk_words():
    assert quota.parse_disk("20Gi") == 20 * GIB
    assert quota.parse_disk("500M") == 500 * 10**6
    assert quota.parse_disk(4096) == 4096
    for bad, words in (
        ("lots", "'lots' is not a disk amount"),
        ("0", "disk must be more than 0"),
        ("2Pi", "disk can be at most 1 PiB"),
        (True, "is not a disk amount"),
    ):
        with pytest.raises(Invalid) as refused:
            quota.parse_disk(bad)
        assert words in refused.value.message and "memory" not in refused.value.message
    with pytest.raises(Invalid, match="disk limit can be at most"):
        Limits(disk=2**60).validate()
    with pytest.raises(Invalid, match="disk limit cannot be negative"):
        Limits(disk=-1).validate()


def test_a_group_disk_budget_bounds_a_members_allowance():
    budget = Limits(disk=10 * GIB)
    quota.within_budget(Limits(disk=GIB), budget, "c")
    for asked in (Limits(disk=20 * GIB), Limits()):  # more, or no limit at all
        with pytest.raises(QuotaExceeded, match="a disk allowance of at most 10 GiB"):
            quota.within_budget(asked, budget, "c")
    quota.within_budget(Limits(cpu_milli=500), Limits(cpu_milli=1000), "c")  # no disk budget


def test_the_kubernetes_notebook_env_carries_the_allowance():
    spec = NotebookSpec(
        id=1,
        owner="ann",
        name="nb",
        base_path="/notebook/ann/nb/",
        environment=EnvironmentSpec("python", "registry.example.edu/notebook:1"),
        cpu_milli=1000,
        memory=GIB,
        gpu_type=None,
        gpus=0,
        proxy_secret="s",
        controller_url="http://127.0.0.1:8000",
        quota=QuotaSpec(Limits(disk=3 * GIB)),
    )
    settings = KubeSettings(controller_url="http://controller:8000")
    assert notebook_env(spec, settings)["CGU_DISK_ALLOWANCE"] == str(3 * GIB)
    no_quota = NotebookSpec(**{**spec.__dict__, "quota": None})
    assert notebook_env(no_quota, settings)["CGU_DISK_ALLOWANCE"] == ""


# -- the API ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def course(admin, teacher, alice):
    """A group the teacher manages, alice its only member, with a disk budget."""
    teacher.ok("POST", "/api/groups", 201, json={"name": GROUP})
    admin.ok("PUT", f"/api/groups/{GROUP}/members/alice", json={"manager": False})
    budget = admin.ok("PUT", f"/api/groups/{GROUP}/quota", json=BUDGET)
    assert budget["limits"]["disk"] == 10 * GIB
    return GROUP


def test_the_default_quota_takes_and_shows_a_disk_allowance(admin, alice):
    body = {"cpu": 4, "memory": "8Gi", "gpus": {}, "notebooks": 2, "disk": "20Gi"}
    assert admin.ok("PUT", "/api/quotas/default", json=body)["limits"]["disk"] == 20 * GIB
    assert admin.ok("GET", "/api/quotas/default")["limits"]["disk"] == 20 * GIB
    # A user without a quota of their own has the default's.
    mine = alice.ok("GET", "/api/users/alice/quota")
    assert mine["source"] == "default" and mine["limits"]["disk"] == 20 * GIB


def test_a_users_own_allowance_and_its_removal(admin, bob):
    body = {"cpu": 1, "memory": "1Gi", "gpus": {}, "notebooks": 1, "disk": "1.5GiB"}
    quota_out = admin.ok("PUT", "/api/users/bob/quota", json=body)
    assert quota_out["source"] == "user" and quota_out["limits"]["disk"] == int(1.5 * GIB)
    assert bob.ok("GET", "/api/users/bob/quota")["limits"]["disk"] == int(1.5 * GIB)
    # Given in bytes too; null (or left out) is no limit.
    admin.ok("PUT", "/api/users/bob/quota", json={**body, "disk": 123456789})
    assert bob.ok("GET", "/api/users/bob/quota")["limits"]["disk"] == 123456789
    admin.ok("PUT", "/api/users/bob/quota", json={**body, "disk": None})
    assert bob.ok("GET", "/api/users/bob/quota")["limits"]["disk"] is None
    back = admin.ok("DELETE", "/api/users/bob/quota")
    assert back["source"] == "default" and back["limits"]["disk"] == 20 * GIB


def test_a_group_budget_holds_its_disk_and_bounds_the_manager(course, admin, teacher, alice):
    assert alice.ok("GET", f"/api/groups/{course}/quota")["limits"]["disk"] == 10 * GIB
    for disk in ("20Gi", None):  # more than the budget, or no limit at all
        over = teacher.put("/api/users/alice/quota", json={**ALICE, "disk": disk})
        assert over.status_code == 403, over.text
        assert "a disk allowance of at most 10 GiB" in over.json()["message"]
    given = teacher.ok("PUT", "/api/users/alice/quota", json=ALICE)
    assert given["source"] == "user" and given["limits"]["disk"] == 5 * MIB
    # An administrator is not bound by the budget.
    admin.ok("PUT", "/api/users/alice/quota", json={**ALICE, "disk": "20Gi"})
    teacher.ok("PUT", "/api/users/alice/quota", json=ALICE)
    events = admin.ok("GET", "/api/audit?target=user:alice&action=quota.set&limit=5")
    assert events[0]["details"]["after"]["disk"] == 5 * MIB, events[0]


@pytest.mark.parametrize(
    ("disk", "words"),
    [
        ("lots", "is not a disk amount"),
        ("0", "disk must be more than 0"),
        (0, "disk must be more than 0"),
        (-5, "disk must be more than 0"),
        ("2Pi", "disk can be at most 1 PiB"),
        (2**60, "disk can be at most 1 PiB"),
        (" 5Gi", "is not a disk amount"),
        ("x" * 5000, "is not a disk amount"),
        (True, ""),
        (1.5, ""),
        ([], ""),
    ],
)
def test_bad_disk_amounts_are_refused_with_a_sentence(admin, disk, words):
    for path in ("/api/quotas/default", "/api/users/bob/quota", "/api/groups/disk-course/quota"):
        response = admin.put(path, json={"disk": disk})
        assert response.status_code == 400, (path, disk, response.text)
        body = response.json()
        assert body["code"] == "invalid" and body["message"].startswith("disk"), body
        assert words in body["message"], body
        assert len(body["message"]) < 300  # the typed value is never echoed whole


# -- the notebook -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def notebook(course, teacher, alice):
    """alice/files, started with the 5 MiB allowance her manager gave."""
    teacher.ok("PUT", "/api/users/alice/quota", json=ALICE)
    alice.ok("POST", "/api/notebooks", 201, json={"name": "files", "cpu": 1, "memory": "1Gi"})
    started = alice.ok("POST", "/api/notebooks/alice/files/start?wait=true", 202)
    assert started["state"] == "running", started
    yield "/notebook/alice/files"
    alice.ok("POST", "/api/notebooks/alice/files/stop?wait=true", 202)


def test_a_started_notebook_carries_the_owners_allowance(notebook):
    environ = server_process("alice", "files").environ()
    assert environ["CGU_DISK_ALLOWANCE"] == str(5 * MIB)


def test_an_upload_past_the_allowance_is_refused_with_the_limit_and_the_use(notebook, alice):
    room = alice.ok("GET", f"{notebook}/cgu-lab/transfer/allowance")
    assert room["allowance"] == 5 * MIB and room["used"] < MIB, room
    small = {"path": "", "files": [{"path": "notes.txt", "size": 1000}]}
    assert alice.ok("POST", f"{notebook}/cgu-lab/transfer/plan", json=small)["needed"] == 1000

    large = {"path": "", "files": [{"path": "data/big.bin", "size": 6 * MIB}]}
    refused = alice.post(f"{notebook}/cgu-lab/transfer/plan", json=large)
    assert refused.status_code == 413, refused.text
    body = refused.json()
    assert body["code"] == "over_allowance"
    assert (body["limit"], body["needed"]) == (5 * MIB, 6 * MIB)
    # The home's use, read again: the server itself may have written a file meanwhile (its
    # file-ID database, a runtime file), so it is at least the earlier reading.
    assert room["used"] <= body["used"] < MIB, (room, body)
    assert "your disk allowance is 5 MiB" in body["message"], body


def test_an_upload_through_the_proxy_past_the_allowance_is_refused(notebook, alice):
    """The walk's case: a 1 MB contents PUT while the home is 10x over its allowance."""
    home = server_process("alice", "files").cwd()
    planted = os.path.join(home, "planted.bin")
    with open(planted, "wb") as out:  # what a kernel could write: 10x the 5 MiB
        out.truncate(50 * MIB)
    try:
        body = {"type": "file", "format": "base64", "content": encoded(10**6)}
        refused = alice.put(f"{notebook}/api/contents/one-mb.bin", json=body)
        assert refused.status_code == 413, refused.text
        answer = refused.json()
        assert answer["code"] == "over_allowance" and answer["limit"] == 5 * MIB, answer
        assert answer["used"] >= 50 * MIB and answer["needed"] == 10**6
        assert "your disk allowance is 5 MiB" in answer["message"]
        assert "ask your teacher" in answer["message"]
        assert not os.path.exists(os.path.join(home, "one-mb.bin"))
    finally:
        os.unlink(planted)


# -- the contents API in a real jupyter_server -------------------------------------------

ALLOWANCE = 1_000_000
OWNER = as_user("alice")


@pytest.fixture
def jp_server_config():
    return extension_server_config(CguLabExtension={"disk_allowance": ALLOWANCE})


def encoded(size: int) -> str:
    return base64.b64encode(os.urandom(size)).decode()


async def contents(jp_fetch, method: str, path: str, body: dict | None = None):
    """(status, JSON answer) of a contents API call as the owner, refusals included."""
    parts = ("api", "contents", *path.split("/")) if path else ("api", "contents")
    data = None if body is None else json.dumps(body)
    try:
        response = await jp_fetch(*parts, method=method, body=data, headers=OWNER)
        return response.code, json.loads(response.body or b"null")
    except HTTPClientError as error:
        return error.code, json.loads(error.response.body)


def over(status: int, answer: dict, needed: int) -> None:
    assert (status, answer["code"]) == (413, "over_allowance"), (status, answer)
    assert answer["limit"] == ALLOWANCE and answer["needed"] == needed, answer
    assert "your disk allowance is 977 KiB" in answer["message"], answer
    assert "delete some files, or ask your teacher" in answer["message"]


async def test_a_save_past_the_allowance_is_refused_and_writes_nothing(jp_fetch, jp_root_dir):
    (jp_root_dir / "big.bin").write_bytes(b"\0" * 600_000)
    file = {"type": "file", "format": "base64"}
    status, answer = await contents(
        jp_fetch, "PUT", "up.bin", {**file, "content": encoded(500_000)}
    )
    over(status, answer, 500_000)
    assert answer["used"] == 600_000
    assert "saving 'up.bin' needs 488 KiB" in answer["message"]
    assert not (jp_root_dir / "up.bin").exists()
    # What fits is written, and moves the cached use: the next save is refused on it.
    status, _ = await contents(jp_fetch, "PUT", "up.bin", {**file, "content": encoded(300_000)})
    assert status == 201
    text = {"type": "file", "format": "text", "content": "x" * 200_000}
    status, answer = await contents(jp_fetch, "PUT", "notes.txt", text)
    over(status, answer, 200_000)
    assert answer["used"] == 900_000
    # Replacing a file needs only the difference; shrinking is always allowed.
    status, _ = await contents(jp_fetch, "PUT", "up.bin", {**file, "content": encoded(390_000)})
    assert status == 200
    status, _ = await contents(jp_fetch, "PUT", "big.bin", {**file, "content": encoded(10)})
    assert status == 200 and (jp_root_dir / "big.bin").stat().st_size == 10


async def test_a_chunked_upload_is_refused_at_the_chunk_that_passes_and_leaves_no_part(
    jp_fetch, jp_root_dir
):
    (jp_root_dir / "big.bin").write_bytes(b"\0" * 600_000)
    chunk = {"type": "file", "format": "base64", "name": "data.bin", "path": "data.bin"}
    status, _ = await contents(
        jp_fetch, "PUT", "data.bin", {**chunk, "chunk": 1, "content": encoded(250_000)}
    )
    assert status in (200, 201) and (jp_root_dir / "data.bin").stat().st_size == 250_000
    status, answer = await contents(
        jp_fetch, "PUT", "data.bin", {**chunk, "chunk": 2, "content": encoded(250_000)}
    )
    over(status, answer, 250_000)
    assert answer["used"] == 850_000
    assert "uploading 'data.bin'" in answer["message"]
    assert answer["message"].endswith("the part already uploaded was removed")
    assert not (jp_root_dir / "data.bin").exists()
    # The removed part is given back: the same upload, smaller, fits again at once.
    for number in (1, -1):
        status, _ = await contents(
            jp_fetch, "PUT", "data.bin", {**chunk, "chunk": number, "content": encoded(150_000)}
        )
        assert status in (200, 201)
    assert (jp_root_dir / "data.bin").stat().st_size == 300_000


async def test_copies_and_new_files_are_checked_renames_are_free(jp_fetch, jp_root_dir):
    (jp_root_dir / "big.bin").write_bytes(b"\0" * 600_000)
    folder = jp_root_dir / "data"
    folder.mkdir()
    (folder / "a.csv").write_bytes(b"1" * 300_000)
    (folder / "b.csv").write_bytes(b"2" * 50_000)
    before = sorted(p.name for p in jp_root_dir.rglob("*"))
    status, answer = await contents(jp_fetch, "POST", "", {"copy_from": "big.bin"})
    over(status, answer, 600_000)
    status, answer = await contents(jp_fetch, "POST", "", {"copy_from": "data"})
    over(status, answer, 350_000)
    assert "copying 'data'" in answer["message"]
    assert sorted(p.name for p in jp_root_dir.rglob("*")) == before
    # A rename writes nothing; a new empty file takes nothing.
    status, _ = await contents(jp_fetch, "PATCH", "big.bin", {"path": "moved.bin"})
    assert status == 200 and (jp_root_dir / "moved.bin").exists()
    status, made = await contents(jp_fetch, "POST", "", {"type": "file"})
    assert status == 201 and (jp_root_dir / made["path"]).stat().st_size == 0


async def test_a_delete_frees_room_at_once(jp_fetch, jp_root_dir, jp_home_dir, jp_serverapp):
    (jp_root_dir / "big.bin").write_bytes(b"\0" * 1_500_000)  # what a kernel wrote
    status, answer = await contents(jp_fetch, "POST", "", {"type": "notebook"})
    assert (status, answer["code"]) == (413, "over_allowance") and answer["used"] == 1_500_000
    assert not list(jp_root_dir.glob("*.ipynb"))
    assert (await contents(jp_fetch, "DELETE", "big.bin"))[0] == 204
    # Deleted, not moved to the trash (which lies in the home and counts).
    assert not list(jp_home_dir.rglob("big.bin")) and not list(jp_root_dir.rglob("big.bin"))
    status, made = await contents(jp_fetch, "POST", "", {"type": "notebook"})
    assert status == 201 and made["type"] == "notebook"
    assert jp_serverapp.contents_manager.home_usage.walks == 2


# -- the measure of the home ----------------------------------------------------------------


async def test_the_measured_use_is_cached_and_moved_by_writes(tmp_path):
    now = [0.0]
    usage = HomeUsage(tmp_path, allowance=10_000, ttl=10, clock=lambda: now[0])
    (tmp_path / "a.bin").write_bytes(b"a" * 1000)
    assert (await usage.room()).used == 1000 and usage.walks == 1
    (tmp_path / "b.bin").write_bytes(b"b" * 500)  # written behind its back (a kernel)
    usage.wrote(200)  # a write through the server
    now[0] = 9.9
    assert (await usage.room()).used == 1200 and usage.walks == 1
    now[0] = 10.0
    assert (await usage.room()).used == 1500 and usage.walks == 2
    usage.forget()
    assert (await usage.room()).used == 1500 and usage.walks == 3
    usage.allowance = None  # no allowance: no walk at all
    usage.forget()
    assert (await usage.room()).used is None and usage.walks == 3

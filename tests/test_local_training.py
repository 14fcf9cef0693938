"""Training jobs on the local backend: torchrun on this machine, through the real API.

A real controller runs jobs in the "PyTorch" recipe's environment (torch
from PyPI, built once per machine by tests/test_local_training_env.py with the
platform's builder and declared by its prefix) and students submit jobs as
they would on Kubernetes: a two-process gloo all-reduce succeeds with both ranks' logs; a
failing worker fails the job with its own error; a stop leaves no process and
no cgroup; another student can neither see nor stop a job; a job asking for
more GPUs than are free waits in the queue, and runs on the GPU the controller
placed once it is free (GPUs declared by hand: this machine has none); a job
survives a controller restart, and one that died meanwhile is reported failed.
A job's ranks meet on a loopback of the job's own: its rendezvous store answers
them, while neither this machine's network reaches the store nor the job the
machine's services.

Jobs other than the all-reduce use only torchrun's variables (RANK,
WORLD_SIZE, ...), not torch itself, to stay quick on a two-core runner.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import psutil
import pytest

from .harness import Controller, running_controller
from .test_local_training_env import WHEELS, pytorch_prefix

# The first run on a machine builds the PyTorch environment (minutes; see its module).
pytestmark = [pytest.mark.end_to_end, pytest.mark.timeout(1200)]
ALL_REDUCE = """
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
rank, size = dist.get_rank(), dist.get_world_size()
total = torch.tensor([float(rank + 1)])
dist.all_reduce(total)
print(f"rank {rank} of {size}: sum {total.item()} uid {os.getuid()}")
dist.destroy_process_group()
"""
FAILING = """
import os, time
if os.environ["RANK"] == "1":
    raise RuntimeError("bad batch 7 in worker")
time.sleep(60)
"""
SLEEPING = """
import os, subprocess, time
# A grandchild in a session of its own: a stop must find it through the cgroup.
subprocess.Popen(["sleep", "600"], start_new_session=True)
print("ready", os.environ["RANK"], os.environ["WORLD_SIZE"], os.environ["MASTER_ADDR"],
      "gpus=" + os.environ.get("CUDA_VISIBLE_DEVICES", "?"), flush=True)
time.sleep(600)
"""
PLANTING = """
import os
# The job's own log folder is ../ranks: a link among its logs points at a secret of root's.
os.makedirs("../ranks/zz/attempt_9/0")
os.symlink("/etc/shadow", "../ranks/zz/attempt_9/0/stdout.log")
os.makedirs("../ranks/zz/attempt_9/1")
os.symlink("/etc", "../ranks/zz/attempt_9/1/stderr.log")
print("planted", flush=True)
"""
# Run by each rank: is the rendezvous store there, what network is there, is the host there?
NETWORK = """
import os, socket, time
port = int(os.environ["MASTER_PORT"])
socket.create_connection(("127.0.0.1", port), timeout=10).close()  # the store, inside
print("interfaces", sorted(name for _, name in socket.if_nameindex()))
try:
    socket.create_connection(("127.0.0.1", HOST_PORT), timeout=3).close()
    print("host reached")
except OSError as error:
    print("host unreachable:", type(error).__name__)
print("store port", port, flush=True)
time.sleep(120)
"""
SMALL = {"cpu": "0.5", "memory": "1Gi"}


@pytest.fixture(scope="module")
def site():
    WHEELS.mkdir(parents=True, exist_ok=True)
    users = [("root-admin", "admin"), ("alice", "student"), ("bob", "student")]
    with running_controller(users, env={"CGU_LAB_PIP_CACHE": str(WHEELS)}) as ctl:
        try:
            yield ctl
        finally:
            # The jobs go with the controller stopped (so it starts none meanwhile) and
            # before its data folder, whose instance id marks them, is removed.
            ctl.stop()
            kill_jobs(ctl)


def instance(ctl: Controller) -> str:
    return (ctl.data_dir / "instance-id").read_text().strip()


def job_processes(ctl: Controller) -> list[psutil.Process]:
    """Every process this installation's training jobs started (they carry its marker)."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("CGU_LAB_TRAINING", "").startswith(instance(ctl) + "/"):
                found.append(process)
        except (psutil.Error, OSError):
            continue
    return found


def job_cgroups(ctl: Controller) -> list[Path]:
    found = []
    for root in ("/sys/fs/cgroup", *(f"/sys/fs/cgroup/{c}" for c in ("cpu", "memory", "pids"))):
        found += Path(root, "cgu-lab", instance(ctl)).glob("job-*")
    return found


def kill_jobs(ctl: Controller) -> None:
    left = job_processes(ctl)
    for process in left:
        process.kill()
    psutil.wait_procs(left, 10)
    for cgroup in job_cgroups(ctl):
        cgroup.rmdir()


@pytest.fixture(scope="module")
def admin(site):
    with site.client("root-admin") as session:
        yield session


@pytest.fixture(scope="module")
def alice(site):
    with site.client("alice") as session:
        yield session


@pytest.fixture(scope="module")
def bob(site):
    with site.client("bob") as session:
        yield session


@pytest.fixture(scope="module")
def pytorch(admin):
    """The "PyTorch" recipe's environment (built once per machine), declared by its prefix."""
    prefix = pytorch_prefix()
    body = {"display_name": "PyTorch", "local_prefix": str(prefix)}
    return admin.ok("PUT", "/api/environments/pytorch", json=body)


def submit(session, name: str, code: str, **extra) -> dict:
    body = {"name": name, "image": "pytorch", "command": ["python", "-c", code], **SMALL, **extra}
    return session.ok("POST", "/api/training", 201, json=body)


def wait_phase(session, owner: str, name: str, wanted: set[str], seconds: float = 120) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = session.ok("GET", f"/api/training/{owner}/{name}")
        if job["phase"] in wanted:
            return job
        time.sleep(0.5)
    logs = session.get(f"/api/training/{owner}/{name}/logs").text
    raise AssertionError(f"{name} stayed {job['phase']} ({job['message']}); master: {logs}")


def wait_logs(session, owner: str, name: str, text: str, replica="master", index=0) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        logs = session.get(f"/api/training/{owner}/{name}/logs?replica={replica}&index={index}")
        if text in logs.text:
            return logs.text
        time.sleep(0.5)
    raise AssertionError(f"{replica} {index} of {name} never printed {text!r}: {logs.text}")


def refused(response, status: int, code: str, *words: str) -> None:
    body = response.json()
    assert response.status_code == status, (response.status_code, body)
    assert body["code"] == code and all(w in body["message"] for w in words), body


def test_a_two_process_gloo_all_reduce_succeeds_with_both_ranks_logs(site, alice, pytorch):
    assert alice.ok("GET", "/api/version")["backend"]["training_jobs"] is True
    job = submit(alice, "allreduce", ALL_REDUCE, workers=1)
    assert job["state"] == "submitted" and job["phase"] in {"Running", "Succeeded"}, job
    done = wait_phase(alice, "alice", "allreduce", {"Succeeded", "Failed"})
    assert done["phase"] == "Succeeded", done["message"]
    assert done["replicas"] == {"Master": {"succeeded": 1}, "Worker": {"succeeded": 1}}
    master = wait_logs(alice, "alice", "allreduce", "rank 0 of 2: sum 3.0")
    worker = wait_logs(alice, "alice", "allreduce", "rank 1 of 2: sum 3.0", "worker", 0)
    if os.geteuid() == 0:  # per-user accounts: the job ran as alice's, not the controller's
        assert " uid 0" not in master + worker, master
    refused(
        alice.get("/api/training/alice/allreduce/logs?replica=worker&index=1"),
        404,
        "not_found",
        "no worker 1",
    )
    assert job_processes(site) == [] and job_cgroups(site) == []


def test_a_failing_worker_fails_the_job_with_its_message(site, alice, pytorch):
    submit(alice, "broken", FAILING, workers=1)
    done = wait_phase(alice, "alice", "broken", {"Succeeded", "Failed"})
    assert done["phase"] == "Failed", done
    assert done["message"].startswith("the worker 0 (rank 1) exited with code 1"), done
    assert "RuntimeError: bad batch 7 in worker" in done["message"], done
    worker = alice.get("/api/training/alice/broken/logs?replica=worker&index=0").text
    assert "RuntimeError: bad batch 7 in worker" in worker
    assert job_processes(site) == [] and job_cgroups(site) == []


def test_a_stop_kills_every_process_and_removes_the_cgroups(site, alice, pytorch):
    submit(alice, "sleeper", SLEEPING, workers=2, memory="512Mi")
    for index, replica in enumerate(("master", "worker", "worker")):
        wait_logs(alice, "alice", "sleeper", "ready", replica, max(0, index - 1))
    master = alice.get("/api/training/alice/sleeper/logs").text
    assert "ready 0 3 " in master and "gpus=\n" in master + "\n", master  # no GPU given
    running = job_processes(site)
    commands = [" ".join(p.cmdline()) for p in running]
    assert sum(c == "sleep 600" for c in commands) == 3, commands  # the escaped grandchildren
    cgroups = job_cgroups(site)
    assert cgroups, "the job has no cgroup"
    limits = [c / f for c in cgroups for f in ("memory.limit_in_bytes", "memory.max")]
    limits = [path for path in limits if path.exists()]
    assert limits and {int(path.read_text()) for path in limits} == {3 * 512 * 2**20}
    assert alice.ok("DELETE", "/api/training/alice/sleeper")["message"]
    assert not [p for p in running if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert job_processes(site) == [] and job_cgroups(site) == []
    refused(alice.get("/api/training/alice/sleeper"), 404, "not_found", "no training job")
    assert not (site.data_dir / "training" / "alice" / "sleeper").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="a job's own network needs root (per-user mode)")
def test_a_jobs_ranks_meet_on_a_loopback_no_one_else_reaches(site, alice, pytorch):
    """torchrun's store takes any client; here only the job's own ranks can reach it."""
    with socket.create_server(("127.0.0.1", 0)) as host:  # a service of the machine's
        code = NETWORK.replace("HOST_PORT", str(host.getsockname()[1]))
        submit(alice, "netns", code, workers=1, memory="512Mi")
        for replica in ("master", "worker"):
            logs = wait_logs(alice, "alice", "netns", "store port", replica, 0)
            assert "interfaces ['lo']" in logs, logs
            assert "host unreachable: ConnectionRefusedError" in logs, logs
        port = int(logs.rsplit("store port", 1)[1].split()[0])
        with pytest.raises(ConnectionRefusedError):  # from this machine's network
            socket.create_connection(("127.0.0.1", port), timeout=3)
    version = alice.ok("GET", "/api/version")["backend"]
    assert "private loopback" in version["training_network"], version
    alice.ok("DELETE", "/api/training/alice/netns")
    assert job_processes(site) == [] and job_cgroups(site) == []


def test_another_student_can_neither_see_nor_stop_a_job(site, alice, bob, pytorch):
    submit(alice, "private", SLEEPING)
    wait_logs(alice, "alice", "private", "ready")
    for response in (
        bob.get("/api/training/alice/private"),
        bob.get("/api/training/alice/private/logs"),
        bob.delete("/api/training/alice/private"),
    ):
        refused(response, 404, "not_found", "alice has no training job 'private'")
    assert [j["name"] for j in bob.ok("GET", "/api/training")] == []
    assert alice.ok("GET", "/api/training/alice/private")["phase"] == "Running"
    refused(
        alice.post(
            "/api/training",
            json={"name": "nowhere", "image": "no-such-env", "command": "python t.py", **SMALL},
        ),
        404,
        "not_found",
        "no environment 'no-such-env'",
    )
    alice.ok("DELETE", "/api/training/alice/private")
    assert job_processes(site) == []


def test_links_planted_among_a_jobs_logs_are_not_followed(site, alice, pytorch):
    submit(alice, "planter", PLANTING)
    done = wait_phase(alice, "alice", "planter", {"Succeeded", "Failed"})
    assert done["phase"] == "Succeeded", done["message"]
    logs = alice.get("/api/training/alice/planter/logs")
    assert logs.status_code == 200 and "root:" not in logs.text, logs.text
    alice.ok("DELETE", "/api/training/alice/planter")
    assert Path("/etc/shadow").exists()  # the delete did not follow the link either


def test_jobs_wait_for_gpus_and_run_on_the_ones_placed(site, admin, alice, pytorch):
    admin.ok("PUT", "/api/gpu-types/premium", json={"display_name": "Whole GPU"})
    admin.ok("POST", "/api/gpus", 201, json={"device_id": "GPU-train-0", "memory": "24Gi"})
    admin.ok(
        "PUT",
        "/api/quotas/default",
        json={"cpu": 4, "memory": "8Gi", "notebooks": 2, "gpus": {"premium": 2}},
    )
    gpu = {"gpu_type": "premium", "gpus": 1}
    # Two replicas of one GPU each, and one GPU on the machine: it waits, like on Kubernetes.
    big = submit(alice, "big", SLEEPING, workers=1, **gpu)
    assert big["state"] == "queued" and big["phase"] == "queued", big
    assert big["message"] == "waiting for 2 free GPUs of type 'premium'", big
    holder = submit(alice, "holder", SLEEPING, **gpu)
    assert holder["state"] == "submitted", holder
    wait_logs(alice, "alice", "holder", "gpus=GPU-train-0")
    second = submit(alice, "second", SLEEPING, **gpu)
    assert second["state"] == "queued", second  # the one GPU is the holder's
    # A notebook is not given the GPU a running job holds: it queues too.
    notebook = {"name": "gpu", "cpu": 0.5, "memory": "512Mi", **gpu}
    alice.ok("POST", "/api/notebooks", 201, json=notebook)
    assert alice.ok("POST", "/api/notebooks/alice/gpu/start", 202)["state"] == "queued"
    alice.ok("POST", "/api/notebooks/alice/gpu/stop", 202)  # leaves the queue
    alice.ok("DELETE", "/api/notebooks/alice/gpu")
    alice.ok("DELETE", "/api/training/alice/holder")  # frees it: the queue moves on
    assert alice.ok("GET", "/api/training/alice/second")["state"] == "submitted"
    wait_logs(alice, "alice", "second", "gpus=GPU-train-0")
    assert alice.ok("GET", "/api/training/alice/big")["state"] == "queued"
    for name in ("second", "big"):
        alice.ok("DELETE", f"/api/training/alice/{name}")
    assert job_processes(site) == [] and job_cgroups(site) == []


def test_a_job_outlives_a_controller_restart_and_one_that_died_meanwhile_failed(
    site, alice, pytorch
):
    submit(alice, "overnight", SLEEPING)
    wait_logs(alice, "alice", "overnight", "ready")
    site.stop()
    site.start()
    with site.client("alice") as again:
        assert again.ok("GET", "/api/training/alice/overnight")["phase"] == "Running"
        site.stop()
        kill_jobs(site)  # the machine lost it while no controller watched
        site.start()
    with site.client("alice") as later:
        job = later.ok("GET", "/api/training/alice/overnight")
        assert job["phase"] == "Failed" and "not watching" in job["message"], job
        record = json.loads((site.data_dir / "training/alice/overnight/job.json").read_text())
        assert record["replicas"] == 1
        later.ok("DELETE", "/api/training/alice/overnight")
    assert job_processes(site) == [] and job_cgroups(site) == []

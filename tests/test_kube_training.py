"""A PyTorchJob that really runs: Kubeflow's training operator on the real one-node cluster.

scripts/kube-cluster.sh builds the training operator (v1.8.1, from its Go module pinned in
tools/training-operator) with the cluster's other binaries and runs it beside the control
plane, with upstream's ClusterRole and the PyTorchJob CRD. Through the controller's
training API, as a student would: a Master and one Worker are created by the operator as
pods on the real node, with the rendezvous environment it gives them (MASTER_ADDR naming
the master's Service, MASTER_PORT, WORLD_SIZE, RANK); they meet through cluster DNS and
sum their ranks, the job reaches Succeeded, and the API shows its phase, replica counts
and each replica's log.

The job's program is Python's standard library, not torch.distributed with gloo: PyPI's
torch for x86_64 needs NVIDIA's CUDA wheels even to import (about 3 GB more in the image;
the CPU-only index is not reachable here), so the notebook image has no torch. What this
proves is the operator's part: the pods, their Services, the environment, the phases; the
gloo all-reduce itself is tests/test_local_training.py's.
The cluster and controller are test_kube_cluster.py's; the student is this module's own.
"""

from __future__ import annotations

import time

import pytest

from . import test_kube_cluster as cluster

# The cluster module's fixtures and marks, used here under the same names.
pytestmark = cluster.pytestmark
kube, admin, controller = cluster.kube, cluster.admin, cluster.controller

STUDENT = "ktrain"
NAMESPACE = f"{cluster.USER_PREFIX}{STUDENT}"

# Each rank sends RANK + 1 to the master, which answers with the sum: an all-reduce of
# two numbers, over the address and port the operator put in the environment.
SUM_OF_RANKS = """
import os, socket, time
rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
address, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if rank == 0:
    server = socket.create_server(("", port))
    total, peers = rank + 1, []
    while len(peers) < size - 1:
        peer, _ = server.accept()
        peers.append(peer)
        total += int(peer.recv(64))
    for peer in peers:
        peer.sendall(str(total).encode())
    # The master ends last: the job succeeds when it does, and the operator removes the
    # pods still running then (cleanPodPolicy Running), a worker's log with them.
    for peer in peers:
        peer.recv(1)  # the worker has its answer and is closing
        peer.close()
    time.sleep(5)
else:
    deadline = time.monotonic() + 180  # the master's pod and Service may come later
    while True:
        try:
            peer = socket.create_connection((address, port), timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
    peer.sendall(str(rank + 1).encode())
    total = int(peer.recv(64))
    peer.close()
print(f"rank {rank} of {size}: sum {float(total)} via {address}:{port}", flush=True)
"""


@pytest.fixture(scope="module")
def student(controller):
    controller.create_user(STUDENT)
    with controller.client(STUDENT) as session:
        yield session


def wait_phase(session, name: str, wanted: set[str], seconds: float = 300) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = session.ok("GET", f"/api/training/{STUDENT}/{name}")
        if job["phase"] in wanted:
            return job
        time.sleep(1)
    logs = session.get(f"/api/training/{STUDENT}/{name}/logs").text
    raise AssertionError(f"{name} stayed {job['phase']} ({job['message']}); master: {logs}")


def test_a_master_and_a_worker_run_to_succeeded_with_both_logs(kube, admin, student):
    assert student.ok("GET", "/api/version")["backend"]["training_jobs"]
    body = {
        "name": "sum",
        "image": kube["CGU_NOTEBOOK_IMAGE"],
        "command": ["python3", "-c", SUM_OF_RANKS],
        "workers": 1,
        "cpu": str(cluster.CPU),
        "memory": "256Mi",
    }
    job = student.ok("POST", "/api/training", 201, json=body)
    assert job["state"] == "submitted", job["message"]  # why the cluster refused it

    done = wait_phase(student, "sum", {"Succeeded", "Failed"})
    assert done["phase"] == "Succeeded", done
    assert done["replicas"]["Master"]["succeeded"] == 1, done["replicas"]
    assert done["replicas"]["Worker"]["succeeded"] == 1, done["replicas"]

    master = student.get(f"/api/training/{STUDENT}/sum/logs?replica=master&index=0")
    worker = student.get(f"/api/training/{STUDENT}/sum/logs?replica=worker&index=0")
    assert master.status_code == 200 and worker.status_code == 200, (master.text, worker.text)
    # the worker reached the master by its Service's name, through cluster DNS
    assert "rank 0 of 2: sum 3.0 via sum-master-0:23456" in master.text, master.text
    assert "rank 1 of 2: sum 3.0 via sum-master-0:23456" in worker.text, worker.text

    # the operator made the pods, on the real node (the kubelet ran them)
    pods = admin.resource("v1", "Pod").get(
        namespace=NAMESPACE, label_selector="training.kubeflow.org/job-name=sum"
    )
    placed = {
        pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]: pod["spec"]["nodeName"]
        for pod in pods.to_dict()["items"]
    }
    assert placed == {"master": kube["CGU_KUBE_NODE"], "worker": kube["CGU_KUBE_NODE"]}

    student.ok("DELETE", f"/api/training/{STUDENT}/sum")
    gone = student.get(f"/api/training/{STUDENT}/sum")
    assert gone.status_code == 404, gone.text


def test_a_job_whose_rank_keeps_failing_ends_failed_after_its_backoff_limit(kube, student):
    """A rank exiting non-zero is restarted by the kubelet (restartPolicy OnFailure) and
    the operator counts those restarts against runPolicy.backoffLimit (3 by default):
    the job reaches Failed instead of crash-looping forever, and the API says so."""
    body = {
        "name": "crash",
        "image": kube["CGU_NOTEBOOK_IMAGE"],
        "command": ["python3", "-c", "print('rank failing', flush=True); raise SystemExit(3)"],
        "cpu": str(cluster.CPU),
        "memory": "256Mi",
    }
    student.ok("POST", "/api/training", 201, json=body)
    # the kubelet's restart back-off (10 s, 20 s, 40 s) is most of the wait
    done = wait_phase(student, "crash", {"Succeeded", "Failed"}, seconds=400)
    assert done["phase"] == "Failed", done
    assert "backoff limit" in done["message"], done["message"]
    # ended means ended: the job stays Failed, not Restarting again
    time.sleep(5)
    again = student.ok("GET", f"/api/training/{STUDENT}/crash")
    assert again["phase"] == "Failed", again

    student.ok("DELETE", f"/api/training/{STUDENT}/crash")

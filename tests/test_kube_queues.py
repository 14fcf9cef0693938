"""Training jobs queued by Kueue: the objects (kube_queues), and Kueue on the real cluster.

The first half needs no cluster: the ResourceFlavors, ClusterQueues and LocalQueues the
backend builds from courses' budgets and the fleet, checked against Kueue's own CRDs
(from its Go module, saved by scripts/kube-cluster.sh as .build/kube/kueue.manifests.tar:
these tests skip, saying so, where it was not built), and a job's place in line read
from Workloads as Kueue orders them.

The second half runs on the real one-node cluster (scripts/kube-cluster.sh starts Kueue
v0.17 beside the training operator), through the controller's API as students and an
administrator would. The node has 2 GPUs (NVIDIA-RTX-A5000, nvidia.com/gpu); two courses
hold one each as their budget, so the pool of personal jobs holds none of its own:
- a course's job that fits its budget is admitted and runs to Succeeded; its second job,
  over the budget while the other course uses its own, waits in Kueue with its place and
  Kueue's reason, and is admitted when the first ends;
- a personal job asking for both GPUs borrows the two courses' idle budgets (the cohort),
  and is preempted when a course reclaims its budget: that course's job runs, the
  personal one waits again and runs once the budget is idle again.
Each job's ranks wait, before they exit 0, until the test lets them go (they connect to
a socket on the host and read one byte), so what runs when is the test's to decide and
no assertion depends on how long anything takes.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import tarfile
import threading
import time
from pathlib import Path

import jsonschema
import pytest
import yaml

from cgu_lab.backends import kube_queues as queues
from cgu_lab.backends import kube_training
from cgu_lab.backends.base import TrainingBudget, TrainingSpec
from cgu_lab.backends.kube_names import Naming
from cgu_lab.backends.kube_settings import KubeSettings

from . import kube_crds
from . import test_kube_cluster as cluster

ROOT = Path(__file__).resolve().parents[1]
MANIFESTS = ROOT / ".build" / "kube" / "kueue.manifests.tar"
SETTINGS = KubeSettings(installation="school")
A5000, V100 = "NVIDIA-RTX-A5000", "Tesla-V100-SXM2-32GB"
GPU, MIG = "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"


def kueue_schemas() -> dict[str, dict]:
    """Kueue's CRD schemas of the version the backend writes, by kind ({} without them)."""
    if not MANIFESTS.is_file():
        return {}
    version = queues.API_VERSION.rpartition("/")[2]
    found = {}
    with tarfile.open(MANIFESTS) as tar:
        for member in tar.getmembers():
            if not member.name.startswith("crd/bases/") or not member.isfile():
                continue
            for crd in yaml.safe_load_all(tar.extractfile(member)):
                if not crd:
                    continue
                for served in crd["spec"]["versions"]:
                    if served["name"] == version:
                        found[crd["spec"]["names"]["kind"]] = served["schema"]["openAPIV3Schema"]
    return found


KUEUE_SCHEMAS = kueue_schemas()
needs_kueue_crds = pytest.mark.skipif(
    not KUEUE_SCHEMAS,
    reason=f"Kueue's CRDs are not built ({MANIFESTS}: scripts/kube-cluster.sh build kueue)",
)


def node(product: str, allocatable: dict, cordoned: bool = False) -> dict:
    return {
        "metadata": {"name": product, "labels": {"nvidia.com/gpu.product": product}},
        "spec": {"unschedulable": True} if cordoned else {},
        "status": {"allocatable": {"cpu": "32", **allocatable}},
    }


FLEET = [
    node(A5000, {GPU: "4"}),
    node(A5000, {GPU: "4"}),
    node(V100, {GPU: "8"}),
    node(V100, {GPU: "8"}, cordoned=True),  # its GPUs are nobody's while it is cordoned
    {"metadata": {"name": "cpu-only"}, "status": {"allocatable": {"cpu": "8"}}},
    node("NVIDIA-A100-SXM4-80GB", {GPU: "2", MIG: "7"}),
]


def test_the_fleet_and_the_budgets_make_one_cohort_of_queues():
    fleet = queues.fleet_gpus(FLEET)
    assert fleet == {
        (GPU, A5000): 8,
        (GPU, V100): 8,
        (GPU, "NVIDIA-A100-SXM4-80GB"): 2,
        (MIG, "NVIDIA-A100-SXM4-80GB"): 7,
    }
    courses = [
        TrainingBudget("ml-101", {(GPU, A5000): 6}, cpu_milli=16000, memory=64 * 2**30),
        TrainingBudget("vision", {(GPU, A5000): 4, (GPU, V100): 2}),
    ]
    built = queues.cluster_queues(courses, fleet, SETTINGS)
    kinds = [(obj["kind"], obj["metadata"]["name"]) for obj in built]
    assert kinds == [
        ("ResourceFlavor", "cgu-lab-school-cpu"),
        ("ResourceFlavor", "cgu-lab-school-nvidia-a100-sxm4-80gb"),
        ("ResourceFlavor", "cgu-lab-school-nvidia-rtx-a5000"),
        ("ResourceFlavor", "cgu-lab-school-tesla-v100-sxm2-32gb"),
        ("ClusterQueue", "cgu-lab-school-pool"),
        ("ClusterQueue", "cgu-lab-school-course-ml-101"),
        ("ClusterQueue", "cgu-lab-school-course-vision"),
    ]
    flavors = {obj["metadata"]["name"]: obj for obj in built if obj["kind"] == "ResourceFlavor"}
    # an admitted pod lands on its product's nodes
    assert flavors["cgu-lab-school-nvidia-rtx-a5000"]["spec"] == {
        "nodeLabels": {"nvidia.com/gpu.product": A5000}
    }
    assert flavors["cgu-lab-school-cpu"]["spec"] == {}

    def quotas(queue: dict) -> dict[tuple[str, str], str]:
        return {
            (flavor["name"], resource["name"]): resource["nominalQuota"]
            for group in queue["spec"]["resourceGroups"]
            for flavor in group["flavors"]
            for resource in flavor["resources"]
        }

    pool, ml, vision = (obj for obj in built if obj["kind"] == "ClusterQueue")
    for queue in (pool, ml, vision):
        assert queue["spec"]["cohortName"] == "cgu-lab-school-training"
        assert queue["spec"]["preemption"]["reclaimWithinCohort"] == "Any"
        # every queue lists every pair of the cohort: what it may borrow
        assert len(quotas(queue)) == 2 + 3 * 2
    # 8 A5000s: 6 + 4 are budgeted (more than there are): the pool has none of them left
    assert quotas(pool)[("cgu-lab-school-nvidia-rtx-a5000", GPU)] == "0"
    assert quotas(pool)[("cgu-lab-school-tesla-v100-sxm2-32gb", GPU)] == "6"
    assert quotas(pool)[("cgu-lab-school-nvidia-a100-sxm4-80gb", MIG)] == "7"
    assert quotas(ml)[("cgu-lab-school-nvidia-rtx-a5000", GPU)] == "6"
    assert quotas(ml)[("cgu-lab-school-tesla-v100-sxm2-32gb", GPU)] == "0"
    assert quotas(ml)[("cgu-lab-school-cpu", "cpu")] == "16"
    assert quotas(ml)[("cgu-lab-school-cpu", "memory")] == "64Gi"
    # no CPU limit: more than any cluster holds, so that only GPUs ever wait
    assert quotas(vision)[("cgu-lab-school-cpu", "cpu")] == queues.UNLIMITED_CPU
    # a course's queue serves its own namespace only; the pool, users' namespaces
    assert ml["spec"]["namespaceSelector"]["matchLabels"]["cgu-lab.io/group"] == "ml-101"
    assert pool["spec"]["namespaceSelector"]["matchExpressions"] == [
        {"key": "cgu-lab.io/user", "operator": "Exists"}
    ]
    assert queues.local_queue("cgu-g-ml-101", "ml-101", SETTINGS)["spec"] == {
        "clusterQueue": "cgu-lab-school-course-ml-101"
    }
    assert queues.local_queue("cgu-u-ana", None, SETTINGS)["spec"] == {
        "clusterQueue": "cgu-lab-school-pool"
    }


@needs_kueue_crds
def test_the_queue_objects_are_valid_against_kueues_crds():
    courses = [TrainingBudget("ml-101", {(GPU, A5000): 6}, cpu_milli=1500, memory=3 * 2**29)]
    built = queues.cluster_queues(courses, queues.fleet_gpus(FLEET), SETTINGS)
    built.append(queues.local_queue("cgu-g-ml-101", "ml-101", SETTINGS))
    for obj in built:
        assert obj["apiVersion"] == queues.API_VERSION
        schema = KUEUE_SCHEMAS[obj["kind"]]
        jsonschema.validate(obj, schema)
        assert list(kube_crds.unknown_fields(obj, schema)) == [], obj["kind"]


def test_a_queued_job_is_labelled_with_its_local_queue_and_created_suspended():
    spec = TrainingSpec(owner="ana", name="resnet", image="train:1", command=("python",))
    ref = Naming().training("ana", "resnet")
    job = queues.queued(kube_training.pytorch_job(ref, spec, SETTINGS))
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == queues.LOCAL_QUEUE
    assert job["spec"]["runPolicy"]["suspend"] is True
    # The cluster tests install the project's stand-in CRD where the upstream files are not
    # beside the checkout (a clean clone in CI): a field it lacks is refused there (Strict),
    # as runPolicy.suspend once was, so every job failed at submission with Kueue on.
    project = kube_crds.schemas_by_kind(kube_crds.project_crds())["PyTorchJob"]
    jsonschema.validate(job, project)
    assert list(kube_crds.unknown_fields(job, project)) == []
    upstream = kube_crds.schemas_by_kind(kube_crds.upstream_crds()).get("PyTorchJob")
    if upstream is not None:  # the field is the training operator's (v1.7 on)
        jsonschema.validate(job, upstream)
        assert list(kube_crds.unknown_fields(job, upstream)) == []


def workload(name, uid, namespace, created, owner="", reserved=None, priority=0, **conditions):
    found = []
    if reserved is not None:
        found.append({"type": "QuotaReserved", **reserved})
    for kind, (status, when) in conditions.items():
        found.append({"type": kind, "status": status, "lastTransitionTime": when})
    return {
        "metadata": {
            "name": name,
            "uid": uid,
            "namespace": namespace,
            "creationTimestamp": created,
            "ownerReferences": [{"uid": owner or f"job-{uid}"}],
        },
        "spec": {"queueName": queues.LOCAL_QUEUE, "priority": priority},
        "status": {"conditions": found},
    }


def test_a_waiting_jobs_place_follows_kueues_order():
    waiting = {"status": "False", "message": "couldn't assign flavors: insufficient quota"}
    listed = [
        workload("first", "1", "cgu-g-ml", "2026-01-01T10:00:00Z", reserved=waiting),
        workload("urgent", "2", "cgu-g-ml", "2026-01-01T10:05:00Z", reserved=waiting, priority=5),
        workload("mine", "3", "cgu-g-ml", "2026-01-01T10:01:00Z", reserved=waiting),
        # evicted at 10:10: it queues again from then on
        workload(
            "evicted",
            "4",
            "cgu-g-ml",
            "2026-01-01T09:00:00Z",
            reserved=waiting,
            Evicted=("True", "2026-01-01T10:10:00Z"),
        ),
        workload("running", "5", "cgu-g-ml", "2026-01-01T09:00:00Z", reserved={"status": "True"}),
        workload("done", "6", "cgu-g-ml", "2026-01-01T08:00:00Z", Finished=("True", "x")),
        workload("elsewhere", "7", "cgu-g-cv", "2026-01-01T08:00:00Z", reserved=waiting),
    ]
    local = {
        ("cgu-g-ml", queues.LOCAL_QUEUE): "course-ml",
        ("cgu-g-cv", queues.LOCAL_QUEUE): "course-cv",
    }
    mine = queues.place({"metadata": {"uid": "job-3"}}, listed, local)
    assert mine == queues.Place(
        False, "course-ml", 3, 4, "couldn't assign flavors: insufficient quota"
    )
    assert queues.describe(mine) == (
        "number 3 of 4 waiting in queue course-ml: couldn't assign flavors: insufficient quota"
    )
    assert queues.place({"metadata": {"uid": "job-2"}}, listed, local).position == 1
    assert queues.place({"metadata": {"uid": "job-4"}}, listed, local).position == 4
    running = queues.place({"metadata": {"uid": "job-5"}}, listed, local)
    assert running.admitted and queues.describe(running).startswith("admitted")
    assert queues.place({"metadata": {"uid": "job-9"}}, listed, local) is None


def test_a_missing_pod_says_why():
    ended = {
        "spec": {"runPolicy": {"cleanPodPolicy": "Running"}},
        "status": {"conditions": [{"type": "Succeeded", "status": "True"}]},
    }
    assert kube_training.no_pod(ended, "worker 0", "sum") == (
        "the pod of worker 0 of training job 'sum' was removed when the job ended "
        "(Succeeded; cleanPodPolicy Running removes the ranks still running then), "
        "and its log with it"
    )
    waiting = {"spec": {"runPolicy": {"suspend": True}}}
    assert "waits in its queue" in kube_training.no_pod(waiting, "master 0", "sum")
    assert kube_training.no_pod({}, "master 0", "sum").endswith("has no pod yet")


# -- Kueue on the real cluster ----------------------------------------------------------

kube, admin, controller = cluster.kube, cluster.admin, cluster.controller


def on_the_cluster(test):
    """The cluster module's marks: skipped, saying why, where the cluster does not run, or
    runs without Kueue (scripts/kube-cluster.sh starts it where its binary is built; `make
    test` builds it in the background, so a machine's first run goes on without it: a
    build not yet done, not a fault)."""
    for mark in cluster.pytestmark:
        test = mark(test)
    return pytest.mark.skipif(
        cluster.CLUSTER is not None and cluster.CLUSTER.get("CGU_KUBE_KUEUE") != "1",
        reason="the test cluster runs without Kueue: its binary was not built when the cluster"
        " started (a background build, .build/kube-kueue.log; scripts/kube-cluster.sh build"
        " kueue), about 43 min cold on 2 cores",
    )(test)


COURSE_A, COURSE_B = f"kqa{cluster.RUN}", f"kqb{cluster.RUN}"
STUDENT_A, STUDENT_B = "kqana", "kqbob"
GPU_TYPE = "kq-a5000"
WAIT = 300  # seconds a phase may take to come (image start, Kueue's passes): a bound, not a figure

# Each rank connects to the test's socket and exits 0 once it reads a byte.
RANK = """
import os, socket, sys, time
address, port, job = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for _ in range(300):
    try:
        peer = socket.create_connection((address, port), timeout=5)
        break
    except OSError:
        time.sleep(1)
peer.settimeout(None)
peer.sendall(f"{job}:{os.environ.get('RANK', '?')}".encode())
peer.recv(1)
print("released", flush=True)
"""


class Gates:
    """A socket on the host that holds each job's ranks until the test opens its gate."""

    def __init__(self, host: str) -> None:
        self.server = socket.create_server((host, 0))
        self.address = self.server.getsockname()
        self.open: set[str] = set()
        self.waiting: dict[str, list[socket.socket]] = {}
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                peer, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._hold, args=(peer,), daemon=True).start()

    def _hold(self, peer: socket.socket) -> None:
        with contextlib.suppress(OSError):
            peer.settimeout(60)
            job = peer.recv(64).decode().split(":", 1)[0]
            with self.lock:
                if job in self.open:
                    peer.sendall(b"!")
                    peer.close()
                    return
                self.waiting.setdefault(job, []).append(peer)

    def release(self, job: str) -> None:
        with self.lock:
            self.open.add(job)
            for peer in self.waiting.pop(job, []):
                with contextlib.suppress(OSError):
                    peer.sendall(b"!")
                    peer.close()

    def command(self, job: str) -> list[str]:
        host, port = self.address
        return ["python3", "-c", RANK, host, str(port), job]


@pytest.fixture(scope="module")
def setup(kube, admin, controller):
    """Two courses with one A5000 each, a student in each, no simulated fleet."""
    subprocess.run([cluster.SCRIPT, "fleet", "0"], check=True, capture_output=True)
    controller.create_user(STUDENT_A)
    controller.create_user(STUDENT_B)
    gates = Gates(kube["CGU_KUBE_HOST_IP"])
    with controller.client("kadmin") as root:
        root.ok(
            "PUT",
            f"/api/gpu-types/{GPU_TYPE}",
            json={
                "resource_name": "nvidia.com/gpu",
                "node_selector": {"nvidia.com/gpu.product": A5000},
            },
        )
        for course, student in ((COURSE_A, STUDENT_A), (COURSE_B, STUDENT_B)):
            root.ok("POST", "/api/groups", 201, json={"name": course})
            root.ok("PUT", f"/api/groups/{course}/members/{student}", json={"manager": False})
            root.ok("PUT", f"/api/groups/{course}/quota", json={"gpus": {GPU_TYPE: 1}})
            root.ok("PUT", f"/api/users/{student}/quota", json={"gpus": {GPU_TYPE: 2}})
    with controller.client(STUDENT_A) as ana, controller.client(STUDENT_B) as bob:
        yield {"gates": gates, STUDENT_A: ana, STUDENT_B: bob}
    gates.server.close()
    # the cluster-wide objects of this installation go with it
    installation = f"cgu-lab.io/installation=test-{cluster.RUN}"
    for kind in ("ClusterQueue", "ResourceFlavor"):
        api = admin.resource(queues.API_VERSION, kind)
        for obj in api.get(label_selector=installation).to_dict()["items"]:
            with contextlib.suppress(Exception):
                api.delete(name=obj["metadata"]["name"])


def submit(
    setup,
    student: str,
    name: str,
    course: str | None,
    gpus: int,
    workers: int = 0,
    gpu_type: str = GPU_TYPE,
) -> None:
    body = {
        "name": name,
        "image": cluster.CLUSTER["CGU_NOTEBOOK_IMAGE"],
        "command": setup["gates"].command(name),
        "workers": workers,
        "cpu": "0.1",
        "memory": "128Mi",
        "gpu_type": gpu_type,
        "gpus": gpus,
        "group": course,
    }
    job = setup[student].ok("POST", "/api/training", 201, json=body)
    assert job["state"] == "submitted", job["message"]  # why the cluster refused it


def until(setup, student: str, name: str, wanted) -> dict:
    """The job once `wanted(job)` holds, polling the API as the training page does."""
    deadline = time.monotonic() + WAIT
    while True:
        job = setup[student].ok("GET", f"/api/training/{student}/{name}")
        if wanted(job):
            return job
        if time.monotonic() > deadline:
            raise AssertionError(f"{name} stayed {job['phase']}: {job['message']}")
        time.sleep(1)


def running(job: dict) -> bool:
    return job["phase"] == "Running"


def ended(job: dict) -> bool:
    return job["phase"] in ("Succeeded", "Failed")


@on_the_cluster
def test_a_job_over_its_courses_budget_waits_in_line_and_runs_when_the_budget_frees(setup):
    # each course's job fits its budget: admitted, running
    submit(setup, STUDENT_A, "a1", COURSE_A, 1)
    first = until(setup, STUDENT_A, "a1", running)
    assert first["queue"] == f"cgu-lab-test-{cluster.RUN}-course-{COURSE_A}", first
    assert first["queue_position"] is None
    submit(setup, STUDENT_B, "b1", COURSE_B, 1)
    until(setup, STUDENT_B, "b1", running)

    # a second job of course A: over its budget, and course B's is in use: it waits
    submit(setup, STUDENT_A, "a2", COURSE_A, 1)
    waiting = until(setup, STUDENT_A, "a2", lambda job: "insufficient" in job["message"])
    assert waiting["phase"] == "Queued", waiting
    assert waiting["queue_position"] == 1, waiting
    # Kueue's own reason, after the job's place
    assert waiting["message"].startswith(f"number 1 of 1 waiting in queue {first['queue']}: ")
    assert "nvidia.com/gpu" in waiting["message"], waiting["message"]
    no_pod = setup[STUDENT_A].get(f"/api/training/{STUDENT_A}/a2/logs")
    assert "waits in its queue" in no_pod.text, no_pod.text

    # the first ends: the second is admitted on its course's budget and runs
    setup["gates"].release("a1")
    assert until(setup, STUDENT_A, "a1", ended)["phase"] == "Succeeded"
    setup["gates"].release("a2")
    done = until(setup, STUDENT_A, "a2", ended)
    assert done["phase"] == "Succeeded", done
    master = setup[STUDENT_A].get(f"/api/training/{STUDENT_A}/a2/logs?replica=master")
    assert "released" in master.text, master.text
    setup["gates"].release("b1")
    assert until(setup, STUDENT_B, "b1", ended)["phase"] == "Succeeded"
    for student, name in ((STUDENT_A, "a1"), (STUDENT_A, "a2"), (STUDENT_B, "b1")):
        setup[student].ok("DELETE", f"/api/training/{student}/{name}")


@on_the_cluster
def test_a_personal_job_borrows_idle_budgets_and_yields_when_a_course_reclaims(setup, admin):
    # no course job runs: a personal job of both GPUs (master and worker) borrows the two
    # courses' idle budgets, the pool holding none of its own
    submit(setup, STUDENT_A, "p1", None, 1, workers=1)
    borrowed = until(setup, STUDENT_A, "p1", running)
    assert borrowed["queue"] == f"cgu-lab-test-{cluster.RUN}-pool", borrowed
    pool = admin.resource(queues.API_VERSION, "ClusterQueue").get(name=borrowed["queue"]).to_dict()
    usage = {
        resource["name"]: resource
        for flavor in pool["status"]["flavorsUsage"]
        for resource in flavor["resources"]
    }
    assert usage["nvidia.com/gpu"]["borrowed"] == "2", pool["status"]

    # course B wants its GPU back: Kueue preempts the borrower, course B's job runs
    submit(setup, STUDENT_B, "b2", COURSE_B, 1)
    until(setup, STUDENT_B, "b2", running)
    evicted = until(setup, STUDENT_A, "p1", lambda job: job["phase"] == "Queued")
    assert evicted["queue_position"] == 1, evicted
    setup["gates"].release("b2")
    assert until(setup, STUDENT_B, "b2", ended)["phase"] == "Succeeded"

    # the budget idle again: the personal job is admitted again and runs to its end
    until(setup, STUDENT_A, "p1", running)
    setup["gates"].release("p1")
    done = until(setup, STUDENT_A, "p1", ended)
    assert done["phase"] == "Succeeded", done
    setup[STUDENT_A].ok("DELETE", f"/api/training/{STUDENT_A}/p1")
    setup[STUDENT_B].ok("DELETE", f"/api/training/{STUDENT_B}/b2")


V100_TYPE = "kq-v100"
V100_NODES = 3  # of a fleet of 8: kube-cluster.sh's shapes 0-4 are A5000 x4, 5-7 V100 x8


def job_pods(admin, student: str, name: str) -> list[dict]:
    """The pods of `student`'s job `name` (the training operator's label), any namespace."""
    found = admin.resource("v1", "Pod").get(label_selector=f"training.kubeflow.org/job-name={name}")
    return [
        pod
        for pod in found.to_dict()["items"]
        if pod["metadata"]["namespace"].startswith(cluster.USER_PREFIX)
        and pod["metadata"]["namespace"].endswith(student)
    ]


def until_pods(admin, student: str, name: str, count: int) -> list[dict]:
    """The job's `count` pods once each is bound to a node and running (kwok plays them)."""
    deadline = time.monotonic() + WAIT
    while True:
        pods = job_pods(admin, student, name)
        if len(pods) == count and all(p["status"].get("phase") == "Running" for p in pods):
            return pods
        if time.monotonic() > deadline:
            raise AssertionError(f"{name}'s pods: {[p['status'] for p in pods]}")
        time.sleep(1)


@on_the_cluster
def test_a_multi_node_job_is_admitted_whole_and_placed_across_simulated_nodes(
    setup, admin, controller
):
    """A job of three 8-GPU replicas takes three V100 nodes of the simulated fleet at once;
    a second one, of two replicas, waits whole (no pod of it exists, none holds a GPU)
    while they are taken, and is placed when the first ends."""
    subprocess.run([cluster.SCRIPT, "fleet", "8"], check=True, capture_output=True, timeout=600)
    try:
        with controller.client("kadmin") as root:
            root.ok(
                "PUT",
                f"/api/gpu-types/{V100_TYPE}",
                json={"resource_name": GPU, "node_selector": {"nvidia.com/gpu.product": V100}},
            )
            root.ok("PUT", f"/api/users/{STUDENT_A}/quota", json={"gpus": {V100_TYPE: 48}})
        submit(setup, STUDENT_A, "m1", None, 8, workers=2, gpu_type=V100_TYPE)
        first = until(setup, STUDENT_A, "m1", running)
        assert first["queue"] == f"cgu-lab-test-{cluster.RUN}-pool", first
        pods = until_pods(admin, STUDENT_A, "m1", 3)
        nodes = {pod["spec"]["nodeName"] for pod in pods}
        assert len(nodes) == V100_NODES, nodes  # one replica on each V100 node
        for node in nodes:
            labels = admin.resource("v1", "Node").get(name=node).to_dict()["metadata"]["labels"]
            assert labels["nvidia.com/gpu.product"] == V100 and labels["type"] == "kwok", labels

        # all or nothing: 16 more GPUs do not fit the 24 in use; the job waits with no pod
        submit(setup, STUDENT_A, "m2", None, 8, workers=1, gpu_type=V100_TYPE)
        waiting = until(setup, STUDENT_A, "m2", lambda job: "insufficient" in job["message"])
        assert waiting["phase"] == "Queued", waiting
        assert job_pods(admin, STUDENT_A, "m2") == []

        # the first one goes: the second is admitted whole and placed on two of the nodes
        setup[STUDENT_A].ok("DELETE", f"/api/training/{STUDENT_A}/m1")
        until(setup, STUDENT_A, "m2", running)
        second = {pod["spec"]["nodeName"] for pod in until_pods(admin, STUDENT_A, "m2", 2)}
        assert len(second) == 2 and second <= nodes, (second, nodes)
        setup[STUDENT_A].ok("DELETE", f"/api/training/{STUDENT_A}/m2")
    finally:
        subprocess.run([cluster.SCRIPT, "fleet", "0"], check=True, capture_output=True, timeout=300)

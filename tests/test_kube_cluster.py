"""cgu-lab on a real one-node Kubernetes: real pods, real JupyterLab, real volumes.

The cluster is scripts/kube-cluster.sh's (a kubelet, containerd and runc on this
machine; `make test` starts it when the host can run it, i.e. as root); the
images are `make images`' (scripts/kube-images.sh), imported into its
containerd. The controller runs on the host as `cgu-lab controller --backend
kubernetes`, with a token of the shipped ServiceAccount (only the shipped RBAC),
the CRDs of tests/kube_crds.py (the upstream ones when at hand, written with
field validation Strict), notebooks reached by pod IP (the host has no cluster
DNS) and calling back to the controller at the host's end of the cluster's veth.

Through the REST API and the controller's proxy, as a browser would (each
notebook on its own origin, `<owner>--<name>.localhost`, sent as the Host
header to 127.0.0.1): a notebook starts as a pod, JupyterLab answers, a kernel
runs a cell as the notebook user, the pod reaches the controller; a file
survives stop and start on its volume; deleting removes everything. A pod
deleted behind the controller's back is shown stopped within 10 s, never
running while dead. GPU notebooks schedule against the node's advertised GPUs
and wait Pending, with the scheduler's reason on the page, when none is free;
the namespace's ResourceQuota is counted and enforced by the cluster itself.
And the administrator's path: the controller image deployed with `kubectl apply
-k` of deploy/kubernetes/overlays/example against PostgreSQL, used by a student
through the controller's Service, with cluster DNS and kube-proxy.

Skipped, with the reason, where the cluster is not running; in CI (CI=true) on a
host that can run it, a missing cluster or image fails instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import secrets
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pytest
import websockets
import yaml

from .harness import (
    PASSWORD,
    Controller,
    Session,
    execute_request,
    overfill_memory,
    reachable_dir,
)
from .test_kubernetes_backend import Admin, install, token_kubeconfig

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "kube-cluster.sh"
RUN = secrets.token_hex(2)  # namespaces of a reused cluster stay Terminating a while
USER_PREFIX, GROUP_PREFIX = f"k{RUN}u-", f"k{RUN}g-"
# the in-cluster controller's (test_the_admins_path...)
DEPLOYED_USER_PREFIX, DEPLOYED_GROUP_PREFIX = f"d{RUN}u-", f"d{RUN}g-"
DATABASE_NAMESPACE = f"d{RUN}-database"
OURS = (USER_PREFIX, GROUP_PREFIX, DEPLOYED_USER_PREFIX, DEPLOYED_GROUP_PREFIX, DATABASE_NAMESPACE)
STUDENT = "ana"
TEACHER = "kteach"
NAMESPACE = f"{USER_PREFIX}{STUDENT}"
CPU = 0.25  # the test node may have 2 CPUs, and requests are what a pod holds
# How many starts the start -> JupyterLab timing takes the median of.
TIMED_STARTS = int(os.environ.get("CGU_KUBE_TIMED_STARTS", "1"))


def _lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _cluster() -> tuple[dict[str, str] | None, str]:
    """The cluster's settings and the images' names, or None and why not."""
    can = subprocess.run([SCRIPT, "can-run"], capture_output=True, text=True, check=False)
    if can.returncode != 0:
        return None, f"this host cannot run the test cluster: {can.stdout.strip()}"
    if subprocess.run([SCRIPT, "status"], capture_output=True, check=False).returncode != 0:
        return None, "the test cluster is not running (scripts/kube-cluster.sh start)"
    found = _lines(subprocess.run([SCRIPT, "env"], capture_output=True, text=True).stdout)
    images = Path(found["CGU_KUBE_IMAGES"]) / "images.env"
    if not images.is_file():
        return None, "the images are not built (make images)"
    found.update(_lines(images.read_text()))
    return found, ""


CLUSTER, WHY_NOT = _cluster()
if CLUSTER is None and os.environ.get("CI") == "true" and "cannot run" not in WHY_NOT:
    # CI on a capable host: fail, do not skip
    pytestmark = [pytest.mark.integration, pytest.mark.end_to_end]
else:
    pytestmark = [
        pytest.mark.integration,
        pytest.mark.end_to_end,
        pytest.mark.skipif(CLUSTER is None, reason=WHY_NOT),
    ]


@pytest.fixture(scope="module")
def kube():
    if CLUSTER is None:
        pytest.fail(WHY_NOT)
    return CLUSTER


@pytest.fixture(scope="module")
def admin(kube):
    """The shipped base manifests (less the in-cluster controller's Deployment: the
    controller under test runs on the host) and the CRDs, as cluster admin."""
    api = install(kube["CGU_KUBE_KUBECONFIG"], skip=("Deployment",))
    yield api
    # What this run made goes (pods included), so a reused cluster does not fill up.
    namespaces = api.resource("v1", "Namespace")
    for namespace in namespaces.get().to_dict()["items"]:
        if namespace["metadata"]["name"].startswith(OURS):
            namespaces.delete(name=namespace["metadata"]["name"])
    api.api_client.close()


def host_controller(kube, admin, tmp_path_factory, env: dict[str, str]) -> Controller:
    """A controller on the host for this cluster (pods call it back at the host's end of
    the cluster's veth), as the cluster's own `cgu-lab-controller` account; `env` adds a
    module's own settings. The caller starts it, stops it and removes `ctl.data_dir.parent`."""
    kubeconfig = token_kubeconfig(
        kube["CGU_KUBE_KUBECONFIG"],
        admin,
        "cgu-lab-controller",
        tmp_path_factory.mktemp("kube") / "controller.kubeconfig",
    )
    ctl = Controller(
        reachable_dir() / "data",
        backend="kubernetes",
        env={
            "CGU_LAB_HOST": "0.0.0.0",  # noqa: S104
            "CGU_LAB_KUBE_KUBECONFIG": kubeconfig,
            # namespaces under this module's prefixes, which its admin fixture cleans up
            "CGU_LAB_KUBE_USER_PREFIX": USER_PREFIX,
            "CGU_LAB_KUBE_GROUP_PREFIX": GROUP_PREFIX,
            "CGU_LAB_KUBE_ENDPOINT": "pod-ip",
            # the host's end of the veth, where its requests come from (kube-router enforces
            # NetworkPolicies on this cluster)
            "CGU_LAB_KUBE_CONTROLLER_CIDRS": f"{kube['CGU_KUBE_HOST_IP']}/32",
            "CGU_LAB_KUBE_IMAGE_PULL_POLICY": "Never",
            "CGU_LAB_KUBE_STORAGE_CLASS": kube["CGU_KUBE_STORAGE_CLASS"],
            "CGU_LAB_KUBE_HOME_SIZE": "1Gi",
            "CGU_LAB_KUBE_STORAGE_SIZE": "1Gi",
            "CGU_LAB_KUBE_START_TIMEOUT": "240",
            "CGU_LAB_KUBE_STOP_TIMEOUT": "60",
            "CGU_LAB_START_TIMEOUT": "300",
            **env,
        },
    )
    ctl.env["CGU_LAB_KUBE_CONTROLLER_URL"] = f"http://{kube['CGU_KUBE_HOST_IP']}:{ctl.port}"
    return ctl


@pytest.fixture(scope="module")
def controller(kube, admin, tmp_path_factory):
    ctl = host_controller(
        kube,
        admin,
        tmp_path_factory,
        {
            "CGU_LAB_KUBE_INSTALLATION": f"test-{RUN}",
            # what a user's first storage page request runs its tool pod with
            "CGU_LAB_KUBE_FILES_IMAGE": kube["CGU_NOTEBOOK_IMAGE"],
            "CGU_LAB_KUBE_TOOL_POD_IDLE": "3",
            "CGU_LAB_CULL_INTERVAL": "3",  # the culler's pass keeps last-activity current
        },
    )
    ctl.create_user("kadmin", "admin")
    ctl.create_user(STUDENT)
    ctl.create_user(TEACHER, "teacher")
    ctl.start()
    yield ctl
    ctl.stop()
    shutil.rmtree(ctl.data_dir.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def ana(controller):
    with controller.client(STUDENT) as session:
        yield session


def pod_of(admin: Admin, name: str) -> dict | None:
    return admin.get("v1", "Pod", f"{name}-0", NAMESPACE)


async def run_code(session, name: str, code: str) -> str:
    """Run `code` in a new kernel of notebook ana/<name>; its output."""
    kernel = session.ok("POST", f"/notebook/{STUDENT}/{name}/api/kernels", 201, json={})
    url, headers, connect = session.notebook_socket(
        f"/notebook/{STUDENT}/{name}/api/kernels/{kernel['id']}/channels"
    )
    connect["host"] = session.base_url.host  # the controller's address (a Service's too)
    async with websockets.connect(url, additional_headers=headers, **connect) as ws:
        msg_id, message = execute_request(code, STUDENT)
        await ws.send(message)
        output = ""
        while True:
            reply = json.loads(await asyncio.wait_for(ws.recv(), 120))
            if reply["parent_header"].get("msg_id") != msg_id:
                continue
            if reply["msg_type"] == "stream":
                output += reply["content"]["text"]
            elif reply["msg_type"] == "error":
                output += f"{reply['content']['ename']}: {reply['content']['evalue']}"
            elif reply["msg_type"] == "status" and reply["content"]["execution_state"] == "idle":
                return output


def start(session, name: str, owner: str = STUDENT) -> float:
    """Start <owner>/<name> and wait until JupyterLab answers through the proxy; seconds taken."""
    began = time.monotonic()
    started = session.ok("POST", f"/api/notebooks/{owner}/{name}/start?wait=true", 202)
    assert started["state"] == "running", started["message"]
    lab = session.get(f"/notebook/{owner}/{name}/lab")
    assert lab.status_code == 200, lab.text[:500]
    return time.monotonic() - began


def tool_pods(admin: Admin, owner: str) -> list[str]:
    """The tool pods (kube_pod_tool) in the owner's namespace that are not going away."""
    found = admin.resource("v1", "Pod").get(
        namespace=f"{USER_PREFIX}{owner}", label_selector="cgu-lab.io/component=files"
    )
    return [
        pod["metadata"]["name"]
        for pod in found.to_dict()["items"]
        if not pod["metadata"].get("deletionTimestamp")
    ]


def state_of(session, name: str) -> dict:
    return session.ok("GET", f"/api/notebooks/{STUDENT}/{name}")


def test_a_notebook_runs_as_a_pod_from_start_to_delete(kube, admin, controller, ana):
    image = kube["CGU_NOTEBOOK_IMAGE"]
    ana.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "nb1", "image": image, "cpu": CPU, "memory": "1Gi"},
    )
    took = start(ana, "nb1")
    print(f"\nnotebook start -> JupyterLab through the proxy: {took:.1f} s")

    pod = pod_of(admin, "nb1")
    assert pod["status"]["phase"] == "Running" and pod["spec"]["nodeName"] == kube["CGU_KUBE_NODE"]
    assert pod["spec"]["containers"][0]["image"] == image
    assert pod["spec"]["securityContext"]["runAsUser"] == 1000
    claim = admin.get("v1", "PersistentVolumeClaim", "nb1-home", NAMESPACE)
    assert claim["status"]["phase"] == "Bound"

    # JupyterLab's own API on the notebook's origin: contents, then a kernel.
    ana.ok(
        "PUT",
        f"/notebook/{STUDENT}/nb1/api/contents/hello.txt",
        201,
        json={"type": "file", "format": "text", "content": "kept on the volume"},
    )
    code = (
        "import os, urllib.request\n"
        "print(os.getuid(), os.getgid(), open('hello.txt').read())\n"
        "url = os.environ['CGU_CONTROLLER_URL'] + '/api/health'\n"
        "print('controller', urllib.request.urlopen(url, timeout=10).status)\n"
    )
    output = asyncio.run(run_code(ana, "nb1", code))
    assert "1000 100 kept on the volume" in output, output
    assert "controller 200" in output, output  # the pod calls the controller back

    # A kernel over the pod's memory limit: the container's own count of OOM kills, which
    # the out-of-memory notice reads, rises; the server (the container's first process)
    # carries on.
    resources = f"/notebook/{STUDENT}/nb1/cgu-lab/resources"
    assert ana.ok("GET", resources)["memory"]["oom_kills"] == 0
    kernel = ana.ok("POST", f"/notebook/{STUDENT}/nb1/api/kernels", 201, json={})["id"]
    asyncio.run(overfill_memory(ana, STUDENT, "nb1", kernel, 2))
    deadline = time.monotonic() + 60
    while not ana.ok("GET", resources)["memory"]["oom_kills"]:
        assert time.monotonic() < deadline, "the kill was not counted in 60 s"
        time.sleep(1)
    assert pod_of(admin, "nb1")["status"]["containerStatuses"][0]["restartCount"] == 0
    ana.ok("DELETE", f"/notebook/{STUDENT}/nb1/api/kernels/{kernel}", 204)

    stopped = ana.ok("POST", f"/api/notebooks/{STUDENT}/nb1/stop?wait=true", 202)
    assert stopped["state"] == "stopped", stopped["message"]
    assert pod_of(admin, "nb1") is None
    assert admin.get("v1", "PersistentVolumeClaim", "nb1-home", NAMESPACE)  # the home stays

    start(ana, "nb1")
    again = ana.ok("GET", f"/notebook/{STUDENT}/nb1/api/contents/hello.txt")
    assert again["content"] == "kept on the volume"

    ana.ok("POST", f"/api/notebooks/{STUDENT}/nb1/stop?wait=true", 202)
    ana.ok("DELETE", f"/api/notebooks/{STUDENT}/nb1")
    assert ana.get(f"/api/notebooks/{STUDENT}/nb1").status_code == 404
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        gone = [
            admin.get("kubeflow.org/v1", "Notebook", "nb1", NAMESPACE),
            admin.get("apps/v1", "StatefulSet", "nb1", NAMESPACE),
            admin.get("v1", "PersistentVolumeClaim", "nb1-home", NAMESPACE),
        ]
        if gone == [None, None, None]:
            break
        time.sleep(0.5)
    assert gone == [None, None, None], gone


def test_a_pod_deleted_behind_the_controllers_back_is_never_shown_running(admin, kube, ana):
    ana.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "nb2", "image": kube["CGU_NOTEBOOK_IMAGE"], "cpu": CPU, "memory": "1Gi"},
    )
    start(ana, "nb2")
    uid = pod_of(admin, "nb2")["metadata"]["uid"]
    admin.resource("v1", "Pod").delete(name="nb2-0", namespace=NAMESPACE)
    deleted = time.monotonic()
    seen = []
    while time.monotonic() - deleted < 10:
        seen.append(state_of(ana, "nb2"))
        if seen[-1]["state"] == "stopped":
            break
        time.sleep(0.25)
    shown = seen[-1]
    assert shown["state"] == "stopped", [s["state"] for s in seen]
    assert "stopped by itself" in shown["message"], shown["message"]
    print(f"\nshown stopped {time.monotonic() - deleted:.1f} s after its pod was deleted")
    # ... and it stays so: the StatefulSet does not bring a server back behind the page.
    for _ in range(10):
        assert state_of(ana, "nb2")["state"] == "stopped"
        pod = pod_of(admin, "nb2")
        assert (
            pod is None or pod["metadata"]["uid"] == uid or pod["metadata"].get("deletionTimestamp")
        )
        time.sleep(0.5)
    ana.ok("DELETE", f"/api/notebooks/{STUDENT}/nb2")


@pytest.mark.timeout(900)
def test_templates_lab_files_and_submissions_are_copied_by_pods(admin, kube, controller, ana):
    """Files move between homes and the controller's store through a short-lived pod per
    copy (kube_files), as the notebooks' user: a template is published from a teacher's
    notebook and seeds a student's new notebook before its first start, lab files land in
    ~/courses of the student's running notebook, a submission packs the student's files.
    No copying pod is left behind."""
    image = kube["CGU_NOTEBOOK_IMAGE"]
    with controller.client("kadmin") as kadmin, controller.client(TEACHER) as prof:
        kadmin.ok(
            "PUT",
            "/api/environments/default",
            json={"display_name": "Python 3", "image": image, "is_default": True},
        )
        kadmin.ok("POST", "/api/groups", 201, json={"name": "kc"})
        kadmin.ok("PUT", f"/api/groups/kc/members/{TEACHER}", json={"manager": True})
        kadmin.ok("PUT", f"/api/groups/kc/members/{STUDENT}", json={"manager": False})
        prof.ok("POST", "/api/notebooks", 201, json={"name": "prep", "cpu": CPU, "memory": "1Gi"})
        start(prof, "prep", owner=TEACHER)
        contents = f"/notebook/{TEACHER}/prep/api/contents"
        for folder in ("hw1", "data"):
            prof.ok("PUT", f"{contents}/{folder}", 201, json={"type": "directory"})
        for path, text in (("hw1/task.txt", "week one"), ("data/points.csv", "x,y\n1,2\n")):
            prof.ok(
                "PUT",
                f"{contents}/{path}",
                201,
                json={"type": "file", "format": "text", "content": text},
            )

        published = prof.ok(
            "POST",
            "/api/templates",
            201,
            json={
                "notebook": "prep",
                "name": "klab",
                "visibility": "group",
                "group": "kc",
                "paths": ["hw1", "data"],
                "cpu": CPU,
                "memory": "1Gi",
            },
        )
        assert published["latest"]["files"] == 2

        ana.ok("POST", "/api/notebooks", 201, json={"template": "klab", "start": True})
        deadline = time.monotonic() + 240
        while (nb := state_of(ana, "klab"))["state"] != "running":
            assert nb["state"] != "stopped" or not nb["message"], nb["message"]
            assert time.monotonic() < deadline, f"ana/klab did not run: {nb}"
            time.sleep(0.5)
        seeded = ana.ok("GET", f"/notebook/{STUDENT}/klab/api/contents/hw1/task.txt")
        assert seeded["content"] == "week one"

        deployment = prof.ok(
            "POST",
            "/api/groups/kc/deployments",
            202,
            json={"notebook": "prep", "path": "hw1", "destination": "week1", "title": "Week 1"},
        )
        done = wait_for(
            "the deployment",
            lambda: (
                (d := prof.ok("GET", f"/api/deployments/{deployment['id']}"))["state"] != "running"
                and d
            ),
        )
        assert done["state"] == "done", done
        assert done["report"] == {STUDENT: {"copied": 1, "skipped": 0, "conflicts": []}}
        pushed = ana.ok("GET", f"/notebook/{STUDENT}/klab/api/contents/courses/kc/week1/task.txt")
        assert pushed["content"] == "week one"  # in the running notebook, at once

        task = prof.ok("POST", "/api/groups/kc/assignments", 201, json={"name": "khw"})
        submitted = ana.ok(
            "POST",
            f"/api/assignments/{task['id']}/submissions",
            201,
            json={"notebook": "klab", "paths": ["hw1"]},
        )
        assert submitted["files"] == 1 and len(submitted["content_hash"]) == 64

        for owner in (STUDENT, TEACHER):
            wait_for("the tool pods to go", lambda o=owner: not tool_pods(admin, o), 60)
        for session, owner, name in ((prof, TEACHER, "prep"), (ana, STUDENT, "klab")):
            session.ok("POST", f"/api/notebooks/{owner}/{name}/stop?wait=true", 202)


@pytest.mark.timeout(600)
def test_the_storage_page_works_with_no_notebook_running(admin, kube, controller):
    """Personal storage from the portal on Kubernetes (kube_storage_files): a user who never
    had a notebook makes a folder, uploads a file in chunks, lists, zips and deletes, each
    request a tool pod with the user's storage claim; a notebook started afterwards sees the
    file at ~/storage; no tool pod is left behind; course storage without an NFS share is
    refused by name."""
    import io
    import zipfile

    user = "kstore"
    controller.create_user(user)
    payload = b"x,y\n" + b"1,2\n" * 40_000  # 160 KB, two chunks
    with controller.client(user) as me:
        overview = me.ok("GET", "/api/storage")
        assert {(a["kind"], a["name"]) for a in overview["areas"]} >= {("users", user)}
        assert "volume" in overview["enforcement"]
        base = f"/api/storage/users/{user}"
        me.ok("POST", f"{base}/folders", 201, json={"path": "data"})
        half = len(payload) // 2
        for offset, chunk in ((0, payload[:half]), (half, payload[half:])):
            sent = me.ok(
                "PUT",
                f"{base}/upload",
                params={
                    "path": "data/points.csv",
                    "upload": "kube-up-1",
                    "offset": offset,
                    "total": len(payload),
                },
                content=chunk,
                headers={"Content-Type": "application/octet-stream"},
            )
        assert sent == {"received": len(payload), "done": True}
        # the folder and both chunks ran in one warm pod
        assert len(tool_pods(admin, user)) == 1
        listed = me.ok("GET", base, params={"path": "data"})
        assert [(e["name"], e["size"]) for e in listed["entries"]] == [("points.csv", len(payload))]
        zipped = me.get(f"{base}/zip", params={"path": "data"})
        assert zipped.status_code == 200, zipped.text[:300]
        with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
            assert archive.read("data/points.csv") == payload
        refused = me.get("/api/storage/courses/nocourse")
        assert refused.status_code in (403, 404, 501) and refused.json()["message"]

        body = {"name": "st", "image": kube["CGU_NOTEBOOK_IMAGE"], "cpu": CPU, "memory": "1Gi"}
        me.ok("POST", "/api/notebooks", 201, json=body)
        start(me, "st", owner=user)
        seen = me.ok("GET", f"/notebook/{user}/st/api/contents/storage/data/points.csv")
        assert seen["size"] == len(payload)
        me.ok("POST", f"/api/notebooks/{user}/st/stop?wait=true", 202)
        me.ok("DELETE", f"{base}/files", params={"path": "data"})
        assert me.ok("GET", base)["entries"] == []
    wait_for("the tool pods to go", lambda: not tool_pods(admin, user), 60)


@pytest.mark.timeout(600)
def test_shares_activity_resize_and_the_start_page_on_real_pods(admin, kube, controller, ana):
    """A read-only share reads but never writes a real pod's files; the culler keeps
    Kubeflow's last-activity annotation current while a kernel works (Kubeflow's own
    culler reads only that); a resize makes a new pod with the new limits; a stopped
    notebook sends the browser to its start page, which starts a pod again."""
    image = kube["CGU_NOTEBOOK_IMAGE"]
    ana.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "rs", "image": image, "cpu": CPU, "memory": "1Gi"},
    )
    start(ana, "rs")
    contents = f"/notebook/{STUDENT}/rs/api/contents"
    ana.ok(
        "PUT",
        f"{contents}/notes.txt",
        201,
        json={"type": "file", "format": "text", "content": "mine"},
    )
    share = ana.ok(
        "POST",
        f"/api/notebooks/{STUDENT}/rs/shares",
        201,
        json={"grantee": TEACHER, "access": "read"},
    )
    with controller.client(TEACHER) as prof:
        assert prof.ok("GET", f"{contents}/notes.txt")["content"] == "mine"
        refused = prof.put(
            f"{contents}/notes.txt", json={"type": "file", "format": "text", "content": "theirs"}
        )
        assert refused.status_code == 403, refused.text
        ana.ok("DELETE", f"/api/notebooks/{STUDENT}/rs/shares/{share['id']}")
        assert wait_for(
            "the revoked share to close",
            lambda: (
                prof.get(f"{contents}/notes.txt").status_code == 404
            ),  # "you no longer have access"
        )

    # A kernel at work: the controller's culler pass records it where Kubeflow looks.
    assert "42" in asyncio.run(run_code(ana, "rs", "print(6 * 7)"))
    stamped = wait_for(
        "the last-activity annotation",
        lambda: (
            admin.get("kubeflow.org/v1", "Notebook", "rs", NAMESPACE)["metadata"].get("annotations")
            or {}
        ).get("notebooks.kubeflow.org/last-activity"),
        timeout=60,
    )
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", stamped), stamped

    before = pod_of(admin, "rs")["metadata"]["uid"]
    resized = ana.ok("PATCH", f"/api/notebooks/{STUDENT}/rs?wait=true", json={"cpu": 0.5})
    assert resized["state"] == "running" and resized["cpu_milli"] == 500, resized
    pod = pod_of(admin, "rs")
    assert pod["metadata"]["uid"] != before
    assert pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"
    assert ana.ok("GET", f"{contents}/notes.txt")["content"] == "mine"  # the home came along

    ana.ok("POST", f"/api/notebooks/{STUDENT}/rs/stop?wait=true", 202)
    page = ana.get(f"/notebook/{STUDENT}/rs/lab", headers={"Accept": "text/html"})
    assert page.status_code == 303 and "/notebook/auto-start/" in page.headers["location"]
    start_page = ana.get(page.headers["location"])
    assert start_page.status_code == 200 and "Start notebook" in start_page.text
    start(ana, "rs")  # what its Start button does
    ana.ok("POST", f"/api/notebooks/{STUDENT}/rs/stop?wait=true", 202)


# Code in a notebook: try to open (host, 8888) until `want` ("reached" or "refused") comes,
# for at most 45 s; prints the outcome and after how long. One kernel for the whole wait.
PROBE = """
import socket, time
began = time.monotonic()
while True:
    try:
        socket.create_connection(({host!r}, 8888), timeout=3).close()
        seen = "reached"
    except OSError as error:
        seen = "refused (" + type(error).__name__ + ")"
    if seen.startswith({want!r}) or time.monotonic() - began > 45:
        break
    time.sleep(0.5)
print(seen, "after", round(time.monotonic() - began), "s")
"""


def test_another_students_notebook_is_out_of_reach_of_a_students_code(admin, kube, controller, ana):
    """NetworkPolicies are enforced on this cluster (kube-router, scripts/kube-cluster.sh),
    so the policy is proven by its effect: code in one student's notebook cannot open
    another's server (which, in ingress-header mode, believes whoever reaches it), while
    the controller, outside the cluster and admitted by its address, reaches both."""
    image = kube["CGU_NOTEBOOK_IMAGE"]
    other = f"{USER_PREFIX}{TEACHER}"
    with controller.client(TEACHER) as prof:
        for session, owner in ((ana, STUDENT), (prof, TEACHER)):
            session.ok(
                "POST",
                "/api/notebooks",
                201,
                json={"name": "np", "image": image, "cpu": CPU, "memory": "512Mi"},
            )
            start(session, "np", owner)  # through the controller's proxy: admitted
        target = admin.get("v1", "Pod", "np-0", other)["status"]["podIP"]

        probe = PROBE.format(host=target, want="refused")
        assert asyncio.run(run_code(ana, "np", probe)).startswith("refused"), target

        # The policy refuses it, not the network: without it the port answers.
        policies = admin.resource("networking.k8s.io/v1", "NetworkPolicy")
        kept = admin.get("networking.k8s.io/v1", "NetworkPolicy", "cgu-lab-notebooks", other)
        policies.delete(name="cgu-lab-notebooks", namespace=other)
        try:
            probe = PROBE.format(host=target, want="reached")
            assert asyncio.run(run_code(ana, "np", probe)).startswith("reached")
        finally:
            policies.create(
                body={
                    **kept,
                    "metadata": {
                        "name": "cgu-lab-notebooks",
                        "namespace": other,
                        "labels": kept["metadata"].get("labels", {}),
                    },
                },
                namespace=other,
            )
        probe = PROBE.format(host=target, want="refused")
        assert asyncio.run(run_code(ana, "np", probe)).startswith("refused")

        for session, owner in ((ana, STUDENT), (prof, TEACHER)):
            session.ok("POST", f"/api/notebooks/{owner}/np/stop?wait=true", 202)
            session.ok("DELETE", f"/api/notebooks/{owner}/np")


def test_an_idle_notebook_is_culled_and_its_pod_goes(admin, kube, controller, ana):
    """The idle culler stops a real pod's notebook: warned, then stopped with the reason,
    the pod gone and the home kept."""
    ana.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "idle", "image": kube["CGU_NOTEBOOK_IMAGE"], "cpu": CPU, "memory": "1Gi"},
    )
    start(ana, "idle")
    with controller.client("kadmin") as kadmin:
        kadmin.ok("PUT", "/api/culling/policy", json={"idle_minutes": 0.3, "warn_minutes": 0.15})
        try:
            stopped = wait_for(
                "the idle notebook to be culled",
                lambda: (nb := state_of(ana, "idle"))["state"] == "stopped" and nb,
                timeout=120,
            )
        finally:
            kadmin.ok("PUT", "/api/culling/policy", json={"idle_minutes": 60, "warn_minutes": 10})
    assert "idle" in stopped["message"], stopped
    assert wait_for("the pod to go", lambda: pod_of(admin, "idle") is None, timeout=60)
    assert admin.get("v1", "PersistentVolumeClaim", "idle-home", NAMESPACE)


@pytest.mark.skipif(TIMED_STARTS < 2, reason="set CGU_KUBE_TIMED_STARTS=5 to time starts")
def test_start_to_jupyterlab_timing(kube, ana):
    """With the platform's default CPU (1): JupyterLab's own start is CPU-bound (with a
    limit of 0.25 CPU it takes ~10 s to listen)."""
    ana.ok(
        "POST",
        "/api/notebooks",
        201,
        json={"name": "timed", "image": kube["CGU_NOTEBOOK_IMAGE"], "cpu": 1, "memory": "1Gi"},
    )
    times = []
    for _ in range(TIMED_STARTS):
        times.append(start(ana, "timed"))
        ana.ok("POST", f"/api/notebooks/{STUDENT}/timed/stop?wait=true", 202)
    print(
        f"\nstart -> JupyterLab, {len(times)} starts: median {statistics.median(times):.1f} s "
        f"(min {min(times):.1f}, max {max(times):.1f})"
    )
    ana.ok("DELETE", f"/api/notebooks/{STUDENT}/timed")


def wait_for(what: str, check, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def test_gpu_notebooks_are_scheduled_against_the_nodes_gpus(admin, kube, controller, ana):
    """The node advertises nvidia.com/gpu (scripts/kube-cluster.sh): a GPU notebook is
    scheduled against it, waits Pending with the scheduler's reason on its progress while
    another workload holds every GPU, runs once one is free, and the namespace's quota is
    counted and enforced by the API server itself."""
    gpus = dict(pair.split("=") for pair in kube["CGU_KUBE_GPUS"].split(","))
    assert int(gpus["nvidia.com/gpu"]) >= 1
    with controller.client("kadmin") as root:
        root.ok("PUT", "/api/gpu-types/premium", json={"resource_name": "nvidia.com/gpu"})
        root.ok("PUT", f"/api/users/{STUDENT}/quota", json={"gpus": {"premium": 1}})
    hog = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"gpu-hog-{RUN}", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "hog",
                    "image": "localhost/cgu-kube/pause:1",
                    "imagePullPolicy": "Never",
                    "resources": {"limits": {"nvidia.com/gpu": gpus["nvidia.com/gpu"]}},
                }
            ],
            "terminationGracePeriodSeconds": 0,
        },
    }
    admin.create(hog)
    wait_for(
        "the other workload runs",
        lambda: (
            (admin.get("v1", "Pod", hog["metadata"]["name"], "default") or {})
            .get("status", {})
            .get("phase")
            == "Running"
        ),
    )
    ana.ok(
        "POST",
        "/api/notebooks",
        201,
        json={
            "name": "gpu1",
            "image": kube["CGU_NOTEBOOK_IMAGE"],
            "cpu": CPU,
            "memory": "1Gi",
            "gpu_type": "premium",
            "gpus": 1,
        },
    )
    ana.ok("POST", f"/api/notebooks/{STUDENT}/gpu1/start", 202)
    reason = ""
    with ana.stream("GET", f"/api/notebooks/{STUDENT}/gpu1/events", timeout=120) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if "Insufficient nvidia.com/gpu" in event.get("message", ""):
                    reason = event["message"]
                    break
                assert not event["done"], event
    assert reason.startswith("Waiting for a node: 0/1 nodes are available"), reason
    pod = pod_of(admin, "gpu1")
    assert pod["status"]["phase"] == "Pending"
    assert state_of(ana, "gpu1")["state"] == "starting"

    admin.resource("v1", "Pod").delete(name=hog["metadata"]["name"], namespace="default")
    wait_for("the GPU notebook runs", lambda: state_of(ana, "gpu1")["state"] == "running", 180)
    pod = pod_of(admin, "gpu1")
    assert pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert pod["spec"]["nodeName"] == kube["CGU_KUBE_NODE"]

    # kube-controller-manager counts the quota; admission refuses what exceeds it.
    used = wait_for(
        "the quota's use is counted",
        lambda: (
            (admin.get("v1", "ResourceQuota", "kf-resource-quota", NAMESPACE).get("status") or {})
            .get("used", {})
            .get("requests.nvidia.com/gpu")
            == "1"
        ),
    )
    assert used
    extra = json.loads(json.dumps(hog))
    extra["metadata"] = {"name": "one-more-gpu", "namespace": NAMESPACE}
    extra["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1"
    with pytest.raises(Exception) as refused:
        admin.create(extra)
    assert "exceeded quota: kf-resource-quota" in str(refused.value)

    ana.ok("POST", f"/api/notebooks/{STUDENT}/gpu1/stop?wait=true", 202)
    ana.ok("DELETE", f"/api/notebooks/{STUDENT}/gpu1")


def kubectl(kube, *args: str, stdin: str | None = None, timeout: float = 300) -> str:
    done = subprocess.run(
        ["kubectl", "--kubeconfig", kube["CGU_KUBE_KUBECONFIG"], *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def test_the_admins_path_kubectl_apply_k_with_postgresql(kube, admin):
    """What deploy/README.md tells an administrator, done in the test cluster: the
    controller image deployed by `kubectl apply -k deploy/kubernetes/overlays/example`
    (only the image, the URLs and the storage class changed, by an overlay of it) against
    PostgreSQL; the first administrator's password in its log; a student logging in
    through the controller's Service, starting a notebook, reaching JupyterLab through the
    proxy (the controller finds the notebook's Service by cluster DNS) and the notebook
    calling the controller by its Service name."""
    service_ip = kube["CGU_KUBE_SERVICE_CIDR"].rsplit(".", 1)[0] + ".50"
    database = secrets.token_urlsafe(12)
    # The school's database (here a pod with Debian's PostgreSQL).
    kubectl(
        kube,
        "apply",
        "--server-side",
        "--validate=strict",
        "-f",
        "-",
        stdin=yaml.safe_dump_all(
            [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": DATABASE_NAMESPACE}},
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": "postgres",
                        "namespace": DATABASE_NAMESPACE,
                        "labels": {"app": "postgres"},
                    },
                    "spec": {
                        "containers": [
                            {
                                "name": "postgres",
                                "image": kube["CGU_POSTGRES_IMAGE"],
                                "imagePullPolicy": "Never",
                                "env": [
                                    {"name": "POSTGRES_USER", "value": "cgulab"},
                                    {"name": "POSTGRES_DB", "value": "cgulab"},
                                    {"name": "POSTGRES_PASSWORD", "value": database},
                                ],
                                "ports": [{"containerPort": 5432}],
                                "readinessProbe": {"tcpSocket": {"port": 5432}, "periodSeconds": 2},
                                "volumeMounts": [
                                    {"name": "data", "mountPath": "/var/lib/postgresql/data"}
                                ],
                            }
                        ],
                        "volumes": [{"name": "data", "emptyDir": {}}],
                    },
                },
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": "postgres", "namespace": DATABASE_NAMESPACE},
                    "spec": {"selector": {"app": "postgres"}, "ports": [{"port": 5432}]},
                },
            ]
        ),
    )
    # As deploy/README.md says: the namespace, the database Secret, then apply -k.
    kubectl(
        kube,
        "apply",
        "--server-side",
        "-f",
        "-",
        stdin="""
apiVersion: v1
kind: Namespace
metadata: {name: cgu-lab}
""",
    )
    url = f"postgresql://cgulab:{database}@postgres.{DATABASE_NAMESPACE}.svc.cluster.local:5432/cgulab"
    kubectl(kube, "-n", "cgu-lab", "delete", "secret", "cgu-lab-database", "--ignore-not-found")
    kubectl(
        kube,
        "-n",
        "cgu-lab",
        "create",
        "secret",
        "generic",
        "cgu-lab-database",
        f"--from-literal=url={url}",
    )
    school = ROOT / ".build" / f"kube-deploy-{RUN}"
    school.mkdir(parents=True, exist_ok=True)
    env = {
        "CGU_LAB_PUBLIC_URL": f"http://{service_ip}:8000",
        "CGU_LAB_NOTEBOOK_DOMAIN": "localhost",
        "CGU_LAB_SECURE_COOKIES": "0",
        "CGU_LAB_KUBE_STORAGE_CLASS": kube["CGU_KUBE_STORAGE_CLASS"],
        "CGU_LAB_KUBE_HOME_SIZE": "1Gi",
        "CGU_LAB_KUBE_USER_PREFIX": DEPLOYED_USER_PREFIX,
        "CGU_LAB_KUBE_GROUP_PREFIX": DEPLOYED_GROUP_PREFIX,
        "CGU_LAB_KUBE_START_TIMEOUT": "240",
    }
    # The shipped policy admits users through the ingress controller's namespace; this test
    # plays them from the host instead, so the school's overlay admits the host's address
    # as a school admits its own load balancer (kube-router enforces NetworkPolicies here).
    (school / "host-access.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": {"name": "cgu-lab-controller-from-host", "namespace": "cgu-lab"},
                "spec": {
                    "podSelector": {
                        "matchLabels": {"app.kubernetes.io/name": "cgu-lab-controller"}
                    },
                    "policyTypes": ["Ingress"],
                    "ingress": [
                        {
                            "from": [{"ipBlock": {"cidr": f"{kube['CGU_KUBE_HOST_IP']}/32"}}],
                            "ports": [{"protocol": "TCP", "port": 8000}],
                        }
                    ],
                },
            }
        )
    )
    (school / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [
                    os.path.relpath(ROOT / "deploy/kubernetes/overlays/example", school),
                    "host-access.yaml",
                ],
                "images": [
                    {
                        "name": "registry.example.edu/cgu-lab/controller",
                        "newName": kube["CGU_CONTROLLER_IMAGE"].rsplit(":", 1)[0],
                        "newTag": kube["CGU_CONTROLLER_IMAGE"].rsplit(":", 1)[1],
                    }
                ],
                "patches": [
                    {
                        "target": {"kind": "Deployment", "name": "cgu-lab-controller"},
                        "patch": yaml.safe_dump(
                            {
                                "apiVersion": "apps/v1",
                                "kind": "Deployment",
                                "metadata": {"name": "cgu-lab-controller", "namespace": "cgu-lab"},
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "containers": [
                                                {
                                                    "name": "controller",
                                                    "env": [
                                                        {"name": k, "value": v}
                                                        for k, v in env.items()
                                                    ],
                                                }
                                            ]
                                        }
                                    }
                                },
                            }
                        ),
                    },
                    {
                        "target": {"kind": "Service", "name": "cgu-lab-controller"},
                        "patch": yaml.safe_dump(
                            [{"op": "add", "path": "/spec/clusterIP", "value": service_ip}]
                        ),
                    },
                ],
            }
        )
    )
    # The Service made by the other tests' install() has a cluster IP of its own.
    kubectl(kube, "-n", "cgu-lab", "delete", "service", "cgu-lab-controller", "--ignore-not-found")
    try:
        kubectl(
            kube,
            "apply",
            "--server-side",
            "--force-conflicts",
            "--validate=strict",
            "-k",
            str(school),
        )
        kubectl(
            kube,
            "-n",
            "cgu-lab",
            "rollout",
            "status",
            "deploy/cgu-lab-controller",
            "--timeout=240s",
        )
        log = kubectl(kube, "-n", "cgu-lab", "logs", "deploy/cgu-lab-controller")
        assert re.search(r"first administrator: admin\s+one-time password: \S+", log), log
        kubectl(
            kube,
            "-n",
            "cgu-lab",
            "exec",
            "-i",
            "deploy/cgu-lab-controller",
            "--",
            "cgu-lab",
            "admin",
            "create-user",
            STUDENT,
            "--password-stdin",
            stdin=PASSWORD + "\n",
        )
        with Session(f"http://{service_ip}:8000", STUDENT, PASSWORD) as student:
            student.ok(
                "POST",
                "/api/notebooks",
                201,
                json={
                    "name": "deployed",
                    "image": kube["CGU_NOTEBOOK_IMAGE"],
                    "cpu": CPU,
                    "memory": "1Gi",
                },
            )
            took = start(student, "deployed")
            print(f"\nin-cluster controller: start -> JupyterLab {took:.1f} s")
            code = (
                "import os, socket, urllib.request\n"
                "url = os.environ['CGU_CONTROLLER_URL']\n"
                "print(url, urllib.request.urlopen(url + '/api/health', timeout=10).status)\n"
            )
            output = asyncio.run(run_code(student, "deployed", code))
            assert "http://cgu-lab-controller.cgu-lab.svc.cluster.local:8000 200" in output, output
            student.ok("POST", f"/api/notebooks/{STUDENT}/deployed/stop?wait=true", 202)
            student.ok("DELETE", f"/api/notebooks/{STUDENT}/deployed")
    finally:
        kubectl(
            kube,
            "-n",
            "cgu-lab",
            "delete",
            "deployment",
            "cgu-lab-controller",
            "--ignore-not-found",
        )
        shutil.rmtree(school, ignore_errors=True)

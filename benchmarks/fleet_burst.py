"""A class-sized burst of GPU notebooks on a large simulated fleet, with the controller
holding a school's worth of notebooks, beside kube-scheduler alone (issue 27's figures).

Needs the test cluster running (scripts/kube-cluster.sh start, as root); otherwise it
says so and measures nothing. It makes `scripts/kube-cluster.sh fleet N` (N simulated
nodes shaped like the school's, kept Ready by kwok), runs cgu-lab's controller on the
host against the cluster as the tests do (tests/test_kube_cluster.py's settings, the
shipped RBAC), saves the fleet's proposed GPU types (amd64 products: the pause image
the simulated pods name is amd64's), and then:

- proxy, few routes: one real CPU notebook on the real node (the notebook image), and
  sequential GETs of its api/status through the controller's proxy while the
  controller holds a handful of notebooks;
- peer: `--burst` GPU pods created straight through the API (kube-scheduler and the API
  server alone, nothing of cgu-lab): seconds from create to bound;
- the fill: `--running` GPU notebooks started through the API, 16 at a time, onto the
  simulated nodes (kwok plays their pods Running), and stopped notebooks created
  through the API until the controller holds `--notebooks` in all; the GPU types'
  capacity is shared between the fill and the burst so that the burst fits but for
  `--overflow` starts, which must queue and say their place;
- the burst: that many students press Start on a GPU notebook at once: seconds from the
  POST to the notebook's pod bound, p50/p95/max, starts refused, queued (each with its
  place in the message) and lost (neither bound, queued nor failed with a reason);
  where those seconds went (API timestamps); the controller's CPU-seconds per start;
- at that size: GET /api/monitoring and the monitoring page (p50/p95 of 20 reads each),
  GET /api/gpus/fleet, the controller's RSS, and the proxy again (the same notebook,
  the same requests, with every notebook in the route table);
- the culler: the controller is stopped and its own parts are opened again in this
  process on the same database and cluster, as a restart does (how long adopting the
  running notebooks took), and `Culler.pass_once` is timed a few times (wall and CPU).
  Its queue drain is left out (this copy must not start queued notebooks behind the
  controller it replaced; the real one schedules it as a task, outside the pass). The
  simulated pods run no server, so each pass's reads of them fail: kwok's address range
  is routed nowhere by scripts/kube-cluster.sh (`ip route ... unreachable`, with kwok;
  otherwise this host's default route sends those reads off the machine), so they fail
  at once; one read of the real notebook is printed for scale.

The pods on simulated nodes never run a program, so this measures the controller's and
the cluster's side of a start, not a notebook's boot; the cluster's volume provisioner
(a shell loop creating the volumes of a few batches of claims at once) is the test
cluster's and is shown as its own phase.
The fleet goes at the end (`fleet 0`). The host's load is printed at each step.

Usage: fleet_burst.py [--nodes 100] [--notebooks 2000] [--burst 300] [--running N]
       [--overflow 10] [--passes 5]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import datetime
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SCRIPT = ROOT / "scripts" / "kube-cluster.sh"
RUN = f"b{os.getpid() % 10000}"


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {statistics.median(values):.2f} s, p95 {pct(values, 0.95):.2f} s, "
        f"max {max(values):.2f} s (n={len(values)})"
    )


FRAME = re.compile(r"^(.*) \((?:.*/)?([^/:]*)(?::\d+)?\)$")


def profile_summary(raw: Path, top: int = 12) -> None:
    """The functions the controller's threads were in most, from py-spy's raw samples
    ("frame;frame;... count" a line): share of samples under each function (inclusive,
    cgu-lab's own and the libraries' alike) and in each as the innermost frame."""
    inclusive: dict[str, int] = {}
    innermost: dict[str, int] = {}
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        total += int(count)
        # "function (path/file.py:line)" -> "function (file.py)"
        frames = [FRAME.sub(r"\1 (\2)", frame) for frame in stack.split(";")]
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + int(count)
        innermost[frames[-1]] = innermost.get(frames[-1], 0) + int(count)
    if not total:
        print("  py-spy took no samples")
        return
    for title, table in (("under", inclusive), ("innermost", innermost)):
        print(f"  {title} (of {total} samples):")
        for frame, count in sorted(table.items(), key=lambda item: -item[1])[:top]:
            print(f"    {100 * count / total:5.1f}%  {frame}")


def cluster() -> dict[str, str] | None:
    if subprocess.run([SCRIPT, "status"], capture_output=True, check=False).returncode != 0:
        return None
    out = subprocess.run([SCRIPT, "env"], capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def wait_bound(admin, pods: dict[str, tuple[str, float]], timeout: float) -> dict[str, float]:
    """name -> seconds from its start to bound, for pods {name: (namespace, began)}."""
    bound: dict[str, float] = {}
    deadline = time.monotonic() + timeout
    while len(bound) < len(pods) and time.monotonic() < deadline:
        for namespace in {ns for ns, _ in pods.values()}:
            listed = admin.resource("v1", "Pod").get(namespace=namespace).to_dict()["items"]
            for pod in listed:
                name = pod["metadata"]["name"]
                if name in pods and name not in bound and pod["spec"].get("nodeName"):
                    bound[name] = time.monotonic() - pods[name][1]
        time.sleep(0.2)
    return bound


def stamp(text: str | None) -> float | None:
    """An API timestamp (RFC 3339, whole seconds) as seconds since the epoch."""
    if not text:
        return None
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def phases(admin, pressed: dict[str, float]) -> None:
    """Where each start's seconds went, read from the objects' own timestamps (whole
    seconds, the API server's clock, this host's): the controller's objects (POST to its
    StatefulSet), the StatefulSet controller (to the pod), the volumes (each claim to the
    PersistentVolume that the cluster's provisioner made for it) and the scheduler (the
    last volume to the pod bound), with the scheduler's refusals and their first reason.
    `pressed`: the notebook's namespace -> time.time() when Start was pressed."""
    volumes: dict[tuple[str, str], float] = {}
    for pv in admin.resource("v1", "PersistentVolume").get().to_dict()["items"]:
        claim = pv["spec"].get("claimRef") or {}
        made = stamp(pv["metadata"].get("creationTimestamp"))
        if claim and made is not None:
            volumes[(claim.get("namespace"), claim.get("name"))] = made
    rows: dict[str, list[float]] = {}
    refusals: dict[str, int] = {}

    def add(name: str, value: float | None) -> None:
        if value is not None:
            rows.setdefault(name, []).append(value)

    for namespace, began in pressed.items():
        sets = admin.resource("apps/v1", "StatefulSet").get(namespace=namespace).to_dict()
        pods = admin.resource("v1", "Pod").get(namespace=namespace).to_dict()["items"]
        claims = admin.resource("v1", "PersistentVolumeClaim").get(namespace=namespace)
        if not sets["items"] or not pods:
            continue
        made = stamp(sets["items"][0]["metadata"]["creationTimestamp"])
        pod = pods[0]
        created = stamp(pod["metadata"]["creationTimestamp"])
        conditions = pod.get("status", {}).get("conditions") or []
        scheduled = next(
            (
                stamp(c.get("lastTransitionTime"))
                for c in conditions
                if c["type"] == "PodScheduled" and c["status"] == "True"
            ),
            None,
        )
        waits, last_volume = [], None
        for claim in claims.to_dict()["items"]:
            asked = stamp(claim["metadata"]["creationTimestamp"])
            given = volumes.get((namespace, claim["metadata"]["name"]))
            if given is not None and asked is not None:
                waits.append(given - asked)
                last_volume = max(last_volume or given, given)
        add("POST -> the controller's StatefulSet", made - began if made else None)
        add("StatefulSet -> its pod", created - made if created and made else None)
        for wait in waits:
            add("a claim -> its volume (provisioner)", wait)
        add("POST -> its last volume", last_volume - began if last_volume else None)
        if scheduled is not None and last_volume is not None:
            add("last volume -> pod bound (scheduler)", scheduled - last_volume)
        add("POST -> pod bound", scheduled - began if scheduled else None)
        selector = f"involvedObject.name={pod['metadata']['name']},reason=FailedScheduling"
        events = admin.resource("v1", "Event").get(namespace=namespace, field_selector=selector)
        for event in events.to_dict()["items"]:
            reason = (event.get("message") or "").split(":", 1)[-1].strip()[:90]
            refusals[reason] = refusals.get(reason, 0) + int(event.get("count") or 1)
    print("where the seconds of a start went (API timestamps, whole seconds):")
    for name, values in rows.items():
        print(f"  {name}: {summary(values)}")
    for reason, count in sorted(refusals.items(), key=lambda item: -item[1])[:5]:
        print(f"  scheduler refused {count} times: {reason}")


def peer(admin, burst: int, resources: list[str]) -> list[float]:
    namespace = f"{RUN}-peer"
    admin.resource("v1", "Namespace").create(body={"metadata": {"name": namespace}})
    pods = {}
    for i in range(burst):
        name = f"gpu-{i}"
        body = {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "localhost/cgu-kube/pause:1",
                        "resources": {"limits": {resources[i % len(resources)]: "1"}},
                    }
                ],
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                "nodeSelector": {"type": "kwok"},
            },
        }
        pods[name] = (namespace, time.monotonic())
        admin.resource("v1", "Pod").create(body=body, namespace=namespace)
    bound = wait_bound(admin, pods, 300)
    admin.resource("v1", "Namespace").delete(name=namespace)
    return list(bound.values())


def start(ctl) -> None:
    """Start the controller, waiting longer than the test harness's minute where the
    machine is so loaded that its imports alone take that long (seen at a load of 28 on
    two cores); the same process is waited for, never a second one started."""
    try:
        ctl.start()
        return
    except RuntimeError:
        if ctl.process is None or ctl.process.poll() is not None:
            raise
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{ctl.url}/api/health", timeout=2).status_code == 200:
                waited = time.monotonic() - deadline + 360
                print(f"(the controller answered only after {waited:.0f} s)")
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the controller did not answer in 6 minutes")


def ms(values: list[float]) -> str:
    if not values:
        return "none"
    return (
        f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {pct(values, 0.95) * 1000:.1f} ms "
        f"(n={len(values)})"
    )


def timed(client, path: str, times: int) -> list[float]:
    """Seconds of `times` sequential GETs of `path`, each answered 200."""
    took = []
    for _ in range(times):
        t = time.monotonic()
        answer = client.get(path)
        took.append(time.monotonic() - t)
        if answer.status_code != 200:
            raise RuntimeError(f"GET {path}: {answer.status_code} {answer.text[:200]}")
    return took


def share(total: int, weights: dict[str, int]) -> dict[str, int]:
    """`total` split in proportion to `weights` (largest remainders), none above its weight."""
    whole = sum(weights.values()) or 1
    exact = {k: total * w / whole for k, w in weights.items()}
    parts = {k: min(weights[k], int(v)) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: exact[k] - int(exact[k]), reverse=True):
        if sum(parts.values()) >= total:
            break
        if parts[k] < weights[k]:
            parts[k] += 1
    return parts


def spread(names: list[str], counts: dict[str, int]) -> dict[str, str]:
    """Each name's GPU type, dealt round robin over the types while each has some left."""
    deal, left = [], dict(counts)
    while any(left.values()):
        for kind in sorted(left):
            if left[kind]:
                deal.append(kind)
                left[kind] -= 1
    return dict(zip(names, deal, strict=False))


def sessions_of(ctl, names: list[str]) -> dict:
    """Logged-in clients, 8 logins at a time (each hashes a password)."""
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        return dict(zip(names, pool.map(ctl.client, names), strict=True))


def connect_fails_in(address: str, port: int) -> str:
    """How a connect to a simulated pod's address ends (they run no server)."""
    t = time.monotonic()
    try:
        socket.create_connection((address, port), timeout=5).close()
        outcome = "connected"
    except TimeoutError:
        outcome = "timed out"
    except OSError as error:
        outcome = f"refused ({error.strerror})"
    return f"{outcome} after {time.monotonic() - t:.2f} s"


async def culler_passes(env: dict, data_dir: Path, passes: int, real: tuple | None) -> None:
    """The controller's own parts opened again in this process (the controller is stopped):
    adopt the running notebooks as a restart does, then time `passes` culler passes."""
    os.environ.update(env)
    from cgu_lab.controller.root import Platform
    from cgu_lab.controller.settings import Settings

    platform = Platform(Settings(data_dir=data_dir, backend="kubernetes"))
    platform.notebooks.admission.queue_drain = lambda: None  # see the module's docstring
    await platform.backend.open()
    try:
        began = time.monotonic()
        adopted = await platform.notebooks.lifecycle.reconcile()
        took = time.monotonic() - began
        print(
            f"restart: adopting {len(adopted.adopted)} running notebooks took {took:.1f} s "
            f"({len(adopted.stopped)} stopped as not ready)"
        )
        await platform.reader.open()
        routes = platform.notebooks.routes
        if real is not None:
            owner, name = real
            route = await routes.lookup(owner, name)
            t = time.monotonic()
            for _ in range(20):
                await routes.lookup(owner, name)
            lookup = (time.monotonic() - t) / 20
            reads = []
            for _ in range(10):
                t = time.monotonic()
                await platform.reader.get(route, "api/kernels")
                reads.append(time.monotonic() - t)
            print(
                f"route table: one lookup {lookup * 1e6:.1f} us with every notebook in it; "
                f"one read of the real notebook (api/kernels) {ms(reads)}"
            )
        walls, cpus = [], []
        for _ in range(passes):
            cpu, t = time.process_time(), time.monotonic()
            decisions = await platform.culler.pass_once()
            walls.append(time.monotonic() - t)
            cpus.append(time.process_time() - cpu)
        running = len(platform.notebooks.admission.activity)
        stops = sum(d.action == "stop" for d in decisions)
        print(
            f"culler pass over {running} running notebooks ({passes} passes, {stops} stops in "
            f"the last): wall p50 {statistics.median(walls):.2f} s, max {max(walls):.2f} s; "
            f"CPU p50 {statistics.median(cpus):.2f} s, max {max(cpus):.2f} s; load {load()}"
        )
        if real is not None:
            from cgu_lab.controller.notebooks.reader import CONCURRENCY

            per_read = statistics.median(reads)
            print(
                f"  (its reads of simulated servers fail at once; had all {running} answered "
                f"as the real one does, 3 reads each, {CONCURRENCY} at a time, would add about "
                f"{running * 3 / CONCURRENCY * per_read:.1f} s: arithmetic, not measured)"
            )
    finally:
        await platform.reader.close()
        await platform.backend.close()
        await platform.db.close()


def wait_running(sessions: dict, names: list[str], timeout: float) -> dict[str, str]:
    """name -> the state of its notebook "gpu" once it is no longer on its way (starting or
    stopping), or at the deadline. A start that failed is "stopped" (with its reason)."""
    states: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    pending = list(names)
    while pending and time.monotonic() < deadline:
        for name in list(pending):
            answer = sessions[name].get(f"/api/notebooks/{name}/gpu")
            state = answer.json().get("state") if answer.status_code == 200 else "unknown"
            states[name] = state
            if state not in ("starting", "stopping"):
                pending.remove(name)
        if pending:
            time.sleep(5)
    return states


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--notebooks", type=int, default=2000, help="notebooks held in all")
    parser.add_argument("--burst", type=int, default=300)
    parser.add_argument(
        "--running",
        type=int,
        default=-1,
        help="GPU notebooks started before the burst "
        "(default: as many as leave room for the burst)",
    )
    parser.add_argument("--overflow", type=int, default=10, help="burst starts left to queue")
    parser.add_argument("--passes", type=int, default=5, help="culler passes timed")
    parser.add_argument(
        "--profile",
        type=Path,
        help="record the controller with py-spy over the burst's first --profile-seconds "
        "into this file (raw samples) and print where its time went",
    )
    parser.add_argument("--profile-seconds", type=int, default=60)
    args = parser.parse_args()
    kube = cluster()
    if kube is None:
        print("skipped: the test cluster is not running (scripts/kube-cluster.sh start, as root)")
        return 0
    images = Path(kube["CGU_KUBE_IMAGES"]) / "images.env"
    notebook_image = None
    if images.is_file():
        found = dict(line.split("=", 1) for line in images.read_text().splitlines() if "=" in line)
        notebook_image = found.get("CGU_NOTEBOOK_IMAGE")
    import psutil

    from tests.harness import Controller, reachable_dir
    from tests.test_kubernetes_backend import install, token_kubeconfig

    print(f"load at start: {load()}")
    began = time.monotonic()
    subprocess.run([SCRIPT, "fleet", str(args.nodes)], check=True)
    print(f"fleet of {args.nodes} simulated nodes Ready in {time.monotonic() - began:.1f} s")
    admin = install(kube["CGU_KUBE_KUBECONFIG"], skip=("Deployment",))
    base = reachable_dir()
    kubeconfig = base / "controller.kubeconfig"
    token_kubeconfig(kube["CGU_KUBE_KUBECONFIG"], admin, "cgu-lab-controller", kubeconfig)
    ctl = Controller(
        base / "data",
        backend="kubernetes",
        env={
            "CGU_LAB_HOST": "0.0.0.0",
            "CGU_LAB_KUBE_KUBECONFIG": str(kubeconfig),
            "CGU_LAB_KUBE_USER_PREFIX": f"{RUN}u-",
            "CGU_LAB_KUBE_GROUP_PREFIX": f"{RUN}g-",
            "CGU_LAB_KUBE_INSTALLATION": f"bench-{RUN}",
            "CGU_LAB_KUBE_ENDPOINT": "pod-ip",
            "CGU_LAB_KUBE_IMAGE_PULL_POLICY": "Never",
            "CGU_LAB_KUBE_STORAGE_CLASS": kube["CGU_KUBE_STORAGE_CLASS"],
            "CGU_LAB_KUBE_HOME_SIZE": "1Gi",
            # A simulated pod's address never answers (kwok runs no program): a start
            # would wait this long for it and then go on; the real notebook answers.
            "CGU_LAB_KUBE_REACHABLE_WAIT": "0",
            # A burst on a loaded 2-core host may take the last start past the default
            # 600 s (the cluster's parts share the cores): it is measured, not failed.
            "CGU_LAB_KUBE_START_TIMEOUT": "1800",
        },
    )
    ctl.env["CGU_LAB_KUBE_CONTROLLER_URL"] = f"http://{kube['CGU_KUBE_HOST_IP']}:{ctl.port}"
    students = [f"s{i:03d}" for i in range(args.burst)]
    ctl.create_user("badmin", "admin")
    try:
        start(ctl)
        root = ctl.client("badmin")
        reads = timed(root, "/api/gpus/fleet", 20)
        fleet = root.ok("GET", "/api/gpus/fleet")
        capacity: dict[str, int] = {}
        resources: dict[str, str] = {}
        for product in fleet["products"]:
            if not product["proposals"] or product["nodes"] == [kube["CGU_KUBE_NODE"]]:
                continue
            if "amd64" not in product["archs"]:
                continue
            proposal = product["proposals"][0]
            fields = ("display_name", "resource_name", "share", "mig_profile")
            body = {k: proposal[k] for k in (*fields, "models", "node_selector")}
            root.ok("PUT", f"/api/gpu-types/{proposal['name']}", json=body)
            capacity[proposal["name"]] = proposal["capacity"]
            resources[proposal["name"]] = proposal["resource_name"]
        total = sum(capacity.values())
        print(f"GET /api/gpus/fleet with {args.nodes + 1} nodes: {ms(reads)}")
        print(f"GPU types: {capacity} ({total} one-GPU notebooks in all)")

        # The burst's share of each type, then the fill takes the rest but `overflow`.
        burst_of = share(args.burst, capacity)
        room = {k: capacity[k] - burst_of[k] for k in capacity}
        running = args.running if args.running >= 0 else sum(room.values()) + args.overflow
        fill_of = share(min(running, total), capacity)
        fillers = [f"f{i:04d}" for i in range(sum(fill_of.values()))]
        held = 1 + len(fillers) + len(students)
        stopped = max(0, args.notebooks - held)
        owners = fillers + students
        extra = [f"r{i:04d}" for i in range(max(0, -(-stopped // 8) - len(owners)))]
        ctl.create_users([(name, "student") for name in students + fillers + extra])
        gpu_type = {**spread(fillers, fill_of), **spread(students, burst_of)}
        for name in students + fillers:
            if name in gpu_type:
                quota = {"gpus": {gpu_type[name]: 1}}
                root.ok("PUT", f"/api/users/{name}/quota", json=quota)

        real = None
        if notebook_image:
            body = {"name": "real", "image": notebook_image, "cpu": 0.5, "memory": "1Gi"}
            root.ok("POST", "/api/notebooks", 201, json=body)
            answer = root.post("/api/notebooks/badmin/real/start?wait=true")
            if answer.status_code == 202:
                real = ("badmin", "real")
                timed(root, "/notebook/badmin/real/api/status", 50)  # its first requests
                few = timed(root, "/notebook/badmin/real/api/status", 200)
                print(f"proxied GET api/status, a handful of notebooks held: {ms(few)}")
            else:
                print(f"no real notebook ({answer.status_code} {answer.text[:200]})")
        else:
            print("no real notebook: the images are not built (make images)")

        asked = [resources[gpu_type[name]] for name in students if name in gpu_type]
        peer_times = peer(admin, len(asked), asked)
        print(f"peer (kube-scheduler alone, {len(asked)} pods at once): {summary(peer_times)}")
        while any(
            ns["metadata"]["name"] == f"{RUN}-peer"
            for ns in admin.resource("v1", "Namespace").get().to_dict()["items"]
        ):
            time.sleep(1)  # its pods hold the nodes' GPUs until they are gone

        # The fill: GPU notebooks running on simulated nodes, then stopped notebooks.
        began = time.monotonic()
        sessions = sessions_of(ctl, owners + extra)
        print(f"{len(sessions)} students logged in in {time.monotonic() - began:.0f} s")

        def create(pair: tuple[str, str]) -> int:
            owner, name = pair
            body = {"name": name, "image": "localhost/cgu-kube/pause:1", "cpu": 0.1}
            body["memory"] = "256Mi"
            if name == "gpu":
                body.update(gpu_type=gpu_type[owner], gpus=1)
            try:
                return sessions[owner].post("/api/notebooks", json=body).status_code
            except httpx.RemoteProtocolError:
                # A kept-alive connection the server closed as this was sent (each session
                # sat idle while the others logged in): once more; 409 means it was made.
                code = sessions[owner].post("/api/notebooks", json=body).status_code
                return 201 if code == 409 else code

        gpu_rows = [(name, "gpu") for name in owners if name in gpu_type]
        spare = [(owner, f"old{j}") for j in range(8) for owner in owners + extra]
        began = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            made = list(pool.map(create, gpu_rows + spare[:stopped]))
        print(
            f"{len(made)} notebooks created through the API in {time.monotonic() - began:.0f} s "
            f"({sum(code != 201 for code in made)} refused); load {load()}"
        )

        def start_fill(name: str) -> int:
            return sessions[name].post(f"/api/notebooks/{name}/gpu/start").status_code

        began = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            codes = list(pool.map(start_fill, [n for n in fillers if n in gpu_type]))
        states = wait_running(sessions, [n for n in fillers if n in gpu_type], 1800)
        counted: dict[str, int] = {}
        for state in states.values():
            counted[state] = counted.get(state, 0) + 1
        print(
            f"fill: {len(codes)} GPU notebooks started ({sum(c != 202 for c in codes)} refused) "
            f"in {time.monotonic() - began:.0f} s: {counted}; load {load()}"
        )

        # The burst.
        process = psutil.Process(ctl.process.pid)
        cpu_before = sum(process.cpu_times()[:2])
        pressed: dict[str, float] = {}  # the notebook's namespace -> when Start was pressed
        pressed_at: dict[str, float] = {}  # the same, on the wall clock (API timestamps')
        answers: dict[str, int] = {}

        def press(name: str) -> None:
            pressed[f"{RUN}u-{name}"] = time.monotonic()
            pressed_at[f"{RUN}u-{name}"] = time.time()
            answers[name] = sessions[name].post(f"/api/notebooks/{name}/gpu/start").status_code

        spy = None
        if args.profile:
            command = [shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")]
            command += ["record", "--pid", str(ctl.process.pid), "--rate", "50"]
            command += ["--duration", str(args.profile_seconds), "--format", "raw"]
            spy = subprocess.Popen([*command, "--nonblocking", "-o", str(args.profile)])
        burst_began = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            list(pool.map(press, [n for n in students if n in gpu_type]))
        pressing = time.monotonic() - burst_began
        bound: dict[str, float] = {}
        settled: dict[str, dict] = {}  # name -> the notebook, once no longer starting unbound
        deadline = time.monotonic() + 1800
        asked = time.monotonic()
        # Until each start's pod is bound or its notebook left "starting" (queued, or
        # stopped with a reason); the controller is asked every 15 s about the rest.
        while len(bound) + len(settled) < len(pressed) and time.monotonic() < deadline:
            for pod in admin.resource("v1", "Pod").get().to_dict()["items"]:
                namespace = pod["metadata"]["namespace"]
                if namespace in pressed and namespace not in bound and pod["spec"].get("nodeName"):
                    bound[namespace] = time.monotonic() - pressed[namespace]
            if time.monotonic() - asked > 15:
                asked = time.monotonic()
                for name in answers:
                    if f"{RUN}u-{name}" in bound or name in settled:
                        continue
                    answer = sessions[name].get(f"/api/notebooks/{name}/gpu")
                    if answer.status_code == 200 and answer.json()["state"] != "starting":
                        settled[name] = answer.json()
            time.sleep(1)
        queued = {n: nb["message"] for n, nb in settled.items() if nb["state"] == "queued"}
        cpu = sum(process.cpu_times()[:2]) - cpu_before
        failed = {n: nb["message"] for n, nb in settled.items() if nb["state"] == "stopped"}
        for message in list(failed.values())[:3]:
            print(f"  a failed start: {message}")
        placed = [m for m in queued.values() if re.search(r"next|\d+(st|nd|rd|th) in", m)]
        lost = sum(
            1
            for name in answers
            if f"{RUN}u-{name}" not in bound and name not in queued and name not in failed
        )
        print(
            f"cgu-lab ({len(pressed)} students press Start at once, all POSTs in "
            f"{pressing:.1f} s): POST -> pod bound {summary(list(bound.values()))}; "
            f"refused {sum(c != 202 for c in answers.values())}, queued {len(queued)} "
            f"({len(placed)} saying their place), failed {len(failed)}, neither after 30 min {lost}"
        )
        if queued:
            print(f"  e.g. a queued student reads: {next(iter(queued.values()))}")
        if spy is not None and spy.wait() == 0:
            print(f"the controller in the burst's first {args.profile_seconds} s (py-spy):")
            profile_summary(args.profile)
        phases(admin, {ns: t for ns, t in pressed_at.items() if ns in bound})
        per = cpu / max(1, len(answers))
        print(f"controller over the burst: {cpu:.1f} CPU-s ({per:.3f}/start); load {load()}")

        # At that size: monitoring, the fleet, RSS, the proxy.
        report = root.ok("GET", "/api/monitoring")
        print(
            f"the controller holds {sum(report['states'].values())} notebooks: {report['states']}"
        )
        print(f"GET /api/monitoring: {ms(timed(root, '/api/monitoring', 20))}")
        print(f"GET /admin/monitoring (the page): {ms(timed(root, '/admin/monitoring', 20))}")
        print(f"GET /api/gpus/fleet: {ms(timed(root, '/api/gpus/fleet', 20))}")
        if real is not None:
            many = timed(root, "/notebook/badmin/real/api/status", 200)
            p50 = statistics.median(many) / statistics.median(few) - 1
            print(
                f"proxied GET api/status, every notebook in the table: {ms(many)} "
                f"({p50 * 100:+.0f}% at p50); load {load()}"
            )
        rss = process.memory_info().rss / 2**20
        print(f"controller RSS {rss:.0f} MB")
        for session in sessions.values():
            session.close()
        root.close()

        # The culler, in the controller's own parts opened again here.
        simulated = next(
            (
                pod["status"].get("podIP")
                for pod in admin.resource("v1", "Pod").get().to_dict()["items"]
                if pod["metadata"]["namespace"] in pressed and pod["status"].get("podIP")
            ),
            None,
        )
        if simulated:
            print(f"a connect to a simulated pod's address: {connect_fails_in(simulated, 8888)}")
        env = dict(ctl.env)
        ctl.stop()
        asyncio.run(culler_passes(env, base / "data", args.passes, real))
    finally:
        ctl.stop()
        for namespace in admin.resource("v1", "Namespace").get().to_dict()["items"]:
            if namespace["metadata"]["name"].startswith(RUN):
                admin.resource("v1", "Namespace").delete(name=namespace["metadata"]["name"])
        subprocess.run([SCRIPT, "fleet", "0"], check=False)
        shutil.rmtree(base, ignore_errors=True)
        print(f"load at end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

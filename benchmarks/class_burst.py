"""A class at 9:00: starts, bursts, bystanders and density, cgu-lab beside JupyterHub.

Both platforms run on this host in the same run (jupyterhub_peer.py installs the
peer: JupyterHub latest, LocalProcessSpawner with local system accounts,
configurable-http-proxy, the same JupyterLab). Each figure is measured for one
platform while the other sits idle, on a quiet host and then on a busy one:

- single start: POST start, follow the progress until ready, fetch `/lab` through
  the proxy (n=3, stopped between runs);
- bursts of 10 and 30 students pressing Start at once: p50/p95/max of the same
  time, and failures (a start that ended in anything but ready);
- a bystander during the burst: a student whose notebook was already running asks
  it for `/api/status` through the proxy, and the platform's API for their
  notebooks (cgu-lab `GET /api/notebooks`, JupyterHub `GET /hub/api/users/<name>`),
  one after the other, each ~0.1 s; p50/p99, and the same measured before the burst
  (idle) for the ratio. The same `/api/status` is also asked of the server directly, on
  its own port with the credentials the proxy adds (read as root: cgu-lab's from its
  database, JupyterHub's from the server's environment), which tells the proxy's share of
  a slow answer from the server's own;
- CPU-seconds per start: the notebook's processes after ready (launcher, server,
  slirp4netns) plus the platform's own processes (controller, or hub + proxy)
  over the burst, per start;
- idle density: RSS and PSS of a notebook (its server and one idle kernel: the
  bystander) and of a burst's servers (mean).

Busy host: BUSY other notebooks of the platform under test each keep one kernel
computing (`while True: pass`), as a class in progress does; `--busy-kind host`
uses plain processes outside any notebook instead (other work of the host).

Usage: class_burst.py [--bursts 10,30] [--busy 3] [--busy-kind notebooks|host]
                      [--only cgu|hub] [--quiet-only|--busy-only] [--big] (adds 60)
                      [--timeline PATH] (each cgu-lab start's progress events, as JSON)
                      [--probes PATH] (the bystander's every answer in a burst, as JSON)
                      [--new-accounts] (cgu-lab's students start for the first time ever)
The host's load (uptime) is printed at the start and the end. Run as root, the benchmark's
own client runs in a CPU group of the largest weight while it drives a platform (it stands
for browsers elsewhere, see client_priority).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
from jupyterhub_peer import Hub, version
from platform_under_test import Controller, execute_request, percentile, reachable_dir

SPIN = "while True:\n    pass\n"


def load() -> str:
    return open("/proc/loadavg").read().split(" ", 3)[:3].__str__()


# -- the two platforms, driven the same way ------------------------------------------


class CguLab:
    label = "cgu-lab"

    def __init__(self, timeout: float) -> None:
        self.base = reachable_dir()
        env = {"CGU_LAB_START_TIMEOUT": str(int(timeout))}
        self.controller = Controller(self.base / "data", env=env)
        self.clients: dict[str, object] = {}
        self.direct: dict[str, tuple[httpx.Client, str, dict]] = {}
        # Each start's progress as it came: (seconds since Start, percent, message), by user.
        self.timelines: dict[str, list[tuple[float, int, str]]] = {}

    def open(self, students: list[str]) -> list[str]:
        c = self.controller
        names = [f"cb-{s}" for s in students]
        c.create_users([(n, "student") for n in names])
        c.create_user("cb-admin", "admin")
        c.start()
        self.admin = c.client("cb-admin")
        with c.client("cb-admin") as admin:
            for name in names:
                admin.ok(
                    "PUT",
                    f"/api/users/{name}/quota",
                    json={"cpu": 4, "memory": "8Gi", "gpus": {}, "notebooks": 3},
                )
        for name in names:
            client = c.client(name)
            client.ok(
                "POST", "/api/notebooks", 201, json={"name": "lab", "cpu": 1, "memory": "1Gi"}
            )
            self.clients[name] = client
        return names

    def pids(self) -> list[int]:
        return [self.controller.process.pid] if self.controller.process else []

    def start(self, user: str) -> None:
        client = self.clients[user]
        began = time.perf_counter()
        timeline = self.timelines[user] = []
        client.ok("POST", f"/api/notebooks/{user}/lab/start", 202)
        with client.stream("GET", f"/api/notebooks/{user}/lab/events") as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    timeline.append(
                        (time.perf_counter() - began, event.get("progress"), event.get("message"))
                    )
                    if event["done"]:
                        if not event.get("ok"):
                            raise RuntimeError(f"{user}: {event.get('message')}")
                        break
        page = client.get(f"/notebook/{user}/lab/lab", headers={"Accept": "text/html"})
        timeline.append((time.perf_counter() - began, 100, "/lab answered"))
        if page.status_code != 200:
            raise RuntimeError(f"{user}: /lab answered {page.status_code}")

    def stop(self, user: str) -> None:
        self.clients[user].ok("POST", f"/api/notebooks/{user}/lab/stop?wait=true", 202)

    def probe_notebook(self, user: str, client) -> None:
        r = client.get(f"/notebook/{user}/lab/api/status")
        assert r.status_code == 200, r.status_code

    def probe_api(self, user: str, client) -> None:
        r = client.get("/api/notebooks")
        assert r.status_code == 200, r.status_code

    def probe_server(self, user: str, client) -> None:
        direct, url, headers = self._direct(user)
        r = direct.get(url, headers=headers)
        assert r.status_code == 200, r.status_code

    def _direct(self, user: str) -> tuple[httpx.Client, str, dict]:
        """A client to `user`'s server itself, bypassing the proxy: its address and proxy
        secret from the controller's database (local_servers.endpoint's fields), the
        headers the proxy sends (identity.py's). Read once, kept for the run."""
        if user not in self.direct:
            with sqlite3.connect(self.controller.data_dir / "cgu-lab.sqlite") as db:
                state, secret = db.execute(
                    "SELECT n.backend_state, n.proxy_secret FROM notebooks n "
                    "JOIN users u ON u.id = n.owner_id WHERE u.name = ? AND n.name = 'lab'",
                    (user,),
                ).fetchone()
            state = json.loads(state)
            if state.get("socket"):
                client = httpx.Client(transport=httpx.HTTPTransport(uds=state["socket"]))
                base = "http://server"
            else:
                client, base = httpx.Client(), f"http://127.0.0.1:{state['port']}"
            headers = {"X-Cgu-User": user, "X-Cgu-Proxy-Secret": secret}
            self.direct[user] = (client, f"{base}/notebook/{user}/lab/api/status", headers)
        return self.direct[user]

    def probe_client(self, user: str):
        return self.clients[user]

    def loop_lag(self) -> dict[str, float]:
        """The controller's event-loop lag histogram (cumulative counts by upper bound)."""
        text = self.admin.get("/api/metrics").text
        return {
            bound: float(count)
            for bound, count in re.findall(
                r'^cgu_lab_event_loop_lag_seconds_bucket\{le="([^"]+)"\} (\S+)$', text, re.M
            )
        }

    def server(self, user: str) -> psutil.Process | None:
        for process in psutil.process_iter():
            with contextlib.suppress(psutil.Error, OSError):
                if (
                    "jupyter-lab" in " ".join(process.cmdline()[:3])
                    and process.environ().get("CGU_NOTEBOOK_OWNER") == user
                ):
                    return process
        return None

    def spin(self, user: str) -> str:
        kernel = self.clients[user].ok("POST", f"/notebook/{user}/lab/api/kernels", 201, json={})
        url, headers, connect = self.clients[user].notebook_socket(
            f"/notebook/{user}/lab/api/kernels/{kernel['id']}/channels"
        )
        asyncio.run(_send(url, headers, connect))
        return kernel["id"]

    def unspin(self, user: str, kernel: str) -> None:
        self.clients[user].request("DELETE", f"/notebook/{user}/lab/api/kernels/{kernel}")

    def close(self) -> None:
        direct = [client for client, _, _ in self.direct.values()]
        for client in [*self.clients.values(), *direct, getattr(self, "admin", None)]:
            if client is not None:
                client.close()
        self.controller.stop()
        self.controller.kill_notebooks()
        instance = self.controller.data_dir / "instance-id"
        if instance.exists():  # the installation's accounts go with it
            marker = f"cgu-lab {instance.read_text().strip()} "
            for line in Path("/etc/passwd").read_text().splitlines():
                fields = line.split(":")
                if len(fields) > 4 and fields[4].startswith(marker):
                    subprocess.run(["userdel", fields[0]], check=False, capture_output=True)
        subprocess.run(["rm", "-rf", str(self.base)], check=False)


class JupyterHub:
    label = "JupyterHub"

    def __init__(self, timeout: float) -> None:
        self.hub = Hub(start_timeout=timeout)
        self.clients: dict[str, httpx.Client] = {}
        self.direct: dict[str, tuple[str, dict]] = {}
        self.direct_client = httpx.Client()

    def open(self, students: list[str]) -> list[str]:
        self.hub.start()
        names = self.hub.create_users(students)
        for name in names:
            self.clients[name] = self.hub.client()
        return names

    def pids(self) -> list[int]:
        return self.hub.pids()

    def start(self, user: str) -> None:
        client = self.clients[user]
        self.hub.start_server(client, user)
        page = client.get(f"/user/{user}/lab", headers={"Accept": "text/html"})
        if page.status_code != 200:
            raise RuntimeError(f"{user}: /lab answered {page.status_code}")

    def stop(self, user: str) -> None:
        self.hub.stop_server(self.clients[user], user)

    def probe_notebook(self, user: str, client) -> None:
        r = client.get(f"/user/{user}/api/status")
        assert r.status_code == 200, r.status_code

    def probe_api(self, user: str, client) -> None:
        r = client.get(f"/hub/api/users/{user}")
        assert r.status_code == 200, r.status_code

    def probe_server(self, user: str, client) -> None:
        if user not in self.direct:
            # The single-user server's own URL and token, as the spawner gave them.
            env = self.server(user).environ()
            self.direct[user] = (
                f"{env['JUPYTERHUB_SERVICE_URL'].rstrip('/')}/api/status",
                {"Authorization": f"token {env['JUPYTERHUB_API_TOKEN']}"},
            )
        url, headers = self.direct[user]
        r = self.direct_client.get(url, headers=headers)
        assert r.status_code == 200, r.status_code

    def probe_client(self, user: str):
        return self.clients[user]

    def server(self, user: str) -> psutil.Process | None:
        for process in psutil.process_iter(["username", "cmdline"]):
            with contextlib.suppress(psutil.Error, OSError):
                if process.info["username"] == user and "jupyterhub-singleuser" in " ".join(
                    process.info["cmdline"] or []
                ):
                    return process
        return None

    def spin(self, user: str) -> str:
        kernel = self.clients[user].post(f"/user/{user}/api/kernels", json={}).json()
        url = f"ws://127.0.0.1:{self.hub.port}/user/{user}/api/kernels/{kernel['id']}/channels"
        asyncio.run(_send(url, self.hub.headers(), {}))
        return kernel["id"]

    def unspin(self, user: str, kernel: str) -> None:
        self.clients[user].delete(f"/user/{user}/api/kernels/{kernel}")

    def close(self) -> None:
        for client in [*self.clients.values(), self.direct_client]:
            client.close()
        self.hub.stop()


async def _send(url: str, headers: dict, connect: dict) -> None:
    """Start a computation in a kernel and leave it running."""
    import websockets

    async with websockets.connect(url, additional_headers=headers, **connect) as ws:
        msg_id, message = execute_request(SPIN)
        await ws.send(message)
        while True:  # until the kernel says it is busy with it
            reply = json.loads(await ws.recv())
            if reply["parent_header"].get("msg_id") == msg_id and reply["msg_type"] in (
                "execute_input",
                "status",
            ):
                return


# -- measuring -------------------------------------------------------------------------


def tree(process: psutil.Process | None) -> list[psutil.Process]:
    if process is None:
        return []
    with contextlib.suppress(psutil.Error):
        return [process, *process.children(recursive=True)]
    return []


def cpu_seconds(processes: list[psutil.Process]) -> float:
    total = 0.0
    for p in processes:
        with contextlib.suppress(psutil.Error):
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


def memory(processes: list[psutil.Process]) -> tuple[float, float]:
    rss = pss = 0
    for p in processes:
        with contextlib.suppress(psutil.Error):
            info = p.memory_full_info()
            rss += info.rss
            pss += info.pss
    return rss / 2**20, pss / 2**20


@dataclass
class Probe:
    """A bystander asking its notebook and the API, in turn, until stopped.

    `own` is the control: how late this probe's own 10 ms sleeps wake. The probe runs in
    the benchmark's process beside the threads that drive the burst, so a slow answer
    may be this client's wait for the CPU (or the interpreter) rather than the platform's;
    a late wake-up of the same size at the same moment says so. `samples` keeps every
    answer's (seconds since the probe began, kind, duration) for `--probes`."""

    platform: object
    user: str
    notebook: list[float] = field(default_factory=list)
    api: list[float] = field(default_factory=list)
    server: list[float] = field(default_factory=list)  # the same server, no proxy
    own: list[float] = field(default_factory=list)
    samples: list[tuple[float, str, float]] = field(default_factory=list)
    errors: int = 0

    def __post_init__(self) -> None:
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        client = self.platform.probe_client(self.user)
        origin = time.perf_counter()
        while not self.stopping.is_set():
            for kind, ask, into in (
                ("notebook", self.platform.probe_notebook, self.notebook),
                ("api", self.platform.probe_api, self.api),
                ("server", self.platform.probe_server, self.server),
                ("own", self.sleep_briefly, self.own),
            ):
                began = time.perf_counter()
                try:
                    ask(self.user, client)
                    took = time.perf_counter() - began
                    into.append(took)
                    self.samples.append((began - origin, kind, took))
                except Exception:
                    self.errors += 1
                self.stopping.wait(0.1)

    @staticmethod
    def sleep_briefly(user: str, client) -> None:
        time.sleep(0.01)

    def __enter__(self) -> Probe:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self.thread.join()


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return percentile(values, q)


def measure_idle(platform, bystander: str, seconds: float = 10) -> Probe:
    with Probe(platform, bystander) as probe:
        time.sleep(seconds)
    return probe


def burst(platform, users: list[str], bystander: str) -> dict:
    """All `users` press Start at once; the bystander keeps asking meanwhile."""
    own = [platform.pids()]
    before = cpu_seconds([psutil.Process(p) for p in own[0] if psutil.pid_exists(p)])
    times: list[float] = []
    failures: list[str] = []
    lag = getattr(platform, "loop_lag", dict)
    lag_before = lag()

    def one(user: str) -> None:
        began = time.perf_counter()
        try:
            platform.start(user)
            times.append(time.perf_counter() - began)
        except Exception as error:
            failures.append(str(error)[:200])

    with (
        Probe(platform, bystander) as probe,
        concurrent.futures.ThreadPoolExecutor(len(users)) as pool,
    ):
        list(pool.map(one, users))
    lag_after = lag()
    platform_cpu = cpu_seconds([psutil.Process(p) for p in own[0] if psutil.pid_exists(p)]) - before
    servers = [platform.server(u) for u in users]
    notebook_cpu = [cpu_seconds(tree(s)) for s in servers if s is not None]
    mems = [memory(tree(s)) for s in servers if s is not None]
    with concurrent.futures.ThreadPoolExecutor(min(10, len(users))) as pool:
        list(pool.map(lambda u: quietly(platform.stop, u), users))
    return {
        "times": times,
        "failures": failures,
        "probe": probe,
        "cpu_notebook": statistics.mean(notebook_cpu) if notebook_cpu else float("nan"),
        "cpu_platform": platform_cpu / len(users),
        "loop_lag": {bound: lag_after[bound] - lag_before.get(bound, 0) for bound in lag_after},
        "rss": statistics.mean(m[0] for m in mems) if mems else float("nan"),
        "pss": statistics.mean(m[1] for m in mems) if mems else float("nan"),
    }


def quietly(action, *args) -> None:
    with contextlib.suppress(Exception):
        action(*args)


def single(platform, user: str, runs: int = 3) -> list[float]:
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        platform.start(user)
        times.append(time.perf_counter() - began)
        platform.stop(user)
    return times


class HostSpin:
    """BUSY plain processes computing, outside any notebook (other work of the host)."""

    def __init__(self, count: int) -> None:
        self.processes = [
            subprocess.Popen([sys.executable, "-c", SPIN], preexec_fn=outside_client_group)
            for _ in range(count)
        ]

    def stop(self) -> None:
        for p in self.processes:
            p.kill()
            p.wait()


def run_platform(kind, args, sizes: list[int], conditions: list[str]) -> dict:
    most = max(sizes)
    students = [f"s{i}" for i in range(most)] + ["by"] + [f"busy{i}" for i in range(args.busy)]
    platform = kind(args.timeout)
    results: dict = {"label": platform.label}
    try:
        names = platform.open(students)
        client_priority(True)  # the platform's own processes started before: see client_priority
        burst_users = names[:most]
        bystander = names[most]
        busy_users = names[most + 1 :]
        if isinstance(platform, CguLab) and not args.new_accounts:
            # A class that has met before: each student's system account and home exist,
            # as JupyterHub's peer creates its system users before the bursts (untimed).
            with concurrent.futures.ThreadPoolExecutor(5) as pool:
                list(pool.map(lambda u: (platform.start(u), platform.stop(u)), burst_users))
        platform.start(bystander)
        platform.spin_kernel = None
        # The bystander's idle notebook with one idle kernel: density.
        if isinstance(platform, CguLab):
            platform.clients[bystander].ok(
                "POST", f"/notebook/{bystander}/lab/api/kernels", 201, json={}
            )
        else:
            platform.clients[bystander].post(f"/user/{bystander}/api/kernels", json={})
        time.sleep(3)
        # Find the bystander's server and open a connection to it before anything is timed.
        platform.probe_server(bystander, None)
        results["idle_mem"] = memory(tree(platform.server(bystander)))
        if "quiet" in conditions:
            results["single"] = single(platform, burst_users[0], args.single)
        for condition in conditions:
            spinning: list[tuple[str, str]] = []
            host = None
            if condition == "busy":
                if args.busy_kind == "host":
                    host = HostSpin(args.busy)
                else:
                    for user in busy_users:
                        platform.start(user)
                        spinning.append((user, platform.spin(user)))
                time.sleep(2)
            try:
                results[(condition, "idle")] = measure_idle(platform, bystander)
                for size in sizes:
                    print(f"  {platform.label}: burst of {size}, {condition} host ...", flush=True)
                    results[(condition, size)] = burst(platform, burst_users[:size], bystander)
                    if args.timeline and isinstance(platform, CguLab):
                        # each start's progress events, for where a slow burst's time went
                        path = Path(args.timeline).with_suffix(f".{condition}{size}.json")
                        picked = {u: platform.timelines.get(u) for u in burst_users[:size]}
                        path.write_text(json.dumps(picked, indent=1))
                        print(f"  timelines: {path}", flush=True)
                    if args.probes:
                        # the bystander's every answer, to see which slow ones coincide
                        path = Path(args.probes).with_suffix(
                            f".{platform.label}.{condition}{size}.json"
                        )
                        path.write_text(json.dumps(results[(condition, size)]["probe"].samples))
                        print(f"  probes: {path}", flush=True)
            finally:
                for user, kernel in spinning:
                    with contextlib.suppress(Exception):
                        platform.unspin(user, kernel)
                if host:
                    host.stop()
    finally:
        client_priority(False)
        platform.close()
    return results


CLIENT_GROUP = "cgu-bench-client"


def client_priority(favoured: bool) -> None:
    """This process stands for the students' browsers, which run on their own laptops: on a
    busy host it must not wait for the CPU behind the notebooks it measures, or it times its
    own waits, and differently for each platform (cgu-lab's notebooks sit in cgroups whose
    weights add up, JupyterHub's are plain processes). Favoured once a platform has started
    its processes (they do not inherit it), put back before the next one starts. Root only.

    Why a CPU group and not only a nice value: the kernel ranks by nice only between the
    tasks of one group, and in the host's root group its autogroups
    (sched_autogroup_enabled) make each session one group of one process's weight. At nice
    -10 alone, the probe's own 10 ms sleeps woke 0.27 s late at p99 during a busy burst of
    30: the bystander's times were the client's. So the benchmark moves itself into a group
    of the largest weight (`CLIENT_GROUP`), and what it starts meanwhile back out (HostSpin)."""
    if os.geteuid() != 0:
        return
    os.setpriority(os.PRIO_PROCESS, 0, -10 if favoured else 0)
    group, origin, weight = client_group()
    if group is None:
        return
    with contextlib.suppress(OSError):
        if favoured:
            group.mkdir(exist_ok=True)
            (group / weight[0]).write_text(weight[1])
            (group / "cgroup.procs").write_text(str(os.getpid()))
        else:
            (origin / "cgroup.procs").write_text(str(os.getpid()))
            group.rmdir()


def client_group() -> tuple[Path | None, Path, tuple[str, str]]:
    """The benchmark client's CPU group, the root group of its hierarchy, and the weight
    file with its largest value (cgroup v2 or v1's cpu hierarchy); None without cgroups."""
    root = Path("/sys/fs/cgroup")
    if (root / "cgroup.controllers").exists():
        return root / CLIENT_GROUP, root, ("cpu.weight", "10000")
    if (root / "cpu" / "cpu.shares").exists():
        return root / "cpu" / CLIENT_GROUP, root / "cpu", ("cpu.shares", "262144")
    return None, root, ("", "")


def outside_client_group() -> None:
    """preexec_fn for what the benchmark starts while favoured: back to the root group."""
    _, origin, _ = client_group()
    with contextlib.suppress(OSError):
        (origin / "cgroup.procs").write_text(str(os.getpid()))
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, 0)


# -- printing ----------------------------------------------------------------------------


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b and b == b and a == a else "—"


def row(label: str, a: float, b: float, fmt: str = "{:.2f} s") -> str:
    fa = fmt.format(a) if a == a else "—"
    fb = fmt.format(b) if b == b else "—"
    return f"| {label} | {fa} | {fb} | {ratio(a, b)} |"


def loop_lag_row(label: str, counts: dict[str, float]) -> str:
    """cgu-lab's controller loop during the burst (JupyterHub's hub keeps no such lag):
    how many of its 0.1 s wake-ups came late by more than 0.1 s and 0.5 s, and the bound
    of the bucket that holds the worst."""
    total = counts.get("+Inf", 0)
    worst = next((b for b, n in counts.items() if n == total), "+Inf")
    late = {b: total - counts.get(b, total) for b in ("0.1", "0.5")}
    return (
        f"| {label}: controller loop wake-ups late > 0.1 s / > 0.5 s (of {total:.0f}); "
        f"worst ≤ {worst} s | {late['0.1']:.0f} / {late['0.5']:.0f} | — | — |"
    )


def report(ours: dict, peer: dict, sizes: list[int], conditions: list[str]) -> None:
    print("\n| figure | cgu-lab | JupyterHub | ratio |\n|---|---|---|---|")
    if "single" in ours and "single" in peer:
        print(
            row(
                f"single start → /lab page, quiet (median of {len(ours['single'])})",
                statistics.median(ours["single"]),
                statistics.median(peer["single"]),
            )
        )
    for condition in conditions:
        io, ip = ours[(condition, "idle")], peer[(condition, "idle")]
        for label, key in (("via proxy", "notebook"), ("direct", "server")):
            print(
                row(
                    f"bystander's notebook {label}, p99, no burst, {condition}",
                    quantile(getattr(io, key), 0.99) * 1000,
                    quantile(getattr(ip, key), 0.99) * 1000,
                    "{:.0f} ms",
                )
            )
        for size in sizes:
            o, p = ours[(condition, size)], peer[(condition, size)]
            for name, q in (("p50", 0.5), ("p95", 0.95)):
                print(
                    row(
                        f"burst of {size}, {condition}: start {name}",
                        quantile(o["times"], q),
                        quantile(p["times"], q),
                    )
                )
            print(
                row(
                    f"burst of {size}, {condition}: slowest start",
                    max(o["times"], default=float("nan")),
                    max(p["times"], default=float("nan")),
                )
            )
            print(
                f"| burst of {size}, {condition}: failed starts | {len(o['failures'])} "
                f"| {len(p['failures'])} | — |"
            )
            for label, key in (
                ("notebook via proxy", "notebook"),
                ("notebook direct", "server"),
                ("API", "api"),
                ("own 10 ms sleep (control)", "own"),
            ):
                for name, q in (("p50", 0.5), ("p99", 0.99)):
                    print(
                        row(
                            f"burst of {size}, {condition}: bystander's {label} {name}",
                            quantile(getattr(o["probe"], key), q) * 1000,
                            quantile(getattr(p["probe"], key), q) * 1000,
                            "{:.0f} ms",
                        )
                    )
            print(
                row(
                    f"burst of {size}, {condition}: CPU-s per start, notebook",
                    o["cpu_notebook"],
                    p["cpu_notebook"],
                )
            )
            print(
                row(
                    f"burst of {size}, {condition}: CPU-s per start, platform",
                    o["cpu_platform"],
                    p["cpu_platform"],
                )
            )
            if o.get("loop_lag"):
                print(loop_lag_row(f"burst of {size}, {condition}", o["loop_lag"]))
            for failure in o["failures"][:3] + p["failures"][:3]:
                print(f"  failure: {failure}")
    print(
        row("idle notebook + 1 kernel, RSS", ours["idle_mem"][0], peer["idle_mem"][0], "{:.0f} MiB")
    )
    print(
        row("idle notebook + 1 kernel, PSS", ours["idle_mem"][1], peer["idle_mem"][1], "{:.0f} MiB")
    )
    size = sizes[0]
    key = (conditions[0], size)
    if key in ours and key in peer:
        print(
            row(
                f"idle server (mean of {size}), RSS",
                ours[key]["rss"],
                peer[key]["rss"],
                "{:.0f} MiB",
            )
        )
        print(
            row(
                f"idle server (mean of {size}), PSS",
                ours[key]["pss"],
                peer[key]["pss"],
                "{:.0f} MiB",
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bursts", default="10,30")
    parser.add_argument("--big", action="store_true", help="add a burst of 60")
    parser.add_argument("--busy", type=int, default=3)
    parser.add_argument("--busy-kind", choices=("notebooks", "host"), default="notebooks")
    parser.add_argument("--single", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--only", choices=("cgu", "hub"))
    parser.add_argument("--timeline", help="write each cgu-lab start's progress events here")
    parser.add_argument("--probes", help="write the bystander's every answer during a burst here")
    parser.add_argument(
        "--new-accounts",
        action="store_true",
        help="cgu-lab's students start for the first time ever: their system accounts and "
        "homes are made during the burst (JupyterHub's are made before it)",
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quiet-only", action="store_true")
    group.add_argument("--busy-only", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.bursts.split(",")] + ([60] if args.big else [])
    conditions = ["quiet"] if args.quiet_only else ["busy"] if args.busy_only else ["quiet", "busy"]
    print(f"host: {os.cpu_count()} cores, load {load()} at the start; peer: JupyterHub {version()}")
    print(f"busy host: {args.busy} {args.busy_kind} computing; bursts {sizes}", flush=True)
    kinds = {"cgu": CguLab, "hub": JupyterHub}
    chosen = [args.only] if args.only else ["cgu", "hub"]
    results = {k: run_platform(kinds[k], args, sizes, conditions) for k in chosen}
    print(f"load {load()} at the end")
    if len(results) == 2:
        report(results["cgu"], results["hub"], sizes, conditions)
    else:
        only = results[chosen[0]]
        report(only, only, sizes, conditions)


if __name__ == "__main__":
    main()

"""Where one notebook start's CPU-seconds go (the profile table of issue 25).

Each part is measured on its own, as root, on this host (median of RUNS):

- the launcher (local_launch): as a module of the package (`python -m`, what the
  backend ran before) and as a file with `-I -S` (what it runs now), exec'ing /bin/true;
- account creation: `useradd` of a new account and its removal (first start of a user);
- cgroup setup: Limiter.make + drop of one notebook group;
- JupyterLab itself, from exec until `/api/status` answers, with the platform's server
  extensions as the notebooks' environment has them, then without some, to show
  what each costs at start; and its imports alone (`python -c 'import ...'`);
- JupyterLab forked from a warm launcher (backends/local_warm: the imports done once
  per environment), from the request until `/api/status` answers, and what the
  launcher's own imports cost once;
- slirp4netns and the controller's own work are read from a real start in
  class_burst.py (the notebook's processes, the controller's CPU per start).

CPU-seconds are user + system of the process and its waited children.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cgu_lab.backends import local_launch  # noqa: E402
from cgu_lab.backends.local_limits import Limiter  # noqa: E402
from cgu_lab.backends.local_warm import WarmLaunchers  # noqa: E402

RUNS = 3
BIN = Path(sys.executable).parent
EXTENSIONS = (
    "cgu_lab",
    "jupyter_lsp",
    "jupyter_server_proxy",
    "jupyter_server_ydoc",
    "jupyter_server_fileid",
    "jupyter_server_terminals",
    "notebook_shim",
)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_of(command: list[str], **kwargs) -> float:
    before = children_cpu()
    subprocess.run(command, check=True, capture_output=True, **kwargs)
    return children_cpu() - before


def launcher() -> tuple[float, float]:
    plan = '{"argv": ["/bin/true"], "env": {}, "cwd": "/"}'
    env = {**os.environ, "CGU_LAUNCH_PLAN": plan}
    module = [sys.executable, "-m", "cgu_lab.backends.local_launch"]
    as_file = [sys.executable, "-I", "-S", local_launch.__file__]
    return (
        statistics.median(cpu_of(module, env=env, cwd=ROOT) for _ in range(RUNS)),
        statistics.median(cpu_of(as_file, env=env) for _ in range(RUNS)),
    )


def account() -> float:
    name = f"cgu-prof-{os.getpid() % 100000}"
    times = []
    for _ in range(RUNS):
        before = children_cpu()
        subprocess.run(["useradd", "-M", "-s", "/usr/sbin/nologin", name], check=True)
        times.append(children_cpu() - before)
        subprocess.run(["userdel", name], check=False)
    return statistics.median(times)


def cgroups() -> float:
    limiter = Limiter()
    if limiter.mode == "rlimit":
        return float("nan")
    limiter.bind(f"prof{os.getpid()}")
    began = time.process_time()
    for i in range(RUNS):
        limiter.make(f"nb-{i}", 1000, 2**30)
        limiter.drop(f"nb-{i}")
    return (time.process_time() - began) / RUNS


def lab_command(home: Path, disabled: tuple[str, ...] = ()) -> tuple[list[str], dict]:
    """A JupyterLab on a socket in `home`, with a token: its argv and environment."""
    argv = [
        str(BIN / "jupyter-lab"),
        "--no-browser",
        f"--ServerApp.sock={home / 's.sock'}",
        "--ServerApp.allow_root=True",
        "--IdentityProvider.token=t",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        *[f"--ServerApp.jpserver_extensions={name}=False" for name in disabled],
    ]
    env = {
        "PATH": f"{BIN}:/usr/bin:/bin",
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "LANG": "C.UTF-8",
    }
    return argv, env


def answered(sock: Path, gone) -> None:
    """Until the server on `sock` answers /api/status (`gone()`: it exited)."""
    transport = httpx.HTTPTransport(uds=str(sock))
    deadline = time.monotonic() + 120
    with httpx.Client(transport=transport, timeout=2) as client:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                # A local Host, or Jupyter Server refuses the request.
                if client.get("http://localhost/api/status?token=t").status_code == 200:
                    return
            if gone() or time.monotonic() > deadline:
                raise RuntimeError("jupyter-lab did not answer")
            time.sleep(0.02)


def cpu_of_pid(pid: int) -> float:
    """User + system CPU-seconds of a running process (not of its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server(disabled: tuple[str, ...]) -> tuple[float, float]:
    """CPU-seconds and wall seconds of one JupyterLab until /api/status answers."""
    home = Path(tempfile.mkdtemp(prefix="cgu-prof-"))
    argv, env = lab_command(home, disabled)
    began = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        answered(home / "s.sock", lambda: process.poll() is not None)
        return cpu_of_pid(process.pid), time.perf_counter() - began
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(home, ignore_errors=True)


async def warm_servers() -> tuple[float, float, float]:
    """The warm launcher's own CPU-seconds (once per environment), then the median
    CPU-seconds and wall seconds of a JupyterLab it forks, until /api/status answers.
    The fork's child is a new process: its CPU counts from the fork."""
    logs = Path(tempfile.mkdtemp(prefix="cgu-prof-warm-"))
    launchers = WarmLaunchers(logs)
    try:
        launcher = await launchers.launcher(BIN / "jupyter-lab")
        if launcher is None:
            raise RuntimeError(f"no warm launcher: {(logs / 'warm-launcher.log').read_text()}")
        imports = cpu_of_pid(launcher.process.pid)
        runs = []
        for _ in range(RUNS):
            home = Path(tempfile.mkdtemp(prefix="cgu-prof-"))
            argv, env = lab_command(home)
            began = time.perf_counter()
            with open(home / "log", "ab") as log:
                process = await launcher.launch({"argv": argv, "env": env, "cwd": str(home)}, log)
            if process is None:
                raise RuntimeError("the warm launcher refused a start")
            try:
                gone = lambda forked=process: forked.returncode is not None  # noqa: E731
                await asyncio.to_thread(answered, home / "s.sock", gone)
                runs.append((cpu_of_pid(process.pid), time.perf_counter() - began))
            finally:
                os.kill(process.pid, 15)
                await process.wait()
                shutil.rmtree(home, ignore_errors=True)
        cpu = statistics.median(r[0] for r in runs)
        return imports, cpu, statistics.median(r[1] for r in runs)
    finally:
        await launchers.close()
        shutil.rmtree(logs, ignore_errors=True)


def imports(modules: str) -> float:
    return statistics.median(
        cpu_of([sys.executable, "-c", f"import {modules}"]) for _ in range(RUNS)
    )


def load() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def main() -> None:
    print(f"load {load()} at the start; median of {RUNS}")
    as_module, as_file = launcher()
    print("| part of one start | CPU-s |\n|---|---|")
    print(f"| launcher as `python -m cgu_lab.backends.local_launch` (before) | {as_module:.3f} |")
    print(f"| launcher as a file, `python -I -S` (now) | {as_file:.3f} |")
    print(f"| account creation (useradd, first start of a user only) | {account():.3f} |")
    print(f"| cgroups: make + drop one notebook's (cpu, memory, pids) | {cgroups():.4f} |")
    variants = [
        ("JupyterLab with every server extension of the environment", ()),
        ("… without jupyter_server_ydoc + fileid (collaboration)", EXTENSIONS[3:5]),
        ("… without jupyter_server_proxy", EXTENSIONS[2:3]),
        ("… without jupyter_lsp", EXTENSIONS[1:2]),
        ("… without cgu_lab's server extension", EXTENSIONS[0:1]),
        ("JupyterLab alone (jupyterlab + terminals)", EXTENSIONS[:5] + EXTENSIONS[6:]),
    ]
    for label, disabled in variants:
        runs = [server(disabled) for _ in range(RUNS)]
        cpu = statistics.median(r[0] for r in runs)
        wall = statistics.median(r[1] for r in runs)
        print(f"| {label}: exec → /api/status | {cpu:.2f} (wall {wall:.2f} s) |")
    once, cpu, wall = asyncio.run(warm_servers())
    print(f"| warm launcher's imports, once per environment (local_warm) | {once:.2f} |")
    print(
        f"| JupyterLab forked from the warm launcher: fork → /api/status | {cpu:.2f} "
        f"(wall {wall:.2f} s) |"
    )
    print(f"| imports only: jupyterlab.labapp | {imports('jupyterlab.labapp'):.2f} |")
    print(f"| imports only: jupyter_server.serverapp | {imports('jupyter_server.serverapp'):.2f} |")
    print(f"| imports only: cgu_lab.notebook.app | {imports('cgu_lab.notebook.app'):.2f} |")
    print(f"| imports only: jupyter_server_ydoc | {imports('jupyter_server_ydoc.app'):.2f} |")
    print(f"| python itself (-c pass) | {imports('sys'):.3f} |")
    print(f"load {load()} at the end")


if __name__ == "__main__":
    main()

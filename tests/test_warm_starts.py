"""Notebooks forked from a warm launcher (backends/local_warm*) against exec'd ones.

Real servers, as root: per-user accounts, cgroups, private networks. A server forked by
the warm launcher must be what the exec'd launcher makes (its account, its network, its
cgroup, its limits, the environment its kernels get) and hold nothing of another
student's; with the launcher killed, a start is exec'd and a new launcher begun.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import psutil
import pytest

from cgu_lab.backends import local_warm
from cgu_lab.backends.base import BackendError, EnvironmentSpec, NotebookSpec
from cgu_lab.backends.local import LocalBackend
from cgu_lab.backends.local_warm import WarmProcess, interpreter_of
from cgu_lab.controller.settings import Settings
from cgu_lab.store.db import Database
from cgu_lab.store.models import User

from .harness import reachable_dir

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="per-user accounts, cgroups and network namespaces need root"
)

PREFIX = Path(sys.prefix)
JUPYTER = PREFIX / "bin" / "jupyter-lab"
# Differ by notebook, or are set by jupyter_server per kernel.
PER_NOTEBOOK = {
    "HOME", "USER", "LOGNAME", "JUPYTER_CONFIG_DIR", "CGU_NOTEBOOK_ID", "CGU_NOTEBOOK_OWNER",
    "CGU_NOTEBOOK_NAME", "CGU_PROXY_SECRET", "CGU_API_TOKEN", "JPY_PARENT_PID",
    "JPY_SESSION_NAME", "KERNEL_LAUNCH_TIMEOUT", "CGU_CPU_LIMIT", "XDG_RUNTIME_DIR", "TMPDIR",
}  # fmt: skip


def spec(notebook_id: int, owner: str) -> NotebookSpec:
    return NotebookSpec(
        id=notebook_id,
        owner=owner,
        name="lab",
        base_path=f"/notebook/{owner}/lab/",
        environment=EnvironmentSpec(name="default", local_prefix=str(PREFIX)),
        cpu_milli=1000,
        memory=2**30,
        gpu_type=None,
        gpus=0,
        proxy_secret=secrets.token_urlsafe(16),
        controller_url="http://127.0.0.1:1",
    )


async def progress(percent: int, message: str) -> None:
    pass


def proc(pid: int, name: str) -> str:
    return Path(f"/proc/{pid}/{name}").read_text()


def status_lines(pid: int, *keys: str) -> dict[str, str]:
    lines = dict(line.split(":", 1) for line in proc(pid, "status").splitlines())
    return {key: lines[key].split() for key in keys}


def environ(pid: int) -> dict[str, str]:
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(p.decode().split("=", 1) for p in pairs if b"=" in p)


def writable_shared(pid: int) -> set[str]:
    """The mappings a process shares writably with others (an 's' with a 'w')."""
    found = set()
    for line in proc(pid, "maps").splitlines():
        fields = line.split()
        if fields[1][1] == "w" and fields[1][3] == "s":
            found.add(" ".join(fields[3:]))
    return found


async def ask(notebook: NotebookSpec, state: dict, method: str, path: str, body: dict) -> int:
    """A state change in the notebook's server, as the proxy sends it; its status."""
    connector = aiohttp.UnixConnector(path=state["socket"])
    headers = {
        "X-Cgu-User": notebook.owner,
        "X-Cgu-Proxy-Secret": notebook.proxy_secret,
        # As JupyterLab does for state changes: the XSRF cookie and header.
        "X-XSRFToken": "x",
        "Cookie": "_xsrf=x",
    }
    async with aiohttp.ClientSession(connector=connector) as client:
        url = f"http://localhost{notebook.base_path}{path}"
        async with client.request(method, url, headers=headers, json=body) as response:
            return response.status


async def kernel_pid(backend: LocalBackend, notebook: NotebookSpec, state: dict) -> int:
    """Start a kernel in the notebook's server and find its process."""
    assert await ask(notebook, state, "POST", "api/kernels", {}) == 201
    for _ in range(200):
        children = backend.servers.processes.tree(state, notebook.id)
        kernels = [p for p in children if "ipykernel" in " ".join(p.cmdline())]
        if kernels:
            return kernels[0].pid
        await asyncio.sleep(0.1)
    raise AssertionError("no kernel process")


def test_only_a_python_jupyter_lab_is_forked(tmp_path):
    assert interpreter_of(JUPYTER) is not None
    wrapper = tmp_path / "jupyter-lab"
    wrapper.write_text('#!/bin/sh\nexec conda run jupyter-lab "$@"\n')
    wrapper.chmod(0o755)
    assert interpreter_of(wrapper) is None
    assert interpreter_of(tmp_path / "missing") is None


def test_a_forked_server_is_what_an_exec_d_one_is():
    root = reachable_dir()
    url = f"sqlite:///{root / 'store.sqlite'}"
    Database(url).upgrade_sync()
    try:
        backend = LocalBackend(Settings(data_dir=root / "data", run_as="per-user", db_url=url))
        asyncio.run(compare(backend, url))
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def compare(backend: LocalBackend, url: str) -> None:
    await backend.open()
    if backend.limiter.mode == "rlimit":
        pytest.skip("warm starts need cgroups (a forked server is known by its cgroup)")
    owners = [f"w{secrets.token_hex(3)}" for _ in range(3)]
    db = Database(url)
    async with db.session() as session:
        session.add_all([User(name=owner, role="student") for owner in owners])
    await db.close()
    notebooks = [spec(9100 + i, owner) for i, owner in enumerate(owners)]
    states: list[dict] = []
    try:
        launcher = await backend.servers.warm.launcher(JUPYTER)
        assert launcher is not None, "the warm launcher did not start (logs/warm-launcher.log)"
        for notebook in notebooks[:2]:
            states.append(await backend.start(notebook, progress))
        warm = [backend.servers.children[n.id] for n in notebooks[:2]]
        assert all(isinstance(process, WarmProcess) for process in warm)
        # A launcher that does not answer: the start is exec'd, the launcher ended.
        os.kill(launcher.process.pid, signal.SIGSTOP)
        with pytest.MonkeyPatch.context() as patch:  # a second of silence, not its ten
            patch.setattr(local_warm, "PID_TIMEOUT", 1.0)
            states.append(await backend.start(notebooks[2], progress))
        assert not isinstance(backend.servers.children[notebooks[2].id], WarmProcess)
        assert await launcher.process.wait() == -signal.SIGKILL
        # Killed: the next start begins a new one.
        again = await backend.servers.warm.launcher(JUPYTER)
        assert again is not None and again.process.pid != launcher.process.pid

        # A restarted controller adopts them (a new backend over the same data).
        restarted = LocalBackend(backend.settings)
        await restarted.open()
        for notebook, state in zip(notebooks, states, strict=True):
            seen = await restarted.observe(notebook, state)
            assert seen.alive and seen.ready, seen.detail
        await restarted.close()
        pids = [state["pid"] for state in states]
        host_net = os.readlink("/proc/self/ns/net")
        nets = {os.readlink(f"/proc/{pid}/ns/net") for pid in pids}
        assert host_net not in nets and len(nets) == 3  # each in a network of its own
        for notebook, state, pid in zip(notebooks, states, pids, strict=True):
            account = await backend.accounts.account(notebook.owner)
            ids = status_lines(pid, "Uid", "Gid", "Groups")
            assert ids["Uid"] == [str(account.uid)] * 4
            assert ids["Gid"] == [str(account.gid)] * 4
            assert ids["Groups"] == []
            assert f"nb-{notebook.id}" in proc(pid, "cgroup")
            assert backend.limiter.holds(pid, notebook.id)
            assert os.readlink(f"/proc/{pid}/cwd") == str(backend.files.home(notebook.owner, "lab"))
            assert os.getsid(pid) == pid  # a session of its own
            assert await backend.servers.answers(notebook, state)
            # What its extensions keep in its home, there (paths computed at import too).
            home = backend.files.home(notebook.owner, "lab")
            log = backend.log_path(notebook.owner, "lab").read_text()
            assert (home / ".local/share/jupyter/file_id_manager.db").is_file(), [
                notebook.id,
                [line for line in log.splitlines() if "atabase" in line],
            ]
            assert "Traceback" not in log
            theme = "lab/api/settings/@jupyterlab/apputils-extension:themes"
            assert (
                await ask(notebook, state, "PUT", theme, {"raw": '{"theme-scrollbars": true}'})
                == 204
            )
            settings = home / ".jupyter/lab/user-settings/@jupyterlab/apputils-extension"
            assert (settings / "themes.jupyterlab-settings").is_file()
            # Nothing of the others': no descriptor on their logs, sockets or homes.
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                for other in notebooks:
                    if other is not notebook:
                        assert other.owner not in target, target
                assert "warm-launcher" not in target, target
        # The same limits, the same scheduling, the same environment for kernels.
        warm_pid, exec_pid = pids[0], pids[2]
        assert proc(warm_pid, "limits") == proc(exec_pid, "limits")
        assert os.getpriority(os.PRIO_PROCESS, warm_pid) == os.getpriority(
            os.PRIO_PROCESS, exec_pid
        )
        assert status_lines(warm_pid, "CapEff")["CapEff"] == ["0000000000000000"]
        # What ps and the backend read: its command line, its environment with the markers.
        for notebook, state in zip(notebooks, states, strict=True):
            server = backend.servers.processes.server(state, notebook.id)
            assert server is not None and backend.servers.processes.marked(server, notebook.id)
        commands = [
            [
                word.replace(notebooks[i].owner, "<owner>").replace(str(notebooks[i].id), "<id>")
                for word in psutil.Process(pids[i]).cmdline()
                if word  # the warm one's room to spare: empty arguments after its own
            ]
            for i in (0, 2)
        ]
        assert commands[0] == commands[1] and str(JUPYTER) in commands[0]
        kernels = [await kernel_pid(backend, notebooks[i], states[i]) for i in (0, 2)]
        envs = []
        for i, pid in [(0, warm_pid), (2, exec_pid), (0, kernels[0]), (2, kernels[1])]:
            home, server = str(backend.files.home(notebooks[i].owner, "lab")), str(pids[i])
            envs.append(
                {
                    name: value.replace(home, "~").replace(server, "<server>")
                    for name, value in environ(pid).items()
                    if name not in PER_NOTEBOOK
                }
            )
        assert envs[0] == envs[1]  # the servers' own
        assert envs[2] == envs[3]  # their kernels'
        # Two students' servers share no writable memory with each other.
        shared = [writable_shared(pid) for pid in pids[:2]]
        assert not (shared[0] & shared[1]), shared
    finally:
        for notebook, state in zip(notebooks, states, strict=False):
            await backend.stop(notebook, state)
        await backend.close()
        for owner in owners:
            with contextlib.suppress(BackendError):
                account = await backend.accounts.account(owner)
                subprocess.run(["userdel", account.name], check=False, capture_output=True)

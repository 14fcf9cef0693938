"""Student code never answers on the controller's host: cookies ignore ports.

A browser sends a host's cookies to every port of that host, so a kernel listening on any
port of the host the controller is served at would receive an administrator's log-in the
moment they follow one link there, and replay it. These tests attack a real installation
the way it was attacked: notebooks run as per-user accounts, their kernels listen, a
"browser" follows the link with the admin's cookie, and the controller restarts while a
kernel tries to take its port. Each local notebook server lives in a network namespace of
its own (backends/local_launch.outbound), reached by the proxy over a Unix socket.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import httpx
import psutil
import pytest

from ..harness import BIN, login_cookie, reachable_dir, run_code, wait_until

# The controller restarts while a kernel tries to take its port: a process (end to end).
pytestmark = [
    pytest.mark.end_to_end,
    pytest.mark.skipif(
        os.geteuid() != 0, reason="per-user accounts and network namespaces need root"
    ),
]

LISTEN = """
import socket, threading
_got = []
_srv = socket.socket()
_srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
_srv.bind(("0.0.0.0", {port}))
_srv.listen()
def _serve():
    while True:
        conn, _ = _srv.accept()
        _got.append(conn.recv(65536))
        conn.close()
threading.Thread(target=_serve, daemon=True).start()
print(_srv.getsockname()[1])
"""

GRAB = """
import socket, threading, time
_got = []
def _take():
    while True:
        srv = socket.socket()
        try:
            srv.bind(("127.0.0.1", {port}))
            srv.listen()
        except OSError:
            srv.close()
            time.sleep(0.02)
            continue
        while True:
            conn, _ = srv.accept()
            _got.append(conn.recv(65536))
            conn.close()
threading.Thread(target=_take, daemon=True).start()
print("waiting")
"""


def run(session, code: str, kernel: str = "") -> str:
    return asyncio.run(run_code(session, "alice", "net", code, kernel)).strip()


@pytest.fixture(scope="module")
def kernel(controller, alice):
    """alice/net, running, and one kernel of it (its id)."""
    alice.ok("POST", "/api/notebooks", 201, json={"name": "net", "cpu": "0.5", "memory": "1Gi"})
    started = alice.ok("POST", "/api/notebooks/alice/net/start?wait=true", 202)
    assert started["state"] == "running", started
    return alice.ok("POST", "/notebook/alice/net/api/kernels", 201, json={})["id"]


def host_addresses() -> list[str]:
    """This machine's IPv4 addresses, loopback first."""
    found = ["127.0.0.1"]
    for addresses in psutil.net_if_addrs().values():
        found += [
            a.address
            for a in addresses
            if a.family == socket.AF_INET and not a.address.startswith("127.")
        ]
    return found


def server_of(name: str) -> psutil.Process:
    for process in psutil.process_iter():
        try:
            if process.environ().get("CGU_NOTEBOOK_NAME") == name and "jupyter-lab" in " ".join(
                process.cmdline()
            ):
                return process
        except (psutil.Error, OSError):
            continue
    raise AssertionError(f"no server for {name}")


def test_the_server_lives_in_a_network_of_its_own(kernel, controller):
    server = server_of("net")
    assert os.readlink(f"/proc/{server.pid}/ns/net") != os.readlink("/proc/self/ns/net")
    # It listens on a socket only its account may open, and on no port of this host.
    [sock] = (controller.data_dir / "run").glob("nb-*/jupyter.sock")
    assert sock.stat().st_uid == server.uids().real and sock.stat().st_mode & 0o077 == 0
    mine = {c.laddr.port for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    assert controller.port in mine


def test_a_kernel_listening_never_receives_a_browsers_cookies(kernel, alice, admin, controller):
    port = int(run(alice, LISTEN.format(port=0), kernel))
    # The admin follows a link to the kernel's port on every name of this host.
    for address in host_addresses():
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://{address}:{port}/plot", cookies=login_cookie(admin), timeout=3)
    assert run(alice, "print(len(_got))", kernel) == "0"
    # Nor can the kernel reach the controller's port (or anything) on the host's loopback.
    reach = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {controller.port}), timeout=3)\n"
        "    print('reached')\n"
        "except OSError as e:\n"
        "    print(type(e).__name__)"
    )
    assert run(alice, reach, kernel) in ("ConnectionRefusedError", "TimeoutError")


def test_the_kernel_still_reaches_the_network_outside(kernel, alice):
    if not shutil.which("slirp4netns"):
        pytest.skip("slirp4netns is not installed: notebooks have no way out")
    outside = [a for a in host_addresses() if not a.startswith("127.")]
    if not outside:
        pytest.skip("this machine has no address but loopback")
    server = socket.create_server((outside[0], 0))
    port = server.getsockname()[1]

    def answer() -> None:
        conn, _ = server.accept()
        conn.sendall(b"hello from outside")
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    fetch = (
        "import socket\n"
        f"c = socket.create_connection(('{outside[0]}', {port}), timeout=10)\n"
        "print(c.recv(100).decode())"
    )
    try:
        assert run(alice, fetch, kernel) == "hello from outside"
    finally:
        server.close()


def test_a_kernel_cannot_take_the_controllers_port_while_it_restarts(
    kernel, alice, admin, controller
):
    # The kernel binds the port the moment it is free: in its own network namespace that
    # is its own loopback, never the host's, so the controller gets its port back.
    assert run(alice, GRAB.format(port=controller.port), kernel) == "waiting"
    controller.stop()
    controller.start()  # it binds its port again: nobody on this host holds it
    assert httpx.get(f"{controller.url}/api/health", timeout=5).status_code == 200
    login = httpx.post(
        f"{controller.url}/login",
        data={"username": "admin", "password": "wrong-password-here"},
        timeout=10,
    )
    assert login.status_code in (200, 303, 400, 401, 429)  # the controller's answer
    wait_until(
        lambda: alice.get("/notebook/alice/net/api/status").status_code == 200,
        timeout=30,
        what="the notebook adopted by the restarted controller",
    )
    assert run(alice, "print(len(_got))", kernel) == "0"


def test_the_controller_refuses_a_port_someone_else_holds(tmp_path: Path):
    holder = socket.create_server(("127.0.0.1", 0))
    port = holder.getsockname()[1]
    base = reachable_dir()
    try:
        started = subprocess.run(
            [
                *(str(BIN / "cgu-lab"), "controller", "--data-dir", str(base / "data")),
                *("--port", str(port)),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "CGU_LAB_SKIP_ENVIRONMENTS": "1"},
        )
    finally:
        holder.close()
        shutil.rmtree(base, ignore_errors=True)
    assert started.returncode != 0
    assert f"port {port} on 127.0.0.1 is already in use by process {os.getpid()}" in (
        started.stderr
    ), started.stderr[-2000:]


def test_the_proxy_reaches_a_stopped_and_restarted_server_on_its_new_socket(
    kernel, alice, controller
):
    alice.ok("POST", "/api/notebooks/alice/net/stop?wait=true", 202)
    assert not list((controller.data_dir / "run").glob("nb-*/jupyter.sock"))
    alice.ok("POST", "/api/notebooks/alice/net/start?wait=true", 202)
    wait_until(
        lambda: alice.get("/notebook/alice/net/api/status").status_code == 200,
        timeout=30,
        what="the restarted server answering through the proxy",
    )


@pytest.mark.skipif(shutil.which("ip") is None, reason="needs ip (iproute2)")
def test_a_start_leaves_the_hosts_named_network_namespaces_alone(controller, alice):
    """Other software's network namespaces on the machine keep their names.

    slirp4netns's sandbox detaches its old root with everything below it; run in the
    host's mount namespace, where `ip netns add` has made /run/netns a shared mount, that
    unmounted each of the host's named namespaces (a container's, a test cluster's node)
    at every notebook start, and `ip netns exec` then failed for them."""
    name = f"cgu-probe-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        alice.ok("POST", "/api/notebooks", 201, json={"name": "ns", "cpu": "0.5", "memory": "1Gi"})
        started = alice.ok("POST", "/api/notebooks/alice/ns/start?wait=true", 202)
        assert started["state"] == "running", started
        assert f" /run/netns/{name} " in Path("/proc/self/mountinfo").read_text()
        subprocess.run(["ip", "netns", "exec", name, "true"], check=True)
        alice.ok("POST", "/api/notebooks/alice/ns/stop?wait=true", 202)
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)

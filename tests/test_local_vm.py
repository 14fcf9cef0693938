"""VM notebooks on the local backend, with real QEMU booting a real (small) Linux.

The image is scripts/vm-test-image.sh's: a Debian kernel and a busybox initramfs
whose shell runs on the VM's screen, the VM's own disk on /mnt/disk and the
notebook's home on /mnt/home (9p). The tests talk to the console as noVNC does:
RFB over the proxy's websocket on the notebook's origin, typing key events, and
read the effect in the home, on the host. KVM is used where it is usable; on a
machine without it, TCG boots the same image in a few more seconds.

The controller is the app in the test's process with the real local backend
(tests/inprocess.py, as tests/test_gpus_and_culling.py runs it), served over HTTP
for the consoles' websockets: its culler passes only when a test runs one, after
moving the platform's clock past the idle limit instead of waiting through it.
"""

from __future__ import annotations

import asyncio
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
import websockets

from cgu_lab.backends import local_qemu as qemu
from cgu_lab.backends.local import LocalBackend

from .harness import (
    http_client,
    kill_notebooks,
    reachable_dir,
    wait_running,
    wait_state,
    wait_until,
)
from .inprocess import InProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parent.parent
SHIFTED = set('~!@#$%^&*()_+{}|:"<>?') | {chr(c) for c in range(ord("A"), ord("Z") + 1)}
RETURN, SHIFT = 0xFF0D, 0xFFE1
# Between the culler's passes: longer than the module runs, so that its one pass is the
# one the culler's test runs (`site.cull()`).
A_DAY = 86400


def build_image() -> Path:
    result = subprocess.run(
        [str(ROOT / "scripts" / "vm-test-image.sh")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"vm-test-image.sh failed: {result.stderr[-2000:]}"
    return Path(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def site():
    """The controller in this process with the real local backend, served over HTTP; its
    culler passes when a test runs one, and its VMs get 20 s to power off."""
    assert shutil.which("qemu-system-x86_64"), "QEMU is missing: run scripts/deps.sh --test"
    base = reachable_dir()
    # Where every notebook account can read it, as an admin installs an image.
    image = Path(shutil.copytree(build_image(), base / "image"))
    app = InProcess(
        base / "data", backend=LocalBackend, cull_interval=A_DAY, vm_shutdown_timeout=20
    ).start()
    app.serve()
    for name, role in (("vm-admin", "admin"), ("vmo", "student"), ("vmv", "student"),
                       ("vmx", "student")):  # fmt: skip
        app.create_user(name, role)
    app.image = image
    yield app
    app.stop()
    kill_notebooks(app.data_dir)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def users(site):
    # Over real HTTP, as the consoles' websockets are (one way for every client here).
    sessions = {name: http_client(site, name) for name in ("vm-admin", "vmo", "vmv", "vmx")}
    admin = sessions["vm-admin"]
    admin.ok(
        "PUT",
        "/api/environments/testvm",
        json={"display_name": "Test VM", "local_prefix": str(site.image)},
    )
    admin.ok("PUT", "/api/quotas/default", json={"cpu": 4, "memory": "8Gi", "notebooks": 3})
    yield sessions
    for session in sessions.values():
        session.close()


class Console:
    """noVNC's side of a VM console: RFB over the proxy's websocket, as that user."""

    def __init__(self, session, owner: str, name: str) -> None:
        self.url, self.headers, self.connect = session.notebook_socket(
            f"/notebook/{owner}/{name}/websockify"
        )
        self.ws = None
        self.buffer = b""

    async def __aenter__(self) -> Console:
        self.ws = await websockets.connect(
            self.url,
            additional_headers=self.headers,
            subprotocols=["binary"],
            max_size=None,
            **self.connect,
        )
        return self

    async def __aexit__(self, *_exc) -> None:
        await self.ws.close()

    async def read(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self.buffer += await asyncio.wait_for(self.ws.recv(), 30)
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    async def handshake(self) -> tuple[int, int, str]:
        version = await self.read(12)
        assert version.startswith(b"RFB 003."), version
        await self.ws.send(b"RFB 003.008\n")
        count = (await self.read(1))[0]
        types = await self.read(count)
        assert 1 in types, f"the console asks for a password: {list(types)}"
        await self.ws.send(b"\x01")
        assert await self.read(4) == b"\0\0\0\0"
        await self.ws.send(b"\x01")  # shared
        width, height = struct.unpack(">HH", await self.read(4))
        await self.read(16)  # pixel format
        (length,) = struct.unpack(">I", await self.read(4))
        return width, height, (await self.read(length)).decode()

    async def key(self, keysym: int) -> None:
        for down in (1, 0):
            await self.ws.send(struct.pack(">BBxxI", 4, down, keysym))
            await asyncio.sleep(0.01)

    async def type(self, text: str) -> None:
        """Each character as a key press (with Shift where a US keyboard needs it), then Return."""
        for char in text:
            if char in SHIFTED:
                await self.ws.send(struct.pack(">BBxxI", 4, 1, SHIFT))
            await self.key(ord(char))
            if char in SHIFTED:
                await self.ws.send(struct.pack(">BBxxI", 4, 0, SHIFT))
        await self.key(RETURN)


def run(coroutine):
    return asyncio.run(coroutine)


async def typed(session, owner: str, name: str, command: str) -> str:
    async with Console(session, owner, name) as console:
        _, _, title = await console.handshake()
        await console.type(command)
        await asyncio.sleep(0.5)
        return title


def home(site, owner: str, name: str) -> Path:
    return site.data_dir / "homes" / owner / name


def wait_shell(site, session, owner: str, name: str, timeout: float = 150) -> None:
    """Until the guest's shell runs what is typed (it boots while the console is up)."""
    marker = home(site, owner, name) / "booted"

    def ready() -> bool:
        run(typed(session, owner, name, "touch /mnt/home/booted"))
        return marker.exists()

    wait_until(ready, timeout=timeout, interval=2, what="the VM's shell")


def test_image_manifest_is_checked_and_makes_the_command_line(tmp_path) -> None:
    (tmp_path / "disk.qcow2").write_bytes(b"")
    with pytest.raises(qemu.ImageError, match=r"has no vm\.json"):
        qemu.read_image(tmp_path)
    (tmp_path / "vm.json").write_text('{"disk": "../../etc/passwd"}')
    with pytest.raises(qemu.ImageError, match="must stay inside"):
        qemu.read_image(tmp_path)
    (tmp_path / "vm.json").write_text('{"disk": "disk.qcow2", "firmware": "coreboot"}')
    with pytest.raises(qemu.ImageError, match="bios or uefi"):
        qemu.read_image(tmp_path)
    (tmp_path / "vm.json").write_text('{"disk": "disk.qcow2", "shared_folder": "home"}')
    image = qemu.read_image(tmp_path)
    run = tmp_path / "run"
    argv = qemu.argv("qemu", image, run, tmp_path / "d", tmp_path, 2500, 2 * 2**30, "tcg", "n")
    assert argv[argv.index("-smp") + 1] == "3" and argv[argv.index("-m") + 1] == "1856M"
    assert f"unix:{run / 'vnc.sock'},share=force-shared" in argv
    assert any(a.startswith(f"local,path={tmp_path},mount_tag=home") for a in argv)
    assert "-netdev" not in argv and "-kernel" not in argv


def test_vm_console_types_persists_and_is_read_only_for_viewers(site, users) -> None:
    owner, viewer, stranger = users["vmo"], users["vmv"], users["vmx"]
    version = owner.ok("GET", "/api/version")["backend"]
    assert version["vm_notebooks"] is True
    body = {"name": "box", "environment": "testvm", "kind": "vm", "cpu": 1, "memory": "512Mi"}
    owner.ok("POST", "/api/notebooks", 201, json=body)
    owner.ok("POST", "/api/notebooks/vmo/box/start?wait=true", 202)
    nb = wait_running(owner, "vmo", "box", 120)
    assert nb["kind"] == "vm"

    # The console page and its noVNC are served on the notebook's origin.
    page = owner.get("/notebook/vmo/box/lab")
    assert page.status_code == 200 and "vm_console.js" in page.text
    assert 'data-view-only="false"' in page.text
    script = owner.get("/notebook/vmo/box/static/vendor/novnc/core/rfb.js")
    assert script.status_code == 200 and "export default class RFB" in script.text
    info = owner.ok("GET", "/notebook/vmo/box/api/vm")
    assert info["accel"] in ("kvm", "tcg") and info["vcpus"] == 1

    # Typed in the console, run by the guest: a file on its disk and one in the home.
    wait_shell(site, owner, "vmo", "box")
    run(typed(owner, "vmo", "box", "echo typed >/mnt/disk/on-disk; touch /mnt/home/in-home; sync"))
    wait_until(lambda: (home(site, "vmo", "box") / "in-home").exists(), 30, what="typed command")

    # A stranger has no console; a read-only viewer watches but cannot type.
    assert stranger.get("/notebook/vmo/box/lab").status_code == 404
    with pytest.raises(Exception):  # noqa: B017 - refused at the handshake, whichever way
        run(typed(stranger, "vmo", "box", "touch /mnt/home/stranger"))
    owner.ok("POST", "/api/notebooks/vmo/box/shares", 201, json={"grantee": "vmv"})
    assert 'data-view-only="true"' in viewer.get("/notebook/vmo/box/lab").text
    run(typed(viewer, "vmo", "box", "touch /mnt/home/from-viewer"))
    run(typed(owner, "vmo", "box", "touch /mnt/home/after-viewer"))
    wait_until(lambda: (home(site, "vmo", "box") / "after-viewer").exists(), 30, what="owner")
    assert not (home(site, "vmo", "box") / "from-viewer").exists()
    assert viewer.post("/notebook/vmo/box/api/kernels", json={}).status_code == 403

    # Stop (ACPI power-off) and start: the VM's own disk keeps what was written.
    owner.ok("POST", "/api/notebooks/vmo/box/stop?wait=true", 202)
    wait_state(owner, "vmo", "box", "stopped")
    (home(site, "vmo", "box") / "booted").unlink()
    # A resize applies at the next start, as for any notebook: 2 vCPUs, more memory.
    owner.ok("PATCH", "/api/notebooks/vmo/box", json={"cpu": 2, "memory": "768Mi"})
    owner.ok("POST", "/api/notebooks/vmo/box/start?wait=true", 202)
    wait_running(owner, "vmo", "box", 120)
    resized = owner.ok("GET", "/notebook/vmo/box/api/vm")
    assert resized["vcpus"] == 2 and resized["memory_mib"] == 768 - 192
    wait_shell(site, owner, "vmo", "box")
    run(typed(owner, "vmo", "box", "cp /mnt/disk/on-disk /mnt/home/from-disk"))
    wait_until(
        lambda: (home(site, "vmo", "box") / "from-disk").exists(), 30, what="the disk's file"
    )
    assert (home(site, "vmo", "box") / "from-disk").read_text() == "typed\n"
    owner.ok("POST", "/api/notebooks/vmo/box/stop?wait=true", 202)


def test_the_culler_stops_an_idle_vm(site, users) -> None:
    owner, admin = users["vmo"], users["vm-admin"]
    body = {"name": "idle", "environment": "testvm", "kind": "vm", "cpu": 1, "memory": "512Mi"}
    owner.ok("POST", "/api/notebooks", 201, json=body)
    owner.ok("POST", "/api/notebooks/vmo/idle/start?wait=true", 202)
    wait_running(owner, "vmo", "idle", 120)
    kernels = owner.ok("GET", "/notebook/vmo/idle/api/kernels")
    assert kernels[0]["id"] == "vm"
    admin.ok("PUT", "/api/culling/policy", json={"idle_minutes": 1, "warn_minutes": 0})
    try:
        # A minute of idle time passes on the controller's clock; then the culler's pass,
        # which reads the VM's activity from its console server as it does any server's.
        site.clock.advance(seconds=61)
        decisions = site.cull()
        assert [d.action for d in decisions] == ["stop"], decisions
        stopped = wait_state(owner, "vmo", "idle", "stopped")
    finally:
        admin.ok("PUT", "/api/culling/policy", json={"idle_minutes": 60, "warn_minutes": 10})
    assert "idle" in stopped["message"].lower(), stopped["message"]


def test_a_gpu_not_ready_for_a_vm_is_refused_before_anything_is_made(site, users) -> None:
    """A GPU declared for VMs (`pci:<address>`) that this machine cannot hand over (here: no
    such device) stops the start with what to do, and leaves no disk or home; a JupyterLab
    notebook is never given such a GPU."""
    owner, admin = users["vmo"], users["vm-admin"]
    admin.ok("POST", "/api/gpus", 201, json={"device_id": "pci:0000:ff:1f.7", "model": "VM A100"})
    admin.ok("PUT", "/api/gpu-types/vm-gpu", json={"display_name": "For VMs", "models": ["VM"]})
    quota = {"cpu": 4, "memory": "8Gi", "notebooks": 3, "gpus": {"vm-gpu": 1}}
    admin.ok("PUT", "/api/quotas/default", json=quota)
    gpu = {"gpu_type": "vm-gpu", "gpus": 1, "cpu": 1, "memory": "512Mi"}
    owner.ok("POST", "/api/notebooks", 201, json={"name": "gpuvm", "kind": "vm", **gpu,
                                                    "environment": "testvm"})  # fmt: skip
    owner.post("/api/notebooks/vmo/gpuvm/start?wait=true")
    failed = wait_state(owner, "vmo", "gpuvm", "stopped", 60)
    assert "no PCI device 0000:ff:1f.7" in failed["message"], failed
    assert not (site.data_dir / "vms" / "vmo" / "gpuvm").exists()
    assert not home(site, "vmo", "gpuvm").exists()

    owner.ok("POST", "/api/notebooks", 201, json={"name": "gpulab", **gpu})
    owner.post("/api/notebooks/vmo/gpulab/start?wait=true")
    failed = wait_state(owner, "vmo", "gpulab", "stopped", 60)
    assert "bound to vfio-pci for VM notebooks" in failed["message"], failed
    for name in ("gpuvm", "gpulab"):
        owner.ok("DELETE", f"/api/notebooks/vmo/{name}")

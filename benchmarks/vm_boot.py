"""VM notebooks on the local backend: boot time to a usable console, KVM against TCG.

QEMU is started with the command line the backend uses (local_qemu.argv) on the
test image (scripts/vm-test-image.sh: a Debian kernel and a busybox shell), a
fresh copy-on-write disk each round. Two figures per round, from QEMU's start:

  console  - the VNC console answers an RFB handshake (what noVNC needs to draw)
  shell    - a command typed on the console has run in the guest: it touched a
             file in the shared folder (9p), seen on the host

Each accelerator usable here runs ROUNDS times; the median of each is printed,
and the KVM/TCG ratio when both run. A "PVM" KVM (kvm_pvm: nested machines
without hardware virtualisation) cannot boot a stock kernel: it is reported as
not usable, as the backend treats it.

Run from the repository root: `.venv/bin/python benchmarks/vm_boot.py`.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cgu_lab.backends import local_qemu as qemu  # noqa: E402

ROUNDS = 3
MEMORY = 512 * 2**20
DEADLINE = 180.0


async def handshake(socket_path: Path) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_unix_connection(str(socket_path))
    await reader.readexactly(12)
    writer.write(b"RFB 003.008\n")
    count = (await reader.readexactly(1))[0]
    await reader.readexactly(count)
    writer.write(b"\x01")
    await reader.readexactly(4)
    writer.write(b"\x01")
    await reader.readexactly(20)
    (length,) = struct.unpack(">I", await reader.readexactly(4))
    await reader.readexactly(length)
    return reader, writer


async def type_line(writer: asyncio.StreamWriter, text: str) -> None:
    for keysym in [ord(c) for c in text] + [0xFF0D]:
        for down in (1, 0):
            writer.write(struct.pack(">BBxxI", 4, down, keysym))
            await writer.drain()
            await asyncio.sleep(0.005)


async def one_boot(image: qemu.VmImage, accel: str, work: Path) -> tuple[float, float]:
    run, home = work / "run", work / "home"
    for folder in (run, home):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    disk = work / "disk.qcow2"
    disk.unlink(missing_ok=True)
    subprocess.run(
        ["qemu-img", "create", "-q", "-f", "qcow2", "-b", str(image.disk), "-F", image.format,
         str(disk)],
        check=True,
    )  # fmt: skip
    argv = qemu.argv(qemu.QEMU, image, run, disk, home, 1000, MEMORY, accel, "bench")
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while True:
            if time.monotonic() - started > DEADLINE:
                raise TimeoutError("no console")
            try:
                _reader, writer = await handshake(run / "vnc.sock")
                break
            except (OSError, asyncio.IncompleteReadError):
                await asyncio.sleep(0.02)
        console = time.monotonic() - started
        marker = home / "booted"
        while not marker.exists():
            if time.monotonic() - started > DEADLINE:
                raise TimeoutError("no shell")
            await type_line(writer, "touch /mnt/home/booted")
            for _ in range(20):
                if marker.exists():
                    break
                await asyncio.sleep(0.05)
        shell = time.monotonic() - started
        writer.close()
        return console, shell
    finally:
        process.kill()
        await process.wait()


async def main() -> None:
    built = subprocess.run(
        [str(ROOT / "scripts" / "vm-test-image.sh")], capture_output=True, text=True, check=True
    )
    image = qemu.read_image(Path(built.stdout.strip().splitlines()[-1]))
    accelerators = ["tcg"]
    if qemu.kvm_usable():
        accelerators.insert(0, "kvm")
    else:
        why = "PVM only" if Path("/sys/module/kvm_pvm").exists() else "no usable /dev/kvm"
        print(f"KVM: not usable on this machine ({why}); TCG only")
    medians: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="cgu-lab-vm-bench-") as temp:
        for accel in accelerators:
            rounds = [await one_boot(image, accel, Path(temp)) for _ in range(ROUNDS)]
            console = statistics.median(r[0] for r in rounds)
            shell = statistics.median(r[1] for r in rounds)
            medians[accel] = (console, shell)
            print(
                f"{accel.upper():>4}: console answers in {console:6.2f} s, shell runs a typed "
                f"command in {shell:6.2f} s (median of {ROUNDS})"
            )
    if len(medians) == 2:
        kvm, tcg = medians["kvm"], medians["tcg"]
        print(f"TCG/KVM: console {tcg[0] / kvm[0]:.1f}x, shell {tcg[1] / kvm[1]:.1f}x slower")


if __name__ == "__main__":
    asyncio.run(main())

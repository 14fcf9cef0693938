"""Copying a class's lab files: one template-sized folder into 60 students' homes.

The teacher's notebook holds 1,000 files totalling 200 MB. A deployment
through the controller packs it once (as the teacher), stores it once, and
links each file into each student's course folder (4 students at a time,
checking every name for an existing file; backends/local_class_files.py). The
same data is then copied with plain `cp -r` into 60 fresh directories, one
after the other and 4 at a time, in the same run. The platform deploys twice:
to a new class (its 60 system accounts are made on the way) and again (the copy
alone). Figures: wall time, throughput (the class's bytes delivered per
second) and the ratio to cp; the issue's goal is 0.1 of `cp -r` one at a time.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from platform_under_test import platform

FILES = 1000
SIZE = 200 * 10**6
STUDENTS = 60


def make_material(folder: Path, owner: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    chunk = os.urandom(SIZE // FILES)
    for index in range(FILES):
        sub = folder / f"part{index // 100:02d}"
        sub.mkdir(exist_ok=True)
        (sub / f"file{index:04d}.bin").write_bytes(chunk[: -1 - index % 7] + bytes([index % 251]))
    account = pwd.getpwnam(owner) if owner else None
    if account:
        for path in [folder, *folder.rglob("*")]:
            os.lchown(path, account.pw_uid, account.pw_gid)


def cp_copies(source: Path, target: Path, parallel: int) -> float:
    target.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    def one(index: int) -> None:
        subprocess.run(["cp", "-r", str(source), str(target / f"s{index}")], check=True)

    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(one, range(STUDENTS)))
    subprocess.run(["sync"], check=True)
    elapsed = time.perf_counter() - started
    shutil.rmtree(target)
    return elapsed


def main() -> None:
    with platform() as controller, controller.client("bench-admin") as admin:
        admin.ok(
            "PUT", "/api/users/bench-admin/quota", json={"cpu": 4, "memory": "8Gi", "notebooks": 2}
        )
        admin.ok("POST", "/api/groups", 201, json={"name": "big-class"})
        roster = "username\n" + "\n".join(f"s{index:03d}" for index in range(STUDENTS)) + "\n"
        admin.ok("POST", "/api/groups/big-class/import", json={"csv": roster})
        admin.ok(
            "POST", "/api/notebooks", 201, json={"name": "material", "cpu": 1, "memory": "1Gi"}
        )
        admin.ok("POST", "/api/notebooks/bench-admin/material/start?wait=true", 202)
        admin.ok("POST", "/api/notebooks/bench-admin/material/stop?wait=true", 202)
        home = controller.data_dir / "homes" / "bench-admin" / "material"
        owner = pwd.getpwuid(home.stat().st_uid).pw_name
        make_material(home / "lab", owner)
        subprocess.run(["sync"], check=True)

        def deploy(destination: str) -> float:
            started = time.perf_counter()
            deployment = admin.ok(
                "POST",
                "/api/groups/big-class/deployments",
                202,
                json={"notebook": "material", "path": "lab", "destination": destination},
            )
            while (state := admin.ok("GET", f"/api/deployments/{deployment['id']}"))[
                "state"
            ] == "running":
                time.sleep(0.2)
            subprocess.run(["sync"], check=True)
            elapsed = time.perf_counter() - started
            assert state["state"] == "done", state["summary"]
            copied = sum(r.get("copied", 0) for r in state["report"].values())
            assert copied == FILES * STUDENTS, copied
            return elapsed

        # The first deployment to a new class also makes its 60 system accounts; the
        # next one (a class that has used the platform before) is the copy alone.
        first = deploy("week1")
        ours = deploy("week2")
        shutil.rmtree(controller.data_dir / "course-folders", ignore_errors=True)

        scratch = controller.data_dir.parent / "cp-target"
        cp_serial = cp_copies(home / "lab", scratch, 1)
        cp_parallel = cp_copies(home / "lab", scratch, 4)

    total = SIZE * STUDENTS
    print(f"== lab files to a class: {FILES} files, {SIZE / 1e6:.0f} MB, into {STUDENTS} homes ==")
    for name, seconds in (
        ("cgu-lab, new accounts", first),
        ("cgu-lab deployment", ours),
        ("cp -r, one at a time", cp_serial),
        ("cp -r, 4 at a time", cp_parallel),
    ):
        print(
            f"{name:>22}: {seconds:6.1f} s  {total / seconds / 1e6:7.1f} MB/s  "
            f"({seconds / cp_serial:.2f} of cp -r one at a time)"
        )


if __name__ == "__main__":
    main()

"""A code competition's notebook run inside its sandbox:
`python -I -m cgu_lab.backends.competition_notebook_child`.

Started by `competition_notebook_run.NotebookRunner` under rlimits, in new network,
PID and mount namespaces (`unshare --net --pid --fork --mount --mount-proc`),
as root of those namespaces. Before anything of the student's runs it:
1. mounts a private tmpfs on /tmp (size-limited, nosuid, nodev): the run's
   only writable place, invisible to every other scoring, which share the
   scorer account; a concurrent teacher's script writes solution parts to its
   own /tmp, and without this a student's kernel, being the same account,
   could read them. An installation that lives under /tmp (a checkout, its
   virtualenv) is bound back at its place, or its Pythons would vanish;
   /dev/shm and /var/tmp get private tmpfs mounts too (`PRIVATE`): the host's
   are writable by every account, so a run could leave files (or fill RAM) for
   the next run, of another student, to read. All three are gone when the run's
   mount namespace ends with its last process (its cgroup is killed whole);
2. drops to the scorer account (setgroups([]), setgid, setuid) when it is given
   one (the controller is root); otherwise it is the controller's account
   mapped to root in a user namespace, which owns nothing outside it.

The notebook and the hidden inputs arrive as open descriptors and are copied
into /tmp; the predictions go back through a descriptor the controller opened
for writing. No path of the data directory is ever named here.

Why jupyter_client's `ipc` transport (Unix sockets in /tmp/runtime) and not
bringing loopback up: the network namespace stays with no usable interface at
all, so the student's code cannot open even a local server, and no capability
(CAP_NET_ADMIN before the drop, the `ip` tool) is needed; the sockets lie in
a 0700 folder of a tmpfs no other process can see. The kernel is
`<environment>/bin/python -m ipykernel_launcher`, nbclient drives it.

Answer, one JSON object on stdout:
  {"ok": true, "bytes": n}                      predictions written to the descriptor
  {"ok": false, "reason": "cell", "cell": i, "ename": name, "log": ...}
  {"ok": false, "reason": "time" | "memory" | "no_output" | "too_large" | "kernel", "log": ...}
The controller builds the student's sentence from `reason`, `cell` and
`ename` only (competition_notebook_run.student_message); `log` is for staff.
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import math
import os
import shutil
import subprocess
import sys
import time
import traceback

MAX_LOG = 20000
WORK = "/tmp"  # noqa: S108 - a tmpfs private to this run (see above)
INPUT = f"{WORK}/input/inputs.csv"
OUTPUT = f"{WORK}/output/predictions.csv"
KERNEL = "cgu-competition"
MS_BIND, MS_REC = 4096, 16384  # <sys/mount.h>
# Host-wide writable folders that each run gets a tmpfs of its own on, and its size's key
# in the job. /tmp is mounted first and apart (an installation below it is bound back).
PRIVATE = (("/dev/shm", "shm_bytes"), ("/var/tmp", "tmp_bytes"))  # noqa: S108


def _installed_in_tmp(job: dict) -> list[str]:
    """The folders right in /tmp that hold the Pythons and the code this run needs (a
    checkout or a virtualenv under /tmp): the private tmpfs would hide them."""
    package = sys.modules[__package__.partition(".")[0]].__file__ or ""
    found = set()
    for path in (job["python"], sys.prefix, sys.base_prefix, package):
        for candidate in {os.path.abspath(path), os.path.realpath(path)}:
            parts = candidate.split(os.sep)
            if len(parts) > 2 and parts[1] == WORK.strip("/") and parts[2]:
                found.add(os.path.join(WORK, parts[2]))
    return sorted(found)


def _bind(source_fd: int, target: str) -> None:
    """Bind the folder open as `source_fd` at `target`: through the descriptor, since the
    folder's own path is hidden by then (mount(8) would resolve it to the new tmpfs)."""
    libc = ctypes.CDLL(None, use_errno=True)
    source = f"/proc/self/fd/{source_fd}".encode()
    if libc.mount(source, target.encode(), None, MS_BIND | MS_REC, None) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), target)


def _tmpfs(target: str, size: int) -> None:
    subprocess.run(
        [
            "/usr/bin/mount",
            "-t",
            "tmpfs",
            "-o",
            f"mode=0700,size={max(1, size)},nosuid,nodev",
            "tmpfs",
            target,
        ],
        check=True,
        capture_output=True,
    )


def _private_tmp(job: dict) -> None:
    kept = [(os.open(path, os.O_PATH | os.O_DIRECTORY), path) for path in _installed_in_tmp(job)]
    _tmpfs(WORK, int(job["tmp_bytes"]))
    for fd, path in kept:  # an installation under /tmp stays where its Pythons expect it
        os.mkdir(path)
        _bind(fd, path)
        os.close(fd)
    private = [WORK]
    for target, key in PRIVATE:
        if os.path.isdir(target):
            _tmpfs(target, int(job.get(key) or job["tmp_bytes"]))
            private.append(target)
    uid, gid = job.get("uid"), job.get("gid")
    if uid is not None:
        for folder in private:
            os.chown(folder, uid, gid)
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    os.umask(0o077)


def _copy_in(fd: int, path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with os.fdopen(fd, "rb") as source, open(path, "wb") as target:
        shutil.copyfileobj(source, target)


def _kernel_env(job: dict) -> dict:
    python = job["python"]
    return {
        "PATH": f"{os.path.dirname(python)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": f"{WORK}/home",
        "LANG": "C.UTF-8",
        "TMPDIR": WORK,
        "MPLBACKEND": "Agg",
        "IPYTHONDIR": f"{WORK}/ipython",
        "JUPYTER_RUNTIME_DIR": f"{WORK}/runtime",
        "JUPYTER_DATA_DIR": f"{WORK}/data",
        # One thread per math library: RLIMIT_AS counts every thread's reserved stack.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "CGU_COMPETITION_INPUT": INPUT,
        "CGU_COMPETITION_OUTPUT": OUTPUT,
        # The GPU the controller gave this run (CUDA_VISIBLE_DEVICES), if the competition
        # asks for one; only CUDA's own variables are taken.
        **{
            str(key): str(value)
            for key, value in (job.get("gpu_env") or {}).items()
            if str(key).startswith("CUDA_")
        },
    }


def _write_kernel_spec(job: dict) -> None:
    """The run's folders in /tmp, and the kernel spec that starts the environment's Python."""
    env = _kernel_env(job)
    for folder in ("home", "ipython", "runtime", "data", "work", "output", "kernels/" + KERNEL):
        os.makedirs(f"{WORK}/{folder}", mode=0o700, exist_ok=True)
    spec = {
        "argv": [job["python"], "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Competition run",
        "language": "python",
        "env": env,
    }
    with open(f"{WORK}/kernels/{KERNEL}/kernel.json", "w") as handle:
        json.dump(spec, handle)


def _client(nb, manager, job: dict, current: dict):
    """nbclient's client for `nb`; `current["cell"]` follows the running cell, from 1."""
    from nbclient import NotebookClient

    def started(cell, cell_index, **_):
        current["cell"] = cell_index + 1

    # The limit counts the cells' run from the first cell on, not the kernel's start.
    # Each cell may take what is left of it (nbclient's own timeout: cancelling its
    # task from outside reads to it as a dead kernel).
    deadline: list[float] = []

    def left(cell) -> int:
        if not deadline:
            deadline.append(time.monotonic() + float(job["time_limit"]))
        return max(1, math.ceil(deadline[0] - time.monotonic()))

    return NotebookClient(
        nb,
        km=manager,
        timeout_func=left,
        startup_timeout=60,
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": f"{WORK}/work"}},
        on_cell_start=started,
    )


async def _execute(job: dict) -> dict:
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    _write_kernel_spec(job)
    nb = nbformat.read(f"{WORK}/input/notebook.ipynb", as_version=4)
    manager = AsyncKernelManager(
        kernel_name=KERNEL,
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[f"{WORK}/kernels"]),
        transport="ipc",
        connection_file=f"{WORK}/runtime/kernel.json",
    )
    current = {"cell": 0}
    client = _client(nb, manager, job, current)
    try:
        await client.async_execute(cwd=f"{WORK}/work")
    except CellTimeoutError:
        return {"ok": False, "reason": "time", "cell": current["cell"], "log": _outputs(nb)}
    except CellExecutionError as error:
        reason = "memory" if error.ename == "MemoryError" else "cell"
        return {
            "ok": False,
            "reason": reason,
            "cell": current["cell"],
            "ename": error.ename,
            "log": f"{error}\n{_outputs(nb)}",
        }
    except DeadKernelError:
        return {
            "ok": False,
            "reason": "kernel",
            "cell": current["cell"],
            "log": traceback.format_exc() + _outputs(nb),
        }
    finally:
        if manager.has_kernel:
            await manager.shutdown_kernel(now=True)
    return {"ok": True, "log": _outputs(nb)}


def _outputs(nb) -> str:
    """The cells' outputs as text, for the course's staff."""
    parts = []
    for index, cell in enumerate(nb.cells, start=1):
        for output in cell.get("outputs", []):
            text = output.get("text") or "".join(output.get("traceback", []))
            text = text or str(output.get("data", {}).get("text/plain", ""))
            if text:
                parts.append(f"--- cell {index} ({output.get('output_type')})\n{text}")
    return "\n".join(parts)[-MAX_LOG:]


def _copy_out(fd: int, max_bytes: int) -> dict:
    if not os.path.isfile(OUTPUT):
        return {"ok": False, "reason": "no_output"}
    size = os.path.getsize(OUTPUT)
    if size > max_bytes:
        return {"ok": False, "reason": "too_large", "bytes": size}
    with open(OUTPUT, "rb") as source, os.fdopen(fd, "wb") as target:
        shutil.copyfileobj(source, target)
    return {"ok": True, "bytes": size}


def run(job: dict) -> dict:
    _private_tmp(job)
    _copy_in(job["notebook_fd"], f"{WORK}/input/notebook.ipynb")
    _copy_in(job["inputs_fd"], INPUT)
    try:
        answer = asyncio.run(_execute(job))
    except Exception:
        return {"ok": False, "reason": "kernel", "log": traceback.format_exc()[-MAX_LOG:]}
    if not answer["ok"]:
        answer["log"] = str(answer.get("log", ""))[-MAX_LOG:]
        return answer
    copied = _copy_out(job["output_fd"], int(job["max_bytes"]))
    return {**copied, "log": answer["log"]}


def main() -> None:
    job = json.loads(sys.stdin.read())
    # The answer goes to a copy of stdout; the kernel inherits stderr in place of
    # stdout, so what a notebook writes to descriptor 1 reaches the staff's log,
    # never the answer.
    answer = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    result = run(job)
    answer.write(json.dumps(result))
    answer.flush()


if __name__ == "__main__":
    main()

"""The watcher of one local training job: starts it, waits for it, writes how it ended.

`python -m cgu_lab.backends.local_training_supervisor` runs as the
controller's account, with a JSON plan on stdin: `launch` (the
`local_launch` plan that joins the job's cgroups, becomes the owner and
execs `torchrun`), `result` (where to write the outcome) and `log` (where
torchrun's own output goes). It detaches (see `detach`) and prints the
pid of the watcher that stays.

Why a process of its own rather than the controller waiting for torchrun:
jobs outlive the controller (a restart or an upgrade must not kill a night's
training), and only a job's parent can learn its exit status. This watcher
stays its parent across controller restarts and records the status in a file
the owner cannot write, so a job that finished while the controller was down
is reported as it ended; a job whose watcher is gone without a result died
with it (a reboot, a kill) and is reported failed.

SIGTERM (the controller's stop) is passed on to torchrun, which stops its
workers; whatever is left of torchrun's process group after `grace` seconds
is killed. When the job has ended, the watcher kills anything left in
the job's cgroups and removes them; the controller does the same on a stop.
It imports only the standard library, like local_launch.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time


def write_result(path: str, outcome: dict) -> None:
    """Atomically: a reader sees no result or a whole one."""
    partial = f"{path}.partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with open(fd, "w") as handle:
        json.dump(outcome, handle)
    os.replace(partial, path)


def detach(log_path: str) -> None:
    """Leave the controller: the process it started prints the watcher's pid and exits.

    The watcher is then no child of the controller, so neither the
    controller's exit nor its event loop's clean-up of child processes can
    touch it, and init reaps it when it is done.
    """
    pid = os.fork()
    if pid:
        sys.stdout.write(f"{pid}\n")
        sys.stdout.flush()
        os._exit(0)
    os.setsid()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def main() -> None:
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    plan = json.loads(sys.stdin.read())
    detach(plan["log"])
    grace = float(plan.get("grace", 5))
    for ignored in (signal.SIGHUP, signal.SIGINT):
        signal.signal(ignored, signal.SIG_IGN)
    stopped = False
    child = subprocess.Popen(  # our own launcher, no shell
        [sys.executable, "-m", "cgu_lab.backends.local_launch"],
        stdin=subprocess.PIPE,
        start_new_session=True,  # torchrun and its workers: one group to stop
        close_fds=True,
    )

    def stop(_signum, _frame) -> None:
        nonlocal stopped
        stopped = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGTERM)
        signal.alarm(max(1, int(grace)))

    def overdue(_signum, _frame) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGALRM, overdue)
    assert child.stdin is not None
    with contextlib.suppress(BrokenPipeError):
        child.stdin.write(json.dumps(plan["launch"]).encode())
        child.stdin.close()
    code = child.wait()
    # Workers outlive torchrun only when killed apart from it; take the group with it.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    write_result(plan["result"], {"exit_code": code, "stopped": stopped, "ended_at": time.time()})
    empty_cgroups(plan.get("cgroups", []))


def empty_cgroups(cgroups: list[str]) -> None:
    """Kill what is left in the job's cgroups and remove them, so an ended job leaves
    nothing behind even when no controller is there to ask about it. (The
    installation's parent cgroup is the controller's to remove.)"""
    for _ in range(50):
        left = False
        for cgroup in cgroups:
            try:
                with open(os.path.join(cgroup, "cgroup.procs")) as handle:
                    pids = [int(line) for line in handle.read().split()]
            except OSError:
                continue
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            try:
                os.rmdir(cgroup)
            except OSError:
                left = True
        if not left:
            return
        time.sleep(0.1)


if __name__ == "__main__":
    main()

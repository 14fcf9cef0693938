"""Launcher for local programs run as a user: apply limits, drop privileges, exec.

The controller starts `python -m cgu_lab.backends.local_launch` in a new
session and writes a JSON plan to its stdin (so secrets never appear in the
process list); a plan without secrets may come in `$CGU_LAUNCH_PLAN` instead,
leaving stdin to the program (the file tools read a tar from it). This module
then, in order: joins the notebook's cgroups, sets resource limits and CPU
affinity, becomes the notebook's own account, changes to its home and
replaces itself with the program (JupyterLab, or a file tool). Doing this in the child
before exec leaves no window in which the server runs without its limits.
It imports only the standard library so that it starts in milliseconds.

Before anything else it closes every descriptor but stdin, stdout and
stderr. The controller's event loop (uvloop) does not close descriptors for
its children, so without this a notebook server inherited the controller's
listening socket and other open files: a student's process held the
controller's port (a restarted controller could not bind it again) and
descriptors it must never have. The launcher copies no files itself: paths
come from the controller (a home it made, cgroup files it made).
"""

from __future__ import annotations

import json
import os
import resource
import sys


def close_inherited() -> None:
    """Close every descriptor above stderr that the controller's process let through."""
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))


def apply(plan: dict) -> None:
    close_inherited()
    pid = str(os.getpid())
    for procs_file in plan.get("cgroup_procs", []):
        with open(procs_file, "w") as handle:
            handle.write(pid)
    memory = plan.get("rlimit_data")
    if memory:
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    cpus = plan.get("cpus")
    if cpus:
        os.sched_setaffinity(0, set(cpus))
    uid, gid = plan.get("uid"), plan.get("gid")
    if gid is not None:
        os.setgroups(plan.get("groups", []))  # a course's storage groups, else none
        os.setgid(gid)
    if uid is not None:
        os.setuid(uid)
    os.umask(0o077)
    os.chdir(plan["cwd"])
    if not plan.get("keep_stdin"):
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)


def main() -> None:
    given = os.environ.get("CGU_LAUNCH_PLAN")
    plan = json.loads(given if given is not None else sys.stdin.read())
    apply(plan)
    argv = plan["argv"]
    os.execve(argv[0], argv, plan["env"])  # noqa: S606 - no shell; a fixed argv


if __name__ == "__main__":
    main()

"""Launcher for local programs run as a user: apply limits, drop privileges, exec.

The controller starts `python -m cgu_lab.backends.local_launch` in a new
session and writes a JSON plan to its stdin (so secrets never appear in the
process list); a plan without secrets may come in `$CGU_LAUNCH_PLAN` instead,
leaving stdin to the program (the file tools read a tar from it). This module
then, in order: joins the notebook's cgroups, sets resource limits and CPU
affinity, becomes the notebook's own account, changes to its home and
replaces itself with the program (JupyterLab, or a file tool). Doing this in the child
before exec leaves no window in which the server runs without its limits. A plan with
`private_network` (a training job's, a notebook's) first gets a network namespace of its
own, while still root: only a loopback, which no other process on the machine can reach.
A plan that also names `outbound` (a notebook's: students install packages and fetch
data sets) gets a user-mode NAT to the outside world from slirp4netns, with the host's
own loopback cut off: a kernel can reach the internet but never answer on the host name
the controller is served at, nor reach the host's loopback services.
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

import ctypes
import fcntl
import json
import os
import resource
import socket
import struct
import sys

CLONE_NEWNET, CLONE_NEWNS = 0x40000000, 0x00020000
MS_REC, MS_PRIVATE = 0x4000, 0x40000  # <sys/mount.h>
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def close_inherited() -> None:
    """Close every descriptor above stderr that the controller's process let through."""
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))


def private_network() -> None:
    """A network namespace of this process's own, with its loopback up and nothing else.

    Why: torchrun's rendezvous store (a c10d TCPStore) listens on every interface and
    takes any client, so on the machine's network another user's process, or another
    host, could join or disturb a job's ranks. In here the ranks still meet on
    127.0.0.1 (torchrun --standalone), and nothing outside can connect to them.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"a private network for the job: {os.strerror(error)}")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        asked = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(probe, SIOCGIFFLAGS, asked))[1]
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))


def private_mounts() -> None:
    """A mount namespace of this process's own in which no mount propagates to the host's.

    Why: slirp4netns's sandbox makes a mount namespace, marks only `/` private and then
    detaches the old root with everything below it. Mounts below `/` that the host shares
    (`/run/netns` once `ip netns add` ran: each of the host's named network namespaces is
    a mount there) are unmounted in the host too, so every notebook start took the
    network namespaces of other software on the machine (containers, a test cluster)
    out from under their names. Here the whole tree is made private first, and slirp4netns's
    unmounts end in this namespace.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0 or libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None):
        error = ctypes.get_errno()
        raise OSError(error, f"a private mount namespace for slirp4netns: {os.strerror(error)}")


def outbound(slirp4netns: str) -> None:
    """Give this process's new network namespace a way out, through slirp4netns.

    Why: a network namespace with only a loopback keeps a kernel from listening on the
    controller's host (browsers send a host's cookies to every port of it), but a
    notebook without the internet cannot `pip install`. slirp4netns runs in the host's
    namespace (a child forked before `unshare`, still root), attaches a tap device to
    ours and NATs its traffic: outgoing connections work, nothing outside can connect in,
    and `--disable-host-loopback` keeps the host's 127.0.0.1 (the controller, the
    database, other installations) out of reach. It lives as long as the write end of
    `exit_r`'s pipe, which this process keeps across exec (the server's kernels are
    started with their descriptors closed), and is in the notebook's cgroups, so a stop
    ends it with the rest. Must be called before `unshare`.
    """
    go_r, go_w = os.pipe()
    ready_r, ready_w = os.pipe()
    exit_r, exit_w = os.pipe()
    target = os.getpid()
    child = os.fork()
    if child == 0:  # pragma: no cover - replaced by slirp4netns at once
        os.close(go_w)
        os.close(ready_r)
        os.close(exit_w)
        if os.read(go_r, 1) != b"1":
            os._exit(1)  # the namespace could not be made; nothing to attach to
        try:
            private_mounts()
        except OSError as error:
            os.write(2, f"{error}\n".encode())
            os._exit(1)  # then no "ready": the start fails, saying slirp4netns could not
        argv = [
            slirp4netns,
            "--configure",
            "--mtu=65520",
            "--disable-host-loopback",
            "--enable-sandbox",
            "--enable-seccomp",
            f"--ready-fd={ready_w}",
            f"--exit-fd={exit_r}",
            str(target),
            "tap0",
        ]
        os.set_inheritable(ready_w, True)
        os.set_inheritable(exit_r, True)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)  # its banner is not the student's business; errors stay in the log
        os.execv(slirp4netns, argv)  # noqa: S606 - no shell; a fixed argv
    os.close(go_r)
    os.close(ready_w)
    os.close(exit_r)
    try:
        private_network()
    except BaseException:
        os.write(go_w, b"0")
        raise
    os.write(go_w, b"1")
    os.close(go_w)
    ready = os.read(ready_r, 1)  # slirp4netns writes "1" once tap0 is configured
    os.close(ready_r)
    if ready != b"1":
        raise OSError("slirp4netns could not give the notebook its network")
    os.set_inheritable(exit_w, True)  # kept by the server: slirp4netns ends with it


def apply(plan: dict) -> None:
    close_inherited()
    # The controller's event loop runs at a favoured nice (local_limits.favour_platform);
    # what it starts does not: back to the default before anything else.
    if os.getpriority(os.PRIO_PROCESS, 0) < 0:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    pid = str(os.getpid())
    for procs_file in plan.get("cgroup_procs", []):
        with open(procs_file, "w") as handle:
            handle.write(pid)
    memory = plan.get("rlimit_data")
    if memory:
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    pinned = plan.get("rlimit_memlock")  # a VM's memory, pinned for a passed-through GPU
    if pinned:
        try:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (pinned, pinned))
        except (ValueError, OSError):
            sys.exit(
                f"cgu-lab: the VM may not pin its {pinned // 2**20} MiB of memory for its GPU "
                "(RLIMIT_MEMLOCK): the controller needs the CAP_SYS_RESOURCE capability"
            )
    cpus = plan.get("cpus")
    if cpus:
        os.sched_setaffinity(0, set(cpus))
    if plan.get("private_network"):
        if plan.get("outbound"):
            outbound(plan["outbound"])
        else:
            private_network()
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

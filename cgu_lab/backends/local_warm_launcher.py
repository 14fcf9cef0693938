"""A warm launcher: one pre-imported JupyterLab per environment that forks per notebook.

Why: most of a notebook start's CPU is Python importing jupyter_server, JupyterLab and the
server extensions (benchmarks/start_profile.py), the same work for every student of a
class. This program, run by the environment's own interpreter, does it once; each start
is then a fork that does what `local_launch` does before its exec (the same `apply`:
cgroups, limits, private network, the user's account, home) and runs the server in
process with the command line and environment the exec'd `jupyter-lab` would get.

It is started by the controller (local_warm.WarmLaunchers), as root, with one end of a
socket pair as its only way in: no path in the file system, so nothing but the
controller reaches it. It holds nothing of any user: a start request carries only a
socket pair's end (for that start) and the server's log; the plan itself, with the
notebook's secrets, goes from the controller straight to the forked child over that
socket, after the fork, so the launcher's memory (which every later child inherits)
never holds another student's secrets. It has no threads and no event loop (it checks
before each fork), its memory is private (a fork copies it; nothing is mapped shared).

Per start: fork; the child waits for a go-ahead on a pipe; the launcher sends the
child's pid to the controller, then the go-ahead. Should the launcher die before
that, the child reads the pipe's end and exits, so a start is never run unknown to the
controller (which then starts it the exec'd way). The launcher waits for its children
through pidfds and reports each one's exit status on that start's socket.

Imports only the standard library and `local_launch` before the server's packages.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import random
import runpy
import select
import site
import socket
import sys
import tempfile
import threading
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import local_launch  # noqa: E402 - beside this file, like the exec'd launcher

sys.path.remove(HERE)

MAX_PLAN = 1 << 20
# The HOME the launcher imported with (local_warm: a folder of its own), as modules that
# compute paths from it see it: resolved.
LAUNCHER_HOME = os.path.realpath(os.environ.get("HOME", "/"))


def preimport() -> list[str]:
    """Import JupyterLab, jupyter_server and the server extensions this environment
    enables (their modules as listed by their extension points): what every start
    would import again. Returns the extensions found, for the log."""
    importlib.import_module("jupyterlab.labapp")
    from jupyter_core.paths import jupyter_config_path
    from jupyter_server.extension.config import ExtensionConfigManager

    manager = ExtensionConfigManager(read_config_path=jupyter_config_path())
    names = [name for name, on in manager.get_jpserver_extensions().items() if on]
    for name in names:
        try:
            package = importlib.import_module(name)
            points = getattr(package, "_jupyter_server_extension_points", lambda: [])()
            for point in points:
                importlib.import_module(point.get("module", name))
        except Exception:  # a broken extension fails in its own start
            traceback.print_exc()
    return names


def moved(value: object, old: str, new: str) -> object:
    """`value` with the path prefix `old` made `new` (strings, lists, tuples); else None."""
    if isinstance(value, str):
        if value == old or value.startswith(old + os.sep):
            return new + value[len(old) :]
        return None
    if isinstance(value, list | tuple) and any(moved(v, old, new) is not None for v in value):
        return type(value)(v if moved(v, old, new) is None else moved(v, old, new) for v in value)
    return None


def rebase(old: str, new: str) -> int:
    """Move paths the launcher's imports computed from its own HOME to the account's.

    Why: some modules compute paths from HOME once, at import: jupyter_server_fileid's
    database, JupyterLab's user settings and workspaces, send2trash's trash (and
    jupyter_core resolves HOME with realpath, so no path that leads elsewhere at run
    time can stand in for it). An exec'd server computes them from its own home. Here
    every module's strings (and lists of them), its classes' attributes, their traits'
    default values and traitlets' per-class copy of those are looked at once. Returns
    how many were moved, for the log.
    """
    from traitlets import HasTraits, TraitType

    count = 0
    for module in list(sys.modules.values()):
        names = getattr(module, "__dict__", None)
        if not isinstance(names, dict):
            continue
        for name, value in list(names.items()):
            fixed = moved(value, old, new)
            if fixed is not None:
                names[name] = fixed
                count += 1
            elif isinstance(value, type) and value.__module__ == module.__name__:
                count += rebase_class(value, old, new, HasTraits, TraitType)
    return count


def rebase_class(cls: type, old: str, new: str, has_traits: type, trait_type: type) -> int:
    count = 0
    for name, item in list(vars(cls).items()):
        if isinstance(item, trait_type):
            fixed = moved(item.default_value, old, new)
            if fixed is not None:
                item.default_value = fixed
                count += 1
        elif name == "_static_immutable_initial_values" and isinstance(item, dict):
            for trait, value in list(item.items()):
                fixed = moved(value, old, new)
                if fixed is not None:
                    item[trait] = fixed
                    count += 1
        elif not name.startswith("__"):
            fixed = moved(item, old, new)
            if fixed is not None:
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(cls, name, fixed)
                    count += 1
    return count


def user_site(home: str) -> None:
    """Put the account's user site-packages on the path, as an exec'd interpreter
    started with HOME=home by that account would (only where this interpreter has
    user sites at all: a virtual environment does not)."""
    if not site.ENABLE_USER_SITE:
        return
    site.USER_BASE = None
    site.USER_SITE = None
    os.environ["HOME"] = home
    folder = site.getusersitepackages()
    if os.path.isdir(folder):
        site.addsitedir(folder)


def retitle(argv: list[str], env: dict[str, str]) -> bool:
    """Write the server's command line and environment over the launcher's, in place.

    Why: `ps`, psutil and the backend read a process's /proc/<pid>/cmdline and environ,
    which the kernel takes from the memory the process was exec'd with: a forked server
    showed the launcher's, without `jupyter-lab` and without the notebook's markers
    (local_limits.Processes). The launcher is started with room to spare in both
    (local_warm pads them); the rest is filled with NULs (a trailing run of empty
    arguments, where an exec'd server has none). Only after os.environ is replaced: the
    C library's own `environ` then no longer points into that memory. False when the
    new ones do not fit (then only the cgroup tells whose the server is).
    """
    fields = open("/proc/self/stat", "rb").read().rsplit(b")", 1)[1].split()  # noqa: SIM115
    # Fields 48-51 of proc(5), counted from 3 after the command's name.
    arg_start, arg_end, env_start, env_end = (int(fields[n - 3]) for n in (48, 49, 50, 51))
    args = b"".join(os.fsencode(word) + b"\0" for word in argv)
    pairs = b"".join(os.fsencode(f"{name}={value}") + b"\0" for name, value in env.items())
    if len(args) > arg_end - arg_start or len(pairs) > env_end - env_start:
        return False
    ctypes.memmove(arg_start, args.ljust(arg_end - arg_start, b"\0"), arg_end - arg_start)
    ctypes.memmove(env_start, pairs.ljust(env_end - env_start, b"\0"), env_end - env_start)
    return True


def serve(reply: socket.socket, go: int, log: int) -> None:  # pragma: no cover - forked
    """The child: wait for the go-ahead, read the plan, become the notebook's server."""
    code = 1
    try:
        if os.read(go, 1) != b"1":
            os._exit(1)
        data = reply.recv(MAX_PLAN)
        plan = json.loads(data)
        os.setsid()
        os.dup2(log, 1)
        os.dup2(log, 2)
        local_launch.apply(plan)  # closes every descriptor above stderr, ours included
        os.environ.clear()
        os.environ.update(plan["env"])
        tempfile.tempdir = None  # found again from TMPDIR: the notebook's, not the launcher's
        rebase(LAUNCHER_HOME, plan["env"]["HOME"])
        # As the kernel starts a script: its interpreter, then the script and its arguments.
        if not retitle([sys.orig_argv[0], *plan["argv"]], plan["env"]):
            print("warm launcher: the command line did not fit; ps shows the launcher's")
        user_site(plan["env"].get("HOME", ""))
        random.seed()  # not the launcher's state, shared by every child
        sys.argv = list(plan["argv"])
        # The `jupyter-lab` script itself, as exec would run it: an environment the
        # platform built has a wrapper there that sets JupyterLab's and the server
        # extensions' paths first (local_environments.WRAPPER); without it, only
        # JupyterLab's own extension loads. Its imports are the launcher's, done already.
        runpy.run_path(plan["argv"][0], run_name="__main__")
        code = 0
    except SystemExit as ended:
        code = ended.code if isinstance(ended.code, int) else (0 if ended.code is None else 1)
        if not isinstance(ended.code, int | None):
            print(ended.code, file=sys.stderr)
    except BaseException:  # reported in the server's log
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # the log may be gone
                stream.flush()
        os._exit(code)


def start(control: socket.socket, watched: dict) -> bool:
    """One request: fork a child for it. False when the controller has gone."""
    try:
        message, fds, _, _ = socket.recv_fds(control, 16, 2)
    except OSError:
        return False
    if not message and not fds:
        return False  # the controller closed its end
    if len(fds) != 2:
        for fd in fds:
            os.close(fd)
        return True
    reply = socket.socket(fileno=fds[0])
    log = fds[1]
    if threading.active_count() != 1:
        reply.close()
        os.close(log)
        print("warm launcher: a thread appeared; refusing to fork", file=sys.stderr)
        return False
    go_r, go_w = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(go_w)
        serve(reply, go_r, log)
    os.close(go_r)
    os.close(log)
    try:
        pidfd = os.pidfd_open(pid)
        reply.send(json.dumps({"pid": pid}).encode())
        os.write(go_w, b"1")
    except OSError:
        pass  # the child reads the pipe's end and exits; it is reaped below
    else:
        watched[pidfd] = (pid, reply)
        os.close(go_w)
        return True
    os.close(go_w)
    os.waitpid(pid, 0)
    reply.close()
    return True


def reap(pidfd: int, watched: dict) -> None:
    pid, reply = watched.pop(pidfd)
    os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):  # the controller has gone
        reply.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())
    reply.close()


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    # Started from the controller's event loop, at its favoured nice (local_limits): its
    # imports are a notebook's work, not the platform's, and wait their turn like one.
    if os.getpriority(os.PRIO_PROCESS, 0) < 0:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    # As the exec'd `jupyter-lab` has it: its own folder first on the path, not ours.
    sys.path[0] = sys.argv[2]
    names = preimport()
    if threading.active_count() != 1:
        sys.exit("warm launcher: importing the server started a thread; not forking from it")
    gc.collect()
    gc.freeze()  # the children's collector leaves these pages shared
    print(f"warm launcher {os.getpid()}: ready with {', '.join(names)}", flush=True)
    control.send(b"ready")
    watched: dict[int, tuple[int, socket.socket]] = {}
    while True:
        readable, _, _ = select.select([control, *watched], [], [])
        for item in readable:
            if item is control:
                if not start(control, watched):
                    return  # the controller closed its end: leave the servers running
            else:
                reap(item, watched)


if __name__ == "__main__":
    main()

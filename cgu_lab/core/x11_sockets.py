"""Who may own the folder of X sockets, `/tmp/.X11-unix`: a pure rule, no I/O.

Every desktop on a host puts its X socket in that one folder. Created by
whichever student's desktop starts first, it was theirs: they could rename or
replace every other student's X socket. The platform makes it root's, mode
1777 (sticky: each may remove only their own entries), before any desktop
starts (backends/local_host.py), and each desktop checks it before it starts
(notebook/apps/desktop_session.py). Both read the same rule here.
"""

from __future__ import annotations

import stat

X11_DIR = "/tmp/.X11-unix"  # noqa: S108 - X11's fixed, host-wide place
MODE = 0o1777


def problem(st_mode: int, owner: int, allowed: set[int], owner_name: str = "") -> str | None:
    """Why a folder of X sockets with this mode and owner is unsafe, or None.

    `allowed`: the uids that may own it (root; on a host of one account, that account).
    """
    if stat.S_ISLNK(st_mode) or not stat.S_ISDIR(st_mode):
        return f"{X11_DIR} is not a folder (someone put a file or a link there)"
    if owner not in allowed:
        who = owner_name or f"uid {owner}"
        return (
            f"{X11_DIR} belongs to {who}, another account, who could replace other users' "
            "X sockets; an administrator must make it root's (mode 1777)"
        )
    if not st_mode & stat.S_ISVTX or stat.S_IMODE(st_mode) & 0o777 != 0o777:
        return (
            f"{X11_DIR} has mode {oct(stat.S_IMODE(st_mode))}, not 1777 (sticky, open to all): "
            "users could remove or replace each other's X sockets"
        )
    return None

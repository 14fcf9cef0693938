"""Host-wide places the local backend prepares before any notebook starts.

The design's rule: every host-wide resource is private to one user or owned by
the platform. `/tmp/.X11-unix` is one: every desktop (TigerVNC's Xvnc, see
notebook/apps/desktop_session.py) puts its X socket there, and whoever made the
folder owns it, so it is made here, as root, root-owned with mode 1777 (sticky:
each user may remove only their own sockets), when the backend opens.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pwd
import stat
from pathlib import Path

from ..core.x11_sockets import MODE, X11_DIR, problem

log = logging.getLogger("cgu_lab.local")


def _name(uid: int) -> str:
    with contextlib.suppress(KeyError):
        return pwd.getpwuid(uid).pw_name
    return f"uid {uid}"


def prepare_x11_dir(path: Path = Path(X11_DIR)) -> str | None:
    """Make the folder of X sockets the platform's (root's, 1777), or fix it; None when
    it is right now, else the sentence that was logged about what could not be fixed.

    As root: made if missing; a folder of another owner or mode is given to root
    with mode 1777 (through its descriptor, so a link swapped in meanwhile is never
    followed), and the change logged; a file or a link there is refused (logged; a
    desktop then refuses to start, saying why). Without root, notebooks all run as
    the controller's account: the folder is made as that account, and one of another
    owner is only reported.
    """
    me = os.geteuid()
    made = False
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)  # opened up below, once it is surely ours
        made = True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        sentence = problem(os.lstat(path).st_mode, os.lstat(path).st_uid, {0, me})
        log.error("desktops cannot start safely: %s", sentence)
        return sentence
    try:
        info = os.fstat(fd)
        wrong = problem(info.st_mode, info.st_uid, {0} if me == 0 else {me}, _name(info.st_uid))
        if wrong is None:
            return None
        if me != 0 and info.st_uid != me:
            log.error("desktops cannot start safely: %s", wrong)
            return wrong
        if me == 0:
            os.fchown(fd, 0, 0)
        os.fchmod(fd, MODE)
        if made:
            log.info("made %s (mode 1777) for the desktops' X sockets", path)
        else:
            log.warning(
                "fixed %s: it was %s's with mode %s; now %s's with mode 1777",
                path,
                _name(info.st_uid),
                oct(stat.S_IMODE(info.st_mode)),
                _name(0 if me == 0 else me),
            )
        return None
    finally:
        os.close(fd)

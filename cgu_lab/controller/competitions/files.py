"""Where a competition's files live: the controller's data directory, nowhere else.

    <data dir>/competitions/<id>/public/train.csv, test.csv   students download these
    <data dir>/competitions/<id>/hidden/solution.csv, score.py  never served to anyone
    <data dir>/competitions/<id>/hidden/inputs.csv              a code competition's test
                                                                inputs; never served either
    <data dir>/competitions/<id>/entries/<entry id>.csv         students' predictions
    <data dir>/competitions/<id>/entries/<entry id>.ipynb       a code competition's notebook

Every folder is 0700 and every file 0600, owned by the controller's account:
no notebook account can read them (homes are elsewhere), and the scorer gets
the two files of one scoring as open descriptors (backends/competition_sandbox.py),
never a path. Names are built from ids and fixed words only, so nothing a
client sends becomes part of a path.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PUBLIC_KINDS = {"train": "train.csv", "test": "test.csv"}
HIDDEN_KINDS = {"solution": "solution.csv", "script": "score.py", "inputs": "inputs.csv"}
KINDS = {**PUBLIC_KINDS, **HIDDEN_KINDS}


def folder(data_dir: Path, competition_id: int) -> Path:
    return data_dir / "competitions" / str(int(competition_id))


def path_of(data_dir: Path, competition_id: int, kind: str) -> Path:
    where = "public" if kind in PUBLIC_KINDS else "hidden"
    return folder(data_dir, competition_id) / where / KINDS[kind]


def entry_path(data_dir: Path, competition_id: int, entry_id: int, suffix: str = ".csv") -> Path:
    """An entry's predictions (".csv"), or the notebook of a code competition's entry (".ipynb")."""
    return folder(data_dir, competition_id) / "entries" / f"{int(entry_id)}{suffix}"


def _private_dirs(target: Path, data_dir: Path) -> None:
    """Make the folders from the competitions root down to `target`, each 0700."""
    current = data_dir / "competitions"
    for part in ("", *target.relative_to(current).parts):
        current = current / part if part else current
        current.mkdir(mode=0o700, exist_ok=True)
        os.chmod(current, 0o700)


def write(data_dir: Path, target: Path, data: bytes) -> None:
    """Write a file atomically, readable by the controller's account only."""
    _private_dirs(target.parent, data_dir)
    spool = target.with_name(target.name + ".part")
    fd = os.open(spool, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with open(fd, "wb") as handle:
        handle.write(data)
    os.replace(spool, target)


def remove(data_dir: Path, competition_id: int) -> None:
    shutil.rmtree(folder(data_dir, competition_id), ignore_errors=True)

"""The PyTorch environment the training-job tests run in, built once per machine.

`pytorch_prefix()` builds the platform's "PyTorch" recipe with PyPI's wheels
(the cuda variant: the CPU wheels live on download.pytorch.org, which a CI
machine may not reach) through the platform's own builder
(backends/local_environments.py), the very code an admin's build runs, into
~/.cache/cgu-lab/envs/, and returns its prefix; later runs find it there.
The tests then declare it as an environment by its prefix. Why not build it
through the API in every run: unpacking torch and its CUDA libraries (~5 GB)
takes minutes on a small runner, while the recipe's build through the API is
the same code that tests/test_environments.py drives with small packages.

The wheels go to the builds' shared wheelhouse below ~/.cache/cgu-lab/pip-cache
(downloaded once per machine); the environment itself goes to
/var/cache/cgu-lab/envs when the tests run as root (per-user accounts run the
jobs and cannot pass root's home), else to ~/.cache/cgu-lab/envs. The UI spec
(ui-tests/tests/training.spec.ts) runs `python -m tests.test_local_training_env`
to get the same prefix.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import sys
import time
from pathlib import Path

from cgu_lab.backends import local_environments
from cgu_lab.core import environments as rules

CACHE = Path(os.environ.get("CGU_LAB_TEST_CACHE", Path.home() / ".cache" / "cgu-lab"))
WHEELS = CACHE / "pip-cache"
# Per-user accounts run the jobs, so they must reach the environment: not below root's
# home (0700) when the tests run as root.
ENVS = Path(
    os.environ.get("CGU_LAB_TEST_ENVS")
    or ("/var/cache/cgu-lab/envs" if os.geteuid() == 0 else CACHE / "envs")
)
TAG = f"pytorch-py{sys.version_info.major}{sys.version_info.minor}"
STAMP = "cgu-lab-test-env"  # written last: a prefix without it is a broken build


def pytorch_prefix() -> Path:
    """The cached PyTorch environment for this platform (built first when missing)."""
    target = ENVS / TAG
    platform = str(Path(sys.prefix).resolve())  # the environment is layered on this one
    target.parent.mkdir(parents=True, exist_ok=True)
    for folder in (target.parent, target.parent.parent):
        folder.chmod(folder.stat().st_mode | 0o011)  # others may pass, not list
    with open(target.parent / f"{TAG}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the pytest module and the UI spec may race
        stamp = target / STAMP
        if stamp.exists() and stamp.read_text() == platform:
            return target
        shutil.rmtree(target, ignore_errors=True)
        WHEELS.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        recipe = rules.recipe("pytorch", "cuda")
        _, size = asyncio.run(
            local_environments.build(target, recipe, WHEELS.absolute(), lambda *_: None)
        )
        stamp.write_text(platform)
        seconds = time.monotonic() - started
        print(f"built {target} ({local_environments.size_text(size)}) in {seconds:.0f} s")
    return target


def test_the_cached_environment_has_torchrun():
    prefix = pytorch_prefix()
    assert (prefix / "bin" / "python").exists()
    found = list(prefix.glob("lib/python3*/site-packages/torch/distributed/run.py"))
    assert found, f"no torch.distributed.run in {prefix}"


if __name__ == "__main__":
    print(pytorch_prefix())

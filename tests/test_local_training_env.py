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

An environment is layered on one platform (the checkout's virtual environment:
its `.pth` and scripts name that platform's folders), so each platform has its
own, `<tag>-<digest of the platform's path>`: a developer's checkout and a CI
clone on the same machine no longer rebuild one prefix in turn, minutes each
time. A platform that has none yet (a fresh clone) takes over one whose platform
is gone (a removed clone's): renamed, layered again on this platform by the
builder's own `layer`, and kept when torch imports through the new layer; only
when none is left over, or it does not import, is one built.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import shutil
import subprocess
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
    platform = str(Path(sys.prefix).resolve())  # the environment is layered on this one
    digest = hashlib.sha256(platform.encode()).hexdigest()[:12]
    target = ENVS / f"{TAG}-{digest}"
    target.parent.mkdir(parents=True, exist_ok=True)
    for folder in (target.parent, target.parent.parent):
        folder.chmod(folder.stat().st_mode | 0o011)  # others may pass, not list
    with open(target.parent / f"{TAG}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the pytest module, the UI spec, other checkouts
        stamp = target / STAMP
        if stamp.exists() and stamp.read_text() == platform:
            return target
        shutil.rmtree(target, ignore_errors=True)
        started = time.monotonic()
        if _take_over_a_left_over(target, platform):
            print(f"took over {target} in {time.monotonic() - started:.0f} s")
            return target
        WHEELS.mkdir(parents=True, exist_ok=True)
        recipe = rules.recipe("pytorch", "cuda")
        _, size = asyncio.run(
            local_environments.build(target, recipe, WHEELS.absolute(), lambda *_: None)
        )
        stamp.write_text(platform)
        seconds = time.monotonic() - started
        print(f"built {target} ({local_environments.size_text(size)}) in {seconds:.0f} s")
    return target


def _take_over_a_left_over(target: Path, platform: str) -> bool:
    """Make a finished environment whose platform no longer exists this platform's, in
    `target` (under the lock); False when there is none or torch does not import in it
    (it is removed then). `<tag>` alone is the name every platform used before."""
    for candidate in [ENVS / TAG, *sorted(ENVS.glob(f"{TAG}-*"))]:
        stamp = candidate / STAMP
        if candidate == target or not stamp.is_file():
            continue
        if Path(stamp.read_text()).exists():
            continue  # its platform is still there: another checkout's
        candidate.rename(target)
        python = target / "bin" / "python"
        site = target / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
        if not list((site / "site-packages").glob("pip-*.dist-info")):
            (target / "bin" / "pip").unlink(missing_ok=True)  # the old platform's pip, run
        local_environments.layer(target, python)
        local_environments.seal(target)
        imports = subprocess.run(
            [str(python), "-s", "-c", "import torch.distributed.run"],
            capture_output=True,
            text=True,
            check=False,
        )
        if imports.returncode == 0:
            (target / STAMP).write_text(platform)
            return True
        print(f"{candidate} does not serve this platform: {imports.stderr[-500:]}")
        shutil.rmtree(target, ignore_errors=True)
        return False
    return False


def test_the_cached_environment_has_torchrun():
    prefix = pytorch_prefix()
    assert (prefix / "bin" / "python").exists()
    found = list(prefix.glob("lib/python3*/site-packages/torch/distributed/run.py"))
    assert found, f"no torch.distributed.run in {prefix}"


if __name__ == "__main__":
    print(pytorch_prefix())

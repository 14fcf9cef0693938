"""Making one environment on this machine: a venv layered on the platform, then pip.

The controller's `environment_builds` decides *when* and records the outcome;
this module does the machine's part, step by step, reporting each line of
output. It builds into the directory it is given (the controller picks a new
one per build and swaps on success).

Why a venv *layered* on the platform instead of a full one: every notebook
server needs JupyterLab, jupyter_server and cgu-lab's own server extension at
exactly the versions the controller and the lab extension were built with.
Installing them again in each environment costs ~150 packages and a minute
per build, and drifts. Instead the environment gets a `.pth` file that, after
its own site-packages, adds the platform's site directories (with
`site.addsitedir`, so the platform's own `.pth` files, such as an editable
cgu-lab, work too). Python then finds the environment's packages first and
the platform's after them: on a conflict the environment's own version wins,
and pip, run inside the environment, sees the platform's packages as already
installed and adds only what is missing. Small `bin/jupyter-lab` and
`bin/jupyter` scripts run JupyterLab with the environment's interpreter and
point it at the platform's JupyterLab assets and settings (which live below
the platform's prefix, not the environment's) and, last on PATH, at the
platform's other commands; kernels that server starts are the environment's
Python. A `bin/pip` runs the platform's pip with the environment's Python.
The local backend runs `<prefix>/bin/jupyter-lab` as for any other prefix.
`bin/xclip` and `bin/xsel` are the clipboard bridge's commands (the
platform's console scripts live in the platform's bin, last on PATH, behind
the host's own `/usr/bin/xclip`); the environment's bin comes first on a
notebook's PATH, so kernels and terminals find the bridge. (A notebook server
also puts them first on its kernels' PATH at start, for environments built
before they were written here: notebook/clipboard/relay.py.)

Some recipes need programs that pip does not provide (PostgreSQL or MariaDB for the
database course, R and IRkernel for the R course): the recipe names Debian packages
(core/environments.SYSTEM_PACKAGES). The build checks them with dpkg first and,
where the controller runs as root on a machine with apt-get, installs the missing
ones (reported like pip's lines); elsewhere it stops and names the command an
administrator runs. Installing PostgreSQL's server this way makes no cluster of
its own (no host-wide server on port 5432: each notebook runs its own on a socket);
MariaDB's recipe names the server program's package, not Debian's service.
A recipe's kernels (R's IRkernel) are written into the environment's own
`share/jupyter/kernels`, so only its notebooks offer them; the database recipes'
`etc/ipython` loads JupySQL in every kernel, which connects with `$DATABASE_URL`.

pip runs twice: `pip download` puts the wheels of the recipe and of all its
dependencies into a wheelhouse beside pip's cache (shared by every build; a
wheel already there is not fetched again, which pip's HTTP cache alone does
not guarantee behind proxies that strip caching headers), then `pip install
--no-index --find-links <wheelhouse>` installs from it.

Security: pip runs as the controller's account (root on a shared machine), so
only wheels are installed (`--only-binary :all:`; a source package would run
its build code as that account), package requests are plain specifiers
(core/environments.py) placed after `--`, and an index comes from the recipe
alone. pip sees the network settings and its own `PIP_*` settings, not the
controller's environment. Commands start through `local_launch`, which closes
the controller's descriptors (its listening socket) before exec. At the end
every directory is made 0755 and every file 0644 (0755 when executable),
owned by the controller's account: notebooks, which run as per-user accounts
when the controller is root, use the environment and cannot change it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import site
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ..core import environments as rules

Report = Callable[..., None]  # (line, percent=None)

PASSED_ENV = frozenset(
    {
        "LANG",
        "LC_ALL",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
    }
)
# Non-interactive, wheels only (see above), no progress bars: pip then prints
# one line per step ("Collecting numpy", "Downloading ..."), each an event.
PIP_OPTIONS = ("--no-input", "--disable-pip-version-check", "--no-color", "--progress-bar", "off")
WHEELS_ONLY = ("--only-binary", ":all:")
INSTALL_OPTIONS = ("--root-user-action", "ignore", "--no-warn-script-location", "--no-index")
# Run by the environment's interpreter: every distribution it sees, the first
# of each name (the one imports use), and whether it lies in the environment.
INVENTORY = """
import importlib.metadata as metadata, json, os, re, sys
prefix = os.path.realpath(sys.prefix)
found = {}
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    if not name:
        continue
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in found:
        continue
    where = os.path.realpath(str(dist.locate_file("")))
    own = where == prefix or where.startswith(prefix + os.sep)
    found[key] = {"name": name, "version": dist.version, "own": own}
print(json.dumps(list(found.values())))
"""
SERVER_CHECK = "import jupyterlab, jupyter_server, ipykernel, cgu_lab.notebook"
WRAPPER = '''#!{python}
"""{what} in this environment (written by cgu-lab: backends/local_environments.py)."""
import os
import sys

os.environ["JUPYTERLAB_DIR"] = {lab_dir!r}
for name, value in (
    ("JUPYTER_PATH", {data!r}),
    ("JUPYTER_CONFIG_PATH", {config!r}),
    ("PATH", {scripts!r}),
):
    os.environ[name] = os.pathsep.join(p for p in (os.environ.get(name), value) if p)
from {module} import main

sys.exit(main())
'''


# The database recipes' kernels: JupySQL loaded, connected by $DATABASE_URL (the notebook's
# own PostgreSQL or MariaDB, set by the server: notebook/apps/database*.py), results as tables.
SQL_KERNEL_CONFIG = """# Written by cgu-lab (backends/local_environments.py): %sql needs no setting.
c = get_config()  # noqa: F821
c.InteractiveShellApp.extensions = ["sql"]
c.SqlMagic.displaycon = False
c.SqlMagic.feedback = 0
"""


class BuildFailed(Exception):
    """A step of the build failed; the message says which, for the admin."""


def size_text(size: int) -> str:
    if size < 2**20:
        return f"{size / 2**10:.0f} KiB"
    return f"{size / 2**20:.0f} MiB" if size < 2**30 else f"{size / 2**30:.1f} GiB"


def platform_site_dirs() -> list[str]:
    """The controller's own site directories, to be layered below every environment."""
    found: list[str] = []
    for path in site.getsitepackages():
        real = os.path.realpath(path)
        if os.path.isdir(real) and real not in found:
            found.append(real)
    return found


async def build(
    target: Path, recipe: rules.Recipe, cache: Path, report: Report
) -> tuple[list[dict], int]:
    """Make the environment in `target`; returns its packages and its size in bytes.

    Packages are those installed in the environment plus the recipe's main ones
    wherever they come from (the platform may already hold one), each
    {"name", "version", "own", "main"}, main ones first.
    """
    python = target / "bin" / "python"
    await ensure_system_packages(recipe, report)
    await create_venv(target, python, report)
    if recipe.packages:
        await install_recipe(target, python, recipe, cache, report)
    await asyncio.to_thread(write_kernels, target, recipe)
    report("Checking that JupyterLab starts in it", 91)
    await run([str(python), "-s", "-c", SERVER_CHECK], target.parent, report, "the server check")
    kept = await list_packages(target, python, recipe)
    report(f"{sum(p['own'] for p in kept)} packages installed in the environment", 94)
    size = await asyncio.to_thread(seal, target)
    report(f"Made read-only for notebooks ({size_text(size)})", 97)
    return rules.main_versions(kept, recipe.main_packages), size


async def create_venv(target: Path, python: Path, report: Report) -> None:
    """The venv, layered on the platform's packages."""
    own_pip = importlib.util.find_spec("pip") is None  # else the platform's pip serves
    report(f"Creating a Python {sys.version.split()[0]} environment", 4)
    venv = [sys.executable, "-m", "venv", *([] if own_pip else ["--without-pip"]), str(target)]
    await run(venv, target.parent, report, "creating the environment")
    await asyncio.to_thread(layer, target, python)
    report("Layered on the platform's JupyterLab and server extension", 8)


async def install_recipe(
    target: Path, python: Path, recipe: rules.Recipe, cache: Path, report: Report
) -> None:
    """The recipe's packages, in two steps.

    First the wheels (and those of every dependency) into the shared wheelhouse,
    where a file already there is not downloaded again; then the install from the
    wheelhouse alone, which adds what the platform lacks.
    """
    pip_line = pip_reporter(report)
    if not cache.is_absolute():
        raise BuildFailed(f"the pip cache must be an absolute path, not {cache}")
    wheelhouse = cache / "wheelhouse"
    specs = ("--", *(r.text for r in recipe.packages))
    report("Fetching " + ", ".join(r.text for r in recipe.packages), 10)
    download = [
        *(str(python), "-s", "-m", "pip", "download", *PIP_OPTIONS, *WHEELS_ONLY),
        *("--cache-dir", str(cache), "--dest", str(wheelhouse)),
        *(["--index-url", recipe.index_url] if recipe.index_url else []),
        *specs,
    ]
    await run(download, target.parent, pip_line, "fetching the packages")
    report("Installing into the environment", 86)
    install = [
        *(str(python), "-s", "-m", "pip", "install", *PIP_OPTIONS, *WHEELS_ONLY),
        *(*INSTALL_OPTIONS, "--find-links", str(wheelhouse), *specs),
    ]
    await run(install, target.parent, lambda line: report(line, 88), "pip install")


def missing_system_packages(names: tuple[str, ...]) -> list[str]:
    """The Debian packages of `names` that dpkg does not know as installed."""
    missing = []
    for name in names:
        found = subprocess.run(
            ["dpkg-query", "-W", "-f=${db:Status-Abbrev}", name],
            capture_output=True,
            text=True,
            check=False,
        )
        if not found.stdout.startswith("ii"):
            missing.append(name)
    return missing


async def ensure_system_packages(recipe: rules.Recipe, report: Report) -> None:
    """The recipe's Debian packages, installed where this account may (see above)."""
    if not recipe.system_packages:
        return
    if not shutil.which("dpkg-query"):
        report(f"Not a Debian system: make sure {', '.join(recipe.system_packages)} exist", 3)
        return
    missing = await asyncio.to_thread(missing_system_packages, recipe.system_packages)
    if not missing:
        report(f"System packages present: {', '.join(recipe.system_packages)}", 3)
        return
    command = f"apt-get install --no-install-recommends {' '.join(missing)}"
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise BuildFailed(f"the {recipe.title} recipe needs {', '.join(missing)}: run {command}")
    report(f"Installing system packages: {', '.join(missing)}", 3)
    if "postgresql" in missing:
        # Debian's package would make and start a cluster of its own on port 5432.
        await asyncio.to_thread(no_main_cluster)
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing]
    try:
        await run(["/usr/bin/apt-get", *install[1:]], Path("/"), report, "apt-get", env)
    except BuildFailed:  # stale package lists: once more after an update
        await run(["/usr/bin/apt-get", "update", "-q"], Path("/"), report, "apt-get update", env)
        await run(["/usr/bin/apt-get", *install[1:]], Path("/"), report, command, env)


def no_main_cluster() -> None:
    conf = Path("/etc/postgresql-common/createcluster.d/cgu-lab.conf")
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("# cgu-lab: each notebook runs its own cluster\ncreate_main_cluster = false\n")


def write_kernels(target: Path, recipe: rules.Recipe) -> None:
    """The recipe's own Jupyter kernels and IPython settings, inside the environment."""
    for name, spec in rules.RECIPE_KERNELS.get(recipe.kind, {}).items():
        folder = target / "share" / "jupyter" / "kernels" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    if recipe.kind in rules.SQL_RECIPES:
        folder = target / "etc" / "ipython"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ipython_kernel_config.py").write_text(SQL_KERNEL_CONFIG)


def pip_reporter(report: Report) -> Callable[[str], None]:
    """Report pip's lines with a percentage that grows with each package it collects."""
    collected = 0

    def pip_line(line: str) -> None:
        nonlocal collected
        if line.startswith("Collecting "):
            collected += 1
        report(line, rules.build_percent(collected))

    return pip_line


async def list_packages(target: Path, python: Path, recipe: rules.Recipe) -> list[dict]:
    """The environment's own packages and the recipe's main ones, as its Python sees them."""
    found: list[str] = []
    await run([str(python), "-s", "-c", INVENTORY], target.parent, found.append, "listing")
    try:
        installed = json.loads(found[-1])
    except (IndexError, ValueError):
        raise BuildFailed("the installed packages could not be listed") from None
    main = set(recipe.main_packages)
    return [
        {"name": p["name"], "version": p["version"], "own": bool(p["own"])}
        for p in installed
        if p["own"] or rules.normalise(p["name"]) in main
    ]


def layer(target: Path, python: Path) -> None:
    """The `.pth` that adds the platform's packages, and the JupyterLab entry points."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site_packages = target / "lib" / version / "site-packages"
    if not site_packages.is_dir():
        raise BuildFailed(f"the new environment has no {site_packages}")
    lines = [f"import site; site.addsitedir({path!r})\n" for path in platform_site_dirs()]
    (site_packages / "cgu_lab_platform.pth").write_text("".join(lines))
    from jupyterlab.commands import get_app_dir

    scripts = [
        ("jupyter-lab", "jupyterlab.labapp", "JupyterLab"),
        ("jupyter", "jupyter_core.command", "The jupyter command"),
    ]
    for name in rules.BRIDGE_COMMANDS:  # the browser's clipboard, ahead of /usr/bin/xclip
        command = target / "bin" / name
        command.write_text(
            rules.bridge_command(str(python), name, "backends/local_environments.py")
        )
        command.chmod(0o700)
    if not (target / "bin" / "pip").exists():  # the platform's pip, run by this environment
        scripts.append(("pip", "pip._internal.cli.main", "pip"))
    for script, module, what in scripts:
        path = target / "bin" / script
        path.write_text(
            WRAPPER.format(
                python=python,
                what=what,
                lab_dir=get_app_dir(),
                data=str(Path(sys.prefix) / "share" / "jupyter"),
                config=str(Path(sys.prefix) / "etc" / "jupyter"),
                scripts=str(Path(sys.executable).parent),
                module=module,
            )
        )
        path.chmod(0o700)  # seal() opens it to everyone with the rest


def seal(target: Path) -> int:
    """Only the owner writes, everyone reads; returns the size of the files in bytes."""
    size = 0
    for folder, _dirs, files in os.walk(target):
        os.chmod(folder, 0o755)  # noqa: S103 - notebooks read it; only its owner writes
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            info = os.lstat(path)
            os.chmod(path, 0o755 if info.st_mode & 0o100 else 0o644)
            size += info.st_size
    return size


async def run(
    argv: list[str], cwd: Path, report: Report, step: str, extra_env: dict | None = None
) -> None:
    """Run `argv` through the launcher, reporting each line; BuildFailed when it fails."""
    env = {k: v for k, v in os.environ.items() if k in PASSED_ENV or k.startswith("PIP_")}
    env["PATH"] = f"{Path(argv[0]).parent}:/usr/local/bin:/usr/bin:/bin"
    env["HOME"] = os.environ.get("HOME", "/root")
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra_env or {})
    plan = {"argv": argv, "env": env, "cwd": str(cwd)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cgu_lab.backends.local_launch",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={"CGU_LAUNCH_PLAN": json.dumps(plan), "PATH": "/usr/bin:/bin"},
        start_new_session=True,  # stopped as a group when the build is cancelled
        limit=2**20,
    )
    last: list[str] = []
    try:
        assert process.stdout is not None
        async for raw in process.stdout:
            line = raw.decode(errors="replace").rstrip()
            if line:
                last = [*last[-5:], line]
                report(line)
        code = await process.wait()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        raise
    if code != 0:
        errors = [line for line in last if line.startswith("ERROR")]
        reason = (errors or last or [""])[-1]
        raise BuildFailed(f"{step} failed (exit code {code}): {reason[:300]}")

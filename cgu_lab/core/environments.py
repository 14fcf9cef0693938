"""Recipes of software environments, and what a package request may say.

An administrator declares an environment from a recipe ("Data science",
"PyTorch", "TensorFlow") or a list of packages of their own; the controller
then builds it with pip (controller/environments/builds.py). These are the
rules that need no I/O: which recipes exist, the packages each one means, and
which package requests are accepted.

Why the requests are so narrow: each one becomes an argument of a pip command
that the controller runs as its own account (root on a shared machine). A
request is therefore only ever a *plain requirement specifier*, a project name
with optional extras and version bounds (`numpy`, `torch>=2.4`,
`pandas[performance]==2.2.*`). Anything pip would read as an option
(`--index-url ...`, `-r file`), a URL or path (`pkg @ https://...`,
`./wheel.whl`), or an environment marker is refused, so an admin's typo or a
forged request can neither point pip at another index nor make it read local
files. Package indexes are chosen by the recipe alone (PyTorch's CPU wheels
come from download.pytorch.org), never by the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import Invalid

MAX_PACKAGES = 50
MAX_SPEC_LENGTH = 200

# PEP 508 project names; extras use the same form.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_OPERATOR = r"(?:===|==|!=|~=|<=|>=|<|>)"
# A version, or a prefix match such as 2.2.* after == and != (PEP 440 characters only).
_VERSION = r"[A-Za-z0-9](?:[A-Za-z0-9.+!_*-]*[A-Za-z0-9*])?"
_CLAUSE = rf"{_OPERATOR}{_VERSION}"
SPEC = re.compile(
    rf"(?P<name>{_NAME})"
    rf"(?:\[(?P<extras>{_NAME}(?:,{_NAME})*)\])?"
    rf"(?P<versions>{_CLAUSE}(?:,{_CLAUSE})*)?"
)
# The same rule, loosely, for the API document (spaces are allowed around operators).
SPEC_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._\[\], <>=!~*+-]*$"

# The platform provides these in every environment it builds (see
# environment_builds); a second copy inside an environment would shadow the
# platform's server and its extension with versions nobody tested together.
PROVIDED = frozenset({"cgu-lab", "jupyterlab", "jupyter-server", "jupyterlab-server", "notebook"})

PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@dataclass(frozen=True)
class Requirement:
    """One accepted package request, in the form handed to pip."""

    name: str  # normalised (PEP 503): "scikit-learn"
    text: str  # what pip gets: "scikit-learn>=1.5"


@dataclass(frozen=True)
class Recipe:
    """What to build: packages, and the index they come from when not the default one."""

    kind: str  # a key of RECIPES: "data-science", "database", "database-mariadb", "custom"...
    variant: str  # "cpu" or "cuda" (ignored where it makes no difference)
    title: str
    packages: tuple[Requirement, ...]
    index_url: str = ""
    # Debian packages the environment needs on the machine (see SYSTEM_PACKAGES).
    system_packages: tuple[str, ...] = ()
    # The apps its notebooks offer (core/apps.py names); None: the platform's default.
    apps: tuple[str, ...] | None = None

    @property
    def main_packages(self) -> tuple[str, ...]:
        """The names a user chooses the environment for (shown on the new-notebook form)."""
        return tuple(r.name for r in self.packages)

    def as_record(self) -> dict:
        """What is stored with the environment, enough to build it again."""
        return {
            "kind": self.kind,
            "variant": self.variant,
            "packages": [r.text for r in self.packages],
        }


# Recipe kinds: (title, default environment name, packages for "cpu", packages for "cuda").
RECIPES: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "data-science": (
        "Data science",
        "data-science",
        ("numpy", "pandas", "scikit-learn", "matplotlib", "scipy"),
        ("numpy", "pandas", "scikit-learn", "matplotlib", "scipy"),
    ),
    "pytorch": ("PyTorch", "pytorch", ("torch", "torchvision"), ("torch", "torchvision")),
    "tensorflow": ("TensorFlow", "tensorflow", ("tensorflow-cpu",), ("tensorflow[and-cuda]",)),
    # The database-design course: JupySQL's %sql and psycopg in kernels, a PostgreSQL of
    # each notebook's own (notebook/apps/database.py) with its web client, a browser.
    "database": (
        "Databases (PostgreSQL)",
        "databases",
        ("jupysql", "psycopg[binary]"),
        ("jupysql", "psycopg[binary]"),
    ),
    # The same course on MariaDB, an administrator's choice: PyMySQL is SQLAlchemy's driver
    # (pure Python; mysqlclient would need a compiler and MariaDB's headers, and builds
    # install wheels only). notebook/apps/database_mariadb.py.
    "database-mariadb": (
        "Databases (MariaDB)",
        "databases-mariadb",
        ("jupysql", "pymysql"),
        ("jupysql", "pymysql"),
    ),
    # R from Debian with its Jupyter kernel (IRkernel); no Python packages of its own.
    "r": ("R", "r", (), ()),
    "custom": ("Custom", "", (), ()),
}
VARIANTS = ("cpu", "cuda")

# What a recipe needs from the machine rather than from pip, by recipe: Debian packages
# (installed by the build where the controller may: backends/local_environments.py;
# named in the build's refusal otherwise). Kept out of pip's reach: an admin's package
# request is never a system package.
SYSTEM_PACKAGES: dict[str, tuple[str, ...]] = {
    "database": ("postgresql", "postgresql-client"),
    # The server program alone: Debian's `mariadb-server` is the machine's own service
    # (started when installed), which no notebook uses.
    "database-mariadb": ("mariadb-server-core", "mariadb-client"),
    "r": ("r-base-core", "r-cran-irkernel"),
}
# The apps a recipe's notebooks offer (core/apps.py); recipes not named: the default.
RECIPE_APPS: dict[str, tuple[str, ...]] = {
    "database": ("desktop", "vscode", "postgres", "browser"),
    "database-mariadb": ("desktop", "vscode", "mariadb", "browser"),
    "r": ("desktop", "vscode", "rstudio"),
}
# Recipes whose kernels load JupySQL, connected by the notebook's `$DATABASE_URL`.
SQL_RECIPES = frozenset({"database", "database-mariadb"})
# Jupyter kernels a recipe adds to its environment: name -> kernel.json.
RECIPE_KERNELS: dict[str, dict[str, dict]] = {
    "r": {
        "ir": {
            "argv": ["R", "--slave", "-e", "IRkernel::main()", "--args", "{connection_file}"],
            "display_name": "R",
            "language": "R",
        }
    },
}


def normalise(name: str) -> str:
    """A project's canonical name: `Scikit_Learn` and `scikit-learn` are one project."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirement(text: str) -> Requirement:
    """Accept a plain requirement specifier (see the module's notes), or say what is wrong."""
    if not isinstance(text, str):
        raise Invalid("a package is written as text, e.g. numpy or pandas>=2.2")
    given = text.strip()
    if not given:
        raise Invalid("a package name is empty; write e.g. numpy or pandas>=2.2")
    if len(given) > MAX_SPEC_LENGTH:
        raise Invalid(f"a package request may have at most {MAX_SPEC_LENGTH} characters")
    shown = given[:60]
    if re.search(r"(^|\s)-", given):
        raise Invalid(
            f"'{shown}' has a pip option; only package names and versions are accepted "
            "(indexes are chosen by the recipe)"
        )
    if "://" in given or "@" in given:
        raise Invalid(f"'{shown}' names a URL; only package names and versions are accepted")
    if ";" in given:
        raise Invalid(f"'{shown}' has an environment marker; write only the name and versions")
    if "/" in given or "\\" in given or given.startswith("."):
        raise Invalid(f"'{shown}' looks like a path; only package names and versions are accepted")
    # Spaces may surround operators, brackets and commas ("torch >= 2.4"); nowhere else.
    compact = re.sub(r"\s*([\[\],<>=!~]+)\s*", r"\1", given)
    found = SPEC.fullmatch(compact)
    if found is None:
        raise Invalid(
            f"'{shown}' is not a package request; write a name with optional extras and "
            "versions, e.g. numpy, torch>=2.4 or pandas[performance]==2.2.*"
        )
    name = normalise(found["name"])
    if name in PROVIDED:
        raise Invalid(
            f"'{found['name']}' is provided by the platform in every environment; leave it out"
        )
    return Requirement(name=name, text=compact)


def parse_requirements(texts: list[str] | tuple[str, ...]) -> tuple[Requirement, ...]:
    """A list of requests, each valid and each project named once."""
    if len(texts) > MAX_PACKAGES:
        raise Invalid(f"an environment may list at most {MAX_PACKAGES} packages")
    parsed: list[Requirement] = []
    seen: set[str] = set()
    for text in texts:
        requirement = parse_requirement(text)
        if requirement.name in seen:
            raise Invalid(f"'{requirement.name}' is listed twice; name each package once")
        seen.add(requirement.name)
        parsed.append(requirement)
    return tuple(parsed)


def recipe(kind: str, variant: str = "cpu", extra: list[str] | tuple[str, ...] = ()) -> Recipe:
    """The recipe `kind` for `variant`, with the admin's `extra` packages added."""
    if kind not in RECIPES:
        raise Invalid(f"there is no recipe '{kind}'; choose one of {', '.join(RECIPES)}")
    if variant not in VARIANTS:
        raise Invalid(f"a recipe is built for 'cpu' or 'cuda', not '{variant}'")
    title, _, cpu, cuda = RECIPES[kind]
    base = parse_requirements(cuda if variant == "cuda" else cpu)
    added = parse_requirements(list(extra))
    clash = {r.name for r in base} & {r.name for r in added}
    if clash:
        raise Invalid(
            f"the {title} recipe already has {', '.join(sorted(clash))}; list only other packages"
        )
    packages = base + added
    if not packages and kind == "custom":
        raise Invalid("list at least one package for a custom environment")
    index = PYTORCH_CPU_INDEX if kind == "pytorch" and variant == "cpu" else ""
    return Recipe(
        kind=kind,
        variant=variant,
        title=title,
        packages=packages,
        index_url=index,
        system_packages=SYSTEM_PACKAGES.get(kind, ()),
        apps=RECIPE_APPS.get(kind),
    )


def recipe_from_record(record: dict) -> Recipe:
    """The recipe stored with an environment (`Recipe.as_record`), checked again."""
    kind = record.get("kind", "")
    variant = record.get("variant", "cpu")
    packages = list(record.get("packages", []))
    if kind == "custom" or kind not in RECIPES:
        return recipe("custom", variant, packages)
    base = RECIPES[kind][3 if variant == "cuda" else 2]
    base_names = {parse_requirement(p).name for p in base}
    extra = [p for p in packages if parse_requirement(p).name not in base_names]
    return recipe(kind, variant, extra)


def default_name(kind: str) -> str:
    """The environment name a recipe suggests ("data-science"); custom ones have none."""
    if kind not in RECIPES:
        raise Invalid(f"there is no recipe '{kind}'; choose one of {', '.join(RECIPES)}")
    return RECIPES[kind][1]


# -- the state of a built environment ------------------------------------------

BUILDING = "building"
READY = "ready"
FAILED = "failed"
STATES = (BUILDING, READY, FAILED)


def build_percent(collected: int) -> int:
    """Progress of a pip run, which does not say its total: 10% to 85%, slower per package.

    Each "Collecting ..." line moves the bar a share of what is left, so a
    recipe of five packages with forty dependencies still ends near the top.
    """
    return 10 + int(75 * (1 - 0.88 ** max(0, collected)))


def tail(lines: list[str], count: int = 40, width: int = 300) -> str:
    """The last `count` lines of a log, each cut to `width` characters."""
    kept = [line.rstrip()[:width] for line in lines if line.strip()][-count:]
    return "\n".join(kept)


def main_versions(packages: list[dict], main: tuple[str, ...] | list[str]) -> list[dict]:
    """The installed packages marked `main` where the recipe asked for them, main ones first."""
    wanted = {normalise(n) for n in main}
    marked = [{**p, "main": normalise(p["name"]) in wanted} for p in packages]
    return sorted(marked, key=lambda p: (not p["main"], normalise(p["name"])))


# -- the clipboard bridge's commands ----------------------------------------------------

# Commands every notebook environment carries ahead of the system's: `xclip`/`xsel` are
# the browser's clipboard (cgu_lab/notebook/clipboard), under the names pandas,
# pyperclip and people call. The same entry points as pyproject.toml's [project.scripts];
# `/usr/bin/xclip`, where the host has one, only says "Can't open display".
BRIDGE_COMMANDS = {
    "xclip": ("cgu_lab.notebook.clipboard.cli", "xclip"),
    "xsel": ("cgu_lab.notebook.clipboard.cli", "xsel"),
}


def bridge_command(python: str, name: str, writer: str) -> str:
    """The text of the bridge's command `name`, run by `python` (whose packages include
    cgu_lab); `writer` names what wrote it, for whoever finds the file."""
    module, function = BRIDGE_COMMANDS[name]
    return (
        f"#!{python}\n"
        f'"""`{name}`: the clipboard of the browser in front of the notebook '
        f'(written by cgu-lab: {writer})."""\n'
        f"import sys\n\n"
        f"from {module} import {function}\n\n"
        f"sys.exit({function}())\n"
    )


def node_arch(arch: str) -> str:
    """The `kubernetes.io/arch` a notebook of an environment of `arch` (any, amd64, arm64)
    must run on, "" for any node: a fleet mixing x86 servers and arm64 boards would
    otherwise start an image where it cannot execute."""
    return "" if arch == "any" else arch

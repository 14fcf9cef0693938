"""Request and response bodies of environments: declared by hand or built from recipes.

A module of its own so that the build's fields (state, recipe, packages, log)
stay apart from the notebooks' schemas. A package request is checked here
with the same rule the service applies (core/environments.py), so a refused
`--index-url ...` or `pkg @ https://...` is a 400 naming the package before
anything runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ...core import apps as apps_rules
from ...core import environments as rules
from ..api.schema_types import (
    Arch,
    Description,
    DisplayName,
    EnvironmentName,
    Strict,
    domain_rule,
    matching,
)

RecipeKind = Literal[
    "data-science", "pytorch", "tensorflow", "database", "database-mariadb", "r", "custom"
]
Variant = Literal["cpu", "cuda"]
BuildState = Literal["building", "ready", "failed"]

PackageSpec = Annotated[
    str,
    Field(
        min_length=1,
        max_length=rules.MAX_SPEC_LENGTH,
        description="A package name with optional extras and versions: numpy, torch>=2.4",
        json_schema_extra={"pattern": rules.SPEC_PATTERN},
    ),
    domain_rule(rules.parse_requirement),
    matching(rules.SPEC_PATTERN, "has spaces or characters outside a name and its versions"),
]


class EnvironmentBuild(Strict):
    """Build a new environment on this machine from a recipe (local backend)."""

    recipe: RecipeKind = Field(
        description="data-science (numpy, pandas, scikit-learn, matplotlib, scipy), pytorch, "
        "tensorflow, database (JupySQL and a PostgreSQL per notebook), database-mariadb "
        "(JupySQL and a MariaDB per notebook), r (Debian's R and IRkernel), or custom (only "
        "`packages`)"
    )
    name: EnvironmentName | None = Field(
        None, description="Defaults to the recipe's name (data-science, pytorch, tensorflow)"
    )
    variant: Variant = Field(
        "cpu", description="cpu, or cuda for GPU builds (PyTorch: CUDA wheels; TensorFlow)"
    )
    packages: Annotated[list[PackageSpec], Field(max_length=rules.MAX_PACKAGES)] = Field(
        default_factory=list, description="More packages (all of them for a custom recipe)"
    )
    display_name: DisplayName = ""
    description: Description = ""
    is_default: bool = Field(False, description="Make it the default once it is built")


class RecipeOut(BaseModel):
    kind: str
    variant: str
    packages: list[str]


class PackageOut(BaseModel):
    name: str
    version: str
    main: bool = Field(description="Asked for by the recipe")
    own: bool = Field(description="Installed in the environment (else the platform provides it)")


class AppDeclaration(Strict):
    """One app of an environment: a built-in by name (desktop, vscode), or an admin's own."""

    name: str = Field(
        max_length=32,
        description="desktop, vscode, or a name of your own app (its URL path)",
        json_schema_extra={"pattern": apps_rules.NAME_PATTERN},
    )
    title: str = Field("", max_length=apps_rules.MAX_TITLE, description="The launcher's label")
    command: list[Annotated[str, Field(min_length=1, max_length=apps_rules.MAX_ARG_LENGTH)]] = (
        Field(
            default_factory=list,
            max_length=apps_rules.MAX_ARGS,
            description="Your own app: the program and its arguments, no shell; {port}, "
            "{unix_socket} and {base_url} are filled in",
        )
    )
    port: int | None = Field(
        None, ge=1024, le=65535, description="A fixed port; empty: a free one is chosen"
    )
    icon: str = Field("", max_length=apps_rules.MAX_ICON, description="SVG markup")


class EnvironmentApps(Strict):
    """The apps an environment offers; null for the built-ins where installed."""

    apps: list[AppDeclaration] | None = Field(max_length=apps_rules.MAX_APPS)


class AppOut(BaseModel):
    name: str
    title: str
    command: list[str] = Field(default_factory=list)
    port: int | None = None
    icon: str = ""


class EnvironmentDetail(BaseModel):
    name: str
    display_name: str
    description: str
    image: str
    local_prefix: str
    is_default: bool
    arch: Arch = Field(description="The CPU architecture it runs on")
    state: BuildState = Field(description="Notebooks may use only a ready environment")
    message: str = Field(description="How the last build went")
    recipe: RecipeOut | None = Field(description="None when declared by hand")
    packages: list[PackageOut] = Field(description="Main packages first")
    size: int | None = Field(description="Bytes on disk of a built environment")
    built_by: str
    build_started_at: datetime | None
    built_at: datetime | None
    log_tail: str = Field(description="The last lines of the build's log (administrators only)")
    apps: list[AppOut] = Field(
        default_factory=list, description="The apps its notebooks offer beside JupyterLab"
    )
    apps_declared: bool = Field(
        False, description="False: the built-in apps (desktop, VS Code) where installed"
    )


class RecipeInfo(BaseModel):
    kind: str
    title: str
    name: str = Field(description="The environment name it suggests")
    cpu_packages: list[str]
    cuda_packages: list[str]

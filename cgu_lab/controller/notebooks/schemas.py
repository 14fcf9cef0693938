"""Bodies of notebooks, shares, the catalog (environments, GPU types, GPUs) and culling.

Split from `schemas` (which re-exports them) to keep each file readable; the
bounded types come from `schema_types`, so the limits read the same everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from ...core import culling
from ...core.pod_defaults import MAX_CHOSEN
from ..api.schema_types import (
    MAX_MINUTES,
    TOKEN_PATTERN,
    Arch,
    Cpu,
    Description,
    DeviceId,
    DeviceMemory,
    DisplayName,
    EnvironmentName,
    GpuCount,
    GpuTypeName,
    GrantTarget,
    GroupName,
    Image,
    Memory,
    Minutes,
    NotebookNameOrEmpty,
    PodDefaultName,
    RelativePath,
    RoleName,
    StateName,
    Strict,
    TemplateName,
    UserName,
    mapping,
    matching,
    number,
    text,
)

__all__ = [
    "AccessOut",
    "CullPolicyIn",
    "CullPolicyOut",
    "CullingStatus",
    "Directory",
    "DirectoryGroup",
    "DirectoryUser",
    "EnvironmentIn",
    "EnvironmentOut",
    "GpuDeviceIn",
    "GpuDeviceOut",
    "GpuTypeIn",
    "GpuTypeOut",
    "Grantee",
    "NotebookCreate",
    "NotebookOut",
    "NotebookPatch",
    "PodDefaultOut",
    "ShareCreate",
    "ShareOut",
    "SharedWithMe",
    "StateName",
]

# -- notebooks ---------------------------------------------------------------

PodDefaultNames = Annotated[list[PodDefaultName], Field(max_length=MAX_CHOSEN)]


class NotebookCreate(Strict):
    name: NotebookNameOrEmpty = Field(
        "",
        description="Lower-case letters, digits and '-'; part of the notebook's URL "
        "(from a template: its name when empty)",
    )
    template: TemplateName | None = Field(
        None, description="Start from this template (its resources and files)"
    )
    template_version: number(int, minimum=1, maximum=2**31 - 1) | None = Field(
        None, description="A template version; the newest when empty"
    )
    owner: UserName | None = Field(None, description="Admins only: create for another user")
    display_name: DisplayName = ""
    environment: EnvironmentName | None = Field(None, description="Default environment when empty")
    cpu: Cpu | None = None
    memory: Memory | None = None
    gpu_type: GpuTypeName | None = None
    gpus: GpuCount = 0
    group: GroupName | None = Field(None, description="Charge the notebook to this group's budget")
    persistent: bool = Field(False, description="Admins only: never stopped for idleness")
    start: bool = Field(False, description="Start it right away")
    kind: Literal["jupyter", "vm"] = Field(
        "jupyter", description="vm: a virtual machine (KubeVirt on Kubernetes, QEMU on one machine)"
    )
    image: Image = Field("", description="A custom image instead of the environment's (Kubernetes)")
    pod_defaults: PodDefaultNames = Field(
        [], description="Kubeflow PodDefaults ('configurations') of GET /pod-defaults to apply"
    )


class NotebookPatch(Strict):
    """Resource fields restart a running notebook with the new resources (a resize)."""

    display_name: DisplayName | None = None
    persistent: bool | None = None
    cpu: Cpu | None = None
    memory: Memory | None = None
    gpu_type: GpuTypeName | None = None
    gpus: GpuCount | None = None
    pod_defaults: PodDefaultNames | None = Field(
        None, description="The configurations it runs with ([]: none); a running one restarts"
    )


class NotebookOut(BaseModel):
    owner: str
    name: str
    display_name: str
    environment: str
    kind: Literal["jupyter", "vm"] = "jupyter"
    image: str = ""
    cpu_milli: int
    memory: int
    gpu_type: str | None
    gpus: int
    group: str | None
    persistent: bool
    state: StateName
    message: str
    url: str
    devices: list[str] | None
    created_at: datetime
    started_at: datetime | None
    stopped_at: datetime | None
    last_activity: datetime | None
    pod_defaults: list[str] = Field([], description="The configurations chosen (names)")


class PodDefaultOut(BaseModel):
    """A Kubeflow PodDefault ("configuration") of the owner's namespace, as its form offers it."""

    name: str
    desc: str = Field(description="Its `spec.desc`, or its name when it has none")


# -- shares ------------------------------------------------------------------


class ShareCreate(Strict):
    grantee: GrantTarget
    kind: Literal["user", "group"] = "user"
    access: Literal["read", "edit"] = Field("read", description="read-only or editable")
    path: RelativePath = Field("", description="One file to share; empty shares the whole notebook")
    expires_in_minutes: Minutes | None = Field(
        None, description="Ends by itself after this long (at most a year)"
    )
    note: text(200) = ""


class Grantee(BaseModel):
    kind: Literal["user", "group"]
    name: str
    display_name: str


class ShareOut(BaseModel):
    id: int
    grantee: Grantee
    access: Literal["read", "edit"]
    path: str
    note: str
    expires_at: datetime | None
    created_at: datetime
    created_by: str
    url: str = Field(description="Where the grantee opens it")


class SharedWithMe(BaseModel):
    id: int
    owner: str
    owner_display_name: str
    notebook: str
    access: Literal["read", "edit"]
    path: str
    expires_at: datetime | None
    state: StateName
    url: str


class DirectoryUser(BaseModel):
    name: str
    display_name: str
    role: RoleName


class DirectoryGroup(BaseModel):
    name: str
    display_name: str


class Directory(BaseModel):
    users: list[DirectoryUser]
    groups: list[DirectoryGroup]


class AccessOut(BaseModel):
    access: Literal["owner", "edit", "read"] | None
    scope: list[str]
    # The platform user asked about (the one an e-mail address names); None: nobody.
    user: str | None = None


# -- catalog -------------------------------------------------------------------


class EnvironmentOut(BaseModel):
    name: str
    display_name: str
    description: str
    image: str
    local_prefix: str
    is_default: bool
    arch: Arch = "any"


class EnvironmentIn(Strict):
    display_name: DisplayName = ""
    description: Description = ""
    image: Image = ""
    local_prefix: text(1000) = Field("", description="A Python prefix on the host (local)")
    is_default: bool = False
    arch: Arch = Field(
        "any",
        description="The CPU architecture its image runs on (Kubernetes places its notebooks "
        "on nodes of it); any: a multi-architecture image",
    )


class GpuTypeOut(BaseModel):
    name: str
    display_name: str
    description: str
    resource_name: str
    share: int
    fraction: float
    mig_profile: str
    models: list[str]
    node_selector: dict[str, str]
    capacity: int = Field(description="Notebooks of this type the known devices can hold")


# A Kubernetes extended resource: <domain>/<name>.
RESOURCE_NAME_PATTERN = (
    r"^[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?/[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
ResourceName = Annotated[
    str,
    Field(max_length=253, json_schema_extra={"pattern": RESOURCE_NAME_PATTERN}),
    matching(
        RESOURCE_NAME_PATTERN,
        "the Kubernetes resource name looks like nvidia.com/gpu or nvidia.com/mig-1g.10gb",
    ),
]
Token = text(63, TOKEN_PATTERN)


class GpuTypeIn(Strict):
    display_name: DisplayName = ""
    description: Description = ""
    resource_name: ResourceName = Field(
        "nvidia.com/gpu", description="Kubernetes resource, e.g. nvidia.com/gpu.shared"
    )
    share: number(
        int,
        minimum=1,
        maximum=64,
        too_small="a GPU may be shared by 1 to 64 notebooks",
        too_large="a GPU may be shared by 1 to 64 notebooks",
    ) = Field(1, description="Notebooks sharing one device (1 = whole GPU)")
    fraction: number(
        float,
        minimum=0,
        exclusive=True,
        maximum=1,
        too_small="a notebook's fraction of a GPU must be above 0 and at most 1",
        too_large="a notebook's fraction of a GPU must be above 0 and at most 1",
    ) = Field(1.0, description="MPS share of the GPU each notebook gets")
    mig_profile: text(32, TOKEN_PATTERN) = Field(
        "", description="Only MIG instances of this profile, e.g. 3g.20gb"
    )
    models: Annotated[list[text(100)], Field(max_length=20)] = Field(
        [], description="Only these GPU models (substring match), e.g. A5000"
    )
    node_selector: mapping(
        text(317, TOKEN_PATTERN, min_length=1),
        Token,
        {"type": "string", "minLength": 1, "maxLength": 317, "pattern": TOKEN_PATTERN},
        {"type": "string", "maxLength": 63, "pattern": TOKEN_PATTERN},
        20,
    ) = Field({}, description="Kubernetes node labels the GPU's node must carry")


class GpuDeviceIn(Strict):
    device_id: DeviceId = Field(description="The GPU's UUID, or a name of your choice")
    node: text(253, TOKEN_PATTERN, min_length=1) | None = Field(
        None, description="The node it is on; default: this machine (local backend)"
    )
    model: text(200) = ""
    memory: DeviceMemory = 0
    mig_profile: text(32, TOKEN_PATTERN) = ""
    index: number(int, minimum=0, maximum=1023) = 0


class GpuDeviceOut(BaseModel):
    device_id: str
    node: str
    model: str
    memory: int
    mig_profile: str
    index: int
    declared: bool
    holders: list[str] = Field(description="Notebooks using it now (owner/name)")


# -- culling -------------------------------------------------------------------

PolicyMinutes = number(float, minimum=0, exclusive=True, maximum=MAX_MINUTES)


class CullPolicyIn(Strict):
    enabled: bool = True
    idle_minutes: PolicyMinutes = Field(
        60, description="Stop after this long without kernel or terminal activity"
    )
    warn_minutes: number(float, minimum=0, maximum=MAX_MINUTES) = Field(
        10, description="Warn the owner this long before the stop"
    )
    gpu_idle_percent: number(float, minimum=0, exclusive=True, maximum=100) | None = Field(
        None, description="Also idle only while GPU use is below this"
    )
    max_lifetime_hours: number(float, minimum=0, exclusive=True, maximum=MAX_MINUTES / 60) | (
        None
    ) = Field(None, description="Stop any notebook running this long")
    kernel_idle_minutes: (
        number(float, minimum=0, exclusive=True, maximum=culling.MAX_KERNEL_MINUTES) | None
    ) = Field(
        None,
        description="The server shuts down kernels idle this long and stays up (none: never)",
    )
    kernel_cull_connected: bool = Field(
        False, description="...also kernels a browser tab is connected to"
    )


class CullPolicyOut(BaseModel):
    scope: str
    enabled: bool
    idle_minutes: float
    warn_minutes: float
    gpu_idle_percent: float | None
    max_lifetime_hours: float | None
    kernel_idle_minutes: float | None
    kernel_cull_connected: bool
    inherited: bool


class CullingStatus(BaseModel):
    enabled: bool
    persistent: bool
    idle_minutes: float
    warn_minutes: float
    max_lifetime_hours: float | None
    last_activity: datetime | None
    action: Literal["keep", "warn", "stop"]
    reason: str
    message: str
    stop_at: datetime | None


# What the culler would do now, as `Culler.status` reads it: the API's `CullingStatus`
# and the figures JupyterLab's countdown reads besides (api/lab.py's /culling, outside
# the OpenAPI document). No docstring: it would become the schema's description.
class CullerView(CullingStatus):
    exempt: str  # why the culler leaves the notebook's group alone; "" when it applies
    now: datetime  # the server's clock, which the countdown starts from
    idle_seconds: float | None
    cause: str | None


@dataclass(frozen=True)
class Reconciled:
    """What a controller start found of the notebooks it had left running: those adopted
    again and those stopped (as "owner/name"), for its log."""

    adopted: list[str]
    stopped: list[str]

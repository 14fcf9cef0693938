"""Request and response bodies of the REST API (pydantic)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...core.quota import Limits
from ...core.resources import parse_cpu, parse_memory

RoleName = Literal["admin", "teacher", "ta", "student"]
Amount = str | float | int


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Message(BaseModel):
    message: str
    code: str = "ok"


class ErrorBody(BaseModel):
    message: str
    code: str
    details: dict[str, Any] | None = None


# -- accounts ----------------------------------------------------------------


class GroupRef(BaseModel):
    name: str
    manager: bool


class UserOut(BaseModel):
    name: str
    display_name: str
    email: str
    role: RoleName
    active: bool
    must_change_password: bool
    created_at: datetime
    last_login: datetime | None = None
    groups: list[GroupRef] = []


class UserCreate(Strict):
    name: str = Field(description="Login name: lower-case letters, digits, '.', '_' or '-'")
    role: RoleName = "student"
    display_name: str = ""
    email: str = ""
    password: str | None = Field(
        None, description="Leave empty to generate a one-time password the user must change"
    )
    group: str | None = Field(None, description="Enrol the new account into this group")


class UserPatch(Strict):
    display_name: str | None = None
    email: str | None = None
    role: RoleName | None = None
    active: bool | None = None


class UserCreated(BaseModel):
    user: UserOut
    one_time_password: str | None


class PasswordOut(BaseModel):
    one_time_password: str


class PasswordChange(Strict):
    current: str
    new: str


class TokenCreate(Strict):
    name: str = Field(min_length=1, max_length=100)
    expires_in_days: int | None = Field(None, ge=1, le=3650)


class TokenOut(BaseModel):
    id: int
    name: str
    prefix: str
    created_at: datetime
    expires_at: datetime | None
    last_used: datetime | None


class TokenCreated(BaseModel):
    token: str = Field(description="Shown once; send it as 'Authorization: Bearer <token>'")
    info: TokenOut


class GroupOut(BaseModel):
    name: str
    display_name: str
    description: str
    kind: Literal["course", "group"]
    members: int = 0
    managed: bool = False


class GroupCreate(Strict):
    name: str
    display_name: str = ""
    description: str = ""
    kind: Literal["course", "group"] = "course"


class GroupPatch(Strict):
    display_name: str | None = None
    description: str | None = None


class MemberOut(BaseModel):
    name: str
    display_name: str
    role: RoleName
    manager: bool


class MemberPut(Strict):
    manager: bool = False


class CreatedAccount(BaseModel):
    name: str
    one_time_password: str | None


class ImportResult(BaseModel):
    created: list[CreatedAccount]
    enrolled: list[str]
    already_members: list[str]


class RosterIn(Strict):
    csv: str = Field(
        description="CSV text with a header; columns username, display_name, email, role, password"
    )


# -- quotas ------------------------------------------------------------------


class LimitsIn(Strict):
    """A quota; a missing or null value means "no limit" in that dimension."""

    cpu: Amount | None = Field(None, description="Cores, e.g. 4 or 0.5 or 500m")
    memory: Amount | None = Field(None, description="e.g. 8Gi, 512M or bytes")
    gpus: dict[str, int] | None = Field(
        None, description="Per GPU type; a type not listed allows none; null allows any"
    )
    notebooks: int | None = Field(None, ge=0, description="Running notebooks at once")

    def to_limits(self) -> Limits:
        return Limits(
            cpu_milli=parse_cpu(self.cpu) if self.cpu is not None else None,
            memory=parse_memory(self.memory) if self.memory is not None else None,
            gpus=self.gpus,
            notebooks=self.notebooks,
        ).validate()


class LimitsOut(BaseModel):
    cpu_milli: int | None
    memory: int | None
    gpus: dict[str, int] | None
    notebooks: int | None


class UsageOut(BaseModel):
    cpu_milli: int
    memory: int
    gpus: dict[str, int]
    notebooks: int


class QuotaOut(BaseModel):
    subject: str
    source: Literal["user", "group", "default", "none"]
    limits: LimitsOut | None
    usage: UsageOut | None = None


# -- notebooks ---------------------------------------------------------------

StateName = Literal["stopped", "queued", "starting", "running", "stopping"]


class NotebookCreate(Strict):
    name: str = Field(
        "",
        description="Lower-case letters, digits and '-'; part of the notebook's URL "
        "(from a template: its name when empty)",
    )
    template: str | None = Field(
        None, description="Start from this template (its resources and files)"
    )
    template_version: int | None = Field(
        None, description="A template version; the newest when empty"
    )
    owner: str | None = Field(None, description="Admins only: create for another user")
    display_name: str = ""
    environment: str | None = Field(None, description="Default environment when empty")
    cpu: Amount | None = None
    memory: Amount | None = None
    gpu_type: str | None = None
    gpus: int = Field(0, ge=0, le=8)
    group: str | None = Field(None, description="Charge the notebook to this group's budget")
    persistent: bool = Field(False, description="Admins only: never stopped for idleness")
    start: bool = Field(False, description="Start it right away")
    kind: Literal["jupyter", "vm"] = Field(
        "jupyter", description="vm: a virtual machine (Kubernetes)"
    )
    image: str = Field("", description="A custom image instead of the environment's (Kubernetes)")


class NotebookPatch(Strict):
    """Resource fields restart a running notebook with the new resources (a resize)."""

    display_name: str | None = None
    persistent: bool | None = None
    cpu: Amount | None = None
    memory: Amount | None = None
    gpu_type: str | None = None
    gpus: int | None = Field(None, ge=0, le=8)


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


# -- shares ------------------------------------------------------------------


class ShareCreate(Strict):
    grantee: str = Field(description="A user name or a group name")
    kind: Literal["user", "group"] = "user"
    access: Literal["read", "edit"] = Field("read", description="read-only or editable")
    path: str = Field("", description="One file to share; empty shares the whole notebook")
    expires_in_minutes: float | None = Field(None, description="Ends by itself after this long")
    note: str = Field("", max_length=200)


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


# -- catalog and audit ---------------------------------------------------------


class EnvironmentOut(BaseModel):
    name: str
    display_name: str
    description: str
    image: str
    local_prefix: str
    is_default: bool


class EnvironmentIn(Strict):
    display_name: str = ""
    description: str = ""
    image: str = ""
    local_prefix: str = ""
    is_default: bool = False


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


class GpuTypeIn(Strict):
    display_name: str = ""
    description: str = ""
    resource_name: str = Field(
        "nvidia.com/gpu", description="Kubernetes resource, e.g. nvidia.com/gpu.shared"
    )
    share: int = Field(1, ge=1, le=64, description="Notebooks sharing one device (1 = whole GPU)")
    fraction: float = Field(1.0, gt=0, le=1, description="MPS share of the GPU each notebook gets")
    mig_profile: str = Field("", description="Only MIG instances of this profile, e.g. 3g.20gb")
    models: list[str] = Field([], description="Only these GPU models (substring match), e.g. A5000")
    node_selector: dict[str, str] = {}


class GpuDeviceIn(Strict):
    device_id: str = Field(description="The GPU's UUID, or a name of your choice")
    node: str = "local"
    model: str = ""
    memory: Amount = 0
    mig_profile: str = ""
    index: int = Field(0, ge=0)


class GpuDeviceOut(BaseModel):
    device_id: str
    node: str
    model: str
    memory: int
    mig_profile: str
    index: int
    declared: bool
    holders: list[str] = Field(description="Notebooks using it now (owner/name)")


class CullPolicyIn(Strict):
    enabled: bool = True
    idle_minutes: float = Field(
        60, description="Stop after this long without kernel or terminal activity"
    )
    warn_minutes: float = Field(10, description="Warn the owner this long before the stop")
    gpu_idle_percent: float | None = Field(
        None, description="Also idle only while GPU use is below this"
    )
    max_lifetime_hours: float | None = Field(
        None, description="Stop any notebook running this long"
    )


class CullPolicyOut(BaseModel):
    scope: str
    enabled: bool
    idle_minutes: float
    warn_minutes: float
    gpu_idle_percent: float | None
    max_lifetime_hours: float | None
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


# -- teaching ------------------------------------------------------------------


class TemplateVersionOut(BaseModel):
    version: int
    label: str
    environment: str
    image: str
    cpu_milli: int
    memory: int
    gpu_type: str | None
    gpus: int
    files: int
    bytes: int
    content_hash: str
    created_by: str
    created_at: datetime


class TemplateOut(BaseModel):
    name: str
    display_name: str
    description: str
    author: str
    visibility: Literal["public", "group", "private"]
    group: str | None
    retired: bool
    mine: bool
    latest: TemplateVersionOut | None
    versions: list[TemplateVersionOut] = []


class TemplatePublish(Strict):
    notebook: str = Field(description="Your notebook whose files and environment are published")
    name: str
    display_name: str = ""
    description: str = ""
    version_label: str = Field("", max_length=100)
    visibility: Literal["public", "group", "private"] = "private"
    group: str | None = None
    environment: str | None = Field(None, description="The notebook's environment when empty")
    cpu: Amount | None = None
    memory: Amount | None = None
    gpu_type: str | None = None
    gpus: int = Field(0, ge=0, le=8)
    paths: list[str] = Field([], description="Files and folders of the home, relative")
    excluded: list[str] = Field([], description="Glob patterns left out, e.g. .ipynb_checkpoints")


class TemplatePatch(Strict):
    display_name: str | None = None
    description: str | None = None
    visibility: Literal["public", "group", "private"] | None = None
    group: str | None = None
    retired: bool | None = None


class DeploymentCreate(Strict):
    title: str = ""
    destination: str = Field(description="Folder below each member's courses/<group>/")
    notebook: str | None = Field(None, description="One of your notebooks holding the files")
    path: str = Field("", description="The folder of that notebook to copy (empty: its whole home)")
    template: str | None = Field(None, description="Or: copy this template's files")


class DeploymentOut(BaseModel):
    id: int
    group: str
    title: str
    destination: str
    source: str
    state: Literal["running", "done", "failed"]
    summary: str
    report: dict[str, Any] | None
    created_by: str
    created_at: datetime


class BroadcastCreate(Strict):
    group: str
    minutes: float = Field(gt=0, description="The live view ends by itself after this long")
    path: str = Field("", description="One file to show; empty shows the whole notebook")


class AssignmentCreate(Strict):
    name: str
    title: str = ""
    description: str = ""
    deadline: datetime | None = None
    allow_late: bool = True
    max_bytes: Amount | None = Field(None, description="Size limit of one submission, e.g. 100Mi")


class AssignmentOut(BaseModel):
    id: int
    group: str
    name: str
    title: str
    description: str
    deadline: datetime | None
    allow_late: bool
    open: bool
    max_bytes: int
    submissions: int = 0
    last_submitted_at: datetime | None = None
    students_submitted: int | None = None


class SubmissionCreate(Strict):
    notebook: str = Field(description="Your notebook holding the files")
    paths: list[str]
    note: str = Field("", max_length=2000)


class SubmissionOut(BaseModel):
    id: int
    number: int
    student: str
    display_name: str = ""
    assignment: str
    assignment_id: int
    content_hash: str
    submitted_at: datetime
    late: bool
    files: int
    bytes: int
    note: str
    environment: str
    url: str
    manifest: list[dict[str, Any]] | None = None


class AssignmentSubmissions(BaseModel):
    assignment: AssignmentOut
    submissions: list[SubmissionOut]


class CourseDeployment(BaseModel):
    id: int
    title: str
    path: str
    by: str
    at: datetime
    new: bool


class CourseBroadcast(BaseModel):
    owner: str
    owner_display_name: str
    notebook: str
    url: str
    expires_at: datetime | None
    by: str
    running: bool


class CourseOut(BaseModel):
    name: str
    display_name: str
    folder: str
    deployments: list[CourseDeployment]
    broadcasts: list[CourseBroadcast]
    assignments: list[AssignmentOut]


class TrainingCreate(Strict):
    name: str
    image: str = Field(description="The container image every replica runs")
    command: str | list[str] = Field(description="e.g. python train.py --epochs 10")
    workers: int = Field(0, ge=0, le=64, description="Workers besides the master")
    cpu: Amount = 1
    memory: Amount = "2Gi"
    gpu_type: str | None = None
    gpus: int = Field(0, ge=0, le=8, description="GPUs per replica")
    group: str | None = Field(None, description="Run in this group's namespace, on its budget")


class TrainingOut(BaseModel):
    owner: str
    name: str
    image: str
    command: list[str]
    workers: int
    cpu_milli: int
    memory: int
    gpu_type: str | None
    gpus: int
    state: Literal["queued", "submitted", "failed"]
    phase: str = Field(
        description="Where the job stands: queued, Created, Running, Succeeded, Failed"
    )
    message: str
    replicas: dict[str, dict[str, int]] = {}
    created_at: datetime
    submitted_at: datetime | None


class ImagesOut(BaseModel):
    environments: list[str] = Field(description="Images of the platform's environments")
    used: list[str] = Field(description="Every image your notebooks use (Kubernetes)")


class AuditOut(BaseModel):
    id: int
    at: datetime
    actor: str
    action: str
    target: str
    details: dict[str, Any] | None


class VersionOut(BaseModel):
    version: str
    backend: dict[str, Any]
    limits: dict[str, int] = Field(description="Size limits of templates and deployments")

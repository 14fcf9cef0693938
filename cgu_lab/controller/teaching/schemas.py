"""Bodies of teaching (templates, deployments, broadcasts, assignments, submissions,
courses), training jobs, images, the audit log and the version.

Split from `schemas` (which re-exports them) to keep each file readable; the
bounded types come from `schema_types`, so the limits read the same everywhere.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ..api.schema_types import (
    TEXT_PATTERN,
    AssignmentName,
    Cpu,
    Description,
    DisplayName,
    EnvironmentName,
    Globs,
    GpuCount,
    GpuTypeName,
    GroupName,
    Image,
    JobName,
    Memory,
    Minutes,
    Note,
    NotebookName,
    Paths,
    RelativePath,
    Strict,
    TemplateName,
    Timestamp,
    Title,
    number,
    text,
)

__all__ = [
    "AssignmentCreate",
    "AssignmentOut",
    "AssignmentSubmissions",
    "AuditOut",
    "BroadcastCreate",
    "CourseBroadcast",
    "CourseDeployment",
    "CourseOut",
    "DeploymentCreate",
    "DeploymentOut",
    "ImagesOut",
    "SubmissionCreate",
    "SubmissionOut",
    "TemplateOut",
    "TemplatePatch",
    "TemplatePublish",
    "TemplateVersionOut",
    "TrainingCreate",
    "TrainingOut",
    "VersionOut",
]

Visibility = Literal["public", "group", "private"]
Command = text(4096, TEXT_PATTERN)

# -- templates -------------------------------------------------------------------


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
    notebook: NotebookName = Field(
        description="Your notebook whose files and environment are published"
    )
    name: TemplateName
    display_name: DisplayName = ""
    description: Description = ""
    version_label: text(100) = ""
    visibility: Visibility = "private"
    group: GroupName | None = None
    environment: EnvironmentName | None = Field(
        None, description="The notebook's environment when empty"
    )
    cpu: Cpu | None = None
    memory: Memory | None = None
    gpu_type: GpuTypeName | None = None
    gpus: GpuCount = 0
    paths: Paths = Field([], description="Files and folders of the home, relative")
    excluded: Globs = Field([], description="Glob patterns left out, e.g. .ipynb_checkpoints")


class TemplatePatch(Strict):
    display_name: DisplayName | None = None
    description: Description | None = None
    visibility: Visibility | None = None
    group: GroupName | None = None
    retired: bool | None = None


class DeploymentCreate(Strict):
    title: Title = ""
    destination: RelativePath = Field(description="Folder below each member's courses/<group>/")
    notebook: NotebookName | None = Field(
        None, description="One of your notebooks holding the files"
    )
    path: RelativePath = Field(
        "", description="The folder of that notebook to copy (empty: its whole home)"
    )
    template: TemplateName | None = Field(None, description="Or: copy this template's files")


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
    group: GroupName
    minutes: Minutes = Field(description="The live view ends by itself after this long")
    path: RelativePath = Field("", description="One file to show; empty shows the whole notebook")


class AssignmentCreate(Strict):
    name: AssignmentName
    title: Title = ""
    description: Description = ""
    deadline: Timestamp | None = None
    allow_late: bool = True
    max_bytes: Memory | None = Field(None, description="Size limit of one submission, e.g. 100Mi")


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
    notebook: NotebookName = Field(description="Your notebook holding the files")
    paths: Paths
    note: Note = ""


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
    id: int = Field(description="The live view (its share): what Copy to my home names")
    owner: str
    owner_display_name: str
    notebook: str
    url: str
    expires_at: datetime | None
    by: str
    running: bool


class BroadcastCopy(Strict):
    notebook: NotebookName | None = Field(
        None, description="Your notebook to copy into (running or stopped); none: your last used"
    )
    path: RelativePath = Field(
        "",
        description="A file or folder of the live view's notebook (empty: the file it shows, "
        "or its whole home)",
    )


class CopyConflict(BaseModel):
    path: str
    saved_as: str


class BroadcastCopied(BaseModel):
    notebook: str = Field(description="Your notebook the files went to")
    folder: str = Field(description="The folder of its home they are in")
    copied: int
    skipped: int = Field(description="Files already there, identical")
    conflicts: list[CopyConflict] = Field(
        description="Files already there and different: kept, the copy saved beside them"
    )


class CourseOut(BaseModel):
    name: str
    display_name: str
    folder: str
    deployments: list[CourseDeployment]
    broadcasts: list[CourseBroadcast]
    assignments: list[AssignmentOut]


class LiveNotebook(BaseModel):
    owner: str
    owner_display_name: str
    notebook: str
    display_name: str
    state: Literal["queued", "starting", "running"]
    started_at: datetime | None
    last_activity: datetime | None
    cpu_milli: int
    memory: int
    gpu_type: str | None
    gpus: int
    access: Literal["read", "edit"] | None = None
    url: str | None = None


class LiveView(BaseModel):
    id: int
    owner: str
    owner_display_name: str
    notebook: str
    access: Literal["read", "edit"]
    note: str
    expires_at: datetime | None
    running: bool
    viewers: int | None = Field(
        None,
        description="People other than the owner following one of the notebook's documents "
        "live now (collaboration rooms open through the proxy); null when unknown",
    )
    url: str


class CourseLive(BaseModel):
    notebooks: list[LiveNotebook]
    views: list[LiveView]


class TrainingCreate(Strict):
    name: JobName
    image: Image = Field(
        description="The container image every replica runs (kubernetes); on the local "
        "backend, the name of the environment it runs in (built from the PyTorch recipe)"
    )
    command: Command | Annotated[list[Command], Field(max_length=256)] = Field(
        description="e.g. python train.py --epochs 10"
    )
    workers: number(int, minimum=0, maximum=64) = Field(0, description="Workers besides the master")
    cpu: Cpu = 1
    memory: Memory = "2Gi"
    gpu_type: GpuTypeName | None = None
    gpus: GpuCount = Field(0, description="GPUs per replica")
    group: GroupName | None = Field(
        None, description="Run in this group's namespace, on its budget"
    )


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
    queue: str = Field("", description="The cluster's queue that admits it (Kueue), if any")
    queue_position: int | None = Field(
        None, description="Its place in that queue while it waits (1 = next)"
    )
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

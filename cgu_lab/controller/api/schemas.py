"""Request and response bodies of the REST API (pydantic).

This module holds the shared bases, accounts and quotas; notebooks, shares,
the catalog, GPUs and culling live in `schema_notebooks`, teaching and the
rest in `schema_teaching` (one file was too long to read). Everything is
re-exported here, so routes keep importing from `.schemas`.

Request bodies derive from `Strict`: unknown fields are refused and JSON
types are taken literally (`false` is not 0, `"1"` is not 1), and every field
is bounded by a type from `schema_types`, so the OpenAPI document states each
rule the server enforces.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ...core.errors import Invalid
from ...core.quota import DISK_EXAMPLES, Limits, parse_disk
from ...core.resources import MAX_AMOUNT_TEXT, MAX_MEMORY, MEMORY_PATTERN, parse_cpu, parse_memory
from ..notebooks.schemas import (
    AccessOut,
    CullingStatus,
    CullPolicyIn,
    CullPolicyOut,
    Directory,
    DirectoryGroup,
    DirectoryUser,
    EnvironmentIn,
    EnvironmentOut,
    GpuDeviceIn,
    GpuDeviceOut,
    GpuTypeIn,
    GpuTypeOut,
    Grantee,
    NotebookCreate,
    NotebookOut,
    NotebookPatch,
    ShareCreate,
    SharedWithMe,
    ShareOut,
    StateName,
)
from ..teaching.schemas import (
    AssignmentCreate,
    AssignmentOut,
    AssignmentSubmissions,
    AuditOut,
    BroadcastCreate,
    CourseBroadcast,
    CourseDeployment,
    CourseOut,
    DeploymentCreate,
    DeploymentOut,
    ImagesOut,
    SubmissionCreate,
    SubmissionOut,
    TemplateOut,
    TemplatePatch,
    TemplatePublish,
    TemplateVersionOut,
    TrainingCreate,
    TrainingOut,
    VersionOut,
)
from .schema_types import (
    MAX_CSV,
    TEXT_PATTERN,
    WHOLE,
    Cpu,
    Description,
    DisplayName,
    Email,
    GpuLimits,
    GroupName,
    Memory,
    NewPassword,
    NotebookLimit,
    Password,
    RoleName,
    Strict,
    UserName,
    domain_rule,
    number,
    text,
)

# Kept for modules that take an amount and parse it themselves (core.resources bounds it).
Amount = str | float | int


class Message(BaseModel):
    message: str
    code: str = "ok"


class ErrorBody(BaseModel):
    """Every refusal, from the platform's rules and from the framework alike."""

    message: str = Field(description="A sentence saying what is wrong and what to do")
    code: str = Field(description="A stable word for programs: invalid, not_found, forbidden...")
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
    name: UserName
    role: RoleName = "student"
    display_name: DisplayName = ""
    email: Email = ""
    password: NewPassword | None = Field(
        None, description="Leave empty to generate a one-time password the user must change"
    )
    group: GroupName | None = Field(None, description="Enrol the new account into this group")


class UserPatch(Strict):
    display_name: DisplayName | None = None
    email: Email | None = None
    role: RoleName | None = None
    active: bool | None = None


class UserCreated(BaseModel):
    user: UserOut
    one_time_password: str | None


class PasswordOut(BaseModel):
    one_time_password: str


class PasswordChange(Strict):
    current: Password
    new: NewPassword


class TokenCreate(Strict):
    name: text(100, min_length=1)
    expires_in_days: number(int, minimum=1, maximum=3650) | None = None


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
    name: GroupName
    display_name: DisplayName = ""
    description: Description = ""
    kind: Literal["course", "group"] = "course"


class GroupPatch(Strict):
    display_name: DisplayName | None = None
    description: Description | None = None


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
    csv: text(MAX_CSV, TEXT_PATTERN) = Field(
        description="CSV text with a header; columns username, display_name, email, role, password"
    )


# -- quotas ------------------------------------------------------------------


def _disk(value: int | str) -> None:
    """Refuse what `parse_disk` refuses, in its words, and any text the OpenAPI
    pattern refuses too, so that the document and the server agree."""
    parse_disk(value)
    if isinstance(value, str) and not re.fullmatch(MEMORY_PATTERN, value):
        shown = value[:MAX_AMOUNT_TEXT]
        raise Invalid(f"'{shown}' is not a disk amount: {DISK_EXAMPLES}")


# A disk allowance: memory's notation and ceiling, refused in sentences that name disk.
Disk = Annotated[
    int | str,
    WHOLE,
    domain_rule(_disk),
    Field(
        json_schema_extra={
            "anyOf": [
                {"type": "integer", "minimum": 1, "maximum": MAX_MEMORY},
                {"type": "string", "pattern": MEMORY_PATTERN, "maxLength": MAX_AMOUNT_TEXT},
            ]
        },
        description=(
            "What each home may hold; an upload past it is refused. E.g. 20Gi, 500G or a "
            "number of bytes (at most 1 PiB)"
        ),
    ),
]


class LimitsIn(Strict):
    """A quota; a missing or null value means "no limit" in that dimension."""

    cpu: Cpu | None = None
    memory: Memory | None = None
    gpus: GpuLimits | None = Field(
        None, description="Per GPU type; a type not listed allows none; null allows any"
    )
    notebooks: NotebookLimit | None = Field(None, description="Running notebooks at once")
    disk: Disk | None = None

    def to_limits(self) -> Limits:
        return Limits(
            cpu_milli=parse_cpu(self.cpu) if self.cpu is not None else None,
            memory=parse_memory(self.memory) if self.memory is not None else None,
            gpus=self.gpus,
            notebooks=self.notebooks,
            disk=parse_disk(self.disk) if self.disk is not None else None,
        ).validate()


class LimitsOut(BaseModel):
    cpu_milli: int | None
    memory: int | None
    gpus: dict[str, int] | None
    notebooks: int | None
    disk: int | None = Field(description="Bytes; null: no disk allowance")


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


class ClassQuotaOut(BaseModel):
    message: str
    students: list[str] = Field(description="Every student whose quota was set, by name")


class BudgetRequestIn(Strict):
    message: str = Field(
        min_length=1,
        max_length=1000,
        description="What the course needs, for the administrators",
        examples=["40 students from Monday: 1 standard GPU each"],
    )


__all__ = [
    "AccessOut",
    "Amount",
    "AssignmentCreate",
    "AssignmentOut",
    "AssignmentSubmissions",
    "AuditOut",
    "BroadcastCreate",
    "BudgetRequestIn",
    "ClassQuotaOut",
    "CourseBroadcast",
    "CourseDeployment",
    "CourseOut",
    "CreatedAccount",
    "CullPolicyIn",
    "CullPolicyOut",
    "CullingStatus",
    "DeploymentCreate",
    "DeploymentOut",
    "Directory",
    "DirectoryGroup",
    "DirectoryUser",
    "EnvironmentIn",
    "EnvironmentOut",
    "ErrorBody",
    "GpuDeviceIn",
    "GpuDeviceOut",
    "GpuTypeIn",
    "GpuTypeOut",
    "Grantee",
    "GroupCreate",
    "GroupOut",
    "GroupPatch",
    "GroupRef",
    "ImagesOut",
    "ImportResult",
    "LimitsIn",
    "LimitsOut",
    "MemberOut",
    "MemberPut",
    "Message",
    "NotebookCreate",
    "NotebookOut",
    "NotebookPatch",
    "PasswordChange",
    "PasswordOut",
    "QuotaOut",
    "RoleName",
    "RosterIn",
    "ShareCreate",
    "ShareOut",
    "SharedWithMe",
    "StateName",
    "Strict",
    "SubmissionCreate",
    "SubmissionOut",
    "TemplateOut",
    "TemplatePatch",
    "TemplatePublish",
    "TemplateVersionOut",
    "TokenCreate",
    "TokenCreated",
    "TokenOut",
    "TrainingCreate",
    "TrainingOut",
    "UsageOut",
    "UserCreate",
    "UserCreated",
    "UserOut",
    "UserPatch",
    "VersionOut",
]

"""The tables of the controller: the platform's single source of truth."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class UTCDateTime(TypeDecorator):
    """Timestamps stored in UTC and always read back timezone-aware (SQLite drops the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is not None and value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value

    def process_result_value(self, value, dialect):
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value


class Base(DeclarativeBase):
    type_annotation_map = {datetime: UTCDateTime, dict[str, Any]: JSON}


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    email: Mapped[str] = mapped_column(String(320), default="")
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    must_change_password: Mapped[bool] = mapped_column(Boolean, default=False)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_login: Mapped[datetime | None] = mapped_column(nullable=True)
    # When the user last used the platform: a page or API call with their session or
    # token (written at most every few minutes, `auth.ACTIVITY_STEP`).
    last_activity: Mapped[datetime | None] = mapped_column(nullable=True)
    # When the user last looked at their courses' new material (the "new" badges).
    courses_seen_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # The school provider this account logs in through ("" a platform account); such an
    # account has no password unless an administrator gives one (school_login/).
    directory: Mapped[str] = mapped_column(String(63), default="", server_default="")


class Group(Base):
    __tablename__ = "groups"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(63), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    kind: Mapped[str] = mapped_column(String(16), default="course")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Whether the course's TAs may write its shared storage (its teachers always may).
    storage_ta_write: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")


class Membership(Base):
    __tablename__ = "memberships"

    group_id: Mapped[int] = mapped_column(
        ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    manager: Mapped[bool] = mapped_column(Boolean, default=False)
    added_at: Mapped[datetime] = mapped_column(default=utcnow)


class Quota(Base):
    """Limits for one user, one group (its budget) or the platform default (both ids null)."""

    __tablename__ = "quotas"
    __table_args__ = (UniqueConstraint("scope", "user_id", "group_id", name="uq_quota_subject"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    scope: Mapped[str] = mapped_column(String(8))  # default | user | group
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), nullable=True
    )
    group_id: Mapped[int | None] = mapped_column(
        ForeignKey("groups.id", ondelete="CASCADE"), nullable=True
    )
    cpu_milli: Mapped[int | None] = mapped_column(Integer, nullable=True)
    memory: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    gpus: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    notebooks: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # Bytes a user's home may hold (a group's: the most a manager may give a member).
    disk: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    updated_by: Mapped[str] = mapped_column(String(64), default="")
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Environment(Base):
    """A software environment: a container image on Kubernetes, a Python prefix locally."""

    __tablename__ = "environments"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(63), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    image: Mapped[str] = mapped_column(String(500), default="")
    local_prefix: Mapped[str] = mapped_column(String(1000), default="")
    is_default: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Built by the platform (controller/environments/builds.py): "building", "ready"
    # or "failed"; notebooks may use only a ready one. Declared environments
    # (an image, a prefix made by hand) are ready from the start.
    state: Mapped[str] = mapped_column(String(16), default="ready", server_default="ready")
    # The recipe it was built from ({"kind", "variant", "packages"}), None when declared.
    recipe: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    # What the last successful build installed: [{"name", "version", "own", "main"}].
    packages: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    message: Mapped[str] = mapped_column(Text, default="", server_default="")
    log_tail: Mapped[str] = mapped_column(Text, default="", server_default="")
    size: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    built_by: Mapped[str] = mapped_column(String(64), default="", server_default="")
    build_started_at: Mapped[datetime | None] = mapped_column(nullable=True)
    built_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # Apps its notebooks offer beside JupyterLab (core/apps.py): built-ins by name and
    # an administrator's own; None: the built-ins (desktop, VS Code) where installed.
    apps: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON, nullable=True)
    # The CPU architecture its image runs on (any, amd64, arm64): on Kubernetes
    # its notebooks land only on nodes of it.
    arch: Mapped[str] = mapped_column(String(8), default="any", server_default="any")


class GpuType(Base):
    """An admin-defined GPU offer ("premium" whole GPU, "standard" shared ...)."""

    __tablename__ = "gpu_types"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(63), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    resource_name: Mapped[str] = mapped_column(String(253), default="nvidia.com/gpu")
    # How many notebooks may share one physical GPU (1 = whole GPU).
    share: Mapped[int] = mapped_column(Integer, default=1)
    # Fraction of one GPU's compute/memory a notebook gets (MPS/MIG); 1.0 = all.
    fraction: Mapped[float] = mapped_column(default=1.0)
    mig_profile: Mapped[str] = mapped_column(String(32), default="")
    models: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    node_selector: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Notebook(Base):
    __tablename__ = "notebooks"
    __table_args__ = (
        UniqueConstraint("owner_id", "name", name="uq_notebook_owner_name"),
        Index("ix_notebooks_state", "state"),
        # One copy of a submission per TA: a second "Open as notebook" opens the same one.
        Index("uq_notebook_owner_submission", "owner_id", "submission_id", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(63))
    display_name: Mapped[str] = mapped_column(String(200), default="")
    environment: Mapped[str] = mapped_column(String(63))
    # "jupyter" (a JupyterLab server) or "vm" (a virtual machine, Kubernetes only)
    kind: Mapped[str] = mapped_column(String(16), default="jupyter", server_default="jupyter")
    # A custom image replacing the environment's (Kubernetes only); "" uses the environment's.
    image: Mapped[str] = mapped_column(String(500), default="", server_default="")
    cpu_milli: Mapped[int] = mapped_column(Integer)
    memory: Mapped[int] = mapped_column(BigInteger)
    gpu_type: Mapped[str | None] = mapped_column(String(63), nullable=True)
    gpus: Mapped[int] = mapped_column(Integer, default=0)
    group_id: Mapped[int | None] = mapped_column(
        ForeignKey("groups.id", ondelete="SET NULL"), nullable=True
    )
    persistent: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[str] = mapped_column(String(16), default="stopped")
    message: Mapped[str] = mapped_column(Text, default="")
    # GPU devices the allocator gave this notebook while it holds resources.
    devices: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    proxy_secret: Mapped[str] = mapped_column(String(64), default="")
    backend_state: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(nullable=True)
    stopped_at: Mapped[datetime | None] = mapped_column(nullable=True)
    last_activity: Mapped[datetime | None] = mapped_column(nullable=True)
    # The culler's bookkeeping: when the owner was warned, when they said "keep running".
    warned_at: Mapped[datetime | None] = mapped_column(nullable=True)
    kept_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # Waiting for a GPU: since when (FIFO per GPU type).
    queued_at: Mapped[datetime | None] = mapped_column(nullable=True)
    # Files to copy into the home before its first start:
    # {"kind": "template" or "submission", "id": <version or submission id>}.
    seed: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    # The submission this notebook is a TA's copy of (the seed is forgotten once copied).
    submission_id: Mapped[int | None] = mapped_column(
        ForeignKey("submissions.id", ondelete="SET NULL"), nullable=True
    )
    # Kubeflow PodDefaults ("configurations") the owner chose: {name: selector labels}, as
    # they were when chosen; the labels go on the notebook at each start (core.pod_defaults).
    pod_defaults: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)


class Share(Base):
    """A grant of read or edit access to a notebook (or one file in it), to a user or a group."""

    __tablename__ = "shares"
    __table_args__ = (
        Index("ix_shares_notebook", "notebook_id"),
        Index("ix_shares_user", "user_id"),
        Index("ix_shares_group", "group_id"),
        # One grant per grantee and scope (core.sharing.regrant): sharing again replaces it.
        # user_id or group_id is NULL in each row, and NULLs never collide, so each index
        # holds the grants of one kind of grantee only.
        Index("uq_shares_user_scope", "notebook_id", "user_id", "path", unique=True),
        Index("uq_shares_group_scope", "notebook_id", "group_id", "path", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    notebook_id: Mapped[int] = mapped_column(ForeignKey("notebooks.id", ondelete="CASCADE"))
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), nullable=True
    )
    group_id: Mapped[int | None] = mapped_column(
        ForeignKey("groups.id", ondelete="CASCADE"), nullable=True
    )
    access: Mapped[str] = mapped_column(String(8))
    path: Mapped[str] = mapped_column(String(1024), default="")
    note: Mapped[str] = mapped_column(String(200), default="")
    expires_at: Mapped[datetime | None] = mapped_column(nullable=True)
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class GpuDevice(Base):
    """A GPU an administrator declared by hand (to plan a layout, or where NVML cannot see it)."""

    __tablename__ = "gpu_devices"

    id: Mapped[int] = mapped_column(primary_key=True)
    device_id: Mapped[str] = mapped_column(String(100), unique=True)
    node: Mapped[str] = mapped_column(String(253), default="local")
    model: Mapped[str] = mapped_column(String(200), default="")
    memory: Mapped[int] = mapped_column(BigInteger, default=0)
    mig_profile: Mapped[str] = mapped_column(String(32), default="")
    index: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class CullPolicyRow(Base):
    """The idle culler's policy: the platform default (group_id null) or a group's override."""

    __tablename__ = "cull_policies"
    __table_args__ = (UniqueConstraint("group_id", name="uq_cull_policy_group"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    group_id: Mapped[int | None] = mapped_column(
        ForeignKey("groups.id", ondelete="CASCADE"), nullable=True
    )
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    idle_minutes: Mapped[float] = mapped_column(default=60.0)
    warn_minutes: Mapped[float] = mapped_column(default=10.0)
    gpu_idle_percent: Mapped[float | None] = mapped_column(nullable=True)
    max_lifetime_hours: Mapped[float | None] = mapped_column(nullable=True)
    # Idle kernels shut down by their own server (core.culling.kernel_culling); None: never.
    kernel_idle_minutes: Mapped[float | None] = mapped_column(nullable=True)
    kernel_cull_connected: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    updated_by: Mapped[str] = mapped_column(String(64), default="")
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class StopRecord(Base):
    """Each stop of a notebook and why; culler and reclaim stops feed the savings figures."""

    __tablename__ = "stop_records"
    __table_args__ = (Index("ix_stop_records_at", "stopped_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    notebook_id: Mapped[int | None] = mapped_column(
        ForeignKey("notebooks.id", ondelete="SET NULL"), nullable=True
    )
    owner: Mapped[str] = mapped_column(String(64))
    notebook: Mapped[str] = mapped_column(String(63))
    cause: Mapped[str] = mapped_column(String(16))  # user, admin, idle, lifetime, reclaim
    reason: Mapped[str] = mapped_column(Text, default="")
    gpus: Mapped[float] = mapped_column(default=0.0)  # GPUs held, a shared one counted as 1/share
    stopped_at: Mapped[datetime] = mapped_column(default=utcnow)
    restarted_at: Mapped[datetime | None] = mapped_column(nullable=True)


class Template(Base):
    """A teacher's published starting point: environment, resources and files, in versions."""

    __tablename__ = "templates"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(63), unique=True)
    display_name: Mapped[str] = mapped_column(String(200), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    visibility: Mapped[str] = mapped_column(String(8), default="private")  # public|group|private
    group_id: Mapped[int | None] = mapped_column(
        ForeignKey("groups.id", ondelete="SET NULL"), nullable=True
    )
    retired: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class TemplateVersion(Base):
    __tablename__ = "template_versions"
    __table_args__ = (UniqueConstraint("template_id", "version", name="uq_template_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    template_id: Mapped[int] = mapped_column(ForeignKey("templates.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    label: Mapped[str] = mapped_column(String(100), default="")
    environment: Mapped[str] = mapped_column(String(63))
    image: Mapped[str] = mapped_column(String(500), default="")
    cpu_milli: Mapped[int] = mapped_column(Integer)
    memory: Mapped[int] = mapped_column(BigInteger)
    gpu_type: Mapped[str | None] = mapped_column(String(63), nullable=True)
    gpus: Mapped[int] = mapped_column(Integer, default=0)
    files: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    content_hash: Mapped[str] = mapped_column(String(64), default="")
    source: Mapped[str] = mapped_column(String(200), default="")
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Deployment(Base):
    """Lab files a teacher copied into the course folders of a group's members."""

    __tablename__ = "deployments"
    __table_args__ = (Index("ix_deployments_group", "group_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    destination: Mapped[str] = mapped_column(String(1024))
    source: Mapped[str] = mapped_column(String(300))
    state: Mapped[str] = mapped_column(String(16), default="running")  # running|done|failed
    report: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Assignment(Base):
    __tablename__ = "assignments"
    __table_args__ = (UniqueConstraint("group_id", "name", name="uq_assignment_group_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(63))
    title: Mapped[str] = mapped_column(String(200), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    deadline: Mapped[datetime | None] = mapped_column(nullable=True)
    allow_late: Mapped[bool] = mapped_column(Boolean, default=True)
    max_bytes: Mapped[int] = mapped_column(BigInteger, default=100 * 2**20)
    created_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Submission(Base):
    """A frozen, runnable copy of a student's files for an assignment; resubmissions add rows."""

    __tablename__ = "submissions"
    __table_args__ = (
        UniqueConstraint("assignment_id", "user_id", "number", name="uq_submission_number"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("assignments.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    note: Mapped[str] = mapped_column(Text, default="")
    files: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    content_hash: Mapped[str] = mapped_column(String(64))
    manifest: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    late: Mapped[bool] = mapped_column(Boolean, default=False)
    environment: Mapped[str] = mapped_column(String(63), default="")
    image: Mapped[str] = mapped_column(String(500), default="")
    notebook: Mapped[str] = mapped_column(String(130), default="")
    submitted_at: Mapped[datetime] = mapped_column(default=utcnow)


class TrainingJob(Base):
    """A multi-node training run (a Kubeflow PyTorchJob): queued until its GPUs fit."""

    __tablename__ = "training_jobs"
    __table_args__ = (UniqueConstraint("owner_id", "name", name="uq_training_owner_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(63))
    image: Mapped[str] = mapped_column(String(500))
    command: Mapped[list[str]] = mapped_column(JSON)
    workers: Mapped[int] = mapped_column(Integer, default=0)
    cpu_milli: Mapped[int] = mapped_column(Integer)
    memory: Mapped[int] = mapped_column(BigInteger)
    gpu_type: Mapped[str | None] = mapped_column(String(63), nullable=True)
    gpus: Mapped[int] = mapped_column(Integer, default=0)  # per replica
    group_id: Mapped[int | None] = mapped_column(
        ForeignKey("groups.id", ondelete="SET NULL"), nullable=True
    )
    # queued -> submitted -> (Running, Succeeded, Failed as the backend reports) | deleted
    state: Mapped[str] = mapped_column(String(16), default="queued")
    message: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    submitted_at: Mapped[datetime | None] = mapped_column(nullable=True)


class Session(Base):
    """A browser login; only the token's hash is stored."""

    __tablename__ = "sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()


class ApiToken(Base):
    """A bearer token for scripts, or a notebook's own token (notebook_id set)."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    notebook_id: Mapped[int | None] = mapped_column(
        ForeignKey("notebooks.id", ondelete="CASCADE"), nullable=True
    )
    name: Mapped[str] = mapped_column(String(100), default="")
    prefix: Mapped[str] = mapped_column(String(12), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(nullable=True)
    last_used: Mapped[datetime | None] = mapped_column(nullable=True)


class AuditEvent(Base):
    """Who changed what, when: every state change of the platform."""

    __tablename__ = "audit_events"
    __table_args__ = (Index("ix_audit_at", "at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    actor: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(300), default="")
    details: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)


class UnixAccount(Base):
    """The system account a user's local notebooks run as: one user, one account.

    Stored rather than recomputed, so that two platform names whose derived
    Unix names collide can never share an account (and its files): the name
    is unique here and the second claimant is refused.
    """

    __tablename__ = "unix_accounts"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(32), unique=True)
    uid: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class GroupInvitation(Base):
    """A manager asked an existing account to join their group; its owner decides."""

    __tablename__ = "group_invitations"

    group_id: Mapped[int] = mapped_column(
        ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    manager: Mapped[bool] = mapped_column(Boolean, default=False)
    invited_by: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

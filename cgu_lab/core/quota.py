"""Quota rules: what a user or a group may hold at once.

A limit of None means "no limit" for that dimension. GPU limits are per GPU
type; a type missing from a limited mapping allows none, so a GPU is always
granted explicitly. A user's own limits come from their quota (or the
platform default); a notebook charged to a group must also fit that group's
budget, which is the sum of what its members hold for it.

Disk is an allowance, not a running total: what one user's home may hold
(bytes; None: no limit). The controller cannot cheaply add up homes, so it is
not checked at a start; the notebook server checks it before an upload or an
extraction (notebook/transfer/allowance.py, from `$CGU_DISK_ALLOWANCE`). A
group's disk budget bounds what its manager may give a member, as its other
limits do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import Invalid, QuotaExceeded
from .resources import (
    MAX_CPU_MILLI,
    MAX_GPUS,
    MAX_MEMORY,
    MAX_NOTEBOOKS,
    Resources,
    format_cpu,
    format_gpus,
    format_memory,
    parse_memory,
)

# The largest disk allowance: memory's ceiling (1 PiB), inside a 64-bit column.
MAX_DISK = MAX_MEMORY


@dataclass(frozen=True)
class Limits:
    cpu_milli: int | None = None
    memory: int | None = None
    gpus: Mapping[str, int] | None = None
    notebooks: int | None = None
    disk: int | None = None

    def gpu_limit(self, gpu_type: str) -> int | None:
        if self.gpus is None:
            return None
        return self.gpus.get(gpu_type, 0)

    def validate(self) -> Limits:
        """Refuse negative limits, and limits no database column (or machine) could hold."""
        for label, value, ceiling in (
            ("CPU", self.cpu_milli, MAX_CPU_MILLI),
            ("memory", self.memory, MAX_MEMORY),
            ("running notebooks", self.notebooks, MAX_NOTEBOOKS),
            ("disk", self.disk, MAX_DISK),
        ):
            _check_count(f"a quota's {label} limit", value, ceiling)
        for gpu_type, count in (self.gpus or {}).items():
            _check_count(f"a quota's limit for GPU type '{gpu_type}'", count, MAX_GPUS)
        return self


def parse_disk(value: str | int) -> int:
    """Bytes for a disk allowance, written as memory is ("20Gi", "500G", a number).

    Memory's parser and bounds, with its sentences naming disk: the form's
    error must point at the disk field, not the memory one.
    """
    try:
        return parse_memory(value)
    except Invalid as error:
        raise Invalid(_about_disk(error.message)) from None


# How a refusal says to write a disk amount.
DISK_EXAMPLES = "write it like 20Gi, 500G or 1.5TiB"


def _about_disk(message: str) -> str:
    """Memory's refusal, reworded; the value the user typed is left as it was."""
    if message.startswith("memory "):
        return "disk " + message.removeprefix("memory ")
    head, phrase, _ = message.rpartition(" is not a memory amount")
    return f"{head} is not a disk amount: {DISK_EXAMPLES}" if phrase else message


def _check_count(label: str, value: object, ceiling: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(f"{label} must be a whole number")
    if value < 0:
        raise Invalid(f"{label} cannot be negative")
    if value > ceiling:
        raise Invalid(f"{label} can be at most {ceiling:,}")


@dataclass(frozen=True)
class Subject:
    """Whose quota is checked; `label` reads well in a sentence: "your quota"."""

    label: str
    in_use_phrase: str = "you use"


USER = Subject("your quota", "you use")


def group_subject(group: str) -> Subject:
    return Subject(f"the quota of group '{group}'", "its members use")


@dataclass(frozen=True)
class Excess:
    dimension: str
    limit: int
    used: int
    asked: int
    message: str


@dataclass(frozen=True)
class QuotaCheck:
    subject: Subject
    limits: Limits
    used: Resources
    asked: Resources
    excesses: list[Excess] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.excesses


def _excess(subject: Subject, dimension: str, limit, used, asked, fmt) -> Excess | None:
    if limit is None or used + asked <= limit:
        return None
    message = (
        f"{subject.label} allows {fmt(limit)}; {subject.in_use_phrase} {fmt(used)} "
        f"and asked for {fmt(asked)} more"
    )
    return Excess(dimension, limit, used, asked, message)


def check(subject: Subject, limits: Limits, used: Resources, asked: Resources) -> QuotaCheck:
    """Compare `used + asked` against `limits`, dimension by dimension."""
    found = [
        _excess(subject, "cpu", limits.cpu_milli, used.cpu_milli, asked.cpu_milli, format_cpu),
        _excess(subject, "memory", limits.memory, used.memory, asked.memory, format_memory),
        _excess(
            subject,
            "notebooks",
            limits.notebooks,
            used.notebooks,
            asked.notebooks,
            lambda n: f"{n} running notebook{'s' if n != 1 else ''}",
        ),
    ]
    for gpu_type, count in asked.gpus.items():
        found.append(
            _excess(
                subject,
                f"gpu:{gpu_type}",
                limits.gpu_limit(gpu_type),
                used.gpus.get(gpu_type, 0),
                count,
                lambda n, t=gpu_type: format_gpus(n, t),
            )
        )
    return QuotaCheck(subject, limits, used, asked, [e for e in found if e is not None])


def enforce(*checks: QuotaCheck) -> None:
    """Raise QuotaExceeded naming every limit that a request would pass."""
    excesses = [e for c in checks for e in c.excesses]
    if excesses:
        raise QuotaExceeded(
            "; ".join(e.message for e in excesses) + ".",
            excesses=[e.__dict__ for e in excesses],
        )


def within_budget(limits: Limits, budget: Limits, group: str, default: bool = False) -> None:
    """A group manager may give a member at most the group's own budget, per dimension;
    of a group without one (`default`), at most the platform's default quota."""
    problems = []

    def over(value, ceiling) -> bool:
        return ceiling is not None and (value is None or value > ceiling)

    if over(limits.cpu_milli, budget.cpu_milli):
        problems.append(f"CPU at most {format_cpu(budget.cpu_milli)}")
    if over(limits.memory, budget.memory):
        problems.append(f"memory at most {format_memory(budget.memory)}")
    if over(limits.notebooks, budget.notebooks):
        problems.append(f"at most {budget.notebooks} running notebooks")
    if over(limits.disk, budget.disk):
        problems.append(f"a disk allowance of at most {format_memory(budget.disk)}")
    if budget.gpus is not None:
        asked = limits.gpus
        if asked is None:
            problems.append("GPU limits per type (the group's budget limits GPUs)")
        else:
            for gpu_type, count in asked.items():
                ceiling = budget.gpu_limit(gpu_type)
                if count > ceiling:
                    problems.append(f"at most {format_gpus(ceiling, gpu_type)}")
    if problems:
        cap = (
            f"group '{group}' has no budget, so a member's quota is capped by the platform's "
            "default quota and must set "
            if default
            else f"group '{group}' has a budget, so a member's quota must set "
        )
        raise QuotaExceeded(cap + ", ".join(problems) + ".")

"""Where the controller keeps archives of files: template versions and submissions."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..store.models import Assignment, Submission, Template, TemplateVersion


def template_archive(store: Path, template_id: int, version: int) -> Path:
    return store / "templates" / f"{template_id}-v{version}.tar"


def submission_archive(store: Path, assignment_id: int, user_id: int, number: int) -> Path:
    return store / "submissions" / str(assignment_id) / str(user_id) / f"{number}.tar"


def deployment_archive(store: Path, deployment_id: int) -> Path:
    return store / "deployments" / f"{deployment_id}.tar"


async def seed_archive(session, store: Path, seed: dict) -> tuple[Path, str, int]:
    """The archive a new notebook's files come from, the suffix for conflicts, and its size."""
    if seed["kind"] == "template":
        version = await session.get(TemplateVersion, seed["id"])
        template = await session.get(Template, version.template_id)
        return (
            template_archive(store, template.id, version.version),
            f"from {template.name}",
            version.files,
        )
    submission = await session.get(Submission, seed["id"])
    assignment = await session.get(Assignment, submission.assignment_id)
    path = submission_archive(store, assignment.id, submission.user_id, submission.number)
    return path, "submitted", submission.files


def remove_quietly(path: str | Path) -> None:
    """Delete a spool file that may already be gone."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)

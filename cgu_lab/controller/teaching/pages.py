"""The teaching pages: the template gallery, courses, assignments, submissions and training.

Students browse templates and their courses here; teachers and TAs run
their courses from here.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...core import roles
from ...core.errors import NotFound
from ..accounts.directory import get_group
from ..page_kit import page, platform_of, render, shell_pages

router = APIRouter(include_in_schema=False)
shell_pages(
    router,
    ("/templates", "templates", "Templates", ""),
    ("/training", "training", "Training jobs", ""),
    ("/courses", "courses", "My courses", ""),
)


@router.get("/templates/{name}")
async def template_page(request: Request, name: str) -> Response:
    identity = await page(request)
    platform = platform_of(request)
    principal = await platform.auth.principal(identity)
    async with platform.db.session() as session:
        await platform.templates.get(session, principal, name)
    return await render(
        request, "template.html", f"Template {name}", identity, "templates", template_name=name
    )


@router.get("/courses/{group}")
async def course_page(request: Request, group: str) -> Response:
    """A course's one page: its managers run it in tabs (members, TAs, quotas,
    templates, lab files, assignments, live); its students see a read-only view
    (templates, assignments, their own submissions); anyone else a 404."""
    identity = await page(request)
    platform = platform_of(request)
    principal = await platform.auth.principal(identity)
    async with platform.db.session() as session:
        target = await get_group(session, group)
    manage = roles.can_manage_group(principal, target.id)
    if not manage and target.id not in principal.groups:
        raise NotFound(f"there is no course '{group}' that you are in")
    return await render(
        request,
        "course.html",
        f"Course {target.display_name or group}",
        identity,
        "courses",
        group=group,
        group_title=target.display_name or group,
        description=target.description,
        manage=manage,
        is_admin=principal.is_admin,
    )


@router.get("/assignments/{assignment_id}")
async def assignment_page(request: Request, assignment_id: int) -> Response:
    identity = await page(request)
    principal = await platform_of(request).auth.principal(identity)
    await platform_of(request).assignments.submissions(principal, assignment_id)
    return await render(
        request, "assignment.html", "Assignment", identity, "courses", assignment_id=assignment_id
    )


@router.get("/submissions/{submission_id}")
async def submission_page(request: Request, submission_id: int) -> Response:
    """A submission's page: the link TAs paste into a chat works for that course's TAs only."""
    identity = await page(request)
    principal = await platform_of(request).auth.principal(identity)
    _, _, group, _ = await platform_of(request).assignments.submission(principal, submission_id)
    return await render(
        request,
        "submission.html",
        "Submission",
        identity,
        "courses",
        submission_id=submission_id,
        can_open=roles.can_manage_group(principal, group.id),
    )

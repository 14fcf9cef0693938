"""Teaching: templates, lab files for a class, broadcasts, assignments and submissions."""

from __future__ import annotations

from fastapi import APIRouter, Query
from sse_starlette import EventSourceResponse

from ...core.errors import Forbidden
from ...core.resources import parse_cpu, parse_memory
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.events import SSE_RESPONSES, progress_stream
from ..api.schema_types import Id, LabelPath, LabelQuery, SearchQuery, UserNamePath
from ..api.schemas import (
    AssignmentCreate,
    AssignmentOut,
    AssignmentSubmissions,
    BroadcastCreate,
    CourseOut,
    DeploymentCreate,
    DeploymentOut,
    Message,
    NotebookOut,
    ShareOut,
    SubmissionCreate,
    SubmissionOut,
    TemplateOut,
    TemplatePatch,
    TemplatePublish,
    TemplateVersionOut,
)
from .assignments import receipt
from .lab_files import summarize
from .schemas import BroadcastCopied, BroadcastCopy, CourseLive
from .templates import VersionSpec

router = APIRouter(tags=["teaching"], dependencies=[require_scope("teaching")])


def version_out(version) -> TemplateVersionOut:
    return TemplateVersionOut(
        version=version.version,
        label=version.label,
        environment=version.environment,
        image=version.image,
        cpu_milli=version.cpu_milli,
        memory=version.memory,
        gpu_type=version.gpu_type,
        gpus=version.gpus,
        files=version.files,
        bytes=version.bytes,
        content_hash=version.content_hash,
        created_by=version.created_by,
        created_at=version.created_at,
    )


def template_out(
    template, latest, author: str, group: str | None, actor, versions=()
) -> TemplateOut:
    return TemplateOut(
        name=template.name,
        display_name=template.display_name,
        description=template.description,
        author=author,
        visibility=template.visibility,
        group=group,
        retired=template.retired,
        mine=template.owner_id == actor.id,
        latest=version_out(latest) if latest else None,
        versions=[version_out(v) for v in versions],
    )


# -- templates -------------------------------------------------------------------


@router.get("/templates", response_model=list[TemplateOut], summary="The template gallery")
async def list_templates(
    platform: PlatformDep,
    actor: ActorDep,
    q: SearchQuery = "",
    group: LabelQuery = None,
    retired: bool = Query(False, description="Include retired templates"),
) -> list[TemplateOut]:
    rows = await platform.templates.listing(actor, q, group, retired)
    return [template_out(t, v, author, g, actor) for t, v, author, g in rows]


@router.get(
    "/templates/{name}", response_model=TemplateOut, summary="A template with all its versions"
)
async def get_template(name: LabelPath, platform: PlatformDep, actor: ActorDep) -> TemplateOut:
    found = await platform.templates.detail(actor, name)
    newest = found.versions[0] if found.versions else None
    return template_out(found.template, newest, found.author, found.group, actor, found.versions)


@router.post(
    "/templates",
    response_model=TemplateOut,
    status_code=201,
    summary="Publish files of one of my notebooks as a template (a new version if it exists)",
)
async def publish_template(
    body: TemplatePublish, platform: PlatformDep, actor: ActorDep
) -> TemplateOut:
    nb = await platform.notebooks.loaded(actor.name, body.notebook)
    cpu_milli = parse_cpu(body.cpu) if body.cpu is not None else nb.cpu_milli
    memory = parse_memory(body.memory) if body.memory is not None else nb.memory
    gpus = body.gpus if body.gpu_type else 0
    spec = VersionSpec(
        body.version_label,
        body.environment or nb.environment,
        cpu_milli,
        memory,
        body.gpu_type,
        gpus,
    )
    template, _ = await platform.templates.publish(
        actor,
        body.notebook,
        body.name,
        body.display_name,
        body.description,
        body.visibility,
        body.group,
        spec,
        body.paths,
        body.excluded,
    )
    return await get_template(template.name, platform, actor)


@router.patch(
    "/templates/{name}", response_model=TemplateOut, summary="Edit, retire or restore a template"
)
async def update_template(
    name: LabelPath, body: TemplatePatch, platform: PlatformDep, actor: ActorDep
) -> TemplateOut:
    await platform.templates.update(
        actor, name, body.display_name, body.description, body.visibility, body.group, body.retired
    )
    return await get_template(name, platform, actor)


# -- lab files for a class and broadcasts ------------------------------------------


def deployment_out(deployment, group: str) -> DeploymentOut:
    return DeploymentOut(
        id=deployment.id,
        group=group,
        title=deployment.title,
        destination=deployment.destination,
        source=deployment.source,
        state=deployment.state,
        summary=summarize(deployment.report) if deployment.report is not None else "copying…",
        report=deployment.report,
        created_by=deployment.created_by,
        created_at=deployment.created_at,
    )


@router.post(
    "/groups/{group}/deployments",
    response_model=DeploymentOut,
    status_code=202,
    summary="Copy lab files into every member's course folder; follow /events for progress",
)
async def deploy(
    group: LabelPath, body: DeploymentCreate, platform: PlatformDep, actor: ActorDep
) -> DeploymentOut:
    deployment = await platform.lab_files.deploy(
        actor, group, body.title, body.destination, body.notebook, body.path, body.template
    )
    return deployment_out(deployment, group)


@router.get(
    "/groups/{group}/deployments",
    response_model=list[DeploymentOut],
    summary="Deployments to a group with their per-student reports (its managers)",
)
async def list_deployments(
    group: LabelPath, platform: PlatformDep, actor: ActorDep
) -> list[DeploymentOut]:
    return [deployment_out(d, group) for d in await platform.lab_files.deployments(actor, group)]


@router.get("/deployments/{deployment_id}", response_model=DeploymentOut, summary="One deployment")
async def get_deployment(
    deployment_id: Id, platform: PlatformDep, actor: ActorDep
) -> DeploymentOut:
    deployment, group = await platform.lab_files.deployment_in_group(actor, deployment_id)
    return deployment_out(deployment, group)


@router.get(
    "/deployments/{deployment_id}/events",
    summary="Progress of a deployment (Server-Sent Events)",
    response_class=EventSourceResponse,
    responses=SSE_RESPONSES,
)
async def deployment_events(
    deployment_id: Id, platform: PlatformDep, actor: ActorDep
) -> EventSourceResponse:
    deployment = await platform.lab_files.deployment(actor, deployment_id)
    return progress_stream(
        platform.broker,
        ("deployment", deployment.id),
        {"message": summarize(deployment.report or {}), "state": deployment.state},
    )


@router.post(
    "/notebooks/{owner}/{name}/broadcast",
    response_model=ShareOut,
    status_code=201,
    summary="Show a notebook read-only to a whole group for a limited time (live view)",
)
async def broadcast(
    owner: UserNamePath,
    name: LabelPath,
    body: BroadcastCreate,
    platform: PlatformDep,
    actor: ActorDep,
) -> ShareOut:
    return await platform.shares.create(
        actor, owner, name, body.group, "group", "read", body.path, body.minutes, note="Live view"
    )


@router.post(
    "/groups/{group}/broadcasts/{share_id}/copy",
    response_model=BroadcastCopied,
    summary="Copy a live view's notebook into one of my notebooks (the course's members; audited)",
    description=(
        "The file the live view shows (or `path` of its notebook, or its whole home) goes to "
        "`<owner>-<notebook>/` of the caller's notebook, running or stopped; nothing is "
        "overwritten. Refused (4xx) when the caller is not in the course, the live view ended, "
        "is the caller's own, or `path` is outside what it shows."
    ),
)
async def copy_broadcast(
    group: LabelPath, share_id: Id, body: BroadcastCopy, platform: PlatformDep, actor: ActorDep
) -> BroadcastCopied:
    return await platform.lab_files.copy_broadcast(actor, group, share_id, body.notebook, body.path)


@router.get(
    "/courses",
    response_model=list[CourseOut],
    summary="My courses: new material, live broadcasts and assignments",
)
async def courses(platform: PlatformDep, actor: ActorDep) -> list[CourseOut]:
    return await platform.student_view.overview(actor)


@router.post(
    "/courses/seen", response_model=Message, summary="Mark my courses' new material as seen"
)
async def courses_seen(platform: PlatformDep, actor: ActorDep) -> Message:
    await platform.student_view.mark_seen(actor)
    return Message(message="marked as seen")


# -- assignments and submissions ------------------------------------------------------


@router.post(
    "/groups/{group}/assignments",
    response_model=AssignmentOut,
    status_code=201,
    summary="Create an assignment with a deadline (the group's managers)",
)
async def create_assignment(
    group: LabelPath, body: AssignmentCreate, platform: PlatformDep, actor: ActorDep
) -> AssignmentOut:
    limit = parse_memory(body.max_bytes) if body.max_bytes is not None else None
    return await platform.assignments.create(
        actor,
        group,
        body.name,
        body.title,
        body.description,
        body.deadline,
        body.allow_late,
        limit,
    )


@router.get(
    "/groups/{group}/assignments",
    response_model=list[AssignmentOut],
    summary="A group's assignments",
)
async def group_assignments(
    group: LabelPath, platform: PlatformDep, actor: ActorDep
) -> list[AssignmentOut]:
    return await platform.assignments.for_group(actor, group)


@router.get(
    "/assignments",
    response_model=list[AssignmentOut],
    summary="Assignments of my groups with my submissions, open ones first",
)
async def my_assignments(platform: PlatformDep, actor: ActorDep) -> list[AssignmentOut]:
    return await platform.assignments.mine(actor)


@router.post(
    "/assignments/{assignment_id}/submissions",
    response_model=SubmissionOut,
    status_code=201,
    summary="Submit files of one of my notebooks; answers a receipt",
)
async def submit(
    assignment_id: Id, body: SubmissionCreate, platform: PlatformDep, actor: ActorDep
) -> SubmissionOut:
    return await platform.assignments.submit(
        actor, assignment_id, body.notebook, body.paths, body.note
    )


@router.get(
    "/assignments/{assignment_id}/submissions",
    response_model=AssignmentSubmissions,
    summary="Every submission of an assignment, newest first per student (its TAs)",
)
async def list_submissions(
    assignment_id: Id, platform: PlatformDep, actor: ActorDep
) -> AssignmentSubmissions:
    return await platform.assignments.submissions(actor, assignment_id)


@router.get(
    "/submissions/{submission_id}",
    response_model=SubmissionOut,
    summary="A submission with its files (the course's TAs, and its student)",
)
async def get_submission(
    submission_id: Id, platform: PlatformDep, actor: ActorDep
) -> SubmissionOut:
    submission, assignment, _, student = await platform.assignments.submission(actor, submission_id)
    return receipt(
        submission, assignment, student, manifest=(submission.manifest or {}).get("files", [])
    )


@router.post(
    "/submissions/{submission_id}/open",
    response_model=NotebookOut,
    status_code=202,
    summary="Open a submission as a fresh notebook of my own (TAs); follow its start",
)
async def open_submission(submission_id: Id, platform: PlatformDep, actor: ActorDep) -> NotebookOut:
    owner, name = await platform.assignments.open(actor, submission_id)
    opened = await platform.notebooks.mine(actor, name, owner)
    if opened is None:
        raise Forbidden("the notebook could not be created")
    return opened


# -- the course page: a student's own submissions, the class's notebooks now -----------


@router.get(
    "/groups/{group}/submissions/mine",
    response_model=list[SubmissionOut],
    summary="My own submissions to a course's assignments, newest first",
)
async def my_course_submissions(
    group: LabelPath, platform: PlatformDep, actor: ActorDep
) -> list[SubmissionOut]:
    return await platform.student_view.my_submissions(actor, group)


@router.get(
    "/groups/{group}/live",
    response_model=CourseLive,
    summary="The students' notebooks running now and the course's live views (its managers)",
    description=(
        "`url` of a student's notebook is set only where its owner shared it with the "
        "caller or the course; managing a course gives no right to read a student's files."
    ),
)
async def course_live(group: LabelPath, platform: PlatformDep, actor: ActorDep) -> CourseLive:
    return await platform.live.overview(actor, group)


@router.post(
    "/groups/{group}/live/{owner}/{name}/end",
    response_model=Message,
    summary="End (stop) a student's notebook (the course's managers; audited)",
)
async def end_live_notebook(
    group: LabelPath,
    owner: UserNamePath,
    name: LabelPath,
    platform: PlatformDep,
    actor: ActorDep,
) -> Message:
    return Message(message=await platform.live.end(actor, group, owner, name))

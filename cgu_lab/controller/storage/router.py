"""Personal and course storage from the portal, with or without a running notebook.

`/api/storage` lists the caller's storages; below `/api/storage/{kind}/{name}`
(kind `users`: a user's own, `courses`: a course's shared) a folder is listed,
a selection downloaded as one zip (streamed), a file uploaded in chunks
(each `PUT .../upload?path&upload&offset&total`, the body the chunk's bytes:
the page shows progress per chunk and resumes from `received` after a
refusal with 409; `upload` is the id the page picks for one file's upload,
so two uploads of one path never mix their chunks: the last to finish wins,
whole), a folder made and an entry deleted. Who may do what is
core/storage.py's; the files are handled as the caller's own account by the
backend (controller/storage/service.py says which).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from ...core.errors import Invalid
from ..api.deps import ActorDep, PlatformDep, require_scope
from ..api.schema_types import RelativePath, Strict, UserNamePath
from ..api.schemas import Message
from . import service

router = APIRouter(tags=["storage"], dependencies=[require_scope("storage")])

# The most one upload chunk may carry; the page sends 8 MiB.
MAX_CHUNK = 16 * 2**20
KindName = Literal["users", "courses"]
Kind = Annotated[str, Path(pattern="^(users|courses)$", description="users or courses")]
# A byte count of an upload: at most a PiB, like every disk amount.
Bytes = Annotated[int, Query(ge=0, le=2**50)]
PathQuery = Annotated[str, Query(max_length=1024, description="Relative to the storage")]
UploadId = Annotated[
    str,
    Query(
        pattern=r"^[A-Za-z0-9_-]{8,64}$",
        description="The sender's id for this one upload (8-64 letters, digits, - or _)",
    ),
]


class AreaOut(BaseModel):
    kind: KindName
    name: str
    title: str
    access: Literal["read", "write"]
    role: str = Field(description="owner, teacher, ta, member or admin")
    allowance: int | None = Field(description="Bytes; null: no allowance")
    mounted_at: str = Field(description="Where notebooks see it, relative to the home")
    ta_write: bool | None = Field(None, description="Courses: whether TAs may write")
    may_configure: bool = False


class StorageOverview(BaseModel):
    areas: list[AreaOut]
    enforcement: str


class EntryOut(BaseModel):
    name: str
    kind: Literal["file", "folder", "link", "other"]
    size: int | None
    modified: float


class FolderOut(BaseModel):
    area: AreaOut
    path: str
    entries: list[EntryOut]
    used: int
    free: int


class UploadOut(BaseModel):
    received: int
    done: bool


class FolderIn(Strict):
    path: RelativePath


class StorageSettingsIn(Strict):
    ta_write: bool


def _out(area: service.Area) -> AreaOut:
    mounted = "storage" if area.kind == "users" else f"courses/{area.name}/shared"
    return AreaOut(
        kind=area.kind,
        name=area.name,
        title=area.title,
        access=area.access,
        role=area.role,
        allowance=area.allowance,
        mounted_at=mounted,
        ta_write=area.ta_write,
        may_configure=area.may_configure,
    )


@router.get("/storage", response_model=StorageOverview, summary="My storage and my courses'")
async def overview(platform: PlatformDep, actor: ActorDep) -> StorageOverview:
    found = await service.overview(platform.db, platform.backend, actor)
    return StorageOverview(areas=[_out(a) for a in found.areas], enforcement=found.enforcement)


@router.get("/storage/{kind}/{name}", response_model=FolderOut, summary="A folder of a storage")
async def list_folder(
    kind: Kind, name: UserNamePath, platform: PlatformDep, actor: ActorDep, path: PathQuery = ""
) -> FolderOut:
    opened = await service.open_area(platform.db, platform.backend, actor, kind, name, False)
    answer = await opened.files.run(opened.place, "list", {"path": path})
    return FolderOut(area=_out(opened.area), **answer)


@router.get(
    "/storage/{kind}/{name}/zip",
    summary="Files and folders of a storage as one zip, streamed",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/zip": {}}}},
)
async def download_zip(
    kind: Kind,
    name: UserNamePath,
    platform: PlatformDep,
    actor: ActorDep,
    # A handful: the whole selection travels in the URL, which servers cap near 64 KB
    # (six of the longest paths, percent-encoded, stay under it). Zip their folder for more.
    path: Annotated[
        list[RelativePath],
        Query(max_length=6, description="Up to six files or folders; a folder zips all it holds"),
    ],
) -> StreamingResponse:
    opened = await service.open_area(platform.db, platform.backend, actor, kind, name, False)
    blocks = await opened.files.stream_zip(opened.place, path)
    first = path[0].strip("/") if len(path) == 1 else ""
    filename = f"{first.rsplit('/', 1)[-1] if first not in ('', '.') else name}.zip"
    return StreamingResponse(
        blocks,
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "Cache-Control": "no-store",
        },
    )


@router.put(
    "/storage/{kind}/{name}/upload",
    response_model=UploadOut,
    summary="One chunk of a file upload (offset, total); the last one puts the file in place",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    },
)
async def upload_chunk(
    kind: Kind,
    name: UserNamePath,
    request: Request,
    platform: PlatformDep,
    actor: ActorDep,
    path: PathQuery,
    upload: UploadId,
    offset: Bytes,
    total: Bytes,
) -> UploadOut:
    opened = await service.open_area(platform.db, platform.backend, actor, kind, name, True)
    body = bytearray()
    async for part in request.stream():
        body += part
        if len(body) > MAX_CHUNK:
            raise Invalid(f"an upload chunk carries at most {MAX_CHUNK // 2**20} MiB")
    received = await service.upload(
        platform.db, opened, actor, kind, name, bytes(body), path, upload, offset, total
    )
    return UploadOut(received=received.received, done=received.done)


@router.post(
    "/storage/{kind}/{name}/folders",
    response_model=Message,
    status_code=201,
    summary="Make a folder in a storage",
)
async def make_folder(
    kind: Kind, name: UserNamePath, body: FolderIn, platform: PlatformDep, actor: ActorDep
) -> Message:
    made = await service.make_folder(platform.db, platform.backend, actor, kind, name, body.path)
    return Message(message=f"made the folder '{made}'")


@router.delete(
    "/storage/{kind}/{name}/files",
    response_model=Message,
    summary="Delete a file or a folder (with everything in it) from a storage",
)
async def delete_entry(
    kind: Kind, name: UserNamePath, platform: PlatformDep, actor: ActorDep, path: PathQuery
) -> Message:
    gone = await service.delete(platform.db, platform.backend, actor, kind, name, path)
    return Message(message=f"deleted '{gone}'")


@router.put(
    "/storage/courses/{name}/settings",
    response_model=AreaOut,
    summary="Whether a course's TAs may write its storage (its teachers, admins)",
)
async def put_settings(
    name: UserNamePath, body: StorageSettingsIn, platform: PlatformDep, actor: ActorDep
) -> AreaOut:
    return _out(await service.configure(platform.db, actor, name, body.ta_write))

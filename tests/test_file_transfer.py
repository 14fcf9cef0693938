"""The file manager's server side in a real jupyter_server (pytest-jupyter's jp_fetch):
a folder or a selection downloaded as one streamed zip, archives extracted all or
nothing (zip-slip, absolute names, links refused), the disk allowance checked before
an upload starts, read-only viewers downloading but never uploading, and the chunked
contents upload the page resumes from the size the server holds."""

import base64
import hashlib
import io
import json
import os
import tarfile
import zipfile

import pytest
from tornado.httpclient import HTTPClientError

from .harness import extension_server_config
from .test_server_extension import as_user

OWNER, EDITOR, VIEWER = as_user("alice"), as_user("ed", "edit"), as_user("ta", "read")


@pytest.fixture
def jp_server_config():
    return extension_server_config()


@pytest.fixture
def extension(jp_serverapp):
    return jp_serverapp.extension_manager.extension_apps["cgu_lab"].pop()


async def call(jp_fetch, method, *parts, body=None, headers=OWNER, params=None):
    """(status, JSON body or raw bytes) of a request, errors included."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body))
    try:
        response = await jp_fetch(
            *parts, method=method, body=data, headers=headers, params=params or {}
        )
        code, raw = response.code, response.body
    except HTTPClientError as error:
        code, raw = error.code, error.response.body if error.response else b""
    try:
        return code, json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return code, raw


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_tree(root, folders=20, per_folder=10) -> dict[str, str]:
    """A tree of `folders` x `per_folder` files of varied sizes; {relative path: sha256}."""
    sums = {}
    for f in range(folders):
        folder = root / "tree" / f"part{f:02d}" / ("deep" if f % 5 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(per_folder):
            data = os.urandom(37 * n + f) + f"file {f}/{n}\n".encode() * (n * 50)
            path = folder / f"data{n}.{'csv' if n % 2 else 'png'}"
            path.write_bytes(data)
            sums[path.relative_to(root).as_posix()] = sha(data)
    return sums


def unzip(raw: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(raw)) as archive:
        assert archive.testzip() is None
        return {i.filename: archive.read(i) for i in archive.infolist()}


# -- download ---------------------------------------------------------------------------------


async def test_a_folder_of_200_files_downloads_as_one_streamed_zip(jp_fetch, jp_root_dir):
    sums = make_tree(jp_root_dir)
    assert len(sums) == 200
    (jp_root_dir / "tree" / "empty").mkdir()
    (jp_root_dir / "tree" / ".secret").write_text("hidden")
    os.symlink("/etc/passwd", jp_root_dir / "tree" / "escape")

    response = await jp_fetch(
        "cgu-lab", "transfer", "zip", params=[("path", "tree")], headers=VIEWER
    )
    assert response.headers["Content-Type"] == "application/zip"
    assert 'filename="tree.zip"' in response.headers["Content-Disposition"]
    assert "Content-Length" not in response.headers  # streamed: chunked as it is written
    entries = unzip(response.body)
    files = {name: sha(data) for name, data in entries.items() if not name.endswith("/")}
    assert files.pop("cgu-lab-skipped.txt")  # what was left out, and why
    assert files == sums
    assert "tree/empty/" in entries  # the tree is kept, empty folders too
    assert b"tree/escape: a symbolic link" in entries["cgu-lab-skipped.txt"]
    assert not any(".secret" in name for name in entries)  # hidden stays hidden


async def test_a_multi_selection_downloads_relative_to_its_folder(jp_fetch, jp_root_dir):
    sums = make_tree(jp_root_dir, folders=3, per_folder=2)
    code, raw = await call(
        jp_fetch,
        "GET",
        "cgu-lab",
        "transfer",
        "zip",
        params=[("path", "tree/part00"), ("path", "tree/part01/data1.csv")],
    )
    assert code == 200
    names = {name for name in unzip(raw) if not name.endswith("/")}
    assert names == {
        "part00/deep/data0.png",
        "part00/deep/data1.csv",
        "part01/data1.csv",
    }
    assert sha(unzip(raw)["part01/data1.csv"]) == sums["tree/part01/data1.csv"]


@pytest.mark.parametrize(
    ("paths", "status", "code"),
    [
        ([("path", "../etc")], 400, "invalid"),
        ([("path", "/etc")], 400, "invalid"),
        ([("path", "missing")], 404, "not_found"),
        ([("path", "link")], 400, "link"),
        ([("path", "link/inside.txt")], 400, "link"),
        ([], 404, "not_found"),
    ],
)
async def test_downloads_refuse_escapes_and_links(jp_fetch, jp_root_dir, paths, status, code):
    (jp_root_dir / "real").mkdir()
    (jp_root_dir / "real" / "inside.txt").write_text("x")
    os.symlink(jp_root_dir / "real", jp_root_dir / "link")
    got, body = await call(jp_fetch, "GET", "cgu-lab", "transfer", "zip", params=paths)
    assert (got, body["code"]) == (status, code)
    assert body["message"]


async def test_a_single_file_share_cannot_zip_the_notebook(jp_fetch, jp_root_dir):
    make_tree(jp_root_dir, folders=1, per_folder=1)
    headers = as_user("guest", "read", scope="tree/part00/deep/data0.png")
    code, body = await call(
        jp_fetch, "GET", "cgu-lab", "transfer", "zip", params=[("path", "tree")], headers=headers
    )
    assert (code, body["code"]) == (403, "not_shared")


# -- read-only viewers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("plan", {"path": "", "files": [{"path": "a.txt", "size": 3}]}),
        ("extract", {"path": "good.zip"}),
    ],
)
async def test_readonly_viewers_never_upload_or_extract(jp_fetch, jp_root_dir, route, body):
    write_zip(jp_root_dir / "good.zip", {"a.txt": b"a"})
    code, answer = await call(
        jp_fetch, "POST", "cgu-lab", "transfer", route, body=body, headers=VIEWER
    )
    assert code == 403
    assert answer["code"] == "read_only" and "read-only" in answer["message"]
    assert not (jp_root_dir / "a.txt").exists()
    # The upload itself goes through the contents API, which refuses them the same way.
    put = {"type": "file", "format": "base64", "content": "YQ==", "chunk": 1}
    code, answer = await call(jp_fetch, "PUT", "api", "contents", "a.txt", body=put, headers=VIEWER)
    assert (code, answer["code"]) == (403, "read_only")
    # An editor may.
    code, _ = await call(jp_fetch, "POST", "cgu-lab", "transfer", route, body=body, headers=EDITOR)
    assert code == 200
    assert (jp_root_dir / "good.zip").exists() or route == "plan"


# -- extraction -------------------------------------------------------------------------------


def write_zip(path, members: dict[str, bytes], links: dict[str, str] | None = None) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = 0o120777 << 16
            archive.writestr(info, target)


def write_tar(path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> None:
    with tarfile.open(path, "w:gz") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                info = tarfile.TarInfo(member[0])
                info.size = len(member[1])
                archive.addfile(info, io.BytesIO(member[1]))


def listing(folder) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


async def extract(jp_fetch, body, headers=OWNER):
    return await call(
        jp_fetch, "POST", "cgu-lab", "transfer", "extract", body=body, headers=headers
    )


async def test_a_zip_extracts_into_its_folder_and_can_be_removed(jp_fetch, jp_root_dir):
    (jp_root_dir / "in").mkdir()
    write_zip(jp_root_dir / "in" / "lab.zip", {"lab/a.py": b"print(1)\n", "lab/data/b.csv": b"1,2"})
    code, answer = await extract(jp_fetch, {"path": "in/lab.zip", "remove": True})
    assert code == 200, answer
    assert answer["entries"] == ["lab"] and answer["files"] == 2 and answer["removed"]
    assert (jp_root_dir / "in" / "lab" / "data" / "b.csv").read_bytes() == b"1,2"
    assert listing(jp_root_dir / "in") == {"lab", "lab/a.py", "lab/data", "lab/data/b.csv"}


async def test_a_tar_gz_extracts_too(jp_fetch, jp_root_dir):
    write_tar(jp_root_dir / "set.tar.gz", [("set/x.txt", b"x"), ("set/y/z.txt", b"zz")])
    code, answer = await extract(jp_fetch, {"path": "set.tar.gz"})
    assert code == 200, answer
    assert (jp_root_dir / "set" / "y" / "z.txt").read_bytes() == b"zz"


def _link(name, kind=tarfile.SYMTYPE, target="/etc/passwd"):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


UNSAFE = [
    ("slip.zip", {"ok.txt": b"fine", "../evil.txt": b"boom"}, None, "unsafe_name", "'../evil.txt'"),
    ("abs.zip", {"ok.txt": b"fine", "/tmp/evil.txt": b"boom"}, None, "unsafe_name", "absolute"),
    ("win.zip", {"ok.txt": b"fine", "a\\..\\..\\evil.txt": b"boom"}, None, "unsafe_name", ".."),
    ("link.zip", {"ok.txt": b"fine"}, {"passwd": "/etc/passwd"}, "link", "symbolic link"),
    ("twice.zip", {"d/x": b"1", "d/x/y": b"2"}, None, "conflict", "also has as a file"),
]


@pytest.mark.parametrize(("name", "members", "links", "code", "words"), UNSAFE)
async def test_unsafe_zips_are_refused_leaving_nothing(
    jp_fetch, jp_root_dir, name, members, links, code, words
):
    write_zip(jp_root_dir / name, members, links)
    before = listing(jp_root_dir)
    status, answer = await extract(jp_fetch, {"path": name})
    assert status in (400, 409)
    assert answer["code"] == code and words in answer["message"]
    assert "nothing was extracted" in answer["message"]
    assert listing(jp_root_dir) == before  # no file, no staging folder
    assert not (jp_root_dir.parent / "evil.txt").exists()


@pytest.mark.parametrize(
    ("members", "code", "words"),
    [
        ([("ok.txt", b"fine"), ("../evil.txt", b"boom")], "unsafe_name", "climbs out"),
        ([("ok.txt", b"fine"), ("/abs/evil.txt", b"boom")], "unsafe_name", "absolute"),
        ([("ok.txt", b"fine"), _link("passwd")], "link", "symbolic link"),
        # a link first, then a file "through" it: the classic way out
        ([_link("out", target="/tmp"), ("out/evil.txt", b"boom")], "link", "symbolic link"),
        ([("ok.txt", b"fine"), _link("hard", tarfile.LNKTYPE, "ok.txt")], "link", "hard link"),
        ([("ok.txt", b"fine"), _link("dev", tarfile.CHRTYPE, "")], "link", "device"),
    ],
)
async def test_unsafe_tars_are_refused_leaving_nothing(jp_fetch, jp_root_dir, members, code, words):
    write_tar(jp_root_dir / "bad.tgz", members)
    before = listing(jp_root_dir)
    status, answer = await extract(jp_fetch, {"path": "bad.tgz"})
    assert (status, answer["code"]) == (400, code), answer
    assert words in answer["message"]
    assert listing(jp_root_dir) == before


async def test_a_conflict_is_refused_then_extracts_into_a_new_folder(jp_fetch, jp_root_dir):
    (jp_root_dir / "lab").mkdir()
    (jp_root_dir / "lab" / "a.py").write_text("mine")
    write_zip(jp_root_dir / "lab.zip", {"lab/a.py": b"theirs", "other.txt": b"o"})
    status, answer = await extract(jp_fetch, {"path": "lab.zip"})
    assert (status, answer["code"]) == (409, "conflict")
    assert answer["conflicts"] == ["lab"] and answer["suggestion"] == "lab"
    assert not (jp_root_dir / "other.txt").exists()
    assert (jp_root_dir / "lab" / "a.py").read_text() == "mine"

    status, answer = await extract(jp_fetch, {"path": "lab.zip", "into": "lab (2)"})
    assert status == 200, answer
    assert (jp_root_dir / "lab (2)" / "lab" / "a.py").read_text() == "theirs"
    assert (jp_root_dir / "lab" / "a.py").read_text() == "mine"
    status, answer = await extract(jp_fetch, {"path": "lab.zip", "into": "../up"})
    assert (status, answer["code"]) == (400, "unsafe_name")


async def test_not_an_archive_and_damaged_archives_are_refused(jp_fetch, jp_root_dir):
    (jp_root_dir / "notes.txt").write_text("x")
    (jp_root_dir / "broken.zip").write_bytes(b"PK\x03\x04 not really")
    (jp_root_dir / "broken.tar.gz").write_bytes(b"\x1f\x8b nope")
    for name in ("notes.txt", "broken.zip", "broken.tar.gz"):
        status, answer = await extract(jp_fetch, {"path": name})
        assert (status, answer["code"]) == (400, "not_archive"), answer
    assert not any(p.name.startswith(".cgu-extract") for p in jp_root_dir.iterdir())


# -- the disk allowance -----------------------------------------------------------------------


async def test_an_upload_past_the_allowance_is_refused_before_it_starts(
    jp_fetch, jp_root_dir, extension
):
    (jp_root_dir / "big.bin").write_bytes(b"\0" * 600_000)
    extension.disk_allowance = 1_000_000
    plan = {"path": "", "files": [{"path": "up/a.bin", "size": 300_000}]}
    status, answer = await call(jp_fetch, "POST", "cgu-lab", "transfer", "plan", body=plan)
    assert status == 200 and answer["allowance"] == 1_000_000 and answer["used"] == 600_000

    plan["files"].append({"path": "up/b.bin", "size": 200_000})
    status, answer = await call(jp_fetch, "POST", "cgu-lab", "transfer", "plan", body=plan)
    assert (status, answer["code"]) == (413, "over_allowance")
    assert (answer["limit"], answer["used"], answer["needed"]) == (1_000_000, 600_000, 500_000)
    assert "977 KiB" in answer["message"] and "586 KiB" in answer["message"]
    # Replacing a file only needs the difference.
    plan = {"path": "", "files": [{"path": "big.bin", "size": 900_000}]}
    status, answer = await call(jp_fetch, "POST", "cgu-lab", "transfer", "plan", body=plan)
    assert status == 200 and answer["conflicts"] == ["big.bin"] and answer["needed"] == 300_000

    write_zip(jp_root_dir / "bomb.zip", {"zeros.bin": b"\0" * 2_000_000})
    before = listing(jp_root_dir)
    status, answer = await extract(jp_fetch, {"path": "bomb.zip"})
    assert (status, answer["code"]) == (413, "over_allowance")
    assert listing(jp_root_dir) == before

    extension.disk_allowance = None
    status, answer = await extract(jp_fetch, {"path": "bomb.zip"})
    assert status == 200
    code, room = await call(jp_fetch, "GET", "cgu-lab", "transfer", "allowance")
    assert code == 200 and room["allowance"] is None and room["free"] > 0


async def test_an_upload_plan_checks_names_and_folders_first(jp_fetch, jp_root_dir):
    (jp_root_dir / "afile").write_text("x")
    os.symlink("/tmp", jp_root_dir / "tmplink")
    cases = [
        ({"path": "", "files": [{"path": "../x", "size": 1}]}, 400, "invalid"),
        ({"path": "", "files": [{"path": "/etc/x", "size": 1}]}, 400, "invalid"),
        ({"path": "tmplink", "files": [{"path": "x", "size": 1}]}, 400, "link"),
        ({"path": "", "files": [{"path": "afile/x", "size": 1}]}, 409, "conflict"),
        ({"path": "", "files": []}, 400, "invalid"),
    ]
    for plan, status, code in cases:
        got, answer = await call(jp_fetch, "POST", "cgu-lab", "transfer", "plan", body=plan)
        assert (got, answer["code"]) == (status, code), plan
    plan = {"path": "", "files": [{"path": "p/.git/config", "size": 3}, {"path": "p/a", "size": 1}]}
    got, answer = await call(jp_fetch, "POST", "cgu-lab", "transfer", "plan", body=plan)
    assert got == 200 and answer["skipped"] == [{"path": "p/.git/config", "reason": "hidden"}]
    assert answer["files"] == 1 and answer["conflicts"] == []


# -- the chunked upload the page resumes ------------------------------------------------------


async def test_a_chunked_upload_resumes_from_the_size_the_server_holds(jp_fetch, jp_root_dir):
    """The page's resume rule: after a dropped chunk, ask the size; it is a whole number of
    chunks, and the next chunk is the one after them (JupyterLab's protocol: 1 writes,
    2..n append, -1 appends the last)."""
    data = os.urandom(3 * 1024 + 100)
    chunks = [data[i : i + 1024] for i in range(0, len(data), 1024)]

    async def put(number: int, index: int) -> dict:
        body = {
            "type": "file",
            "format": "base64",
            "chunk": number,
            "content": base64.b64encode(chunks[index]).decode(),
        }
        status, model = await call(jp_fetch, "PUT", "api", "contents", "big.bin", body=body)
        assert status in (200, 201)
        return model

    assert (await put(1, 0))["size"] == 1024
    assert (await put(2, 1))["size"] == 2048  # ... and its answer is lost: the page asks
    status, model = await call(
        jp_fetch, "GET", "api", "contents", "big.bin", params={"content": "0"}
    )
    assert status == 200 and model["size"] == 2048  # 2 chunks held: go on with the 3rd
    await put(3, 2)
    assert (await put(-1, 3))["size"] == len(data)
    assert (jp_root_dir / "big.bin").read_bytes() == data

"""The server extension inside a real jupyter_server (pytest-jupyter's jp_fetch):
who the caller is, and what owner, editable and readonly shares may do."""

import json

import pytest
from tornado.httpclient import HTTPClientError

from .harness import PROXY_SECRET, extension_server_config, proxy_headers


@pytest.fixture
def jp_server_config():
    return extension_server_config()


def as_user(
    name: str, access: str | None = None, scope: str = "", secret: str = PROXY_SECRET
) -> dict:
    # As the proxy marks API-token calls: no XSRF check, so a 403 below is the authorizer's.
    extra = {"X-Cgu-Display-Name": "Ada%20L.", "X-Cgu-Via": "token"}
    return proxy_headers(name, access, scope, secret=secret, extra=extra)


async def status_of(jp_fetch, *parts, method="GET", body=None, headers=None) -> int:
    try:
        response = await jp_fetch(
            *parts, method=method, body=body, headers=headers, allow_nonstandard_methods=True
        )
        return response.code
    except HTTPClientError as error:
        return error.code


@pytest.fixture
def files(jp_root_dir):
    (jp_root_dir / "notes.ipynb").write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    (jp_root_dir / "secret.txt").write_text("private")
    return jp_root_dir


async def test_no_or_wrong_secret_is_anonymous_and_refused(jp_fetch, files):
    assert await status_of(jp_fetch, "api", "contents", headers={"Authorization": ""}) == 403
    assert (
        await status_of(jp_fetch, "api", "contents", headers=as_user("alice", secret="guess"))
        == 403
    )
    assert (
        await status_of(
            jp_fetch, "api", "contents", headers={"X-Cgu-User": "alice", "Authorization": ""}
        )
        == 403
    )
    assert (
        await status_of(jp_fetch, "api", "contents", headers=as_user("alice", access="root")) == 403
    )


async def test_anonymous_callers_get_nothing_not_even_static_files(jp_fetch, files):
    """jupyter_server serves static files and its version to anyone; this server does not."""
    for parts in (("api",), ("static", "style", "bootstrap.min.css"), ("logout",)):
        with pytest.raises(HTTPClientError) as refused:
            await jp_fetch(*parts, headers=as_user("alice", secret="guess"))
        assert refused.value.code == 403
        assert json.loads(refused.value.response.body)["code"] == "unauthenticated"


async def test_owner_is_recognised_with_display_name(jp_fetch, files):
    response = await jp_fetch("cgu-lab", "info", headers=as_user("alice"))
    info = json.loads(response.body)
    assert info["user"] == {"name": "alice", "display_name": "Ada L."}
    assert info["access"] == "owner"
    me = json.loads((await jp_fetch("api", "me", headers=as_user("alice"))).body)
    assert me["identity"]["username"] == "alice"


WRITE_ROUTES = [
    ("PUT", ("api", "contents", "new.txt"), {"type": "file", "format": "text", "content": "x"}),
    ("PATCH", ("api", "contents", "secret.txt"), {"path": "renamed.txt"}),
    ("POST", ("api", "contents"), {"type": "notebook"}),
    ("DELETE", ("api", "contents", "secret.txt"), None),
    ("POST", ("api", "contents", "notes.ipynb", "checkpoints"), None),
    ("POST", ("api", "kernels"), {"name": "python3"}),
    (
        "POST",
        ("api", "sessions"),
        {"path": "notes.ipynb", "type": "notebook", "kernel": {"name": "python3"}},
    ),
    ("POST", ("api", "terminals"), None),
]


@pytest.mark.parametrize(("method", "parts", "body"), WRITE_ROUTES)
async def test_readonly_share_cannot_write_or_execute(jp_fetch, files, method, parts, body):
    payload = json.dumps(body) if body is not None else ("" if method != "DELETE" else None)
    code = await status_of(
        jp_fetch, *parts, method=method, body=payload, headers=as_user("ta", "read")
    )
    assert code == 403
    assert (files / "secret.txt").read_text() == "private"
    assert not (files / "new.txt").exists()


async def test_readonly_share_reads(jp_fetch, files):
    headers = as_user("ta", "read")
    assert await status_of(jp_fetch, "api", "contents", headers=headers) == 200
    assert await status_of(jp_fetch, "api", "contents", "notes.ipynb", headers=headers) == 200
    info = json.loads((await jp_fetch("cgu-lab", "info", headers=headers)).body)
    assert info["access"] == "read" and info["user"]["name"] == "ta"


async def test_readonly_share_cannot_open_a_kernel_websocket(jp_fetch, jp_ws_fetch, files):
    kernel = json.loads(
        (
            await jp_fetch(
                "api",
                "kernels",
                method="POST",
                body=json.dumps({"name": "python3"}),
                headers=as_user("alice"),
            )
        ).body
    )
    with pytest.raises(HTTPClientError) as refused:
        await jp_ws_fetch("api", "kernels", kernel["id"], "channels", headers=as_user("ta", "read"))
    assert refused.value.code == 403
    await jp_fetch("api", "kernels", kernel["id"], method="DELETE", headers=as_user("alice"))


async def test_editable_share_writes(jp_fetch, files):
    body = json.dumps({"type": "file", "format": "text", "content": "from the TA"})
    assert await status_of(
        jp_fetch,
        "api",
        "contents",
        "help.txt",
        method="PUT",
        body=body,
        headers=as_user("ta", "edit"),
    ) in (200, 201)
    assert (files / "help.txt").read_text() == "from the TA"


async def test_single_file_share_sees_that_file_only(jp_fetch, files):
    headers = as_user("ta", "read", scope="notes.ipynb")
    assert await status_of(jp_fetch, "api", "contents", "notes.ipynb", headers=headers) == 200
    assert await status_of(jp_fetch, "api", "contents", "secret.txt", headers=headers) == 403
    assert await status_of(jp_fetch, "api", "contents", headers=headers) == 403
    assert await status_of(jp_fetch, "api", "kernels", headers=headers) == 403
    assert await status_of(jp_fetch, "api", "terminals", headers=headers) == 403


# -- a teaching day: workspaces per visitor, the Submit dialog's preselection, GPUs --------


@pytest.fixture
def lab_config(jp_server_config):
    """The same server with JupyterLab's own routes (workspaces) loaded too."""
    jp_server_config["ServerApp"]["jpserver_extensions"]["jupyterlab"] = True
    return jp_server_config


def layout(space: str, tab: str) -> str:
    return json.dumps({"data": {"layout-restorer:data": {"main": tab}}, "metadata": {"id": space}})


async def workspace(jp_fetch, headers, space="default") -> dict:
    response = await jp_fetch("lab", "api", "workspaces", space, headers=headers)
    return json.loads(response.body)


async def save_workspace(jp_fetch, headers, tab: str, space="default") -> int:
    return await status_of(
        jp_fetch,
        "lab",
        "api",
        "workspaces",
        space,
        method="PUT",
        body=layout(space, tab),
        headers=headers,
    )


async def test_each_visitor_has_a_workspace_of_their_own(lab_config, jp_fetch, files):
    owner, ta, viewer = as_user("alice"), as_user("ta", "edit"), as_user("guest", "read")
    assert await save_workspace(jp_fetch, owner, "the owner's tabs") == 204
    # The editing TA starts from a layout of their own, not the owner's...
    mine = await workspace(jp_fetch, ta)
    assert mine["data"] == {} and mine["metadata"]["id"] == "/default"
    # ...and saving it leaves the owner's alone, and the other way round.
    assert await save_workspace(jp_fetch, ta, "the TA's tabs") == 204
    assert (await workspace(jp_fetch, owner))["data"]["layout-restorer:data"]["main"] == (
        "the owner's tabs"
    )
    assert (await workspace(jp_fetch, ta))["data"]["layout-restorer:data"]["main"] == (
        "the TA's tabs"
    )
    assert await save_workspace(jp_fetch, owner, "the owner's new tabs") == 204
    assert (await workspace(jp_fetch, ta))["data"]["layout-restorer:data"]["main"] == (
        "the TA's tabs"
    )
    # A read-only visitor reads neither and writes nothing.
    assert (await workspace(jp_fetch, viewer))["data"] == {}
    assert await save_workspace(jp_fetch, viewer, "a viewer's tabs") == 403
    # Listings: each sees their own under the names they use.
    listing = json.loads((await jp_fetch("lab", "api", "workspaces", headers=ta)).body)
    assert [i.strip("/") for i in listing["workspaces"]["ids"]] == ["default"]
    assert listing["workspaces"]["values"][0]["data"]["layout-restorer:data"]["main"] == (
        "the TA's tabs"
    )
    listing = json.loads((await jp_fetch("lab", "api", "workspaces", headers=owner)).body)
    assert [i.strip("/") for i in listing["workspaces"]["ids"]] == ["default"]
    assert listing["workspaces"]["values"][0]["data"]["layout-restorer:data"]["main"] == (
        "the owner's new tabs"
    )
    # A visitor cannot reach the owner's copy by naming it, nor save under another id.
    assert (await workspace(jp_fetch, ta, "cgu-visitor-ta--default"))["data"] == {}
    mismatch = await status_of(
        jp_fetch,
        "lab",
        "api",
        "workspaces",
        "default",
        method="PUT",
        body=layout("other", "x"),
        headers=ta,
    )
    assert mismatch == 400


async def test_file_stat_preselects_what_exists_with_sizes(jp_fetch, files):
    (files / "data").mkdir()
    (files / "data" / "iris.csv").write_text("a,b\n1,2\n")
    (files / "helper.py").write_text("X = 1\n")
    paths = ["data/iris.csv", "helper.py", "data", "missing.csv", "../etc/passwd", "/etc"]
    query = [("path", p) for p in paths]
    response = await jp_fetch("cgu-lab", "files", "stat", params=query, headers=as_user("alice"))
    entries = {e["path"]: e for e in json.loads(response.body)["entries"]}
    assert set(entries) == {"data/iris.csv", "helper.py", "data"}
    assert entries["data/iris.csv"]["size"] == 8 and entries["data/iris.csv"]["type"] == "file"
    assert entries["data"]["type"] == "directory" and entries["data"]["files"] == 1
    for visitor in (as_user("ta", "edit"), as_user("guest", "read")):
        try:
            await jp_fetch("cgu-lab", "files", "stat", params=query, headers=visitor)
        except HTTPClientError as error:
            assert error.code == 403
        else:
            raise AssertionError("a visitor listed the owner's files")


async def test_resources_show_the_allocated_mig_slice_without_nvml(jp_fetch, files, monkeypatch):
    """No NVIDIA driver here: the status bar must still say what the notebook was given."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-4b5c1d2e-0000-5f6a-8b9c-0123456789ab")
    monkeypatch.setenv("CGU_GPU_TYPE", "h200-1g")
    reading = json.loads((await jp_fetch("cgu-lab", "resources", headers=as_user("alice"))).body)
    gpus = reading["gpus"]
    assert gpus["allocated"] == {
        "gpu_type": "h200-1g",
        "count": 1,
        "devices": ["MIG-4b5c1d2e-0000-5f6a-8b9c-0123456789ab"],
        "mig": True,
    }
    assert not gpus["available"] and gpus["devices"] == []
    assert gpus["message"].startswith("1 GPU (h200-1g) allocated; no figures:")
    assert reading["requested"]["gpus"] == 1 and reading["requested"]["gpu_type"] == "h200-1g"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("CGU_GPU_TYPE", "")
    reading = json.loads((await jp_fetch("cgu-lab", "resources", headers=as_user("alice"))).body)
    assert reading["gpus"]["message"] == "no GPU on this notebook"


@pytest.fixture
def voila_config(jp_server_config):
    """The same server with Voilà's server extension on, as an environment may install it."""
    jp_server_config["ServerApp"]["jpserver_extensions"]["voila"] = True
    return jp_server_config


async def test_a_readonly_share_cannot_run_a_notebook_through_voila(voila_config, jp_fetch, files):
    """Voilà renders a notebook by running it, on a GET: read-only and single-file callers
    get 403 before a kernel starts; the owner's GET reaches Voilà."""
    for caller in (as_user("ta", "read"), as_user("ta", "read", scope="notes.ipynb")):
        assert await status_of(jp_fetch, "voila", "render", "notes.ipynb", headers=caller) == 403
    kernels = await jp_fetch("api", "kernels", headers=as_user("alice"))
    assert json.loads(kernels.body) == []
    owner = await status_of(jp_fetch, "voila", "render", "notes.ipynb", headers=as_user("alice"))
    assert owner == 200

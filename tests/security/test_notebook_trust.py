"""The attacks of issue 9, replayed by name against a server configured as the platform's.

- Trust is the owner's alone: a student signed a notebook in her own server (the notary's
  database and secret were in her writable home), put a `<script>` in an output, shared it
  read-only with an admin, and the admin saw it trusted.
- Read-only means read-only at the request level: read-only and single-file users wrote the
  owner's JupyterLab settings and workspaces (a planted shortcut runs code as the owner).
- A single-file share read other notebooks through `nbconvert/python/other.ipynb`.

The route walk (test_notebook_routes.py) checks the same rules on every route.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from .test_notebook_routes import (
    OTHER,
    ROLES,
    SHARED,
    SHARED_MARK,
    ensure_live,
    files,  # noqa: F401 - a fixture
    notebook,
    platform_config,
    send,
    try_websocket,
    undo_notebook_shim,  # noqa: F401 - an autouse fixture
    watched,
)


@pytest.fixture
def jp_server_config(tmp_path, jp_root_dir):
    config = platform_config(tmp_path)
    # What a student could write into the JSON config in her home: the notary's files there.
    config["NotebookNotary"] = {
        "db_file": str(jp_root_dir / "nbsignatures.db"),
        "data_dir": str(jp_root_dir),
        "secret_file": str(jp_root_dir / "notebook_secret"),
    }
    return config


async def cells_trusted(client, base_url: str, role: str) -> list[bool]:
    status, body = await send(client, f"{base_url}api/contents/{SHARED}", "GET", ROLES[role])
    assert status == 200, (role, status, body)
    cells = json.loads(body)["content"]["cells"]
    return [cell["metadata"].get("trusted") for cell in cells if cell["cell_type"] == "code"]


def sign_as_the_server(app, root) -> None:
    """A notebook the server's own notary signed (as trusting it in JupyterLab would)."""
    nb = nbformat.reads(notebook(SHARED_MARK), as_version=4)
    app.contents_manager.notary.sign(nb)
    (root / SHARED).write_text(nbformat.writes(nb))


async def test_only_the_owner_sees_a_signed_notebook_trusted(
    jp_serverapp,
    http_server_client,
    jp_base_url,
    files,  # noqa: F811
):
    sign_as_the_server(jp_serverapp, files)
    assert await cells_trusted(http_server_client, jp_base_url, "owner") == [True]
    for role in ("editor", "reader", "single"):
        assert await cells_trusted(http_server_client, jp_base_url, role) == [False], role
    # And a viewer's JupyterLab is told the file is read-only.
    status, body = await send(
        http_server_client, f"{jp_base_url}api/contents/{SHARED}", "GET", ROLES["reader"]
    )
    assert status == 200 and json.loads(body)["writable"] is False


@pytest.mark.parametrize(("role", "code"), [("editor", "owner_only"), ("reader", "owner_only")])
async def test_only_the_owner_may_trust(
    jp_serverapp,
    http_server_client,
    jp_base_url,
    files,  # noqa: F811
    role,
    code,
):
    url = f"{jp_base_url}api/contents/{SHARED}/trust"
    status, body = await send(http_server_client, url, "POST", ROLES[role], body="")
    assert status == 403 and json.loads(body)["code"] == code, body
    assert await cells_trusted(http_server_client, jp_base_url, "owner") == [False]
    status, _ = await send(http_server_client, url, "POST", ROLES["owner"], body="")
    assert status == 201
    assert await cells_trusted(http_server_client, jp_base_url, "owner") == [True]
    assert await cells_trusted(http_server_client, jp_base_url, role) == [False]


async def test_the_contents_manager_refuses_trust_to_anyone_but_the_owner(
    jp_serverapp,
    files,  # noqa: F811
):
    """Behind the request guard, the contents manager holds on its own."""
    from tornado.web import HTTPError

    from cgu_lab.notebook.caller import CURRENT_USER, PlatformUser

    token = CURRENT_USER.set(PlatformUser(username="ed", name="ed", access="edit"))
    try:
        with pytest.raises(HTTPError) as refused:
            await jp_serverapp.contents_manager.trust_notebook(SHARED)
        assert refused.value.status_code == 403
    finally:
        CURRENT_USER.reset(token)


async def test_an_editors_save_is_not_signed(
    jp_serverapp,
    http_server_client,
    jp_base_url,
    files,  # noqa: F811
):
    nb = json.loads(notebook(SHARED_MARK))
    for cell in nb["cells"]:
        cell["metadata"]["trusted"] = True  # as JupyterLab sends cells it ran itself
    body = json.dumps({"type": "notebook", "format": "json", "content": nb})
    url = f"{jp_base_url}api/contents/{SHARED}"
    status, _ = await send(http_server_client, url, "PUT", ROLES["editor"], body=body)
    assert status == 200
    assert await cells_trusted(http_server_client, jp_base_url, "owner") == [False]
    # The owner's own save of the same cells is signed, as in plain JupyterLab.
    status, _ = await send(http_server_client, url, "PUT", ROLES["owner"], body=body)
    assert status == 200
    assert await cells_trusted(http_server_client, jp_base_url, "owner") == [True]


async def test_the_notary_lives_in_memory_not_in_the_home(
    jp_serverapp,
    files,  # noqa: F811
    tmp_path,
):
    notary = jp_serverapp.contents_manager.notary
    assert notary.db_file == ":memory:"  # the home's config asked for a file there: ignored
    assert len(notary.secret) >= 32
    nb = nbformat.reads(notebook(SHARED_MARK), as_version=4)
    notary.sign(nb)
    assert notary.check_signature(nb)
    # No signature database and no secret file anywhere: home, data or config directories.
    assert not list(tmp_path.rglob("nbsignatures.db"))
    assert not list(tmp_path.rglob("notebook_secret"))


def test_config_in_the_home_cannot_move_the_notary(tmp_path):
    """Without a server: pytest-jupyter configures an in-memory notary of its own."""
    from traitlets.config import Config

    from cgu_lab.notebook.contents import ShareAwareContentsManager

    (tmp_path / "notebook_secret").write_bytes(b"the student's own secret")
    planted = Config(
        {
            "NotebookNotary": {
                "db_file": str(tmp_path / "nbsignatures.db"),
                "secret_file": str(tmp_path / "notebook_secret"),
            }
        }
    )
    manager = ShareAwareContentsManager(config=planted, root_dir=str(tmp_path))
    assert manager.notary.db_file == ":memory:"
    assert manager.notary.secret != b"the student's own secret"
    other = ShareAwareContentsManager(config=planted, root_dir=str(tmp_path))
    assert other.notary.secret != manager.notary.secret  # made at start, per server
    nb = nbformat.reads(notebook(SHARED_MARK), as_version=4)
    manager.notary.sign(nb)
    assert not other.notary.check_signature(nb)
    assert not (tmp_path / "nbsignatures.db").exists()


# -- read-only and single-file shares ----------------------------------------------------


async def _status(client, url, method="GET", headers=None, body=None) -> tuple[int, dict | None]:
    status, raw = await send(client, url, method, headers or {}, body)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


# A shortcut that would open a console on the owner's next keystroke.
PLANTED = {"command": "console:create", "keys": ["Accel A"], "selector": "body"}
SHORTCUT = json.dumps({"raw": json.dumps({"shortcuts": [PLANTED]})})


@pytest.mark.parametrize("role", ["reader", "single"])
async def test_read_only_cannot_plant_settings_or_workspaces(
    jp_serverapp,
    http_server_client,
    jp_base_url,
    files,  # noqa: F811
    tmp_path,
    role,
):
    settings = f"{jp_base_url}lab/api/settings/@jupyterlab/shortcuts-extension:shortcuts"
    status, reply = await _status(http_server_client, settings, "PUT", ROLES[role], SHORTCUT)
    assert status == 403 and reply["code"] == "read_only", reply
    assert "read-only" in reply["message"]
    workspace = json.dumps({"data": {"layout-restorer:data": {}}, "metadata": {"id": "default"}})
    for url in (f"{jp_base_url}lab/api/workspaces/default", f"{jp_base_url}lab/api/workspaces"):
        for method in ("PUT", "DELETE"):
            status, reply = await _status(http_server_client, url, method, ROLES[role], workspace)
            assert status == 403 and reply["code"] == "read_only", (url, method, reply)
    assert not any(p.is_file() for d in watched(files, tmp_path)[1:] for p in d.rglob("*"))
    # The owner still can: the refusal is the share's, not a broken route.
    status, _ = await _status(http_server_client, settings, "PUT", ROLES["owner"], SHORTCUT)
    assert status == 204


async def test_single_file_cannot_convert_or_read_another_notebook(
    jp_serverapp,
    http_server_client,
    jp_base_url,
    files,  # noqa: F811
):
    single = ROLES["single"]
    refused = (
        f"nbconvert/python/{OTHER} nbconvert/html/{OTHER} files/{OTHER} view/{OTHER} "
        f"api/contents/{OTHER} api/contents/{OTHER}/checkpoints lab/tree/{OTHER} "
        "lab/workspaces/default lab/api/workspaces/default api/contents api/sessions "
        "api/kernels api/terminals lsp/status "
        # Spellings of another path that must not pass for the shared one.
        f"api/contents/private/../{OTHER} api/contents/{SHARED}%2F..%2F{OTHER} files/./{OTHER}"
    )
    for path in refused.split():
        status, reply = await _status(http_server_client, f"{jp_base_url}{path}", headers=single)
        assert status in (403, 404), (path, status, reply)
    url = f"{jp_base_url}nbconvert/python/{SHARED}"
    status, converted = await send(http_server_client, url, "GET", single)
    assert status == 200 and SHARED_MARK.encode() in converted
    for path in (
        f"files/{SHARED}",
        f"view/{SHARED}",
        f"api/contents/{SHARED}",
        f"lab/tree/{SHARED}",
    ):
        status, _ = await _status(http_server_client, f"{jp_base_url}{path}", headers=single)
        assert status == 200, path


async def test_read_only_opens_no_websocket(
    jp_serverapp,
    http_server_client,
    jp_http_port,
    jp_base_url,
    files,  # noqa: F811
):
    live = await ensure_live(jp_serverapp)
    for path in (
        f"api/kernels/{live.kernel_id}/channels",
        f"terminals/websocket/{live.terminal}",
        "api/events/subscribe",
        "lsp/ws/pylsp",
    ):
        for role in ("reader", "single"):
            code = await try_websocket(jp_http_port, f"{jp_base_url}{path}", ROLES[role])
            assert code == 403, (path, role, code)
    await jp_serverapp.web_app.settings["terminal_manager"].terminate_all()

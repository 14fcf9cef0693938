"""VS Code (code-server) in a real jupyter_server with jupyter-server-proxy.

The owner and editors open it on the notebook's origin (jupyter-server-proxy
starts code-server on a unix socket on first use); read-only viewers and
strangers are refused before anything starts. code-server comes from
scripts/code-server.sh (`$CGU_CODE_SERVER`, else the venv's bin).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from .harness import extension_server_config
from .harness import proxy_headers as as_user

CODE_SERVER = os.environ.get("CGU_CODE_SERVER") or str(Path(sys.prefix) / "bin" / "code-server")

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        not os.access(CODE_SERVER, os.X_OK) and not shutil.which("code-server"),
        reason="code-server is not installed (scripts/code-server.sh)",
    ),
]


@pytest.fixture
def jp_server_config(monkeypatch):
    monkeypatch.setenv("CGU_CODE_SERVER", CODE_SERVER)
    config = extension_server_config(CguLabExtension={"apps": json.dumps(["vscode"])})
    config["ServerApp"]["jpserver_extensions"]["jupyter_server_proxy"] = True
    return config


async def test_an_editor_opens_vs_code(jp_fetch):
    listed = json.loads((await jp_fetch("cgu-lab", "apps", headers=as_user("bob", "edit"))).body)
    assert [a["name"] for a in listed["apps"]] == ["vscode"]
    editor = as_user("bob", "edit")
    # code-server starts, and opens the home as its folder.
    with pytest.raises(HTTPClientError) as redirected:
        await jp_fetch("vscode/", headers=editor, request_timeout=90, follow_redirects=False)
    assert redirected.value.code == 302
    location = redirected.value.response.headers["Location"]
    assert location.startswith("./?folder=")
    folder = location.split("=", 1)[1]
    page = await jp_fetch("vscode/", headers=editor, params={"folder": folder})
    assert page.code == 200
    assert b"vscode" in page.body.lower()


async def test_viewers_and_strangers_never_reach_it(jp_fetch):
    for headers, code in (
        (as_user("ta", "read"), "read_only"),
        (as_user("ta", "read", "a.ipynb"), "read_only"),
        (as_user("mallory", secret="guessed"), "unauthenticated"),
    ):
        with pytest.raises(HTTPClientError) as refused:
            await jp_fetch("vscode/", headers=headers)
        assert refused.value.code == 403
        assert json.loads(refused.value.response.body)["code"] == code
    listed = json.loads((await jp_fetch("cgu-lab", "apps", headers=as_user("ta", "read"))).body)
    assert listed["apps"] == []

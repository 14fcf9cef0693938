"""VS Code's launcher: what code-server's first start needs, then code-server itself."""

from __future__ import annotations

import json
from pathlib import Path

from cgu_lab.notebook.apps import vscode_session as session
from cgu_lab.notebook.apps.registry import Apps


def _program(tmp_path: Path) -> Path:
    program = tmp_path / "code-server"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    return program


def test_the_extensions_folder_gets_its_index_once(tmp_path):
    folder = tmp_path / "data" / "extensions"
    session.prepare_extensions(folder)
    assert json.loads((folder / "extensions.json").read_text()) == []
    (folder / "extensions.json").write_text('[{"identifier": {"id": "ms-python.python"}}]')
    session.prepare_extensions(folder)
    assert "ms-python" in (folder / "extensions.json").read_text()


def test_it_becomes_code_server_with_its_arguments(tmp_path, monkeypatch):
    program = _program(tmp_path)
    calls = []
    monkeypatch.setattr(session.os, "execv", lambda path, args: calls.append((path, args)))
    data = tmp_path / "home" / ".local" / "share" / "cgu-lab" / "code-server"
    home = str(tmp_path / "home")
    session.main(["vscode_session.py", str(program), str(data), home, "/run/x/vscode.sock"])
    [(path, args)] = calls
    assert path == str(program)
    assert args[args.index("--socket") + 1] == "/run/x/vscode.sock"
    assert args[args.index("--extensions-dir") + 1] == str(data / "extensions")
    assert args[args.index("--user-data-dir") + 1] == str(data / "data")
    assert args[-1] == home
    assert (data / "extensions" / "extensions.json").exists()


def test_the_proxy_entry_starts_the_launcher(tmp_path, monkeypatch):
    program = _program(tmp_path)
    monkeypatch.setenv("CGU_CODE_SERVER", str(program))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    apps = Apps.create('["vscode"]')
    try:
        entry = apps.servers()["vscode"]
        assert entry["command"][1:3] == ["-m", "cgu_lab.notebook.apps.vscode_session"]
        assert entry["command"][3] == str(program)
        assert entry["command"][-1] == "{unix_socket}"
        assert entry["new_browser_tab"] is True
    finally:
        apps.close()

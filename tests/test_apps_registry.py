"""What an environment may declare as apps (core/apps.py), and the proxy entries made of it."""

from __future__ import annotations

import json
import sys
import tempfile

import pytest

from cgu_lab.core import apps as rules
from cgu_lab.core.errors import Invalid
from cgu_lab.notebook.apps import registry

WEB_APP = {"name": "rstudio", "title": "RStudio", "command": ["rserver", "--www-port={port}"]}


def test_built_ins_by_name_and_a_declared_app():
    apps = rules.check_apps(["desktop", {"name": "vscode", "title": "Code"}, WEB_APP])
    assert apps == [
        {"name": "desktop", "title": "Linux desktop"},
        {"name": "vscode", "title": "Code"},
        {**WEB_APP, "port": None, "icon": ""},
    ]
    assert rules.check_apps(None) is None
    assert rules.check_apps([]) == []


@pytest.mark.parametrize(
    "entry, words",
    [
        ({"name": "Bad Name", "command": ["x"]}, "lowercase"),
        ({"name": "lab", "command": ["x"]}, "taken by the notebook server"),
        ({"name": "tool"}, "needs a command"),
        ({"name": "tool", "command": "rserver --port 1"}, "needs a command"),
        ({"name": "tool", "command": ["x", "{home}"]}, "only {port}"),
        ({"name": "tool", "command": ["x", "{port"]}, "unbalanced"),
        ({"name": "tool", "command": ["x"], "port": 80}, "1024-65535"),
        ({"name": "tool", "command": ["x"], "port": True}, "1024-65535"),
        ({"name": "tool", "command": ["x"], "icon": "<svg onload='x()'></svg>"}, "event handlers"),
        ({"name": "tool", "command": ["x"], "icon": "<img src=x>"}, "<svg>"),
        ({"name": "tool", "command": ["x"], "shell": True}, "unknown field 'shell'"),
        ({"name": "desktop", "command": ["x"]}, "built in"),
        ({"name": "tool", "command": ["x"], "title": " "}, "title"),
    ],
)
def test_refusals_say_what_to_fix(entry, words):
    with pytest.raises(Invalid, match=words.replace("{", r"\{").replace("(", r"\(")):
        rules.check_app(entry)


def test_a_name_listed_twice_is_refused():
    with pytest.raises(Invalid, match="listed twice"):
        rules.check_apps(["desktop", {"name": "desktop"}])


def test_without_a_runtime_folder_the_shared_one_names_the_installation(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("CGU_LAB_INSTANCE", "inst-42")
    apps = registry.Apps.create("[]")
    try:
        assert apps.folder.parent == tmp_path
        assert apps.folder.name.startswith("cgu-lab-inst42-apps-")
    finally:
        apps.close()
    assert not apps.folder.exists()


def test_proxy_entries(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("CGU_LAB_INSTANCE", "inst-42")
    apps = registry.Apps.create(json.dumps(["desktop", {**WEB_APP, "port": 8787}]))
    try:
        assert apps.folder.parent == tmp_path
        assert apps.folder.name.startswith("apps-")
        assert apps.folder.stat().st_mode & 0o777 == 0o700
        servers = apps.servers()
        desktop = servers["desktop"]
        assert desktop["raw_socket_proxy"] is True
        assert desktop["unix_socket"] == str(apps.folder / "desktop.sock")
        assert desktop["command"][:3] == [
            sys.executable,
            "-m",
            "cgu_lab.notebook.apps.desktop_session",
        ]
        assert servers["rstudio"]["port"] == 8787
        for server in servers.values():
            assert server["launcher_entry"] == {"enabled": False}
            assert server["request_headers_override"] == {"X-Cgu-Proxy-Secret": ""}
    finally:
        apps.close()
    assert not apps.folder.exists()


def test_a_built_in_missing_here_is_not_offered(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # neither Xvnc nor code-server
    monkeypatch.delenv(registry.ENV_CODE_SERVER, raising=False)
    apps = registry.Apps.create("")
    try:
        assert apps.offered == []
        assert set(apps.missing) == {"desktop", "vscode"}
    finally:
        apps.close()


def test_a_broken_list_is_an_error_with_words():
    with pytest.raises(Invalid, match="app list is not valid"):
        registry.parse_declared("[{")


# -- the folder of X sockets: root's, sticky, or the desktop does not start --------------


def test_a_desktop_refuses_a_folder_of_x_sockets_another_user_owns(tmp_path):
    import os

    from cgu_lab.notebook.apps.desktop_session import UnsafeX11Dir, check_x11_dir

    folder = tmp_path / ".X11-unix"
    check_x11_dir(folder)  # missing: Xvnc makes it (a host of one account)
    folder.mkdir()
    os.chmod(folder, 0o1777)  # noqa: S103 - the mode X sockets need
    check_x11_dir(folder)  # ours (or root's) and sticky
    os.chmod(folder, 0o777)  # noqa: S103 - the unsafe mode under test
    with pytest.raises(UnsafeX11Dir, match="not 1777"):
        check_x11_dir(folder)
    if os.geteuid() != 0:
        pytest.skip("giving the folder to another user needs root")
    os.chmod(folder, 0o1777)  # noqa: S103 - the mode X sockets need
    os.chown(folder, 65534, 65534)  # the first student's desktop made it
    with pytest.raises(UnsafeX11Dir, match="another account") as refused:
        check_x11_dir(folder)
    assert "did not start" in str(refused.value)
    folder.rmdir()
    folder.symlink_to(tmp_path)
    with pytest.raises(UnsafeX11Dir, match="not a folder"):
        check_x11_dir(folder)


def test_the_desktop_session_says_why_it_did_not_start(monkeypatch, capsys, tmp_path):
    import os

    from cgu_lab.notebook.apps import desktop_session

    if os.geteuid() != 0:
        pytest.skip("giving the folder to another user needs root")
    folder = tmp_path / ".X11-unix"
    folder.mkdir(mode=0o1777)
    os.chown(folder, 65534, 65534)
    monkeypatch.setattr(desktop_session, "X11_DIR", str(folder))
    assert desktop_session.main(["desktop_session", str(tmp_path / "vnc.sock")]) == 1
    assert "the desktop did not start" in capsys.readouterr().err
    assert not (tmp_path / "vnc.sock").exists()


def test_course_apps_are_built_ins_and_the_default_stays_desktop_and_vs_code(monkeypatch):
    apps = rules.check_apps(["postgres", "browser", "rstudio"])
    assert [a["title"] for a in apps] == ["PostgreSQL", "Web browser", "RStudio"]
    assert [a["name"] for a in rules.default_apps()] == ["desktop", "vscode"]
    with pytest.raises(Invalid, match="is built in"):
        rules.check_app({"name": "postgres", "command": ["postgres"]})
    # RStudio without rserver and jupyter-rsession-proxy: declared, not offered, and why.
    monkeypatch.setattr(registry, "rsession_proxy", lambda: None)
    created = registry.Apps.create(json.dumps(["rstudio"]))
    try:
        assert (
            created.offered == []
            and "RStudio Server is not installed" in (created.missing["rstudio"])
        )
    finally:
        created.close()


def test_the_database_recipe_declares_its_apps_and_debian_packages():
    from cgu_lab.core import environments

    database = environments.recipe("database")
    assert database.main_packages == ("jupysql", "psycopg")
    assert database.apps == ("desktop", "vscode", "postgres", "browser")
    assert database.system_packages == ("postgresql", "postgresql-client")
    r = environments.recipe("r")
    assert r.packages == () and r.system_packages == ("r-base-core", "r-cran-irkernel")
    assert environments.RECIPE_KERNELS["r"]["ir"]["language"] == "R"
    assert environments.recipe_from_record(database.as_record()) == database

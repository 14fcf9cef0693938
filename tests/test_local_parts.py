"""Pure parts of the local backend: account names, CPU choice, host-wide names, redirects."""

import pytest

from cgu_lab.backends.local_accounts import MAX_UNIX_NAME, unix_name
from cgu_lab.backends.local_limits import pick_cpus
from cgu_lab.controller.proxy.replies import origin_matches, parse_path, without_platform_cookies
from cgu_lab.core.errors import Invalid


def test_unix_names_are_valid_and_distinct():
    assert unix_name("alice") == "cgu-alice"
    long_a, long_b = unix_name("a" * 60), unix_name("a" * 59 + "b")
    assert long_a != long_b and len(long_a) <= MAX_UNIX_NAME and len(long_b) <= MAX_UNIX_NAME
    assert unix_name("j.doe") != unix_name("j-doe")
    assert all(c.isalnum() or c in "-_" for c in unix_name("j.doe"))


def test_pick_cpus_prefers_idle_cores():
    assert pick_cpus(1000, [], available=[0, 1, 2, 3]) == [0]
    assert pick_cpus(1500, [0, 0, 1], available=[0, 1, 2, 3]) == [2, 3]
    assert pick_cpus(64000, [], available=[0, 1]) == [0, 1]
    assert pick_cpus(100, [0], available=[0, 1]) == [1]


def test_proxy_path_parsing():
    assert parse_path("/notebook/alice/nb1/lab") == ("alice", "nb1", "/lab")
    assert parse_path("/notebook/alice/nb1") == ("alice", "nb1", "")
    assert parse_path("/notebook/alice") is None
    assert parse_path("/api/x") is None


def test_platform_cookies_are_taken_out():
    header = "_xsrf=abc; cgu-lab-session-1a2b=S; __Host-cgu-lab-session-1a=T; theme=dark"
    assert without_platform_cookies(header) == "_xsrf=abc; theme=dark"
    assert without_platform_cookies("cgu-nb-3=X") == ""
    assert without_platform_cookies("") == ""


def test_origin_check():
    assert origin_matches("", "lab.example.edu")
    assert origin_matches("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert origin_matches("https://lab.example.edu", "lab.example.edu")
    assert not origin_matches("https://evil.example", "lab.example.edu")
    assert not origin_matches("null", "lab.example.edu")


# -- host-wide names carry the installation -------------------------------------


def test_cgroups_of_two_installations_never_share_a_name(tmp_path):
    from cgu_lab.backends.local_limits import Limiter

    for hierarchy in ("cpu", "memory"):
        (tmp_path / hierarchy).mkdir()
    first = Limiter(root=tmp_path, tag="aaaa1111")
    second = Limiter(root=tmp_path, tag="bbbb2222")
    assert first.mode == second.mode == "cgroup1"
    first.prepare(1, 500, 512 * 2**20, [])
    second.prepare(1, 1000, 768 * 2**20, [])
    assert first.dirs(1) == [
        tmp_path / "cpu" / "cgu-lab" / "aaaa1111" / "nb-1",
        tmp_path / "memory" / "cgu-lab" / "aaaa1111" / "nb-1",
    ]
    memory = first.dirs(1)[1] / "memory.limit_in_bytes"
    assert memory.read_text() == str(512 * 2**20)
    (first.dirs(1)[1] / "cgroup.procs").write_text("4242\n")
    assert first.members(1) == {4242} and second.members(1) == set()
    assert first.notebooks() == {1} and first.members(2) == set()


def test_cgroup_v2_parents_hand_cpu_and_memory_down(tmp_path):
    from cgu_lab.backends.local_limits import Limiter

    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    limiter = Limiter(root=tmp_path, tag="aaaa1111")
    assert limiter.mode == "cgroup2"
    plan = limiter.prepare(7, 1500, 2**30, [])
    parent = tmp_path / "cgu-lab" / "aaaa1111"
    assert plan["cgroups"] == [str(parent / "nb-7")]
    assert (parent / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert (parent / "nb-7" / "cpu.max").read_text() == "150000 100000"
    assert (parent / "nb-7" / "memory.max").read_text() == str(2**30)
    assert (parent / "nb-7" / "pids.max").read_text() == "1024"  # the setting's default


def test_installation_tags_are_plain_names(tmp_path):
    from cgu_lab.backends.local_limits import check_tag, instance_id

    assert check_tag("0123abcd") == "0123abcd"
    for bad in ("", "../x", "a/b", ".", "a b", "x" * 65):
        with pytest.raises(ValueError):
            check_tag(bad)
    made = instance_id(tmp_path / "instance-id")
    assert len(made) == 32 and instance_id(tmp_path / "instance-id") == made
    (tmp_path / "bad-id").write_text("../../escape")
    with pytest.raises(ValueError, match="not a plain name"):
        instance_id(tmp_path / "bad-id")


def test_membership_is_read_from_the_kernel_for_this_installation_only():
    from cgu_lab.backends.local_limits import in_cgroup

    text = "9:name=systemd:/\n4:memory:/cgu-lab/aaaa1111/nb-1\n1:cpu:/cgu-lab/aaaa1111/nb-1\n"
    assert in_cgroup(text, "aaaa1111", 1)
    assert not in_cgroup(text, "bbbb2222", 1)
    assert not in_cgroup(text, "aaaa1111", 12)
    assert not in_cgroup("4:memory:/cgu-lab/aaaa1111/nb-12\n", "aaaa1111", 1)
    assert not in_cgroup("4:memory:/cgu-lab/nb-1\n", "aaaa1111", 1)  # the old shared layout
    assert in_cgroup("0::/cgu-lab/aaaa1111/nb-3\n", "aaaa1111", 3)  # cgroup v2


def test_path_parts_and_names_beside():
    from cgu_lab.core.paths import beside_name, components

    assert components("hw/./a//b.txt") == ["hw", "a", "b.txt"] and components("") == []
    with pytest.raises(Invalid):
        components("hw/../../etc")
    assert beside_name("notes.txt", "from t") == "notes (from t).txt"
    assert beside_name("notes.txt", "from t", 3) == "notes (from t 3).txt"
    assert beside_name(".bashrc", "x") == ".bashrc (x)"
    assert beside_name("Makefile", "x") == "Makefile (x)"


# -- where the auto-start page may send the browser -----------------------------

LAB = "/notebook/alice/lab/lab"
PREFIX = "/notebook/alice/lab/"


@pytest.mark.parametrize(
    "target",
    [
        "/notebook/alice/lab/../../../api/me",
        "/notebook/alice/lab/%2e%2e/%2e%2e/%2e%2e/api/me",
        "/notebook/alice/lab/%2E%2E/%2E%2E/%2E%2E/api/me",
        "/notebook/alice/lab/.%2e/.%2e/.%2e/api/me",
        "/notebook/alice/lab/%252e%252e/%252e%252e/%252e%252e/api/me",
        "/notebook/alice/lab/lab%2f..%2f..%2f..%2f..%2fapi%2fme",
        "/notebook/alice/lab/..\\..\\..\\api/me",
        "/notebook/alice/lab/lab/./../../../../api/me",
        "/notebook/alice/lab/lab/%2e/x",
        "/notebook/alice/lab/%0d%0aSet-Cookie:x",
        "/notebook/alice/lab\\..\\..\\bob",
        "//evil.example/notebook/alice/lab/",
        "///evil.example/notebook/alice/lab/",
        "/\\evil.example/notebook/alice/lab/",
        "/%2f/evil.example/notebook/alice/lab/",
        "/%5cevil.example",
        "https://evil.example/notebook/alice/lab/",
        "/notebook/alice/lab",  # not below the prefix
        "/notebook/alice/lab2/lab",
        "/notebook/bob/lab/lab",
        "/api/me",
        "",
        None,
    ],
)
def test_auto_start_next_stays_inside_its_notebook(target):
    from cgu_lab.core.redirects import safe_next_within

    assert safe_next_within(target, PREFIX, LAB) == LAB


@pytest.mark.parametrize(
    "target",
    [
        "/notebook/alice/lab/lab",
        "/notebook/alice/lab/lab/tree/hw1/task.ipynb",
        "/notebook/alice/lab/lab/tree/my%20notes..txt",
        "/notebook/alice/lab/lab?reset&path=../x",
        "/notebook/alice/lab/lab/workspaces/auto-x#frag",
    ],
)
def test_auto_start_next_keeps_pages_of_its_notebook(target):
    from cgu_lab.core.redirects import safe_next, safe_next_within

    assert safe_next_within(target, PREFIX, LAB) == target
    assert safe_next(target) == target


def test_login_next_refuses_dot_segments_too():
    from cgu_lab.core.redirects import safe_next

    assert safe_next("/notebooks/../api/me") == "/notebooks"
    assert safe_next("/admin/%2e%2e/api") == "/notebooks"
    assert safe_next("/account?next=/x") == "/account?next=/x"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/notebooks", "/notebooks"),
        ("/notebook/a/b/lab?x=1", "/notebook/a/b/lab?x=1"),
        ("//evil.com", "/notebooks"),
        ("///evil.com", "/notebooks"),
        ("/\\evil.com", "/notebooks"),
        ("/a\\b", "/notebooks"),
        ("/a%5cb", "/notebooks"),
        ("https://evil.com/", "/notebooks"),
        ("javascript:alert(1)", "/notebooks"),
        ("/a\r\nSet-Cookie: x", "/notebooks"),
        ("/a%0d%0aSet-Cookie: x", "/notebooks"),
        ("/%25252e%25252e/x", "/notebooks"),  # still escaping after three decodings
        ("", "/notebooks"),
        (None, "/notebooks"),
    ],
)
def test_safe_next_keeps_its_earlier_refusals(target, expected):
    from cgu_lab.core.redirects import safe_next

    assert safe_next(target) == expected


# -- a notebook's tasks: a pids cgroup, as its memory and CPU -------------------------


BOMB = """
import os, time
forked = 0
try:
    for _ in range(300):
        if os.fork() == 0:
            os.closerange(0, 3)  # the test reads the parent's output to its end only
            time.sleep(30)
            os._exit(0)
        forked += 1
except OSError as error:
    print("REFUSED", type(error).__name__)
print("FORKED", forked, flush=True)
"""


def test_a_fork_bomb_in_a_notebook_stays_under_its_pids_limit():
    """The notebook's launcher (local_launch, as a start runs it) joins the cgroups the
    limiter made; a fork bomb in there gets no more than the notebook's task limit."""
    import json
    import os
    import subprocess
    import sys
    import uuid

    from cgu_lab.backends.local_limits import Limiter

    limiter = Limiter(tag=uuid.uuid4().hex, pids=40)
    if "pids" not in limiter.controllers:
        pytest.skip("no writable pids cgroup here (needs root)")
    assert "pids.max: 40 processes and threads per notebook" in limiter.describe().processes
    plan = limiter.prepare(1, 1000, 512 * 2**20, [])
    try:
        launch = {"argv": [sys.executable, "-c", BOMB], "env": {}, "cwd": "/", **plan}
        done = subprocess.run(
            [sys.executable, "-m", "cgu_lab.backends.local_launch"],
            env={**os.environ, "CGU_LAUNCH_PLAN": json.dumps(launch)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "REFUSED BlockingIOError" in done.stdout, done.stderr
        assert 0 < int(done.stdout.split("FORKED ")[1]) < 40
        assert len(limiter.members(1)) >= 30  # its sleepers, still in the notebook's cgroup
    finally:
        assert limiter.kill("nb-1")
        limiter.drop("nb-1", wait=5)
    assert not any(directory.exists() for directory in limiter.dirs(1))


def test_the_pids_limit_is_an_admin_setting_with_a_floor(monkeypatch):
    from pydantic import ValidationError

    from cgu_lab.controller.settings import Settings

    assert Settings().notebook_pids == 1024
    monkeypatch.setenv("CGU_LAB_NOTEBOOK_PIDS", "4096")
    assert Settings().notebook_pids == 4096
    monkeypatch.setenv("CGU_LAB_NOTEBOOK_PIDS", "8")
    with pytest.raises(ValidationError, match="notebook_pids"):
        Settings()


def test_the_local_backend_settings_are_typed_with_their_old_names_and_defaults(monkeypatch):
    """LocalSettings replaced reads with `getattr` and a default: the same CGU_LAB_<NAME>
    variables, the same defaults, and the controller's Settings carries them unchanged."""
    from pydantic import ValidationError

    from cgu_lab.backends.local_settings import LocalSettings
    from cgu_lab.controller.settings import Settings

    defaults = {
        "run_as": "auto",
        "use_cgroups": True,
        "notebook_pids": 1024,
        "start_timeout": 90,
        "stop_timeout": 30,  # raised since: more than a database's clean shutdown needs
        "parallel_starts": 0,
        "vm_shutdown_timeout": 30,
        "vm_accelerator": "auto",
        "training_network": "private",
        "notebook_network": "private",
    }
    for settings in (LocalSettings(), Settings()):
        assert {name: getattr(settings, name) for name in defaults} == defaults
    assert set(LocalSettings.model_fields) <= set(Settings.model_fields)
    assert all(field.description for field in LocalSettings.model_fields.values())
    monkeypatch.setenv("CGU_LAB_PARALLEL_STARTS", "3")
    monkeypatch.setenv("CGU_LAB_VM_SHUTDOWN_TIMEOUT", "5.5")
    monkeypatch.setenv("CGU_LAB_NOTEBOOK_NETWORK", "host")
    for settings in (LocalSettings(), Settings()):
        assert (settings.parallel_starts, settings.vm_shutdown_timeout) == (3, 5.5)
        assert settings.notebook_network == "host"
    monkeypatch.setenv("CGU_LAB_VM_ACCELERATOR", "kvn")
    with pytest.raises(ValidationError, match="vm_accelerator"):
        LocalSettings()


def test_a_training_job_gets_the_task_limit_per_rank(tmp_path):
    from cgu_lab.backends.local_limits import Limiter
    from cgu_lab.backends.local_training import LocalTraining

    for hierarchy in ("cpu", "memory", "pids"):
        (tmp_path / hierarchy).mkdir()
    limiter = Limiter(root=tmp_path, tag="aaaa1111", pids=100)
    training = LocalTraining(tmp_path / "training", None, limiter, lambda: "aaaa1111")
    plan = training._limits("k1", 2000, 2**30, 2**29, replicas=2)
    cpu, memory, pids = training.cgroups("k1")
    assert plan["cgroup_procs"] == [str(d / "cgroup.procs") for d in (cpu, memory, pids)]
    assert (pids / "pids.max").read_text() == "200"
    assert (memory / "memory.limit_in_bytes").read_text() == str(2**30)


# -- /tmp/.X11-unix is the platform's, before any desktop starts ---------------------


def test_the_platform_makes_the_folder_of_x_sockets_root_s_and_sticky(tmp_path, caplog):
    import logging
    import os
    import stat

    from cgu_lab.backends.local_host import prepare_x11_dir

    if os.geteuid() != 0:
        pytest.skip("the platform makes it root's only when it runs as root")
    folder = tmp_path / ".X11-unix"
    assert prepare_x11_dir(folder) is None
    info = folder.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, 0, 0o1777)
    # The first student's desktop made it (before this fix): it is given back, and said.
    os.chown(folder, 65534, 65534)
    os.chmod(folder, 0o755)  # noqa: S103 - not sticky: the state it must fix
    with caplog.at_level(logging.WARNING, logger="cgu_lab.local"):
        assert prepare_x11_dir(folder) is None
    assert "fixed" in caplog.text and "mode 0o755" in caplog.text
    info = folder.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o1777)
    # A link planted there is never followed: refused, and said.
    folder.rmdir()
    target = tmp_path / "elsewhere"
    target.mkdir(mode=0o700)
    folder.symlink_to(target)
    with caplog.at_level(logging.ERROR, logger="cgu_lab.local"):
        assert "not a folder" in prepare_x11_dir(folder)
    assert "desktops cannot start safely" in caplog.text
    assert stat.S_IMODE(target.stat().st_mode) == 0o700 and folder.is_symlink()


def test_the_local_backend_prepares_the_folder_of_x_sockets_when_it_opens(tmp_path):
    import asyncio
    import os
    import stat
    from pathlib import Path

    from cgu_lab.backends.local import LocalBackend
    from cgu_lab.backends.local_settings import LocalSettings

    if os.geteuid() != 0:
        pytest.skip("the platform makes it root's only when it runs as root")
    folder = Path("/tmp/.X11-unix")
    settings = LocalSettings(data_dir=tmp_path / "data", use_cgroups=False, run_as="self")
    backend = LocalBackend(settings)
    asyncio.run(backend.open())
    asyncio.run(backend.close())
    info = folder.stat()
    assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (0, 0o1777)


def test_course_folders_of_an_older_installation_move_and_homes_still_find_them(tmp_path):
    """Installations made before the rename kept course folders in `coursework/`: the
    backend's start moves them and re-points every home's absolute `courses` link, so
    lab files already deployed stay where students find them; links it did not make stay."""
    import asyncio
    import os

    from cgu_lab.backends.local import LocalBackend
    from cgu_lab.backends.local_settings import LocalSettings

    data = tmp_path / "data"
    old = data / "coursework"
    (old / "alice" / "cs").mkdir(parents=True)
    (old / "alice" / "cs" / "task.txt").write_text("solve x")
    home = data / "homes" / "alice" / "lab"
    home.mkdir(parents=True)
    (home / "courses").symlink_to(old / "alice", target_is_directory=True)
    elsewhere = data / "homes" / "bob" / "lab"
    elsewhere.mkdir(parents=True)
    (elsewhere / "courses").symlink_to(tmp_path, target_is_directory=True)  # bob's own link
    settings = LocalSettings(data_dir=data, use_cgroups=False, run_as="self")
    backend = LocalBackend(settings)
    asyncio.run(backend.open())
    asyncio.run(backend.close())
    assert not old.exists()
    assert os.readlink(home / "courses") == str(data / "course-folders" / "alice")
    assert (home / "courses" / "cs" / "task.txt").read_text() == "solve x"
    assert os.readlink(elsewhere / "courses") == str(tmp_path)
    assert not (home / ".courses-moving").exists()

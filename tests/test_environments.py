"""Environments: recipe rules, and real builds on the local backend.

The rules (core/environments.py) are tested without I/O. The integration
tests drive a real controller: an admin builds a tiny environment (two small
wheels from PyPI, with the pip cache shared in .build/pip-cache) through the
API while the progress stream is read, then a real JupyterLab runs in it and
its kernel imports the packages, which come from the environment before the
platform's (six 1.16 over the platform's newer six). Refusals: package
requests that would inject pip options, URLs or paths; non-admins; notebooks
in environments that are building, failed, or have only an image (on the local
backend); deleting or rebuilding an environment that notebooks use.

The full "Data science" recipe is built only with CGU_TEST_DATA_SCIENCE=1
(minutes and ~400 MB of downloads without a warm cache).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from cgu_lab.core import environments as rules
from cgu_lab.core.errors import Invalid

from .harness import run_code, running_controller

PIP_CACHE = Path(__file__).resolve().parent.parent / ".build" / "pip-cache"
SMALL = {"cpu": "0.5", "memory": "512Mi"}

# -- rules, without I/O -------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("numpy", "numpy"),
        ("  numpy  ", "numpy"),
        ("Scikit_Learn>=1.5", "scikit-learn"),
        ("pandas[performance, excel]==2.2.*", "pandas"),
        ("torch >= 2.4, < 3", "torch"),
        ("tensorflow[and-cuda]", "tensorflow"),
        ("six===1.16.0", "six"),
    ],
)
def test_plain_requirements_are_accepted(text, expected):
    requirement = rules.parse_requirement(text)
    assert requirement.name == expected
    assert " " not in requirement.text


@pytest.mark.parametrize(
    "text, says",
    [
        ("--index-url https://evil.example/simple", "pip option"),
        ("-r /etc/passwd", "pip option"),
        ("-e .", "pip option"),
        ("--extra-index-url=https://evil.example", "pip option"),
        ("evil @ https://evil.example/evil.whl", "URL"),
        ("https://evil.example/evil.whl", "URL"),
        ("git+ssh://git@example.com/x.git", "URL"),
        ("./local.whl", "path"),
        ("/tmp/evil.whl", "path"),
        ("numpy; python_version < '3'", "marker"),
        ("numpy --index-url https://evil.example", "pip option"),
        ("numpy==1.0 -i https://evil.example", "pip option"),
        ("numpy\n--index-url x", "pip option"),
        ("numpy==1.0|rm", "not a package request"),
        ("numpy==1.0 extra", "not a package request"),
        ("", "empty"),
        ("jupyterlab==3.0", "provided by the platform"),
        ("cgu_lab", "provided by the platform"),
        ("x" * 201, "at most"),
    ],
)
def test_anything_but_a_plain_requirement_is_refused(text, says):
    with pytest.raises(Invalid) as refused:
        rules.parse_requirement(text)
    assert says in refused.value.message


def test_recipes_name_their_packages_and_indexes():
    science = rules.recipe("data-science")
    assert science.main_packages == ("numpy", "pandas", "scikit-learn", "matplotlib", "scipy")
    assert science.index_url == ""
    assert rules.recipe("pytorch", "cpu").index_url == "https://download.pytorch.org/whl/cpu"
    assert rules.recipe("pytorch", "cuda").index_url == ""
    assert rules.recipe("tensorflow", "cpu").main_packages == ("tensorflow-cpu",)
    assert rules.recipe("tensorflow", "cuda").packages[0].text == "tensorflow[and-cuda]"
    assert rules.default_name("pytorch") == "pytorch"
    custom = rules.recipe("custom", extra=["six==1.16.0", "termcolor"])
    assert custom.main_packages == ("six", "termcolor")
    # What is stored builds the same recipe again.
    extra = rules.recipe("data-science", extra=["seaborn"])
    assert rules.recipe_from_record(extra.as_record()) == extra
    assert rules.recipe_from_record(custom.as_record()) == custom


@pytest.mark.parametrize(
    "kind, variant, extra, says",
    [
        ("conda", "cpu", [], "no recipe"),
        ("pytorch", "rocm", [], "'cpu' or 'cuda'"),
        ("custom", "cpu", [], "at least one package"),
        ("data-science", "cpu", ["numpy==2.0"], "already has numpy"),
        ("custom", "cpu", ["six", "Six"], "listed twice"),
        ("custom", "cpu", ["six"] * 51, "at most 50"),
    ],
)
def test_bad_recipes_are_refused(kind, variant, extra, says):
    with pytest.raises(Invalid) as refused:
        rules.recipe(kind, variant, extra)
    assert says in refused.value.message


def test_progress_and_log_tail():
    percents = [rules.build_percent(n) for n in range(60)]
    assert percents[0] == 10 and percents == sorted(percents) and percents[-1] <= 85
    assert rules.tail(["a", "", "b" * 500, "c"], count=2, width=10) == "b" * 10 + "\nc"
    marked = rules.main_versions(
        [{"name": "zz", "version": "1"}, {"name": "Scikit_Learn", "version": "2"}],
        ["scikit-learn"],
    )
    assert [(p["name"], p["main"]) for p in marked] == [("Scikit_Learn", True), ("zz", False)]


# -- a real controller --------------------------------------------------------------


@pytest.fixture(scope="module")
def controller():
    """A controller whose builds share the repository's pip cache."""
    PIP_CACHE.mkdir(parents=True, exist_ok=True)
    users = [("root-admin", "admin"), ("alice", "student")]
    with running_controller(users, env={"CGU_LAB_PIP_CACHE": str(PIP_CACHE)}) as ctl:
        yield ctl


@pytest.fixture(scope="module")
def site(controller):
    """The clients (`admin`, `alice`) talk to that controller process: builds run pip and
    notebooks run JupyterLab, which an app in the test's process leaves out."""
    return controller


def events(session, name: str, timeout: float = 600) -> list[dict]:
    """Every event of the environment's build stream, until the last one."""
    found = []
    with session.stream("GET", f"/api/environments/{name}/events", timeout=timeout) as stream:
        assert stream.status_code == 200, stream.read()
        for line in stream.iter_lines():
            if line.startswith("data: "):
                found.append(json.loads(line[6:]))
                if found[-1]["done"]:
                    break
    return found


def refused(response, status: int, code: str, *words: str) -> dict:
    body = response.json()
    assert response.status_code == status, (response.status_code, body)
    assert body["code"] == code and all(w in body["message"] for w in words), body
    return body


@pytest.fixture(scope="module")
def tiny(controller, admin, alice):
    """The environment 'tiny' (termcolor, six 1.16), built through the API; its events."""
    started = time.monotonic()
    answer = admin.ok(
        "POST",
        "/api/environments",
        202,
        json={"recipe": "custom", "name": "tiny", "packages": ["termcolor", "six==1.16.0"]},
    )
    assert answer["state"] == "building" and answer["local_prefix"] == ""
    # While it builds: no notebook can use it, and no second build starts.
    refused(
        alice.post("/api/notebooks", json={"name": "early", "environment": "tiny", **SMALL}),
        409,
        "conflict",
        "being built",
    )
    refused(
        admin.post(
            "/api/environments", json={"recipe": "custom", "packages": ["six"], "name": "x"}
        ),
        409,
        "conflict",
        "one build runs at a time",
    )
    stream = events(admin, "tiny")
    print(f"tiny environment built in {time.monotonic() - started:.1f} s")
    return stream


@pytest.mark.integration
@pytest.mark.end_to_end
def test_a_build_streams_pip_progress_and_records_the_packages(controller, admin, tiny):
    messages = [e["message"] for e in tiny]
    assert any(m.startswith("Collecting termcolor") for m in messages), messages
    assert any(m.startswith("Successfully installed") for m in messages), messages
    percents = [e["percent"] for e in tiny]
    assert percents == sorted(percents) and len(tiny) >= 8
    assert tiny[-1]["done"] and tiny[-1]["ok"] and tiny[-1]["state"] == "ready", tiny[-1]
    env = admin.ok("GET", "/api/environments/tiny")
    assert env["state"] == "ready" and env["built_at"] and env["size"] > 0
    assert env["recipe"] == {
        "kind": "custom",
        "variant": "cpu",
        "packages": ["termcolor", "six==1.16.0"],
    }
    versions = {p["name"].lower(): p for p in env["packages"]}
    assert versions["six"]["version"] == "1.16.0" and versions["six"]["main"]
    assert versions["termcolor"]["own"] and versions["termcolor"]["main"]
    for command in ("xclip", "xsel"):  # the clipboard bridge's, ahead of the host's
        assert (
            "cgu_lab.notebook.clipboard"
            in (Path(env["local_prefix"]) / "bin" / command).read_text()
        )
    # The tree belongs to the controller and is read-only for everyone else.
    prefix = Path(env["local_prefix"])
    assert prefix.is_relative_to(controller.data_dir / "environments" / "tiny")
    for path in [prefix, *prefix.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        assert not mode & (stat.S_IWGRP | stat.S_IWOTH), path
        assert mode & stat.S_IROTH, path
        assert path.stat().st_uid == os.geteuid()
    # Audited, and a late follower gets where it stands.
    audit = admin.ok("GET", "/api/audit?target=environment:tiny")
    assert {"environment.build_requested", "environment.built"} <= {e["action"] for e in audit}
    late = events(admin, "tiny")
    assert late[-1]["done"] and late[-1]["state"] == "ready"


@pytest.mark.integration
@pytest.mark.end_to_end
def test_a_notebook_in_the_environment_imports_its_packages(controller, admin, alice, tiny):
    prefix = admin.ok("GET", "/api/environments/tiny")["local_prefix"]
    alice.ok(
        "POST", "/api/notebooks", 201, json={"name": "tiny-lab", "environment": "tiny", **SMALL}
    )
    started = alice.ok("POST", "/api/notebooks/alice/tiny-lab/start?wait=true", 202)
    assert started["state"] == "running", started
    output = asyncio.run(
        run_code(
            alice,
            "alice",
            "tiny-lab",
            "import sys, six, termcolor, cgu_lab\nprint(six.__version__, sys.prefix)",
        )
    )
    assert output.split() == ["1.16.0", prefix], output
    # The clipboard bridge's xclip, not the host's ("Can't open display"): with no tab open
    # to lend its clipboard, the bridge says so.
    shell = (
        "import subprocess\n"
        "done = subprocess.run('echo hi | xclip -selection clipboard', shell=True,"
        " capture_output=True, text=True)\n"
        "print(done.returncode, done.stderr)"
    )
    output = asyncio.run(run_code(alice, "alice", "tiny-lab", shell))
    assert output.startswith("1 xclip: no JupyterLab tab of this notebook is open"), output
    if os.geteuid() == 0:  # per-user accounts: the environment is not theirs to change
        probe = f"open({os.path.join(prefix, 'planted')!r}, 'w')"
        assert "PermissionError" in asyncio.run(run_code(alice, "alice", "tiny-lab", probe))
    # In use: neither deleted nor rebuilt under the notebook.
    refused(admin.delete("/api/environments/tiny"), 409, "conflict", "alice")
    refused(admin.post("/api/environments/tiny/rebuild"), 409, "conflict", "running notebooks")


@pytest.mark.integration
@pytest.mark.end_to_end
def test_a_rebuild_swaps_the_prefix_once_notebooks_stopped(controller, admin, alice, tiny):
    before = admin.ok("GET", "/api/environments/tiny")
    alice.ok("POST", "/api/notebooks/alice/tiny-lab/stop?wait=true", 202)
    assert admin.ok("POST", "/api/environments/tiny/rebuild", 202)["state"] == "building"
    last = events(admin, "tiny")[-1]
    assert last["ok"] and last["state"] == "ready", last
    after = admin.ok("GET", "/api/environments/tiny")
    assert (
        after["local_prefix"] != before["local_prefix"] and after["built_at"] > before["built_at"]
    )
    assert Path(after["local_prefix"]).is_dir() and not Path(before["local_prefix"]).exists()
    actions = [e["action"] for e in admin.ok("GET", "/api/audit?target=environment:tiny")]
    assert actions[:2] == ["environment.built", "environment.rebuild_requested"], actions


@pytest.mark.integration
@pytest.mark.end_to_end
def test_injected_package_requests_are_refused(admin):
    for package in (
        "--index-url https://evil.example/simple",
        "-r/etc/passwd",
        "evil @ https://evil.example/evil.whl",
        "./evil.whl",
        "numpy; os_name == 'posix'",
        "numpy --index-url=https://evil.example",
    ):
        body = {"recipe": "custom", "name": "evil", "packages": [package]}
        refused(admin.post("/api/environments", json=body), 400, "invalid")
    assert "evil" not in {e["name"] for e in admin.ok("GET", "/api/environments")}


@pytest.mark.integration
@pytest.mark.end_to_end
def test_only_admins_build_and_see_logs(admin, alice, tiny):
    body = {"recipe": "custom", "name": "mine", "packages": ["six"]}
    refused(alice.post("/api/environments", json=body), 403, "forbidden")
    refused(alice.post("/api/environments/tiny/rebuild"), 403, "forbidden")
    refused(alice.get("/api/environments/tiny/events"), 403, "forbidden")
    refused(alice.delete("/api/environments/tiny"), 403, "forbidden")
    listed = {e["name"]: e for e in alice.ok("GET", "/api/environments")}
    assert listed["tiny"]["packages"] and listed["tiny"]["log_tail"] == ""
    assert admin.ok("GET", "/api/environments/tiny")["log_tail"]
    recipes = {r["kind"]: r for r in alice.ok("GET", "/api/environment-recipes")}
    assert recipes["data-science"]["cpu_packages"][0] == "numpy"


@pytest.mark.integration
@pytest.mark.end_to_end
def test_an_image_only_environment_is_refused_on_the_local_backend(admin, alice):
    admin.ok("PUT", "/api/environments/cluster-only", json={"image": "registry.example/nb:1"})
    refused(
        alice.post("/api/notebooks", json={"name": "k8s", "environment": "cluster-only", **SMALL}),
        400,
        "invalid",
        "local backend",
        "cluster-only",
    )
    # A notebook whose environment loses its prefix later is refused at start.
    admin.ok("PUT", "/api/environments/by-hand", json={"local_prefix": sys.prefix})
    alice.ok(
        "POST", "/api/notebooks", 201, json={"name": "by-hand", "environment": "by-hand", **SMALL}
    )
    admin.ok("PUT", "/api/environments/by-hand", json={"image": "registry.example/nb:1"})
    refused(alice.post("/api/notebooks/alice/by-hand/start"), 400, "invalid", "local backend")
    assert alice.ok("GET", "/api/notebooks/alice/by-hand")["state"] == "stopped"


@pytest.mark.integration
@pytest.mark.end_to_end
def test_a_failed_build_says_why_and_serves_no_notebook(controller, admin, alice, tiny):
    body = {"recipe": "custom", "name": "broken", "packages": ["cgu-lab-no-such-package-3f9a"]}
    admin.ok("POST", "/api/environments", 202, json=body)
    last = events(admin, "broken")[-1]
    assert last["done"] and not last["ok"] and last["state"] == "failed", last
    env = admin.ok("GET", "/api/environments/broken")
    assert env["state"] == "failed" and "fetching the packages failed" in env["message"]
    assert "cgu-lab-no-such-package-3f9a" in env["log_tail"]
    refused(
        alice.post("/api/notebooks", json={"name": "broken", "environment": "broken", **SMALL}),
        409,
        "conflict",
        "failed to build",
    )
    assert not list((controller.data_dir / "environments" / "broken").iterdir())
    admin.ok("DELETE", "/api/environments/broken")
    assert not (controller.data_dir / "environments" / "broken").exists()


@pytest.mark.integration
@pytest.mark.end_to_end
def test_a_build_cut_short_by_a_restart_is_failed_not_stuck(controller, admin, tiny):
    body = {"recipe": "custom", "name": "cut-short", "packages": ["termcolor"]}
    admin.ok("POST", "/api/environments", 202, json=body)
    controller.stop()  # the controller cancels the build on its way out
    controller.start()
    with controller.client("root-admin") as again:
        env = again.ok("GET", "/api/environments/cut-short")
        # Cancelled on the way out, or (after a hard kill) closed at the next start.
        assert env["state"] == "failed", env
        assert "cancelled" in env["message"] or "controller stopped" in env["message"], env
        refused(
            again.post("/api/notebooks", json={"name": "cut", "environment": "cut-short"}),
            409,
            "conflict",
            "failed to build",
        )
        assert not list((controller.data_dir / "environments" / "cut-short").glob("build-*"))
        again.ok("POST", "/api/environments/cut-short/rebuild", 202)
        assert events(again, "cut-short")[-1]["ok"]
        assert again.ok("GET", "/api/environments/cut-short")["state"] == "ready"


@pytest.mark.integration
@pytest.mark.end_to_end
@pytest.mark.skipif(
    os.environ.get("CGU_TEST_DATA_SCIENCE") != "1",
    reason="the full Data science build takes minutes; set CGU_TEST_DATA_SCIENCE=1",
)
def test_the_data_science_recipe_builds(admin, tiny):
    started = time.monotonic()
    admin.ok("POST", "/api/environments", 202, json={"recipe": "data-science"})
    last = events(admin, "data-science", timeout=1800)[-1]
    assert last["ok"], last
    env = admin.ok("GET", "/api/environments/data-science")
    main = {p["name"].lower() for p in env["packages"] if p["main"]}
    assert main == {"numpy", "pandas", "scikit-learn", "matplotlib", "scipy"}
    print(f"data-science: {time.monotonic() - started:.0f} s, {env['size'] / 2**20:.0f} MiB")

"""The clipboard bridge in a real jupyter_server: `xclip`/`xsel` in a subprocess, a page on the
websocket.

The page's end is played by a websocket client (`Page`) that keeps a clipboard
of its own and answers the server's requests as the browser would; the
kernel's end is the real commands, run as subprocesses with the environment
the server gives its kernels ($CGU_CLIPBOARD_SOCKET, DISPLAY, PATH).

Issue 23 item 1: the bridge also works in an environment the platform built (a
venv made by the environment builder, layered on the platform), where the host's
own `xclip` comes on PATH before the platform's commands: the kernel-side
`echo hi | xclip -selection clipboard` and `xclip -o` run by that environment's
Python, through this real server extension.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from cgu_lab.backends import local_environments
from cgu_lab.notebook.clipboard import ClipboardError, client
from cgu_lab.notebook.clipboard.cli import Streams, Usage, parse_xclip, parse_xsel, run_xsel
from cgu_lab.notebook.clipboard.protocol import ENV_SOCKET, MESSAGES, canonical_type
from cgu_lab.notebook.clipboard.relay import ClipboardRelay

from .harness import extension_server_config
from .harness import proxy_headers as as_user

pytestmark = pytest.mark.timeout(90)

BIN = Path(sys.executable).parent
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def jp_server_config():
    return extension_server_config(ClipboardRelay={"timeout_seconds": 10, "max_bytes": 64 * 1024})


@pytest.fixture(autouse=True)
def _own_environment(monkeypatch):
    """What the server sets for its kernels is undone after each test."""
    for name in ("DISPLAY", ENV_SOCKET, "CGU_CLIPBOARD_TIMEOUT"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))  # the server puts its commands first


class Page:
    """A browser tab: a clipboard of its own, answering requests unless told to keep still."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.clipboard: dict[str, str | bytes] = {}
        self.requests: list[dict] = []
        self.cancelled: list[int] = []
        self.refuse: tuple[str, str] | None = None
        self.answering = True
        self.ready: dict | None = None
        self._task = asyncio.ensure_future(self._serve())

    async def _serve(self) -> None:
        while True:
            raw = await self.ws.read_message()
            if raw is None:
                return
            message = json.loads(raw)
            if message["type"] == "ready":
                self.ready = message
            elif message["type"] == "cancel":
                self.cancelled.append(message["id"])
            elif message["type"] == "request":
                self.requests.append(message)
                if self.answering:
                    await self.send({"type": "answer", "id": message["id"], **self.act(message)})

    def act(self, request: dict) -> dict:
        """What navigator.clipboard would do with this request."""
        if self.refuse:
            return {"ok": False, "code": self.refuse[0], "message": self.refuse[1]}
        mime = request["mime"]
        if request["op"] == "write":
            content = request.get("text")
            self.clipboard = {mime: content if content is not None else request["base64"]}
            return {"ok": True}
        if request["op"] == "types":
            return {"ok": True, "types": list(self.clipboard)}
        if mime not in self.clipboard:
            return {"ok": False, "code": "not_available", "message": f"no {mime} on it"}
        content = self.clipboard[mime]
        if mime.startswith("text/"):
            return {"ok": True, "text": content}
        return {"ok": True, "base64": content}

    async def send(self, message: dict) -> None:
        await self.ws.write_message(json.dumps(message))

    async def focus(self, focused: bool = True) -> None:
        await self.send({"type": "focus", "focused": focused})

    async def close(self) -> None:
        self.ws.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._task, 5)


@pytest.fixture
def open_page(jp_ws_fetch):
    pages: list[Page] = []

    async def open_page(user: str = "alice", access: str | None = None) -> Page:
        ws = await jp_ws_fetch("cgu-lab", "clipboard", "channel", headers=as_user(user, access))
        page = Page(ws)
        pages.append(page)
        await until(lambda: page.ready is not None)
        return page

    yield open_page
    for page in pages:
        page._task.cancel()


async def until(predicate, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def command(tool: str) -> list[str]:
    """The console script as a kernel finds it on PATH, else the module."""
    script = BIN / tool
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "cgu_lab.notebook.clipboard", tool]


async def run(tool: str, *args: str, stdin: bytes = b"", **env: str) -> tuple[int, bytes, str]:
    """(exit code, stdout, stderr) of `tool args`, as a kernel's `!tool args` runs it."""
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **env}
    process = await asyncio.create_subprocess_exec(
        *command(tool),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), 60)
    return process.returncode, out, err.decode()


# -- the kernel's commands, with a page -------------------------------------------------------


async def test_xclip_write_reaches_the_page(open_page):
    page = await open_page()
    code, out, err = await run("xclip", "-selection", "clipboard", stdin=b"hello\n")
    assert (code, out, err) == (0, b"", "")
    assert page.clipboard == {"text/plain": "hello\n"}
    assert page.requests[0]["op"] == "write" and page.requests[0]["deadline_ms"] > 0

    # -i with files and -t, -f echoes what it copies, -r drops the last newline.
    code, out, _ = await run("xclip", "-i", "-f", "-r", "-t", "UTF8_STRING", stdin=b"a\tb\n")
    assert (code, out, page.clipboard) == (0, b"a\tb\n", {"text/plain": "a\tb"})
    code, _, _ = await run("xsel", "--clipboard", "--input", stdin="é ✓".encode())
    assert code == 0 and page.clipboard == {"text/plain": "é ✓"}
    code, _, _ = await run("xsel", "-b", "-a", stdin=b"!")
    assert code == 0 and page.clipboard == {"text/plain": "é ✓!"}
    code, _, _ = await run("xsel", "-bc")
    assert code == 0 and page.clipboard == {"text/plain": ""}


async def test_the_pages_text_is_read_by_xclip_o(open_page):
    page = await open_page()
    page.clipboard = {"text/plain": "copied on the laptop\n"}
    assert await run("xclip", "-selection", "clipboard", "-o") == (
        0,
        b"copied on the laptop\n",
        "",
    )
    assert (await run("xclip", "-o", "-rmlastnl"))[1] == b"copied on the laptop"
    assert (await run("xclip", "-sel", "c", "-out"))[1] == b"copied on the laptop\n"
    assert (await run("xsel", "--clipboard", "--output"))[1] == b"copied on the laptop\n"
    assert (await run("xsel", "-b", "-o"))[1] == b"copied on the laptop\n"
    targets = (await run("xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"))[1]
    assert targets.decode().split() == ["TARGETS", "text/plain", "UTF8_STRING", "STRING", "TEXT"]


async def test_images_travel_as_png_both_ways(open_page, tmp_path):
    page = await open_page()
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    code, _, err = await run("xclip", "-selection", "clipboard", "-t", "image/png", str(image))
    assert (code, err) == (0, "")
    assert page.clipboard == {"image/png": base64.b64encode(PNG).decode()}
    assert (await run("xclip", "-selection", "clipboard", "-t", "image/png", "-o"))[1] == PNG
    # What the browser's clipboard cannot hold is refused before it is asked.
    code, _, err = await run("xclip", "-t", "application/pdf", "-o")
    assert code == 1 and "text/plain, text/html and image/png" in err
    # What it does not hold now is said so.
    code, _, err = await run("xclip", "-o")
    assert code == 1 and err == "xclip: no text/plain on it\n"


async def test_the_python_api(open_page):
    page = await open_page()
    assert await asyncio.to_thread(client.copy, "from the api") is True
    assert page.clipboard == {"text/plain": "from the api"}
    page.clipboard = {"text/plain": "back", "image/png": base64.b64encode(PNG).decode()}
    assert await asyncio.to_thread(client.paste) == "back"
    assert await asyncio.to_thread(client.paste_bytes, "image/png") == PNG
    assert await asyncio.to_thread(client.available_types) == ["text/plain", "image/png"]


async def test_pandas_round_trip(open_page):
    pytest.importorskip("pandas", reason="pandas is not installed in this environment")
    page = await open_page()
    script = (
        "import pandas as pd\n"
        "pd.DataFrame({'a': [1, 3], 'b': [2, 4]}).to_clipboard(index=False)\n"
        "print(pd.read_clipboard().to_dict('list'))\n"
    )
    environment = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    assert environment.get("DISPLAY"), "the server gives its kernels a DISPLAY for pandas"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE, env=environment
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0
    assert out.decode().strip() == "{'a': [1, 3], 'b': [2, 4]}"
    assert page.clipboard["text/plain"].splitlines() == ["a\tb", "1\t2", "3\t4"]


# -- in an environment the platform built ---------------------------------------------------

HOST_XCLIP = """#!/bin/sh
echo "Error: Can't open display: $DISPLAY" >&2
exit 1
"""
# What `!line` in a kernel does: /bin/sh -c with the kernel's environment, from its Python.
KERNEL_SHELL = (
    "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1], shell=True).returncode)"
)


@pytest.fixture(scope="module")
def built_environment(tmp_path_factory):
    """A venv made by the platform's environment builder (`create_venv`: the venv, layered
    on the platform, with its commands; a recipe's pip install only adds packages to it)."""
    target = tmp_path_factory.mktemp("environments") / "data-science"
    lines: list[str] = []
    asyncio.run(
        local_environments.create_venv(
            target, target / "bin" / "python", lambda line, percent=None: lines.append(line)
        )
    )
    return target


@pytest.fixture
def host_path(tmp_path, built_environment, monkeypatch):
    """The PATH a local notebook's server starts with in that environment (its bin, then the
    host's), with a host `xclip` that fails as the real one does without an X display; set
    before the server starts, as the backend does."""
    host = tmp_path / "host-bin"
    host.mkdir()
    (host / "xclip").write_text(HOST_XCLIP)
    (host / "xclip").chmod(0o755)
    path = os.pathsep.join([str(built_environment / "bin"), str(host), "/usr/bin", "/bin"])
    monkeypatch.setenv("PATH", path)
    return path


async def kernel_shell(python: Path, line: str, path: str | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `!line` in a kernel run by `python`, with the environment
    the server gives its kernels (its PATH unless `path` is given)."""
    environment = {**os.environ, **({"PATH": path} if path else {})}
    process = await asyncio.create_subprocess_exec(
        str(python),
        "-c",
        KERNEL_SHELL,
        line,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=environment,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode, out.decode(), err.decode()


async def test_a_built_environment_carries_the_bridges_commands_ahead_of_the_hosts(
    host_path, built_environment, open_page
):
    python = built_environment / "bin" / "python"
    for name in ("xclip", "xsel"):  # the environment's own, ahead of the host's
        assert shutil.which(name, path=host_path) == str(built_environment / "bin" / name)
    page = await open_page()
    # The environment alone, without the folder the server puts first.
    line = "echo hi | xclip -selection clipboard"
    assert await kernel_shell(python, line, host_path) == (0, "", "")
    assert page.clipboard == {"text/plain": "hi\n"}
    page.clipboard = {"text/plain": "from the laptop\n"}
    assert await kernel_shell(python, "xclip -selection clipboard -o", host_path) == (
        0,
        "from the laptop\n",
        "",
    )
    assert await kernel_shell(python, "xsel -b -o", host_path) == (0, "from the laptop\n", "")


async def test_an_environment_built_before_gets_the_commands_from_the_server(
    host_path, built_environment, open_page, tmp_path
):
    # An environment built before the builder wrote the commands: a copy without them.
    old = tmp_path / "old-environment"
    shutil.copytree(built_environment, old, symlinks=True)
    for name in ("xclip", "xsel"):
        (old / "bin" / name).unlink(missing_ok=True)
    page = await open_page()
    # The server put its own folder of the bridge's commands first on its kernels' PATH.
    first = shutil.which("xclip", path=os.environ["PATH"])
    # (the socket may be elsewhere: a folder whose path is too long for one moves it)
    assert first and Path(first).parent.name == f"{os.getpid()}.bin", first
    assert os.environ["PATH"].split(os.pathsep)[1:] == host_path.split(os.pathsep)
    python = old / "bin" / "python"
    assert await kernel_shell(python, "echo hi | xclip -selection clipboard") == (0, "", "")
    assert page.clipboard == {"text/plain": "hi\n"}
    page.clipboard = {"text/plain": "back\n"}
    assert await kernel_shell(python, "xclip -selection clipboard -o") == (0, "back\n", "")


async def test_the_servers_command_folder_goes_with_it(tmp_path, monkeypatch):
    relay = ClipboardRelay(socket_directory=str(tmp_path / "clipboard"))
    relay.start()
    folder = relay.commands
    assert os.environ["PATH"].split(os.pathsep)[0] == folder
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert sorted(os.listdir(folder)) == ["xclip", "xsel"]
    relay.close()
    assert not os.path.exists(folder) and folder not in os.environ["PATH"].split(os.pathsep)


# -- who may lend their clipboard --------------------------------------------------------------


async def test_an_editor_may_lend_their_clipboard_a_read_only_viewer_may_not(
    open_page, jp_ws_fetch, jp_fetch
):
    editor = await open_page("ta", "edit")
    editor.clipboard = {"text/plain": "the editor's"}
    assert (await run("xclip", "-o"))[1] == b"the editor's"
    status = json.loads(
        (await jp_fetch("cgu-lab", "clipboard", headers=as_user("ta", "edit"))).body
    )
    assert status["pages"] == [{"user": "ta", "access": "edit", "focused": False}]
    for headers in (as_user("pupil", "read"), as_user("ta", "edit", scope="notes.ipynb")):
        with pytest.raises(HTTPClientError) as refused:
            await jp_ws_fetch("cgu-lab", "clipboard", "channel", headers=headers)
        assert refused.value.code == 403
        with pytest.raises(HTTPClientError) as listed:
            await jp_fetch("cgu-lab", "clipboard", headers=headers)
        body = json.loads(listed.value.response.body)
        assert listed.value.code == 403
        assert body["code"] in ("read_only", "not_shared") and body["message"]
    with pytest.raises(HTTPClientError) as read_only:
        await jp_fetch("cgu-lab", "clipboard", headers=as_user("pupil", "read"))
    body = json.loads(read_only.value.response.body)
    assert body == {
        "message": "your access to this notebook is read-only: only its owner and editors can "
        "lend their clipboard to its kernels",
        "code": "read_only",
    }


async def test_the_tab_that_had_the_focus_last_answers(open_page):
    first, second = await open_page(), await open_page("ta", "edit")
    first.clipboard = {"text/plain": "first"}
    second.clipboard = {"text/plain": "second"}
    assert (await run("xclip", "-o"))[1] == b"second"  # nobody had the focus: the newest
    await first.focus()
    await second.focus(False)
    await asyncio.sleep(0.1)
    assert (await run("xclip", "-o"))[1] == b"first"
    await second.focus()
    await first.focus(False)
    await asyncio.sleep(0.1)
    assert (await run("xclip", "-o"))[1] == b"second"
    await second.close()
    await asyncio.sleep(0.1)
    assert (await run("xclip", "-o"))[1] == b"first"


# -- failures are sentences, and never a hang ---------------------------------------------------


async def test_without_a_page_the_command_says_so_at_once(jp_serverapp):
    started = time.monotonic()
    code, out, err = await run("xclip", "-selection", "clipboard", "-o")
    assert (code, out) == (1, b"")
    assert err.startswith("xclip: no JupyterLab tab of this notebook is open")
    code, _, err = await run("xsel", "-b", "-i", stdin=b"x")
    assert code == 1 and err.startswith("xsel: no JupyterLab tab")
    assert time.monotonic() - started < 10
    with pytest.raises(ClipboardError) as error:
        await asyncio.to_thread(client.paste)
    assert error.value.code == "no_page"


async def test_a_page_that_does_not_answer_times_out(open_page):
    page = await open_page()
    page.answering = False
    started = time.monotonic()
    code, _, err = await run("xclip", "-o", CGU_CLIPBOARD_TIMEOUT="2")
    assert time.monotonic() - started < 8
    assert code == 1 and "did not answer in time" in err
    assert page.requests[0]["deadline_ms"] == 1000
    await until(lambda: page.cancelled == [page.requests[0]["id"]])


async def test_a_refusal_and_a_closed_tab_are_said_so(open_page):
    page = await open_page()
    page.refuse = ("refused", "you did not allow this page to read your clipboard")
    code, _, err = await run("xclip", "-o")
    assert (code, err) == (1, "xclip: you did not allow this page to read your clipboard\n")
    page.refuse = ("root", "something else")  # unknown codes read as a refusal
    with pytest.raises(ClipboardError) as error:
        await asyncio.to_thread(client.paste)
    assert error.value.code == "refused"

    page.answering = False
    pending = asyncio.ensure_future(run("xclip", "-o"))
    await until(lambda: len(page.requests) == 3)
    await page.close()
    code, _, err = await pending
    assert code == 1 and "closed or reloaded before it answered" in err


async def test_too_large_is_refused_before_the_browser_is_asked(open_page):
    page = await open_page()
    code, _, err = await run("xclip", stdin=b"x" * (64 * 1024 + 1))
    assert code == 1 and "at most 65536" in err
    assert page.requests == []


async def test_the_socket_is_the_users_alone(jp_serverapp, jp_home_dir):
    socket_path = os.environ[ENV_SOCKET]
    assert stat.S_IMODE(os.stat(socket_path).st_mode) == 0o600
    folder = jp_home_dir / ".cgu" / "clipboard"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    description = json.loads((folder / f"{os.getpid()}.json").read_text())
    assert description == {"socket": socket_path, "pid": os.getpid()}
    assert os.environ["DISPLAY"] == ":cgu-clipboard"
    # A process that did not inherit the variable finds the server through the description.
    del os.environ[ENV_SOCKET]
    assert client.find_socket() == socket_path
    os.environ[ENV_SOCKET] = socket_path


async def test_a_long_home_puts_the_socket_in_a_private_temporary_folder(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    relay = ClipboardRelay(socket_directory=str(deep), export_environment=False)
    relay.start()
    try:
        assert not relay.socket_path.startswith(str(deep))
        folder = Path(relay.socket_path).parent
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert json.loads(relay.description.read_text())["socket"] == relay.socket_path
        assert await relay.ask({"op": "read"}) == {
            "ok": False,
            "code": "no_page",
            "message": MESSAGES["no_page"],
        }
    finally:
        relay.close()
    assert not folder.exists() and not relay.description.exists()


# -- the command lines ---------------------------------------------------------------------------


def test_xclip_takes_the_options_people_and_tools_use():
    assert parse_xclip(["-selection", "clipboard", "-o"])[0] == {
        "selection": "clipboard",
        "out": True,
    }
    assert parse_xclip(["-sel", "c", "-in", "a.txt", "-"]) == (
        {"selection": "c", "in": True},
        ["a.txt", "-"],
    )
    assert parse_xclip(["-selec", "c"])[0] == {"selection": "c"}  # any unambiguous prefix
    assert parse_xclip(["-targ", "image/png", "-rmlast", "-l", "1", "-d", ":0"])[0] == {
        "target": "image/png",
        "rmlastnl": True,
        "loops": "1",
        "display": ":0",
    }
    assert parse_xclip(["--selection", "clipboard"])[0] == {"selection": "clipboard"}
    wrong_lines = (["-bogus"], ["-se", "c"], ["-selection"], ["-selection", "zebra"], ["-s", "c"])
    for wrong in wrong_lines:
        with pytest.raises(Usage):
            parse_xclip(wrong)


def test_xsel_takes_combined_and_long_flags():
    assert parse_xsel(["-bo"]) == {"b", "o"}
    assert parse_xsel(["--clipboard", "--input", "--display", ":0"]) == {"b", "i", "display"}
    assert parse_xsel(["-b", "-i", "-t", "100"]) == {"b", "i", "t"}
    assert parse_xsel(["--display=:0", "-k"]) == {"display", "k"}
    for wrong in (["-q"], ["--bogus"], ["-t"], ["stray"]):
        with pytest.raises(Usage):
            parse_xsel(wrong)


def test_xsel_without_a_mode_follows_the_terminals(monkeypatch):
    calls: list[tuple] = []
    monkeypatch.setattr(client, "paste_bytes", lambda mime: calls.append(("paste",)) or b"now")
    monkeypatch.setattr(client, "copy", lambda data, mime: calls.append(("copy", data)) or True)

    class Stream(io.BytesIO):
        def __init__(self, data: bytes = b"", tty: bool = False) -> None:
            super().__init__(data)
            self._tty = tty

        def isatty(self) -> bool:
            return self._tty

    out = Stream()
    assert run_xsel([], Streams(Stream(b"piped", tty=False), out, Stream())) == 0
    assert calls == [("paste",), ("copy", b"piped")] and out.getvalue() == b"now"
    calls.clear()
    assert run_xsel([], Streams(Stream(tty=True), Stream(tty=True), Stream())) == 0
    assert calls == [("paste",)]
    calls.clear()
    assert run_xsel([], Streams(Stream(b"in", tty=False), Stream(tty=True), Stream())) == 0
    assert calls == [("copy", b"in")]


def test_x11_targets_are_the_browsers_types():
    for name in ("UTF8_STRING", "STRING", "TEXT", "text/plain;charset=utf-8", None, ""):
        assert canonical_type(name) == "text/plain"
    assert canonical_type("text/html") == "text/html"
    assert canonical_type("image/png") == "image/png"
    with pytest.raises(ClipboardError) as error:
        canonical_type("image/jpeg")
    assert error.value.code == "bad_type"

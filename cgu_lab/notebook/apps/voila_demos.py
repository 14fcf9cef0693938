"""Notebooks a teacher publishes as pages with Voilà, run by this server itself.

A notebook shown with Voilà is an app like the declared ones: jupyter-server-proxy
starts its Voilà on the first request to `<base_url>/voila-<name>/`, supervises it,
proxies it and stops it with the server. What makes it last is the list of such
notebooks, kept in the home (`~/.local/share/cgu-lab/voila-demos.json`, app name ->
notebook path below the server's root): the home outlives the server, so after a
restart of a persistent notebook the same apps exist again at the same paths, and the
publication the controller keeps (`voila-<name>/`, core/publishing.py) answers again
without anyone running a command.

Where the truth lives: the controller's publications say which pages should run; the
home's list is this server's memory of them, so that it serves them from its first
request without waiting on the controller. The list follows the publications two ways:
an unpublished page is removed at once when the controller reaches the running server
(`DELETE cgu-lab/apps/voila/<name>`, `remove`: its routes go, its Voilà stops), and at
each start the server asks the controller which of its apps are published and removes
the listed pages that are not (`keep_published`), which covers a page unpublished
while the notebook was stopped, when no server held the list to change. The list is
not the truth because only the controller knows the publications of a stopped
notebook; nor does the controller write into the home, which a Kubernetes notebook's
controller cannot reach without a pod. Without a controller (a server run alone) the
list is kept as it is.

This server makes each page's routes itself (jupyter-server-proxy's own handler class,
made from the same entry it would take from its config, placed before the server's
catch-all routes with tornado's `add_handlers`), at its start and whenever the owner
adds one, so that it holds what removing a page needs: the routes to take out of the
application and the supervised process to stop. Voilà listens on a loopback port
jupyter-server-proxy picks (Voilà takes no unix socket), as a declared app with a port
does.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simpervisor import KilledProcessError, SupervisedProcess

from ...core import publishing
from ..controller_client import ControllerError

STORE = Path(".local") / "share" / "cgu-lab" / "voila-demos.json"
# How long a page's Voilà has to end (shutting its kernels down) before it is killed.
STOP_SECONDS = 10.0


def voila_program() -> list[str] | None:
    """How to run Voilà here: with this server's Python where it has Voilà, else the
    `voila` on PATH; None where neither exists."""
    if importlib.util.find_spec("voila") is not None:
        return [sys.executable, "-m", "voila"]
    found = shutil.which("voila")
    return [found] if found else None


def _literal(text: str) -> str:
    """Text in a jupyter-server-proxy command, whose arguments are format strings."""
    return text.replace("{", "{{").replace("}", "}}")


@dataclass
class VoilaDemos:
    """The notebooks shown with Voilà: app name -> notebook path (below `root`)."""

    store: Path
    root: Path
    shown: dict[str, str] = field(default_factory=dict)
    # The apps whose routes exist in this server (made at its start or added since).
    registered: set[str] = field(default_factory=set)
    # app name -> (the (router, rule) pairs its routes added, jupyter-server-proxy's state
    # of its process), for `unregister`.
    _routes: dict[str, tuple[list, dict]] = field(default_factory=dict, repr=False)
    # Set once the start's check against the controller is done (`keep_published`).
    checked: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @classmethod
    def load(cls, home: Path, root: Path, log=None) -> VoilaDemos:
        """The home's list; one that cannot be read is an empty one (and says why), so
        that a hand-edited file never stops the server."""
        store = home / STORE
        demos = cls(store, root)
        try:
            data = json.loads(store.read_text())
        except FileNotFoundError:
            return demos
        except (OSError, ValueError) as error:
            if log is not None:
                log.warning("cgu-lab apps: %s is not read: %s", store, error)
            return demos
        entries = data.get("demos", {}) if isinstance(data, dict) else {}
        for name, notebook in entries.items() if isinstance(entries, dict) else ():
            with contextlib.suppress(Exception):
                checked = publishing.voila_notebook(notebook)
                if publishing.check_prefix(f"{name}/") == f"{name}/":
                    demos.shown[name] = checked
        return demos

    def add(self, notebook: str, taken: set[str]) -> str:
        """The app showing `notebook` (checked relative path), kept in the home's list;
        a new one takes a name no app of `taken` (the environment's) has."""
        others = {**{name: "" for name in taken}, **self.shown}
        name = publishing.voila_app_name(notebook, others)
        if self.shown.get(name) != notebook:
            self.shown[name] = notebook
            self._save()
        return name

    def _save(self) -> None:
        """Write the list whole (a temporary file renamed over it), readable by its user only."""
        self.store.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.store.parent, prefix=".voila-demos-")
        try:
            with os.fdopen(handle, "w") as out:
                json.dump({"demos": self.shown}, out, indent=1, sort_keys=True)
            os.replace(temporary, self.store)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def remove(self, name: str) -> bool:
        """Take a page off the home's list (False: it was not listed)."""
        if name not in self.shown:
            return False
        del self.shown[name]
        self._save()
        return True

    def server(self, name: str, common: dict[str, Any]) -> dict[str, Any] | None:
        """The jupyter-server-proxy entry of one app (None where Voilà is not installed)."""
        program = voila_program()
        if program is None:
            return None
        notebook = str(self.root / self.shown[name])
        arguments = publishing.voila_arguments(_literal(notebook), f"{{base_url}}{name}/", "{port}")
        return {**common, "command": [*program, *arguments], "new_browser_tab": True}

    def register_all(self, web_app, common: dict[str, Any]) -> None:
        """Route every listed page (at the server's start)."""
        for name in list(self.shown):
            self.register(web_app, web_app.settings.get("base_url", "/"), name, common)

    def register(self, web_app, base_url: str, name: str, common: dict[str, Any]) -> None:
        """Give a listed page its routes in the running server: the ones jupyter-server-proxy
        makes for a configured server, placed before the server's catch-all routes
        (tornado's `add_handlers`); the rules added and the handler's process state are
        kept for `unregister`."""
        if name in self.registered:
            return
        from jupyter_server_proxy.config import make_handlers, make_server_process

        entry = self.server(name, common)
        if entry is None:
            return
        handlers = make_handlers(base_url, [make_server_process(name, entry, None)])
        state = next(kwargs["state"] for *_, kwargs in handlers if "state" in kwargs)
        routers = (web_app.default_router, web_app.wildcard_router)
        before = [list(router.rules) for router in routers]
        web_app.add_handlers(".*$", handlers)
        added = [
            (router, rule)
            for router, old in zip(routers, before, strict=True)
            for rule in router.rules
            if not any(rule is kept for kept in old)
        ]
        self._routes[name] = (added, state)
        self.registered.add(name)

    async def unregister(self, web_app, name: str) -> None:
        """Take a page's routes out of the running server (its path answers 404 from now
        on, so no request starts it again) and stop its Voilà, kernels and all."""
        added, state = self._routes.pop(name, ([], {}))
        for router, rule in added:
            with contextlib.suppress(ValueError):
                router.rules.remove(rule)
        self.registered.discard(name)
        process = state.pop("proc", None)
        if isinstance(process, SupervisedProcess):
            try:
                await asyncio.wait_for(process.terminate(), STOP_SECONDS)
            except (KilledProcessError, ProcessLookupError):
                pass  # it had ended
            except asyncio.TimeoutError:
                with contextlib.suppress(KilledProcessError, ProcessLookupError):
                    process.proc.send_signal(signal.SIGKILL)

    async def keep_published(self, web_app, client, names: set[str], log=None) -> set[str]:
        """At the server's start: remove the pages of `names` (those listed when it
        started) that the controller does not publish; the removed ones. Kept as they
        are when there is no controller, or it cannot answer (the next start asks again).
        `checked` is set when this is done: the list's route answers after it."""
        try:
            return await self._keep_published(web_app, client, names, log)
        finally:
            self.checked.set()

    async def _keep_published(self, web_app, client, names: set[str], log) -> set[str]:
        if not names or client is None or not client.configured:
            return set()
        try:
            answer = await client.call("GET", client.notebook_path("published"))
        except ControllerError as error:
            if log is not None:
                log.warning("cgu-lab apps: published pages not asked: %s", error.message)
            return set()
        published = {app.rstrip("/") for app in (answer or {}).get("apps", [])}
        stale = {name for name in names if name not in published and name in self.shown}
        for name in sorted(stale):
            self.remove(name)
            await self.unregister(web_app, name)
        if stale and log is not None:
            log.info("cgu-lab apps: pages no longer published, removed: %s", sorted(stale))
        return stale

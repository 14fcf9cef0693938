"""Notebooks a teacher publishes as pages with Voilà, run by this server itself.

A notebook shown with Voilà is an app like the declared ones: jupyter-server-proxy
starts its Voilà on the first request to `<base_url>/voila-<name>/`, supervises it,
proxies it and stops it with the server. What makes it last is the list of such
notebooks, kept in the home (`~/.local/share/cgu-lab/voila-demos.json`, app name ->
notebook path below the server's root): the home outlives the server, so after a
restart of a persistent notebook the same apps exist again at the same paths, and the
publication the controller keeps (`voila-<name>/`, core/publishing.py) answers again
without anyone running a command.

The list is read while the extension is linked (its apps join `ServerProxy.servers`
with the others, registry.py); a notebook published while the server runs gets its
app at once, through the same jupyter-server-proxy handler class added to the running
application. Voilà listens on a loopback port jupyter-server-proxy picks (Voilà takes
no unix socket), as a declared app with a port does.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core import publishing

STORE = Path(".local") / "share" / "cgu-lab" / "voila-demos.json"


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
    # The apps whose handlers exist in this server (from its config or added since).
    registered: set[str] = field(default_factory=set)

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

    def server(self, name: str, common: dict[str, Any]) -> dict[str, Any] | None:
        """The jupyter-server-proxy entry of one app (None where Voilà is not installed)."""
        program = voila_program()
        if program is None:
            return None
        notebook = str(self.root / self.shown[name])
        arguments = publishing.voila_arguments(_literal(notebook), f"{{base_url}}{name}/", "{port}")
        return {**common, "command": [*program, *arguments], "new_browser_tab": True}

    def servers(self, common: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The entries of every listed app, for `ServerProxy.servers` at the server's start."""
        entries = {name: self.server(name, common) for name in self.shown}
        found = {name: entry for name, entry in entries.items() if entry is not None}
        self.registered.update(found)
        return found

    def register(self, web_app, base_url: str, name: str, common: dict[str, Any]) -> None:
        """Give a newly listed app its handlers in the running server: the ones
        jupyter-server-proxy makes for a configured server, placed before the server's
        catch-all routes (tornado's `add_handlers`)."""
        if name in self.registered:
            return
        from jupyter_server_proxy.config import make_handlers, make_server_process

        entry = self.server(name, common)
        if entry is None:
            return
        process = make_server_process(name, entry, None)
        web_app.add_handlers(".*$", make_handlers(base_url, [process]))
        self.registered.add(name)

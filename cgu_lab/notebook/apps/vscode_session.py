"""VS Code (code-server) for one notebook: its extensions folder made ready, then code-server.

jupyter-server-proxy starts this module as the VS Code app's process
(`python -m cgu_lab.notebook.apps.vscode_session <code-server> <data> <home> <socket>`);
it replaces itself with code-server (`exec`), so jupyter-server-proxy supervises
and stops code-server as before.

Before that it makes the user's extensions folder and its index
(`extensions.json`, an empty list) on a first start. code-server does not make
them until an extension is installed, and without them its server cannot scan
the user's extensions: the browser's console showed "Unable to read file …
extensions.json" on every scan, and VS Code, with no list from the server,
tried the built-ins that declare a browser build (git-base, merge-conflict) in
the browser's web worker, where the npm package ships none: "Activating
extension 'vscode.git-base' failed: Not Found".
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def prepare_extensions(folder: Path) -> None:
    """The user's extensions folder with its index (an empty one to begin with)."""
    folder.mkdir(parents=True, exist_ok=True)
    index = folder / "extensions.json"
    if not index.exists():
        index.write_text("[]\n", encoding="utf-8")


def main(argv: list[str]) -> None:
    if len(argv) != 5:
        sys.exit("usage: vscode_session.py CODE_SERVER DATA_DIR HOME SOCKET")
    code_server, data, home, socket = argv[1], Path(argv[2]), argv[3], argv[4]
    prepare_extensions(data / "extensions")
    os.execv(  # noqa: S606 - no shell; a fixed argv
        code_server,
        [
            code_server,
            *("--auth", "none", "--socket", socket, "--socket-mode", "600"),
            *("--disable-telemetry", "--disable-update-check"),
            *("--disable-workspace-trust", "--disable-getting-started-override"),
            *("--user-data-dir", str(data / "data")),
            *("--extensions-dir", str(data / "extensions")),
            "--ignore-last-opened",
            home,
        ],
    )


if __name__ == "__main__":
    main(sys.argv)

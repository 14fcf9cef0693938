"""Which files of a home a copy leaves out: checkpoints, caches and the like.

Shared by the file picker in JupyterLab (to show what will be left out) and
the tools that copy files (to leave it out), so both say the same thing.
"""

from __future__ import annotations

import fnmatch

DEFAULT_EXCLUDED = (
    ".ipynb_checkpoints",
    "__pycache__",
    "*.pyc",
    ".cache",
    ".local",
    ".jupyter",
    ".ipython",
    ".git",
    "node_modules",
    ".Trash-*",
    ".virtual_documents",
    ".npm",
    "courses",
    ".cgu",  # the platform's own state in a home: serial ports, the clipboard socket
    # jupyter-collaboration's store: every document's whole edit history (text typed and
    # deleted, in every notebook of the home). A copy of a live view, a template or a
    # submission must carry the files, never what their author typed and took back.
    ".jupyter_ystore.db*",
)


def excluded(relative: str, patterns: list[str]) -> str | None:
    """The pattern that leaves this path out, if any (matched on each part and the whole)."""
    parts = relative.split("/")
    for pattern in patterns:
        if fnmatch.fnmatch(relative, pattern) or any(fnmatch.fnmatch(p, pattern) for p in parts):
            return pattern
    return None

"""The contents manager: read-only files for read-only callers, trust for the owner alone.

Read-only: JupyterLab disables saving and marks a document read-only when the
contents API says the file is not `writable`. The request guard already
refuses writes (`authorizer.py`); this makes the interface say so up front
instead of failing at the first save.

Trust: a trusted notebook's HTML and JavaScript outputs run in the viewer's
browser. Before, a student could sign a notebook in her own server, put a
`<script>` in an output and share it read-only with an admin, who then ran
her script. Now:

- anyone but the owner sees every notebook untrusted, whatever its
  signature (`mark_trusted_cells`), a non-owner's save never signs
  (`check_and_sign`), and only the owner may trust (`trust_notebook`; the
  request guard already refuses the trust endpoint to everyone else);
- the notary keeps its signatures in an in-memory SQLite database and signs
  with a random secret made at server start (`_notary_default`), neither of
  them in the home. Keyword arguments win over config files, so a
  `NotebookNotary` setting planted in the home's JSON config cannot move
  them back. The cost: the owner's trust does not survive a restart (re-run
  or re-trust a notebook to see its rich outputs again).

What this cannot stop, and why it does not rely on it: the kernel runs as the
same uid as this server. It can read `/proc/<server pid>/environ` (the proxy
secret the server was started with), may read the server's memory (and so
the notary's secret) where ptrace between processes of one uid is allowed
(Yama `ptrace_scope` 0), and can write Python config into the home that runs
inside the next server it starts. Whoever can run code here (the owner, an
editor) can therefore make this server lie to later viewers. Viewers are
protected by what the owner cannot touch: each notebook is served from its
own origin and the controller's proxy adds its own checks, so a script that
does run can act only on this one notebook, with the viewer's (read-only)
rights. The rules above close the easy path: a signature the owner made in
her own home no longer makes her outputs run for anyone else.
"""

from __future__ import annotations

import secrets

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from nbformat.sign import NotebookNotary
from tornado import web
from traitlets import default

from .identity import CURRENT_USER


def _read_only(model: dict) -> dict:
    model["writable"] = False
    if model.get("type") == "directory" and isinstance(model.get("content"), list):
        for child in model["content"]:
            child["writable"] = False
    return model


def _caller_is_owner() -> bool:
    """Whether the request being served comes from the owner (no request: no)."""
    user = CURRENT_USER.get()
    return user is not None and user.access == "owner"


class ShareAwareContentsManager(AsyncLargeFileManager):
    @default("notary")
    def _notary_default(self) -> NotebookNotary:
        return NotebookNotary(parent=self, db_file=":memory:", secret=secrets.token_bytes(32))

    async def get(self, path, content=True, type=None, format=None, **kwargs):
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        user = CURRENT_USER.get()
        limited = user is not None and (user.access == "read" or bool(user.scope))
        return _read_only(model) if limited else model

    def mark_trusted_cells(self, nb, path=""):
        if _caller_is_owner():
            return super().mark_trusted_cells(nb, path)
        self.notary.mark_cells(nb, False)
        return None

    def check_and_sign(self, nb, path="", **kwargs):
        if _caller_is_owner():
            return super().check_and_sign(nb, path, **kwargs)
        return None  # saved, not signed: a non-owner's outputs stay untrusted for the owner too

    async def trust_notebook(self, path):
        if not _caller_is_owner():
            raise web.HTTPError(403, "only the owner of this notebook can trust it")
        return await super().trust_notebook(path)

"""File manager: folders and archives between the student's laptop and the notebook's home.

What stock JupyterLab lacks, and where it lives:

- downloading a folder or a multi-selection as one zip, streamed as it is
  written (`zipstream`): never built whole in memory or on disk;
- extracting an uploaded archive into the current folder (`extract`):
  every entry checked (no `..`, no absolute path, no link, no device), the
  whole archive written into a hidden folder beside and moved into place
  only once it all succeeded, so a refusal leaves nothing behind;
- a disk allowance (`allowance`): an upload or an extraction that would take
  the home past it is refused before it starts, naming the limit and the use;
- the routes (`handlers`): `cgu-lab/transfer/zip`, `.../plan` (the check an
  upload makes before its first byte), `.../extract`, `.../allowance`.

Uploads themselves go through the contents API that JupyterLab already
speaks (`PUT api/contents/<path>`, base64 chunks numbered 1..n, -1 for the
last), so they pass the same request guard, contents manager and save hooks
as any save; the lab extension (src/transfer/) adds folders, progress,
cancel and resuming from the last chunk the server holds.

Why not jupyter-archive: its extraction is a GET (which the request guard lets
read-only viewers use), follows links, extracts in place, and it enables
itself on install; see the module docstrings for the details.
"""

from __future__ import annotations

__all__ = ["transfer_routes"]


def transfer_routes(app) -> list[tuple]:
    """The routes to add to the extension app's (imported late, like the serial ones)."""
    from .handlers import routes

    return routes(app)

"""Code competitions: a student's notebook, checked on arrival, run on the hidden inputs.

A code competition's entry is a notebook (.ipynb). It is checked when it
arrives (nbformat reads it as version 4), stored beside the other entries,
and when its turn in the scoring queue comes (competition_entries.py) it runs
first, in the scorer's sandbox (backends/competition_notebook_run.py), with the
competition's time and memory limits. The predictions it writes become the
entry's predictions file, which is then scored exactly as an uploaded one, with
the same public/private split and the same messages about the file.

The kernel is the Python of the platform's default notebook environment
(competitions have no environment of their own): students develop in that
environment, so the run sees the packages they saw. An environment that exists
only as a container image (Kubernetes) has no Python on this machine; the
platform's own Python, which the default environment is on a new installation,
runs it then.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ...backends.competition_notebook_run import NotebookRun, NotebookRunner
from ...core.errors import Invalid
from ...store.db import Database
from ..environments.catalog import get_environment
from . import files
from .gpus import NO_GPU, RunGpus

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def check_notebook(data: bytes) -> None:
    """Refuse anything nbformat cannot read as a version 4 notebook (a 400, not a failed run)."""
    import nbformat

    try:
        notebook = nbformat.reads(data.decode("utf-8-sig"), as_version=4)
        nbformat.validate(notebook)
    except UnicodeDecodeError:
        raise Invalid("the notebook is not UTF-8 text; send a .ipynb file") from None
    except Exception:  # nbformat raises what its converters meet (TypeError on odd shapes)
        raise Invalid(
            "this file is not a Jupyter notebook (.ipynb) that nbformat can read; "
            "a code competition takes a notebook, not a predictions file"
        ) from None
    if not any(cell.cell_type == "code" for cell in notebook.cells):
        raise Invalid("the notebook has no code cell to run")


class CodeRuns:
    def __init__(
        self, db: Database, settings, runner: NotebookRunner, gpus: RunGpus | None = None
    ) -> None:
        self.db = db
        self.settings = settings
        self.runner = runner
        self.gpus = gpus or RunGpus(db, None)

    async def python(self) -> str:
        async with self.db.session() as session:
            environment = await get_environment(session, None)
            prefix = environment.local_prefix
        python = Path(prefix) / "bin" / "python" if prefix else None
        return str(python) if python is not None and python.exists() else sys.executable

    async def run(
        self,
        competition_id: int,
        entry_id: int,
        time_limit: float,
        memory_limit: int,
        max_bytes: int,
        gpu_type: str | None = None,
    ) -> NotebookRun | None:
        """Run an entry's notebook; on success its predictions are the entry's .csv.

        With a GPU type the run first takes a device of it (competition_gpus.py) and
        gives it back however the run ends; None: none is free, the entry waits."""
        gpu = await self.gpus.take(entry_id, gpu_type) if gpu_type else NO_GPU
        if gpu is None:
            return None
        data_dir = self.settings.data_dir
        try:
            result = await self.runner.run(
                files.entry_path(data_dir, competition_id, entry_id, ".ipynb"),
                files.path_of(data_dir, competition_id, "inputs"),
                files.entry_path(data_dir, competition_id, entry_id),
                await self.python(),
                time_limit,
                memory_limit,
                max_bytes,
                gpu.env,
            )
        finally:
            if gpu.devices:
                await self.gpus.release(entry_id)
        return NotebookRun(result.ok, result.student, _ANSI.sub("", result.log))

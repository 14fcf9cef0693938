"""Notebooks that die on their own are marked stopped within seconds, not left "running".

A server can exit without the controller asking (a crash, the kernel's memory
limit killing it, an admin's `kill`, a node lost on Kubernetes). Until this
watch, only a controller restart noticed, so a dead notebook stayed "running"
and held its GPUs. Every few seconds the watch asks the backend about each
running notebook that no start, stop or resize is busy with; one the backend
reports as gone (not merely slow to answer) is stopped with the reason, its
GPUs are freed and the queue moves on. The owner sees the reason on the
notebook's start page and in the list.

A notebook that lives on may still have news for its owner (the backend's
`notice`: its Kubernetes node cordoned, so a drain may follow and its next start
goes elsewhere): the same pass shows it as the notebook's message while it lasts
and takes it away when it ends, as a drain's reason is shown when it stops one.
"""

from __future__ import annotations

import logging

from sqlalchemy import select

from ...backends.base import NotebookSpec
from ...core.lifecycle import State
from ...store.models import Notebook, User
from .. import audit
from ..clock import Clock
from ..progress import ProgressEvent
from .service import NotebookService

log = logging.getLogger("cgu_lab.liveness")

INTERVAL = 5.0


async def check(
    notebooks: NotebookService,
    noticed: dict[int, str] | None = None,
    specs: dict[int, tuple[tuple, NotebookSpec]] | None = None,
) -> list[str]:
    """One pass: the notebooks found dead and stopped, as owner/name. `noticed`: the notice
    each notebook's message shows now, by id, kept from pass to pass (`watch` keeps it).
    `specs`: each running notebook's spec, by id, kept from pass to pass too, with the
    start it was made for: a spec costs a handful of queries (environment, quotas, course
    storage, GPU types), and building every notebook's each pass held the database for
    a long transaction every few seconds, which a class's burst of starts and every
    page's request queued behind (benchmarks/class_burst.py, busy host). A notebook's
    spec changes only with a new start (a resize is one), which `_start_key` tells. The
    pass reads outside the writers' turn: it writes only what it finds dead."""
    noticed = {} if noticed is None else noticed
    specs = {} if specs is None else specs
    async with notebooks.db.reading() as session:
        rows = (
            await session.execute(
                select(Notebook, User.name)
                .join(User, User.id == Notebook.owner_id)
                .where(Notebook.state == State.RUNNING.value, Notebook.backend_state.is_not(None))
            )
        ).all()
        work = []
        for nb, owner in rows:
            if notebooks.lifecycle.busy(nb.id):
                continue
            known = specs.get(nb.id)
            if known is None or known[0] != _start_key(nb):
                known = specs[nb.id] = (_start_key(nb), await notebooks.spec(session, nb, owner))
            work.append((nb, owner, known[1]))
    running = {nb.id for nb, _ in rows}
    for gone in set(specs) - running:
        del specs[gone]
    for stopped in set(noticed) - running:
        del noticed[stopped]  # a stop wrote its own message
    dead = []
    for nb, owner, spec in work:
        observed = await notebooks.backend.observe(spec, nb.backend_state)
        if observed.alive and observed.notice != noticed.get(nb.id, ""):
            await _tell(notebooks, nb.id, observed.notice, noticed)
        if observed.alive or notebooks.lifecycle.busy(nb.id):
            continue
        noticed.pop(nb.id, None)
        reason = f"it stopped by itself: {observed.detail or 'its server is gone'}"
        await notebooks.backend.stop(spec, nb.backend_state)  # its cgroup, its leftovers
        await notebooks.lifecycle.finish_stopped(nb.id, owner, nb.name, reason)
        async with notebooks.db.session() as session:
            audit.record(
                session, audit.SYSTEM, "notebook.died", f"notebook:{owner}/{nb.name}", reason=reason
            )
        dead.append(f"{owner}/{nb.name}")
    return dead


def _start_key(nb: Notebook) -> tuple:
    """What differs between two starts of one notebook (a resize restarts it)."""
    return (nb.started_at, nb.proxy_secret, nb.cpu_milli, nb.memory, nb.gpus, nb.gpu_type)


async def _tell(
    notebooks: NotebookService, nb_id: int, notice: str, noticed: dict[int, str]
) -> None:
    """Show `notice` as a running notebook's message, or take the one shown away ("").
    A message written since (another operation's) is left as it is."""
    shown = noticed.pop(nb_id, "")
    async with notebooks.db.session() as session:
        current = await session.get(Notebook, nb_id)
        if current is None or current.state != State.RUNNING.value:
            return
        if notice:
            current.message = notice
            noticed[nb_id] = notice
        elif current.message == shown:
            current.message = ""
        message = current.message
    # The list pages reload on a finished operation's event; the notebook keeps running.
    event = ProgressEvent("notice", 100, message, State.RUNNING.value, done=True, ok=True)
    notebooks.lifecycle.broker.publish(nb_id, event)


async def watch(notebooks: NotebookService, clock: Clock, interval: float = INTERVAL) -> None:
    """Check every `interval` seconds of `clock` (the platform's: a test moves it)."""
    noticed: dict[int, str] = {}
    specs: dict[int, tuple[tuple, NotebookSpec]] = {}
    while True:
        await clock.sleep(interval)
        try:
            dead = await check(notebooks, noticed, specs)
        except Exception:  # one failed pass must not end the watch
            log.exception("checking whether notebooks are alive failed")
            continue
        if dead:
            log.info("notebooks that stopped by themselves: %s", ", ".join(dead))

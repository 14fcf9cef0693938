"""A semester of one class on 20 GPUs: whole GPUs only, or shared/MIG types; with or without
the idle culler and reclaim. Trace-driven and seeded: one workload, four platforms.

The class: 60 students, 14 weeks, 20 GPUs (5 nodes x 4 A100 80GB).
(a) "whole only": every notebook gets a whole GPU.
(b) "MIG mix": 6 whole GPUs, 6 split into MIG halves (3g.40gb, 12 instances)
    and 8 into MIG quarters (1g.20gb, 32 instances). A session asks for the
    smallest type its work needs and takes a larger free one when that type is
    full (what the "choose another GPU type" message invites).

Assumptions (all distributions drawn from one `random.Random(seed)`):
- Lab: every Tuesday 10:00-12:00; each student attends with p=0.85, arrives
  10:00 + Exp(mean 6 min) (at most 30 min late) and leaves at 12:00. Cells
  run for LogNormal(median 1.5 min, sigma 0.8) with think gaps of
  LogNormal(median 4 min, sigma 0.8); 3% of gaps are breaks of U(15, 40) min.
  Work needs a quarter / half / whole GPU with p = 0.70 / 0.25 / 0.05.
- Homework: Poisson(2.2) sessions per student and week, due Monday 23:59;
  the day is drawn with weights 35/25/15/10/7/5/3% counting back from the
  deadline, the start hour from an evening-heavy profile (9:00-23:00).
  Sessions last LogNormal(median 70 min, sigma 0.5), at most 4 h; runs last
  LogNormal(median 5 min, sigma 1.0), at most 90 min (training), gaps
  LogNormal(median 5 min, sigma 0.9); 6% of gaps are breaks of U(20, 60) min.
  Work needs a quarter / half / whole GPU with p = 0.50 / 0.30 / 0.20.
- 35% of sessions end with the browser closed and the notebook left running.
- Patience: a student waits 15 min for a GPU in the lab, 30 min for homework,
  then gives up (the session is not served). A student whose notebook was
  stopped while they were still working asks again at their next cell.
- Work: a run on a piece of GPU of its size keeps that piece busy; a light run
  on a whole GPU still only uses a quarter of it (it is small, not faster), so
  busy GPU-hours = run time x work size.
- Without culling, an admin's nightly job stops every idle notebook at 03:00.
  With culling: `CullPolicy(idle 30 min, warn 5 min, lifetime 8 h)` checked
  every 5 minutes (`culling.plan`); a student at the keyboard presses "keep
  running" when warned, one on a break or gone does not. Reclaim
  (`reclaim.choose_victims`) stops notebooks idle at least 10 minutes when a
  request finds no GPU. Placement is `gpus.Allocator.place` throughout.
- Queue: first come, first served over all types; a request takes the
  smallest free type that fits, so a light request never blocks a heavy one
  that came first.

Figures: sessions served (got a GPU within their patience), the wait for a
GPU (mean and p95, over all grants), GPU utilisation = busy GPU-hours /
available GPU-hours, against the ideal bound = all demanded GPU work /
capacity (what perfect packing could reach), GPU-hours held idle, and the
idle GPU-hours the culler/reclaim took back from forgotten notebooks (the
time until the nightly job would have).

Run from the repository root: `.venv/bin/python benchmarks/semester.py [seed]`.
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cgu_lab.core.culling import Activity, CullPolicy, PolicySet, idle_seconds, plan
from cgu_lab.core.gpus import Allocator, Device, Holding, Offer
from cgu_lab.core.reclaim import Candidate, choose_victims

SEED = 2025
STUDENTS = 60
WEEKS = 14
DAY = 24 * 60
WEEK = 7 * DAY
LAB_START = DAY + 10 * 60  # Tuesday 10:00, minutes from Monday 00:00 of week 0
LAB_END = DAY + 12 * 60
CULL_EVERY = 5.0
POLICY = CullPolicy(idle_minutes=30, warn_minutes=5, max_lifetime_hours=8).validate()
POLICIES = PolicySet(POLICY)
RECLAIM_IDLE = 600.0
EPOCH = datetime(2025, 2, 17, tzinfo=timezone.utc)  # a Monday
GPUS = 20
SPAN = WEEKS * WEEK + DAY  # until the last homework deadline, a Monday
CAPACITY = GPUS * SPAN / 60  # GPU-hours
LAB_CAPACITY = GPUS * WEEKS * (LAB_END - LAB_START) / 60

SIZES = {"quarter": 0.25, "half": 0.5, "whole": 1.0}
OFFERS = {
    "quarter": Offer("quarter", mig_profile="1g.20gb"),
    "half": Offer("half", mig_profile="3g.40gb"),
    "whole": Offer("whole"),
}
LARGER = {"quarter": ["quarter", "half", "whole"], "half": ["half", "whole"], "whole": ["whole"]}
HOMEWORK_DAYS = [0.35, 0.25, 0.15, 0.10, 0.07, 0.05, 0.03]  # Monday (the deadline), Sunday...
HOURS = list(range(9, 24))
HOUR_WEIGHTS = [2, 3, 3, 3, 4, 4, 4, 5, 5, 6, 8, 9, 9, 7, 4]


# -- the workload -----------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    run: float  # minutes a cell runs (the kernel is busy)
    gap: float  # minutes until the next cell
    away: bool  # the gap is a break: nobody at the keyboard


@dataclass(frozen=True)
class Plan:
    kind: str  # "lab" or "homework"
    arrival: float
    size: str  # the smallest GPU type its work needs
    segments: tuple[Segment, ...]
    leave_at: float | None  # the lab's end; homework ends with its segments
    forget: bool
    patience: float

    @property
    def demand(self) -> float:
        """GPU-hours of work this session would do if served at once."""
        return sum(s.run for s in self.segments) * SIZES[self.size] / 60


def lognormal(rng: random.Random, median: float, sigma: float) -> float:
    return rng.lognormvariate(math.log(median), sigma)


def poisson(rng: random.Random, mean: float) -> int:
    limit, k, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        k += 1
        product *= rng.random()
    return k


def segments(rng, length, run, gap, breaks, cap) -> tuple[Segment, ...]:
    """Runs and gaps until `length` minutes are used; the last run is cut at the end."""
    found, used = [], 0.0
    while used < length:
        ran = min(lognormal(rng, *run), cap, length - used)
        away = rng.random() < breaks[0]
        pause = rng.uniform(*breaks[1:]) if away else lognormal(rng, *gap)
        found.append(Segment(ran, pause, away))
        used += ran + pause
    return tuple(found)


def workload(seed: int) -> list[Plan]:
    rng = random.Random(seed)
    plans: list[Plan] = []
    for week in range(WEEKS):
        base = week * WEEK
        for _student in range(STUDENTS):
            if rng.random() < 0.85:
                arrival = base + LAB_START + min(rng.expovariate(1 / 6), 30)
                leave = base + LAB_END
                size = rng.choices(["quarter", "half", "whole"], [0.70, 0.25, 0.05])[0]
                parts = segments(
                    rng, leave - arrival, (1.5, 0.8), (4, 0.8), (0.03, 15, 40), cap=leave - arrival
                )
                forget = rng.random() < 0.35
                plans.append(Plan("lab", arrival, size, parts, leave, forget, 15))
            for _ in range(poisson(rng, 2.2)):
                back = rng.choices(range(7), HOMEWORK_DAYS)[0]
                day = base + 7 * DAY - back * DAY  # next Monday counting back
                arrival = day + rng.choices(HOURS, HOUR_WEIGHTS)[0] * 60 + rng.uniform(0, 60)
                length = min(lognormal(rng, 70, 0.5), 240)
                size = rng.choices(["quarter", "half", "whole"], [0.50, 0.30, 0.20])[0]
                parts = segments(rng, length, (5, 1.0), (5, 0.9), (0.06, 20, 60), cap=90)
                forget = rng.random() < 0.35
                plans.append(Plan("homework", arrival, size, parts, None, forget, 30))
    return sorted(plans, key=lambda p: p.arrival)


# -- the platforms ---------------------------------------------------------------


PIECE = {"": 1.0, "3g.40gb": 0.5, "1g.20gb": 0.25}  # of a GPU, by MIG profile


def a100s(split: list[str]) -> list[Device]:
    """Five nodes of four A100s; `split[i]` says how GPU i is cut ("whole", "half", "quarter")."""
    devices = []
    for gpu, how in enumerate(split):
        node = f"node{gpu // 4}"
        parts, profile = {"whole": (1, ""), "half": (2, "3g.40gb"), "quarter": (4, "1g.20gb")}[how]
        for part in range(parts):
            devices.append(
                Device(
                    f"{node}-gpu{gpu}-{part}",
                    node=node,
                    model="NVIDIA A100 80GB",
                    mig_profile=profile,
                    index=gpu * 4 + part,
                )
            )
    return devices


PLATFORMS = {
    "whole only": (a100s(["whole"] * 20), False),
    "MIG mix": (a100s(["whole"] * 6 + ["half"] * 6 + ["quarter"] * 8), True),
}


# -- the simulation ---------------------------------------------------------------


@dataclass(eq=False)
class Notebook:
    id: int
    session: Session
    started: float
    last_activity: float
    busy: bool = False
    run_started: float = 0.0
    warned_at: float | None = None
    kept_at: float | None = None


@dataclass(eq=False)
class Session:
    plan: Plan
    state: str = "new"  # waiting, working, left, done
    notebook: Notebook | None = None
    step: int = 0
    away: bool = False
    asked_at: float = 0.0
    served: bool = False
    interrupted: bool = False
    token: int = 0


@dataclass
class Figures:
    waits: list[float] = field(default_factory=list)
    busy_hours: float = 0.0
    lab_busy_hours: float = 0.0  # the part of busy_hours inside the weekly lab
    held_hours: float = 0.0
    busy_held_hours: float = 0.0
    reclaimed_hours: float = 0.0
    culled: int = 0
    reclaimed: int = 0


def at(minutes: float) -> datetime:
    return EPOCH + timedelta(minutes=minutes)


def in_lab(start: float, end: float) -> float:
    """Minutes of [start, end] inside that week's lab (a run never spans two weeks)."""
    week = (start // WEEK) * WEEK
    return max(0.0, min(end, week + LAB_END) - max(start, week + LAB_START))


def next_night(now: float) -> float:
    night = (now // DAY) * DAY + 3 * 60
    return night if night > now else night + DAY


class Semester:
    def __init__(self, plans: list[Plan], devices: list[Device], mig: bool, culling: bool):
        self.piece = {d.id: PIECE[d.mig_profile] for d in devices}
        self.allocator = Allocator(devices)
        self.mig = mig
        self.culling = culling
        self.events: list[tuple[float, int, str, Session | None, int]] = []
        self.seq = 0
        self.queue: list[Session] = []
        self.running: dict[int, Notebook] = {}
        self.next_id = 0
        self.figures = Figures()
        self.sessions = [Session(p) for p in plans]

    def schedule(self, when: float, kind: str, session: Session | None = None) -> None:
        """Events of a session carry its token; a later change of plan voids them."""
        self.seq += 1
        token = session.token if session else 0
        heapq.heappush(self.events, (when, self.seq, kind, session, token))

    def run(self) -> Figures:
        for session in self.sessions:
            self.schedule(session.plan.arrival, "arrive", session)
            if session.plan.leave_at is not None:
                self.schedule(session.plan.leave_at, "lab_end", session)
        if self.culling:
            self.schedule(CULL_EVERY, "cull")
        else:
            for day in range(SPAN // DAY):
                self.schedule(day * DAY + 3 * 60, "night")
        end = SPAN
        while self.events:
            now, _, kind, session, token = heapq.heappop(self.events)
            if now > end:
                break
            if session is not None and kind != "lab_end" and token != session.token:
                continue
            getattr(self, f"on_{kind}")(now, session)
        for notebook in list(self.running.values()):
            self.release(notebook, end)
        return self.figures

    # the student
    def on_arrive(self, now: float, session: Session) -> None:
        self.ask(now, session)

    def ask(self, now: float, session: Session) -> None:
        session.state = "waiting"
        session.asked_at = now
        if self.grant(now, session):
            return
        if self.culling:
            self.reclaim_for(now, session)
            if session.state == "working":
                return
        self.queue.append(session)
        self.schedule(now + session.plan.patience, "give_up", session)

    def on_give_up(self, now: float, session: Session) -> None:
        if session.state == "waiting":
            self.queue.remove(session)
            self.finish(session)

    def on_lab_end(self, now: float, session: Session) -> None:
        if session.state == "waiting":
            self.queue.remove(session)
            self.finish(session)
        elif session.state == "working":
            self.leave(now, session)

    def start_run(self, now: float, session: Session) -> None:
        notebook = session.notebook
        notebook.busy, notebook.run_started, notebook.last_activity = True, now, now
        session.away = False
        self.schedule(now + session.plan.segments[session.step].run, "run_end", session)

    def end_run(self, now: float, notebook: Notebook) -> None:
        ran = now - notebook.run_started
        size = SIZES[notebook.session.plan.size]
        self.figures.busy_hours += ran * size / 60
        self.figures.lab_busy_hours += in_lab(notebook.run_started, now) * size / 60
        self.figures.busy_held_hours += ran * self.held_fraction(notebook) / 60
        notebook.busy, notebook.last_activity = False, now

    def on_run_end(self, now: float, session: Session) -> None:
        self.end_run(now, session.notebook)
        segment = session.plan.segments[session.step]
        session.step += 1
        if session.step == len(session.plan.segments):
            self.leave(now, session)
            return
        session.away = segment.away
        self.schedule(now + segment.gap, "next_cell", session)

    def on_next_cell(self, now: float, session: Session) -> None:
        if session.notebook is None:  # stopped while the student was thinking or away
            session.interrupted = True
            self.ask(now, session)
        else:
            self.start_run(now, session)

    def leave(self, now: float, session: Session) -> None:
        session.token += 1
        notebook = session.notebook
        if notebook is not None and notebook.busy:
            self.end_run(now, notebook)
        if notebook is not None and not session.plan.forget:
            self.release(notebook, now)
        session.state = "left" if session.notebook else "done"

    def finish(self, session: Session) -> None:
        session.token += 1
        session.state = "done"

    # GPUs
    def grant(self, now: float, session: Session) -> bool:
        kinds = LARGER[session.plan.size] if self.mig else ["whole"]
        for kind in kinds:
            placed = self.allocator.place(OFFERS[kind], 1)
            if placed is not None:
                self.next_id += 1
                notebook = Notebook(self.next_id, session, now, now)
                self.allocator.hold(Holding(notebook.id, kind, placed))
                self.running[notebook.id] = notebook
                self.figures.waits.append(now - session.asked_at)
                session.served = True
                session.state, session.notebook = "working", notebook
                session.token += 1
                self.start_run(now, session)
                return True
        return False

    def held_fraction(self, notebook: Notebook) -> float:
        return sum(self.piece[d] for d in self.allocator.holding(notebook.id).devices)

    def release(self, notebook: Notebook, now: float) -> None:
        self.figures.held_hours += (now - notebook.started) * self.held_fraction(notebook) / 60
        self.allocator.release(notebook.id)
        del self.running[notebook.id]
        session = notebook.session
        if session.notebook is notebook:
            session.notebook = None
            if session.state == "left":
                session.state = "done"
        self.serve_queue(now)

    def stop(self, notebook: Notebook, now: float) -> None:
        """The culler, reclaim or the nightly job stops a notebook."""
        if self.culling and notebook.session.state == "left":
            # Forgotten: without the culler it would have held its GPU until the nightly job.
            hours = (next_night(now) - now) * self.held_fraction(notebook) / 60
            self.figures.reclaimed_hours += hours
        self.release(notebook, now)

    def serve_queue(self, now: float) -> None:
        for session in list(self.queue):
            if self.grant(now, session):
                self.queue.remove(session)

    def activity(self, notebook: Notebook) -> Activity:
        return Activity(
            notebook.id,
            at(notebook.started),
            at(notebook.last_activity),
            busy=notebook.busy,
            warned_at=None if notebook.warned_at is None else at(notebook.warned_at),
            kept_at=None if notebook.kept_at is None else at(notebook.kept_at),
        )

    def reclaim_for(self, now: float, session: Session) -> None:
        """Stop idle notebooks for this request; the freed GPUs go first come, first served."""
        kind = session.plan.size if self.mig else "whole"
        candidates = [
            Candidate(n.id, idle_seconds(POLICY, self.activity(n), at(now)), busy=n.busy)
            for n in self.running.values()
        ]
        victims = choose_victims(self.allocator, OFFERS[kind], 1, candidates, RECLAIM_IDLE)
        for victim in victims or ():
            self.figures.reclaimed += 1
            self.stop(self.running[victim], now)
        if victims and session.state == "waiting" and session not in self.queue:
            self.grant(now, session)

    # the platform's own jobs
    def on_night(self, now: float, _: None) -> None:
        for notebook in list(self.running.values()):
            if not notebook.busy:
                self.stop(notebook, now)

    def on_cull(self, now: float, _: None) -> None:
        self.schedule(now + CULL_EVERY, "cull")
        if not self.running:
            return
        notebooks = list(self.running.values())
        decisions = plan(POLICIES, [self.activity(n) for n in notebooks], at(now))
        for notebook, decision in zip(notebooks, decisions, strict=True):
            if decision.action == "stop":
                self.figures.culled += 1
                self.stop(notebook, now)
            elif decision.action == "warn":
                notebook.warned_at = now
                session = notebook.session
                if session.state == "working" and not session.away:
                    notebook.kept_at = now
        for session in list(self.queue):
            if session in self.queue:
                self.reclaim_for(now, session)


WIDTHS = (30, 8, 9, 9, 10, 8, 9, 8, 10, 11, 8, 9, 11)
HEADER = (
    f"{'':<30}{'sessions served':<17}{'wait for a GPU':<19}{'GPU utilisation':<17}"
    f"{'work':<8}{'GPU-hours held idle':<21}stops"
)
COLUMNS = ("", "all", "lab", "mean", "p95", "all", "lab", "done", "total")
COLUMNS += ("reclaimed", "culled", "reclaim", "interrupted")


def row(cells) -> str:
    return "".join(f"{cell:<{width}}" for cell, width in zip(cells, WIDTHS, strict=True)).rstrip()


def report(name: str, plans: list[Plan], sessions: list[Session], figures: Figures) -> str:
    lab = [s for s in sessions if s.plan.kind == "lab"]
    waits = sorted(figures.waits)
    p95 = waits[round(0.95 * (len(waits) - 1))]
    demand = sum(p.demand for p in plans)
    return row(
        (
            name,
            f"{sum(s.served for s in sessions) / len(sessions):.1%}",
            f"{sum(s.served for s in lab) / len(lab):.1%}",
            f"{statistics.fmean(waits):.1f} min",
            f"{p95:.1f} min",
            f"{figures.busy_hours / CAPACITY:.2%}",
            f"{figures.lab_busy_hours / LAB_CAPACITY:.1%}",
            f"{figures.busy_hours / demand:.1%}",
            f"{figures.held_hours - figures.busy_held_hours:.0f}",
            f"{figures.reclaimed_hours:.0f}",
            figures.culled,
            figures.reclaimed,
            sum(s.interrupted for s in sessions),
        )
    )


def main() -> None:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else SEED
    started = time.perf_counter()
    plans = workload(seed)
    lab = [p for p in plans if p.kind == "lab"]
    demand = sum(p.demand for p in plans)
    lab_demand = sum(p.demand for p in lab)
    print(f"== a semester: {STUDENTS} students, {WEEKS} weeks, 20 GPUs (seed {seed}) ==")
    print(
        f"workload: {len(plans)} sessions ({len(lab)} lab, {len(plans) - len(lab)} homework), "
        f"{demand:.0f} GPU-hours of work; a lab seats {len(lab) / WEEKS:.0f} students whose "
        f"work needs {sum(SIZES[p.size] for p in lab) / WEEKS:.1f} GPUs in all"
    )
    busiest = max(
        sum(SIZES[p.size] for p in lab if p.arrival // WEEK == week) for week in range(WEEKS)
    )
    print(
        f"ideal packing bound (each session gets exactly its work size at once): utilisation "
        f"{demand / CAPACITY:.2%} over the semester, {lab_demand / LAB_CAPACITY:.1%} in lab "
        f"hours, all work done; the busiest lab needs {busiest:.1f} of {GPUS} GPUs"
    )
    print(HEADER)
    print(row(COLUMNS))
    for name, (devices, mig) in PLATFORMS.items():
        for culling in (False, True):
            simulation = Semester(plans, devices, mig, culling)
            figures = simulation.run()
            label = f"{name}, {'culler + reclaim' if culling else 'nightly stop'}"
            print(report(label, plans, simulation.sessions, figures))
    print(f"(simulated in {time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()

"""The idle culler's decision: keep, warn or stop a running notebook.

GPUs are the scarce thing in a teaching platform, and a notebook left open in
a closed laptop holds one for nobody. Like Colab, the platform stops notebooks
that nobody uses, but it never takes a running computation away and it never
surprises the owner:

- A notebook is idle while no kernel executes, its GPU (when the policy
  looks at it) works below `gpu_idle_percent`, and nobody ran code or a
  terminal command. Its idle clock starts at the latest of its start, its
  last activity and the owner's "keep running".
- A working notebook (a kernel executing, or its GPU at or above
  `gpu_idle_percent`) and a persistent one are never warned or stopped, by
  idleness or by age, and neither is a notebook whose activity could not be
  read: stopping on missing data would punish a user for the platform's own
  failure (Kubeflow's culler keeps such notebooks too).
- An idle notebook is due to stop `idle_minutes` after its idle clock
  started; any other notebook is due `max_lifetime_hours` after it started,
  however recently it was used, so a forgotten session cannot hold a GPU for
  days. "Keep running" resets the idle clock but not the lifetime.
- The warning rule: with `warn_minutes > 0`, a notebook is stopped only if it
  was warned inside the warning window of the stop it is due for (at or after
  `due - warn_minutes`) and at least `warn_minutes` have passed since that
  warning. The first pass that finds a notebook in its window warns it, once,
  and the stop is `warned_at + warn_minutes` (the due time itself when the
  warning came as the window opened). So the owner always sees the warning
  for the full `warn_minutes`, also when the culler was not running for a
  while (it then warns late and stops late, never early), and a warning given
  before later activity (or for an earlier, different due time) no longer
  counts, so a fresh stop always gets a fresh warning.

The controller records `warned_at = now` when it delivers a "warn" decision,
`kept_at` when the owner presses "keep running", and stops what `plan` says.

Idle kernels are a second, lighter rule: with `kernel_idle_minutes`, each notebook's
server shuts down its own kernels idle that long while the server stays up (a kernel is
most of an idle notebook's memory; the student's files, tabs and terminals stay). That
is jupyter-server's own culler (MappingKernelManager's cull_idle_timeout, cull_interval,
cull_connected), given its settings at the server's launch (`kernel_culling`), not a
second culler of ours: it sees each kernel's activity where it happens. A busy kernel is
never culled (cull_busy stays off), and a kernel with a browser tab connected only when
the policy says so (`kernel_cull_connected`). It applies whether or not the policy stops
idle servers (`enabled`), so a group exempt from stops may still free its kernels.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, NamedTuple

from .errors import Invalid

Action = Literal["keep", "warn", "stop"]
Cause = Literal["idle", "lifetime"]


@dataclass(frozen=True)
class CullPolicy:
    idle_minutes: float
    warn_minutes: float = 0
    gpu_idle_percent: float | None = None
    max_lifetime_hours: float | None = None
    # Idle kernels are shut down by their server after this long; None: never.
    kernel_idle_minutes: float | None = None
    # ...also when a browser tab is connected to them.
    kernel_cull_connected: bool = False

    def validate(self) -> CullPolicy:
        """Refuse settings that would stop notebooks without a fair warning, or never make sense."""
        if not _positive(self.idle_minutes):
            raise Invalid(
                f"the idle limit must be a number of minutes above 0; got {self.idle_minutes}"
            )
        if not (math.isfinite(self.warn_minutes) and self.warn_minutes >= 0):
            raise Invalid(
                "the warning time must be a number of minutes, 0 to stop without a warning; "
                f"got {self.warn_minutes}"
            )
        if self.warn_minutes >= self.idle_minutes:
            raise Invalid(
                f"the warning ({_number(self.warn_minutes)} minutes) must come before the "
                "stop, so it must be shorter than the idle limit "
                f"({_number(self.idle_minutes)} minutes)"
            )
        if self.gpu_idle_percent is not None and not 0 < self.gpu_idle_percent <= 100:
            raise Invalid(
                "the GPU idle threshold is a percentage of GPU use above 0 and at most 100; "
                f"got {self.gpu_idle_percent}"
            )
        if self.kernel_idle_minutes is not None and not (
            _positive(self.kernel_idle_minutes) and self.kernel_idle_minutes <= MAX_KERNEL_MINUTES
        ):
            raise Invalid(
                "the idle limit of kernels must be a number of minutes above 0 and at most "
                f"{MAX_KERNEL_MINUTES}, or unset to leave kernels running; "
                f"got {self.kernel_idle_minutes}"
            )
        if self.max_lifetime_hours is None:
            return self
        if not _positive(self.max_lifetime_hours):
            raise Invalid(
                "the maximum lifetime must be a number of hours above 0, or unset for no "
                f"limit; got {self.max_lifetime_hours}"
            )
        if self.warn_minutes >= self.max_lifetime_hours * 60:
            raise Invalid(
                f"the warning ({_number(self.warn_minutes)} minutes) must be shorter than "
                f"the maximum lifetime ({_number(self.max_lifetime_hours)} hours)"
            )
        return self


# A kernel idle limit beyond a week is not one (jupyter-server takes whole seconds).
MAX_KERNEL_MINUTES = 7 * 24 * 60
# jupyter-server looks at its kernels this often at most (its own default is 300 s); a
# shorter limit is looked at four times within it, so a kernel goes at most a quarter late.
KERNEL_CULL_INTERVAL_MAX = 60


@dataclass(frozen=True)
class KernelCulling:
    """jupyter-server's kernel culler settings for one server, in its own units."""

    idle_seconds: int  # MappingKernelManager.cull_idle_timeout
    interval_seconds: int  # MappingKernelManager.cull_interval
    connected: bool  # MappingKernelManager.cull_connected


def kernel_culling(policy: CullPolicy) -> KernelCulling | None:
    """The settings a notebook's server is launched with under `policy`; None: no culling."""
    minutes = policy.kernel_idle_minutes
    if minutes is None:
        return None
    idle = max(1, round(minutes * 60))
    interval = max(1, min(KERNEL_CULL_INTERVAL_MAX, idle // 4))
    return KernelCulling(idle, interval, policy.kernel_cull_connected)


@dataclass(frozen=True)
class PolicySet:
    """The platform's policy and the groups that have their own (a research group, a course)."""

    default: CullPolicy
    groups: Mapping[str, CullPolicy] = field(default_factory=dict)

    def for_group(self, group: str | None) -> CullPolicy:
        """A notebook charged to a group with an override follows it; any other the default."""
        if group is None:
            return self.default
        return self.groups.get(group, self.default)

    def validate(self) -> PolicySet:
        self.default.validate()
        for group, policy in self.groups.items():
            try:
                policy.validate()
            except Invalid as error:
                raise Invalid(f"group '{group}': {error.message}") from None
        return self


@dataclass(frozen=True)
class Activity:
    """What the controller knows of one running notebook at the start of a pass.

    `last_activity` is the latest kernel or terminal activity the notebook's
    server reports, None when the server could not be read. GPU use is a
    sample, not a memory: a controller that wants GPU work to restart the idle
    clock folds the times it saw the GPU busy into `last_activity`.
    """

    notebook_id: int
    started_at: datetime
    last_activity: datetime | None
    busy: bool = False
    gpu_utilization: float | None = None
    persistent: bool = False
    group: str | None = None
    warned_at: datetime | None = None
    kept_at: datetime | None = None
    # Why the culler leaves this notebook alone whatever it does (its group is exempt, the
    # culler is off); "" when the policy applies. Not `persistent`: the owner did not ask.
    exempt: str = ""


class Decision(NamedTuple):
    """What to do with one notebook now.

    `reason` names the cause ("idle for 62 minutes (limit 60)"); `message` is
    the sentence for the owner (empty when there is nothing to tell);
    `stop_at` is when the notebook stops if nothing changes, for the countdown
    in JupyterLab (None when no stop is ahead); `idle_seconds` is how long it
    has been idle (None when it is not idle or nobody knows).

    A NamedTuple, immutable as a frozen dataclass would be: a pass makes one per
    running notebook (ten thousand on a large platform), and a frozen dataclass
    takes several times longer to build (issue 25's pass budget).
    """

    notebook_id: int
    action: Action
    reason: str
    stop_at: datetime | None = None
    cause: Cause | None = None
    idle_seconds: float | None = None
    message: str = ""


def gpu_busy(policy: CullPolicy, activity: Activity) -> bool:
    """The GPU counts as work only when the policy looks at it and its use is known."""
    return (
        policy.gpu_idle_percent is not None
        and activity.gpu_utilization is not None
        and activity.gpu_utilization >= policy.gpu_idle_percent
    )


def idle_since(policy: CullPolicy, activity: Activity) -> datetime | None:
    """When the idle clock started, or None when the notebook is working or unreadable."""
    if activity.last_activity is None or activity.busy or gpu_busy(policy, activity):
        return None
    moments = [activity.started_at, activity.last_activity]
    if activity.kept_at is not None:
        moments.append(activity.kept_at)
    return max(moments)


def idle_seconds(policy: CullPolicy, activity: Activity, now: datetime) -> float | None:
    """How long the notebook has been idle at `now` (what reclaim ranks by)."""
    since = idle_since(policy, activity)
    if since is None:
        return None
    return max(0.0, (now - since).total_seconds())


def decide(policy: CullPolicy, activity: Activity, now: datetime) -> Decision:
    """Keep, warn or stop one notebook under `policy` at `now` (rules in the module doc)."""
    return _decide(policy, _spans(policy), activity, now)


def _decide(policy: CullPolicy, spans: _Spans, activity: Activity, now: datetime) -> Decision:
    """`decide` with the policy's spans at hand (a pass looks them up once per group).

    `idle_since` and `idle_seconds` are written out here rather than called: this runs for
    every notebook of every pass, and the calls were a third of its time (issue 25)."""
    notebook_id = activity.notebook_id
    last = activity.last_activity
    since = idle = None
    if not (last is None or activity.busy or gpu_busy(policy, activity)):
        since = activity.started_at
        if last > since:
            since = last
        kept = activity.kept_at
        if kept is not None and kept > since:
            since = kept
        idle = (now - since).total_seconds()
        if not idle > 0.0:
            idle = 0.0
    if activity.exempt:
        return Decision(notebook_id, "keep", activity.exempt, None, None, idle)
    if activity.persistent:
        return Decision(
            notebook_id, "keep", "persistent notebooks are never stopped", None, None, idle
        )
    if since is None or idle is None:
        return Decision(notebook_id, "keep", _working(policy, activity), None, None, idle)
    due, cause, reason = _earliest_due(spans, activity, since, idle, now)
    warn = spans.warn
    warned_at = activity.warned_at
    if not warn:
        stop_at, pending = due, reason
    elif warned_at is not None and warned_at >= due - warn:
        stop_at, pending = warned_at + warn, f"{reason}; the owner was warned"
    elif now >= due - warn:
        stop_at = now + warn
        message = _warning(cause, reason, warn)
        return Decision(notebook_id, "warn", reason, stop_at, cause, idle, message)
    else:
        return Decision(notebook_id, "keep", reason, due, cause, idle)
    if now < stop_at:
        # Still counting down after a warning: the owner keeps seeing it.
        notice = _warning(cause, reason, stop_at - now) if warn else ""
        return Decision(notebook_id, "keep", pending, stop_at, cause, idle, notice)
    message = f"This notebook was stopped because it was {reason}. Start it again when you need it."
    return Decision(notebook_id, "stop", reason, stop_at, cause, idle, message)


def plan(
    policies: PolicySet,
    activities: Iterable[Activity],
    now: datetime,
    max_stops: int | None = None,
) -> list[Decision]:
    """Decide for every notebook of a pass, in the order given, stopping at most `max_stops`.

    Stopping a notebook is slow work for the backend; like JupyterHub's culler
    a pass limits how many it starts. The longest idle go first; the rest stay
    due and are stopped by a later pass (their decision says so).
    """
    if max_stops is not None and max_stops < 0:
        raise Invalid(f"the culler's stops per pass cannot be negative; got {max_stops}")
    # A pass decides for thousands of notebooks under a handful of policies: each group's
    # policy and spans are looked up once.
    by_group: dict[str | None, tuple[CullPolicy, _Spans]] = {}
    decisions = []
    for activity in activities:
        chosen = by_group.get(activity.group)
        if chosen is None:
            policy = policies.for_group(activity.group)
            chosen = by_group[activity.group] = (policy, _spans(policy))
        decisions.append(_decide(chosen[0], chosen[1], activity, now))
    if max_stops is None:
        return decisions
    stops = [i for i, decision in enumerate(decisions) if decision.action == "stop"]
    stops.sort(key=lambda i: (-(decisions[i].idle_seconds or 0.0), decisions[i].notebook_id))
    for i in stops[max_stops:]:
        decisions[i] = decisions[i]._replace(
            action="keep",
            reason=f"{decisions[i].reason}; due to stop, deferred to the next pass "
            f"(at most {max_stops} stops per pass)",
            message="",
        )
    return decisions


class _Spans(NamedTuple):
    """A policy's limits as the clock arithmetic and the messages need them."""

    idle: timedelta
    warn: timedelta
    lifetime: timedelta | None
    idle_text: str
    lifetime_text: str


@functools.lru_cache(maxsize=256)
def _spans(policy: CullPolicy) -> _Spans:
    # A pass decides for thousands of notebooks under a handful of policies.
    lifetime = policy.max_lifetime_hours
    return _Spans(
        timedelta(minutes=policy.idle_minutes),
        timedelta(minutes=policy.warn_minutes),
        None if lifetime is None else timedelta(hours=lifetime),
        _number(policy.idle_minutes),
        "" if lifetime is None else _number(lifetime),
    )


def _earliest_due(
    spans: _Spans, activity: Activity, since: datetime, idle: float, now: datetime
) -> tuple[datetime, Cause, str]:
    due = since + spans.idle
    if spans.lifetime is not None:
        end = activity.started_at + spans.lifetime
        if end < due:
            hours = math.floor((now - activity.started_at).total_seconds() / 360) / 10
            return end, "lifetime", _reason("lifetime", hours, spans.lifetime_text)
    return due, "idle", _reason("idle", math.floor(idle / 60), spans.idle_text)


@functools.lru_cache(maxsize=8192)
def _reason(cause: Cause, amount: float, limit: str) -> str:
    """Why a stop is due, in words: `amount` is whole minutes idle, or hours running (to a
    tenth). Cached: ten thousand notebooks of a pass share a few hundred reasons, and
    writing each one out was a third of a pass's culling time (issue 25)."""
    if cause == "idle":
        return f"idle for {_minutes_words(int(amount))} (limit {limit})"
    return f"running for {_count(amount, 'hour')} (limit {limit})"


def _working(policy: CullPolicy, activity: Activity) -> str:
    """Why a notebook without an idle clock is kept."""
    if activity.last_activity is None:
        return "activity unknown: the notebook's server did not answer"
    if activity.busy:
        return "a kernel is running"
    return (
        f"GPU busy ({_number(activity.gpu_utilization or 0.0)}% used; idle below "
        f"{_number(policy.gpu_idle_percent or 0.0)}%)"
    )


def minutes_text(seconds: float) -> str:
    """A span as people say it: "less than a minute", "1 minute", "4 minutes" (whole minutes
    gone by, so a notebook idle for 4:50 is "4 minutes" idle, the way a clock counts)."""
    return _minutes_words(math.floor(max(0.0, seconds) / 60))


def _minutes_words(minutes: int) -> str:
    return "less than a minute" if minutes < 1 else _count(minutes, "minute")


def time_left_text(seconds: float) -> str:
    """How long until something happens: "in less than a minute", "in 1 minute", "in 10
    minutes" (rounded to the nearest minute, never "in 0 minutes" nor "in 1 minute" for 0:17)."""
    if seconds < 60:
        return "in less than a minute"
    return f"in {_count(max(1, round(seconds / 60)), 'minute')}"


@functools.lru_cache(maxsize=4096)
def _count(value: float, word: str) -> str:
    """1 -> "1 minute", 2 -> "2 minutes", 1.5 -> "1.5 hours"."""
    return f"{_number(value)} {word}{'' if _number(value) == '1' else 's'}"


def _warning(cause: Cause, reason: str, left: timedelta) -> str:
    when = time_left_text(left.total_seconds())
    if cause == "idle":
        return (
            f"This notebook has been {reason} and will be stopped {when}. "
            "Run something or press 'Keep running' to keep it."
        )
    return (
        f"This notebook has been {reason} and will be stopped {when}. "
        "Save your work now; you can start it again afterwards."
    )


def _positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def _number(value: float) -> str:
    """12 -> "12", 1.5 -> "1.5": limits read as people typed them."""
    text = f"{value:.1f}"
    return text.removesuffix(".0")

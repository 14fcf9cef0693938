"""The idle culler's decision: never a busy, persistent or unreadable notebook, always warned."""

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cgu_lab.core.culling import (
    Activity,
    CullPolicy,
    PolicySet,
    decide,
    idle_seconds,
    idle_since,
    plan,
)
from cgu_lab.core.errors import Invalid

T0 = datetime(2025, 3, 4, 10, 0, tzinfo=timezone.utc)
HOUR = CullPolicy(idle_minutes=60, warn_minutes=10)
SILENT = CullPolicy(idle_minutes=60)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def notebook(last=0.0, **fields) -> Activity:
    """A notebook started at T0 whose last activity was `last` minutes later (None: unknown)."""
    fields.setdefault("started_at", T0)
    return Activity(1, last_activity=None if last is None else at(last), **fields)


# -- the policy ---------------------------------------------------------------


def test_a_sensible_policy_validates():
    policy = CullPolicy(60, 10, gpu_idle_percent=5, max_lifetime_hours=12)
    assert policy.validate() is policy


@pytest.mark.parametrize(
    ("policy", "words"),
    [
        (CullPolicy(0), "idle limit must be a number of minutes above 0"),
        (CullPolicy(-5), "idle limit"),
        (CullPolicy(float("nan")), "idle limit"),
        (CullPolicy(float("inf")), "idle limit"),
        (CullPolicy(60, -1), "warning time must be a number of minutes"),
        (CullPolicy(60, 60), "shorter than the idle limit (60 minutes)"),
        (CullPolicy(30, 45), "warning (45 minutes) must come before the stop"),
        (CullPolicy(60, gpu_idle_percent=0), "percentage of GPU use"),
        (CullPolicy(60, gpu_idle_percent=150), "percentage of GPU use"),
        (CullPolicy(60, max_lifetime_hours=0), "maximum lifetime must be a number of hours"),
        (CullPolicy(60, max_lifetime_hours=-2), "maximum lifetime"),
        (CullPolicy(60, 10, max_lifetime_hours=0.1), "shorter than the maximum lifetime"),
    ],
)
def test_nonsense_policies_are_refused_with_a_sentence(policy, words):
    with pytest.raises(Invalid) as refused:
        policy.validate()
    assert words in refused.value.message


def test_a_group_override_applies_to_its_notebooks_only():
    research = CullPolicy(idle_minutes=240)
    policies = PolicySet(HOUR, {"research": research})
    assert policies.for_group("research") is research
    assert policies.for_group("cs101") is HOUR
    assert policies.for_group(None) is HOUR
    idle_two_hours = notebook(0, group="research", warned_at=at(115))
    decisions = plan(policies, [idle_two_hours, notebook(0, warned_at=at(115))], at(125))
    assert [d.action for d in decisions] == ["keep", "stop"]


def test_a_bad_group_override_names_the_group():
    with pytest.raises(Invalid) as refused:
        PolicySet(HOUR, {"research": CullPolicy(10, 20)}).validate()
    assert refused.value.message.startswith("group 'research': the warning (20 minutes)")
    with pytest.raises(Invalid):
        PolicySet(CullPolicy(-1)).validate()


# -- what is idle ----------------------------------------------------------------


def test_the_idle_clock_starts_at_the_latest_of_start_activity_and_keep():
    assert idle_since(SILENT, notebook(5)) == at(5)
    assert idle_since(SILENT, notebook(5, kept_at=at(30))) == at(30)
    # Activity from before this start (a previous session) does not count as idle time.
    assert idle_since(SILENT, notebook(-90)) == T0
    assert idle_seconds(SILENT, notebook(5), at(20)) == 15 * 60


def test_a_running_kernel_an_unknown_activity_or_a_busy_gpu_is_not_idle():
    gpu_aware = CullPolicy(60, gpu_idle_percent=10)
    assert idle_since(SILENT, notebook(0, busy=True)) is None
    assert idle_since(SILENT, notebook(None)) is None
    assert idle_since(gpu_aware, notebook(0, gpu_utilization=10)) is None
    assert idle_since(gpu_aware, notebook(0, gpu_utilization=9.9)) == T0
    # No reading, or a policy that ignores the GPU: kernel and terminal activity decide.
    assert idle_since(gpu_aware, notebook(0, gpu_utilization=None)) == T0
    assert idle_since(SILENT, notebook(0, gpu_utilization=100)) == T0
    assert idle_seconds(SILENT, notebook(0, busy=True), at(500)) is None


# -- keep, warn, stop -----------------------------------------------------------


def test_without_a_warning_an_idle_notebook_stops_at_the_limit():
    before = decide(SILENT, notebook(0), at(59))
    assert (before.action, before.stop_at, before.cause) == ("keep", at(60), "idle")
    assert before.reason == "idle for 59 minutes (limit 60)"
    assert before.message == ""
    stop = decide(SILENT, notebook(0), at(62.5))
    assert stop.action == "stop"
    assert stop.reason == "idle for 62 minutes (limit 60)"
    assert stop.idle_seconds == 62.5 * 60
    assert stop.message == (
        "This notebook was stopped because it was idle for 62 minutes (limit 60). "
        "Start it again when you need it."
    )


def test_an_idle_notebook_is_warned_once_then_stopped():
    early = decide(HOUR, notebook(0), at(49))
    assert (early.action, early.stop_at) == ("keep", at(60))
    warn = decide(HOUR, notebook(0), at(50))
    assert (warn.action, warn.stop_at, warn.cause) == ("warn", at(60), "idle")
    assert warn.message == (
        "This notebook has been idle for 50 minutes (limit 60) and will be stopped in "
        "10 minutes. Run something or press 'Keep running' to keep it."
    )
    warned = notebook(0, warned_at=at(50))
    again = decide(HOUR, warned, at(55))
    assert (again.action, again.stop_at) == ("keep", at(60))
    assert again.reason == "idle for 55 minutes (limit 60); the owner was warned"
    assert decide(HOUR, warned, at(60)).action == "stop"


def test_a_culler_that_was_down_warns_late_and_stops_late_never_early():
    late = decide(HOUR, notebook(0), at(180))
    assert (late.action, late.stop_at) == ("warn", at(190))
    warned = notebook(0, warned_at=at(180))
    assert decide(HOUR, warned, at(189)).action == "keep"
    stop = decide(HOUR, warned, at(190))
    assert (stop.action, stop.reason) == ("stop", "idle for 190 minutes (limit 60)")


def test_a_warning_before_later_activity_does_not_count():
    # Warned at 55, the student ran a cell at 58: the next stop needs a new warning.
    stale = notebook(58, warned_at=at(55))
    assert decide(HOUR, stale, at(107)).action == "keep"
    rewarn = decide(HOUR, stale, at(110))
    assert (rewarn.action, rewarn.stop_at) == ("warn", at(120))


def test_keep_running_resets_the_idle_clock():
    kept = notebook(0, warned_at=at(52), kept_at=at(55))
    decision = decide(HOUR, kept, at(61))
    assert (decision.action, decision.stop_at) == ("keep", at(115))
    assert decision.reason == "idle for 6 minutes (limit 60)"


@pytest.mark.parametrize(
    ("activity", "reason"),
    [
        (notebook(0, persistent=True), "persistent notebooks are never stopped"),
        (notebook(0, busy=True), "a kernel is running"),
        (notebook(None), "activity unknown: the notebook's server did not answer"),
        (notebook(0, gpu_utilization=80.0), "GPU busy (80% used; idle below 10%)"),
    ],
)
def test_working_persistent_and_unreadable_notebooks_are_never_warned_or_stopped(activity, reason):
    policy = CullPolicy(60, 10, gpu_idle_percent=10, max_lifetime_hours=2)
    for minutes in (55, 65, 24 * 60):
        decision = decide(policy, activity, at(minutes))
        assert (decision.action, decision.reason, decision.stop_at) == ("keep", reason, None)


def test_the_lifetime_stops_an_active_notebook_with_its_own_warning():
    policy = CullPolicy(60, 10, max_lifetime_hours=12)
    active = notebook(12 * 60 - 8)  # ran a cell 8 minutes before the end of its lifetime
    warn = decide(policy, active, at(12 * 60 - 6))
    assert (warn.action, warn.cause, warn.stop_at) == ("warn", "lifetime", at(12 * 60 + 4))
    assert warn.reason == "running for 11.9 hours (limit 12)"
    assert "Save your work now" in warn.message
    warned = notebook(12 * 60 - 1, warned_at=at(12 * 60 - 6), kept_at=at(12 * 60 - 5))
    assert decide(policy, warned, at(12 * 60 + 3)).action == "keep"
    stop = decide(policy, warned, at(12 * 60 + 4))
    assert (stop.action, stop.cause) == ("stop", "lifetime")
    assert stop.reason == "running for 12 hours (limit 12)"


def test_the_lifetime_without_warning_and_the_earlier_cause_wins():
    policy = CullPolicy(60, max_lifetime_hours=1.5)
    idle = decide(policy, notebook(0), at(61))
    assert (idle.action, idle.cause) == ("stop", "idle")
    aged = decide(policy, notebook(50), at(90))
    assert (aged.action, aged.cause, aged.reason) == (
        "stop",
        "lifetime",
        "running for 1.5 hours (limit 1.5)",
    )


def test_a_warning_counts_only_inside_the_window_of_the_stop_it_precedes():
    policy = CullPolicy(60, 10, max_lifetime_hours=2)
    # The lifetime ends at 120; its window opened at 110.
    decision = decide(policy, notebook(70, warned_at=at(110)), at(120))
    assert (decision.action, decision.cause) == ("stop", "lifetime")
    old = decide(policy, notebook(70, warned_at=at(30)), at(120))
    assert (old.action, old.stop_at) == ("warn", at(130))


# -- a whole pass -----------------------------------------------------------


def test_plan_stops_at_most_max_stops_longest_idle_first_in_input_order():
    policies = PolicySet(SILENT)
    activities = [
        Activity(1, T0, at(10)),
        Activity(2, T0, at(0)),
        Activity(3, T0, at(100)),
        Activity(4, T0, at(5)),
    ]
    decisions = plan(policies, activities, at(120), max_stops=2)
    assert [d.notebook_id for d in decisions] == [1, 2, 3, 4]
    assert [d.action for d in decisions] == ["keep", "stop", "keep", "stop"]
    deferred = decisions[0]
    assert deferred.reason == (
        "idle for 110 minutes (limit 60); due to stop, deferred to the next pass "
        "(at most 2 stops per pass)"
    )
    assert deferred.message == ""
    assert [d.action for d in plan(policies, activities, at(120))].count("stop") == 3
    assert [d.action for d in plan(policies, activities, at(120), 0)].count("stop") == 0


def test_plan_refuses_a_negative_limit():
    with pytest.raises(Invalid, match="cannot be negative"):
        plan(PolicySet(SILENT), [], T0, max_stops=-1)


# -- the warning guarantee, over any schedule of passes -----------------------------------

policies_with_warning = st.builds(
    CullPolicy,
    idle_minutes=st.integers(2, 240),
    warn_minutes=st.integers(1, 30),
    max_lifetime_hours=st.none() | st.integers(1, 12),
).filter(lambda p: p.warn_minutes < p.idle_minutes)


@settings(max_examples=150, deadline=None)
@given(
    policy=policies_with_warning,
    last=st.integers(-30, 300),
    kept=st.none() | st.integers(0, 300),
    gaps=st.lists(st.integers(1, 400), min_size=1, max_size=40),
)
def test_no_stop_comes_without_a_full_warning_and_the_limit(policy, last, kept, gaps):
    """Passes at arbitrary times (the culler may pause for hours): every stop is fair."""
    activity = notebook(last, kept_at=None if kept is None else at(kept))
    now = T0
    for gap in gaps:
        now += timedelta(minutes=gap)
        decision = decide(policy, activity, now)
        if decision.action == "warn":
            assert decision.stop_at >= now + timedelta(minutes=policy.warn_minutes)
            activity = Activity(**{**activity.__dict__, "warned_at": now})
        elif decision.action == "stop":
            warned_at = activity.warned_at
            assert warned_at is not None
            assert now - warned_at >= timedelta(minutes=policy.warn_minutes)
            if decision.cause == "idle":
                assert decision.idle_seconds >= policy.idle_minutes * 60
            else:
                assert now - T0 >= timedelta(hours=policy.max_lifetime_hours)
            return

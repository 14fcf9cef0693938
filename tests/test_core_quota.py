"""Quota rules: limits, messages that name the limit, and group budgets."""

import re

import pytest

from cgu_lab.core import quota
from cgu_lab.core.errors import Invalid, QuotaExceeded
from cgu_lab.core.quota import Limits
from cgu_lab.core.resources import Resources

GIB = 2**30


def test_within_limits_passes():
    check = quota.check(
        quota.USER,
        Limits(cpu_milli=4000, memory=8 * GIB, notebooks=2),
        Resources(cpu_milli=1000, memory=GIB, notebooks=1),
        Resources.for_notebook(2000, 2 * GIB, None, 0),
    )
    assert check.ok
    quota.enforce(check)


def test_gpu_message_names_limit_and_use():
    check = quota.check(
        quota.USER,
        Limits(gpus={"standard": 1}),
        Resources(gpus={"standard": 1}, notebooks=1),
        Resources.for_notebook(1000, GIB, "standard", 1),
    )
    with pytest.raises(QuotaExceeded) as error:
        quota.enforce(check)
    assert error.value.message == (
        "your quota allows 1 GPU of type 'standard'; you use 1 GPU of type 'standard' "
        "and asked for 1 GPU of type 'standard' more."
    )
    assert error.value.status == 403


def test_unlisted_gpu_type_allows_none_and_none_means_any():
    asked = Resources.for_notebook(1000, GIB, "premium", 2)
    assert not quota.check(quota.USER, Limits(gpus={"standard": 4}), Resources(), asked).ok
    assert quota.check(quota.USER, Limits(gpus=None), Resources(), asked).ok


def test_every_excess_is_reported():
    check = quota.check(
        quota.group_subject("ml-2026"),
        Limits(cpu_milli=1000, memory=GIB, notebooks=1),
        Resources(cpu_milli=500, memory=GIB // 2, notebooks=1),
        Resources.for_notebook(1000, GIB, None, 0),
    )
    dimensions = {e.dimension for e in check.excesses}
    assert dimensions == {"cpu", "memory", "notebooks"}
    expected = "the quota of group 'ml-2026' allows 1 CPU; its members use 0.5 CPUs"
    with pytest.raises(QuotaExceeded, match=re.escape(expected)):
        quota.enforce(check)


def test_negative_limits_are_invalid():
    with pytest.raises(Invalid):
        Limits(cpu_milli=-1).validate()
    with pytest.raises(Invalid):
        Limits(gpus={"standard": -2}).validate()


def test_member_quota_must_fit_group_budget():
    budget = Limits(cpu_milli=8000, memory=16 * GIB, gpus={"standard": 4}, notebooks=3)
    quota.within_budget(
        Limits(cpu_milli=2000, memory=4 * GIB, gpus={"standard": 1}, notebooks=1), budget, "c"
    )
    with pytest.raises(QuotaExceeded, match="CPU at most 8 CPUs"):
        quota.within_budget(Limits(cpu_milli=9000, memory=GIB, gpus={}, notebooks=1), budget, "c")
    with pytest.raises(QuotaExceeded, match="GPU limits per type"):
        quota.within_budget(Limits(cpu_milli=1000, memory=GIB, gpus=None, notebooks=1), budget, "c")
    with pytest.raises(QuotaExceeded, match="memory at most"):
        quota.within_budget(Limits(cpu_milli=1000, memory=None, gpus={}, notebooks=1), budget, "c")
    with pytest.raises(QuotaExceeded, match="at most 0 GPUs of type 'premium'"):
        quota.within_budget(
            Limits(cpu_milli=1000, memory=GIB, gpus={"premium": 1}, notebooks=1), budget, "c"
        )
    # An unlimited budget lets managers set anything.
    quota.within_budget(Limits(), Limits(), "c")

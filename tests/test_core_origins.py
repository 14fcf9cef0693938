"""Where notebooks live, as the banner of `cgu-lab up` and the System page say it
(issue 23, item 10h): an address a person can open, with its port."""

from __future__ import annotations

import pytest

from cgu_lab.core.origins import OriginPlan


@pytest.mark.parametrize(
    ("plan", "pattern"),
    [
        (
            OriginPlan("http://127.0.0.1:8000", domain="localhost"),
            "http://<owner>--<name>.localhost:8000",
        ),
        (
            OriginPlan("http://127.0.0.1:8000", domain="localhost", port=8443),
            "http://<owner>--<name>.localhost:8443",
        ),
        (
            OriginPlan("https://lab.example.edu", domain="nb.example.edu"),
            "https://<owner>--<name>.nb.example.edu",
        ),
        (OriginPlan("http://10.0.0.5:8000", port=8001), "http://<controller host>:8001"),
    ],
)
def test_the_notebook_pattern_carries_the_port_a_browser_needs(plan, pattern):
    assert plan.describe()["pattern"] == pattern
    # The pattern is the real address with the names filled in.
    if plan.subdomains:
        real = pattern.replace("<owner>", "ann").replace("<name>", "hw1")
        assert plan.notebook_origin("ann", "hw1") == real

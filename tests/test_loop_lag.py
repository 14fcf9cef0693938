"""The controller's event-loop lag (monitoring/loop_lag.py): a callback that holds the loop
is seen on /metrics, for admins only."""

from __future__ import annotations

import re
import time


def lag_counts(text: str) -> dict[str, float]:
    """The histogram's cumulative bucket counts, by upper bound."""
    return {
        bound: float(count)
        for bound, count in re.findall(
            r'^cgu_lab_event_loop_lag_seconds_bucket\{le="([^"]+)"\} (\S+)$', text, re.M
        )
    }


def test_a_held_event_loop_shows_on_the_metrics(site, admin, alice):
    before = lag_counts(admin.get("/api/metrics").text)
    assert before["+Inf"] >= 0 and "0.25" in before

    async def hold_the_loop() -> None:
        time.sleep(0.4)  # what a slow synchronous call in a request does to everyone

    site.call(hold_the_loop)
    for _ in range(50):  # the watching task records the lateness on its next wake-up
        after = lag_counts(admin.get("/api/metrics").text)
        if after["+Inf"] - after["0.25"] > before["+Inf"] - before["0.25"]:
            break
        time.sleep(0.1)
    # One wake-up at least came more than 0.25 s late: the 0.4 s the loop was held.
    assert after["+Inf"] - after["0.25"] > before["+Inf"] - before["0.25"]
    assert alice.get("/api/metrics").status_code == 403

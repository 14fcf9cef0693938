"""How many processes a memory cgroup's ceiling has cost: the kernel's own count.

When a group's processes ask for more memory than its limit and nothing can be
reclaimed, the kernel's OOM killer stops one of them (usually the largest: a
kernel computing) and counts it in the group's `oom_kill` line: cgroup v2's
`memory.events`, v1's `memory.oom_control` (Linux 4.13 and later). The count
only grows while the group exists, so a reader compares two readings to know
that something was killed in between. Read from outside (the local backend's
competition runs) and from inside (a notebook server's own group, which is
also a container's on Kubernetes); both parse the text here.
"""

from __future__ import annotations

# The files that hold the count, v2's first (a v2 group has no memory.oom_control).
FILES = ("memory.events", "memory.oom_control")


def oom_kill_count(text: str) -> int | None:
    """The `oom_kill` count of a `memory.events` or `memory.oom_control` text; None
    where the text has none (a kernel older than 4.13 writes no such line)."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            try:
                return int(value)
            except ValueError:
                return None
    return None

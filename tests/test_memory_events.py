"""Which group's count of OOM kills a notebook server reads (notebook/usage.own_oom_kills),
on cgroup trees written in a temporary folder as the kernel shows them: a local
notebook's v1 and v2 groups, a container's (whose mount root is its own group while
/proc names the host's path), and the places that are not the notebook's own group."""

from __future__ import annotations

from pathlib import Path

from cgu_lab.core.memory_events import oom_kill_count
from cgu_lab.notebook.usage import PAGE, own_oom_kills

GIB = 2**30
V1_EVENTS = "oom_kill_disable 0\nunder_oom 0\noom_kill {}\n"
V2_EVENTS = "low 0\nhigh 0\nmax 12\noom 3\noom_kill {}\noom_group_kill 0\n"


def group(folder: Path, ceiling_file: str, ceiling: str, events_file: str, events: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ceiling_file).write_text(ceiling + "\n")
    (folder / events_file).write_text(events)


def proc(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proc-cgroup"
    path.write_text(text)
    return path


def test_the_count_is_read_from_both_files():
    assert oom_kill_count(V1_EVENTS.format(2)) == 2
    assert oom_kill_count(V2_EVENTS.format(5)) == 5
    assert oom_kill_count("oom_kill_disable 0\nunder_oom 0\n") is None  # before Linux 4.13
    assert oom_kill_count("oom_kill many\n") is None


def test_a_local_notebooks_own_group_v1_and_v2(tmp_path):
    root = tmp_path / "cgroup"
    path = "/cgu-lab/abc/nb-1"
    group(
        root / "memory" / path[1:],
        "memory.limit_in_bytes",
        str(GIB),
        "memory.oom_control",
        V1_EVENTS.format(1),
    )
    v1 = proc(tmp_path, f"4:memory:{path}\n1:cpu:{path}\n0::/\n")
    assert own_oom_kills(GIB, v1, root) == 1
    v2_root = tmp_path / "unified"
    group(v2_root / path[1:], "memory.max", str(GIB), "memory.events", V2_EVENTS.format(4))
    assert own_oom_kills(GIB, proc(tmp_path, f"0::{path}\n"), v2_root) == 4


def test_a_container_reads_its_mount_root(tmp_path):
    root = tmp_path / "cgroup"
    # /proc names the host's path, which the container's mount does not have
    group(
        root / "memory",
        "memory.limit_in_bytes",
        str(GIB),
        "memory.oom_control",
        V1_EVENTS.format(0),
    )
    host_path = proc(tmp_path, "4:memory:/kubepods/burstable/pod1/abc\n")
    assert own_oom_kills(GIB, host_path, root) == 0
    v2_root = tmp_path / "v2"
    group(v2_root, "memory.max", str(GIB), "memory.events", V2_EVENTS.format(2))
    assert own_oom_kills(GIB, proc(tmp_path, "0::/\n"), v2_root) == 2  # a cgroup namespace


def test_a_ceiling_in_whole_pages_is_the_notebooks(tmp_path):
    root = tmp_path / "cgroup"
    asked = 1_500_000_000  # "1.5G": the kernel keeps whole pages
    group(
        root / "memory",
        "memory.limit_in_bytes",
        str(asked // PAGE * PAGE),
        "memory.oom_control",
        V1_EVENTS.format(3),
    )
    assert own_oom_kills(asked, proc(tmp_path, "4:memory:/\n"), root) == 3


def test_no_group_of_its_own_counts_nothing(tmp_path):
    """A server in the host's root group (rlimits) or in a slice it shares: its ceiling is
    not the notebook's, so the kills there (anyone's) are not claimed; nor without a limit."""
    root = tmp_path / "cgroup"
    group(
        root / "memory",
        "memory.limit_in_bytes",
        "9223372036854771712",
        "memory.oom_control",
        V1_EVENTS.format(7),
    )
    group(
        root / "memory" / "user.slice",
        "memory.limit_in_bytes",
        "9223372036854771712",
        "memory.oom_control",
        V1_EVENTS.format(7),
    )
    assert own_oom_kills(GIB, proc(tmp_path, "4:memory:/\n"), root) is None
    assert own_oom_kills(GIB, proc(tmp_path, "4:memory:/user.slice\n"), root) is None
    assert own_oom_kills(None, proc(tmp_path, "4:memory:/\n"), root) is None
    v2_root = tmp_path / "v2"
    group(v2_root, "memory.max", "max", "memory.events", V2_EVENTS.format(7))
    assert own_oom_kills(GIB, proc(tmp_path, "0::/\n"), v2_root) is None
    assert own_oom_kills(GIB, tmp_path / "no-proc", root) is None

"""The controller's one clock (cgu_lab/controller/clock.py): nothing else reads the time,
and a `FakeClock` moves every reading and ends the waits it passes.

The first test walks the syntax of every module under cgu_lab/controller/ instead of
grepping, so an alias (`from datetime import datetime as dt`, `import time as t`) does
not slip through, and a mention in a comment or a docstring is not a false alarm.
"""

from __future__ import annotations

import ast
import asyncio
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cgu_lab.controller.clock import Clock, FakeClock

CONTROLLER = Path(__file__).resolve().parent.parent / "cgu_lab" / "controller"

# What reads the time behind the platform's clock's back: (module, attribute).
FORBIDDEN = {
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
    ("time", "time"),
    ("time", "time_ns"),
    ("time", "monotonic"),
    ("time", "monotonic_ns"),
    ("time", "localtime"),
    ("time", "gmtime"),
    ("time", "strftime"),
    ("time", "ctime"),
}
# Readings that stay, each with its reason (module path, function).
ALLOWED = {
    # It bounds one HTTP response's real lifetime, next to asyncio.wait_for, which runs on
    # the event loop's real clock: the platform's clock would be the wrong one there.
    ("api/events.py", "stream"),
}


# Readings still to be converted, named so that none is added unseen; each entry must go
# as soon as its module takes the platform's clock (the test fails while a listed one no
# longer reads the time, so the list only shrinks).
PENDING: set[tuple[str, str]] = set()


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> "datetime", "date" or "time", for the imports that bring them in."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("time", "datetime"):
                    names[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module in ("datetime", "time"):
            for alias in node.names:
                names[alias.asname or alias.name] = alias.name
    return names


def _readings(path: Path) -> list[tuple[int, str, str]]:
    """(line, function, what) for each forbidden call or reference in one module."""
    tree = ast.parse(path.read_text(), str(path))
    aliases = _aliases(tree)
    found = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            inside = function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inside = child.name
            if isinstance(child, ast.Attribute):
                owner = child.value
                # datetime.now / time.time, and datetime.datetime.now
                if isinstance(owner, ast.Attribute):
                    base = owner.attr
                elif isinstance(owner, ast.Name):
                    base = aliases.get(owner.id, "")
                else:
                    base = ""
                if (base, child.attr) in FORBIDDEN:
                    found.append((child.lineno, inside, f"{base}.{child.attr}"))
            elif isinstance(child, ast.ImportFrom) and child.module == "time":
                for alias in child.names:
                    if ("time", alias.name) in FORBIDDEN:
                        found.append((child.lineno, inside, f"from time import {alias.name}"))
            visit(child, inside)

    visit(tree, "")
    return found


def test_only_the_clock_module_reads_the_time():
    offenders, pending = [], set()
    for path in sorted(CONTROLLER.rglob("*.py")):
        relative = path.relative_to(CONTROLLER).as_posix()
        if relative == "clock.py":
            continue
        for line, function, what in _readings(path):
            if (relative, function) in PENDING:
                pending.add((relative, function))
            elif (relative, function) not in ALLOWED:
                offenders.append(f"controller/{relative}:{line} ({function or 'module'}): {what}")
    assert not offenders, (
        "read the time from the platform's clock (controller/clock.py), passed in:\n"
        + "\n".join(offenders)
    )
    assert pending == PENDING, f"converted: take these out of PENDING: {PENDING - pending}"


def test_the_walk_finds_aliases(tmp_path):
    """The check itself: an aliased import and a module-qualified call are both found."""
    module = tmp_path / "m.py"
    module.write_text(
        "import datetime as dt\nimport time as t\nfrom time import monotonic\n"
        "def f():\n    return dt.datetime.now(), t.time()\n"
    )
    assert [what for _, _, what in _readings(module)] == [
        "from time import monotonic",
        "datetime.now",
        "time.time",
    ]


def test_the_real_clock_is_aware_utc():
    clock = Clock()
    now = clock.now()
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)
    assert abs((now - datetime.now(timezone.utc)).total_seconds()) < 5


def test_a_fake_clock_moves_forward_and_to_an_instant():
    clock = FakeClock()
    before, ticks = clock.now(), clock.monotonic()
    assert clock.advance(minutes=31) - before >= timedelta(minutes=31)
    assert clock.monotonic() - ticks >= 31 * 60
    with pytest.raises(ValueError):
        clock.advance(-1)
    when = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)
    clock.set(when)
    assert timedelta(0) <= clock.now() - when < timedelta(seconds=5)
    # Back to an earlier instant: now() goes back, monotonic() never does.
    ticks = clock.monotonic()
    clock.set(when - timedelta(days=1))
    assert clock.now() < when and clock.monotonic() >= ticks


def test_moving_the_clock_ends_the_sleeps_it_passes():
    """A background loop's pause (the culler's, say) ends when a test moves the clock past
    it, from another thread (tests drive an app whose loop runs in a helper thread)."""
    clock = FakeClock()
    finished: list[float] = []

    async def loop_pause() -> None:
        began = time.monotonic()
        short = asyncio.create_task(clock.sleep(60))
        long = asyncio.create_task(clock.sleep(3600))
        await asyncio.sleep(0.05)
        threading.Thread(target=clock.advance, args=(61,)).start()
        await asyncio.wait_for(short, 5)
        finished.append(time.monotonic() - began)
        assert not long.done()  # 61 s do not end an hour's pause
        clock.advance(hours=1)
        await asyncio.wait_for(long, 5)

    asyncio.run(loop_pause())
    assert finished and finished[0] < 5

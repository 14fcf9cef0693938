"""The end-to-end layer, kept named: a test that uses a controller process is marked
`end_to_end` (its module's `pytestmark`, or the test's own mark), or it fails.

`-m "not end_to_end"` is meant to leave out every controller process (conftest.py
describes the three layers), so a process test that is not marked would run in the
fast layer unseen. A test uses a process when its own body, or the function of a
fixture it uses (directly or through other fixtures), calls the harness's
`running_controller` or `Controller`: conftest's `controller`, a module's own
`controller` or `site`, `process_login` through `controller`, a restart in a test's
body. conftest's `site` asks for `controller` only in a marked module, at run time, so
an in-process test is not counted. A process started in a helper function that the
test or fixture calls is not seen; none is started so today.

The check runs at each test's setup, before a skip is decided, so a test skipped here
(for a cluster this machine lacks) is checked too. It reads which fixtures a test uses
from `item._fixtureinfo`, pytest's record of them (no public API gives it).
"""

from __future__ import annotations

import pytest

from . import harness
from .conftest import END_TO_END  # (conftest names this module among its plugins)

STARTERS = (harness.running_controller, harness.Controller)


def starts_a_process(function) -> str | None:
    """The name of the harness's starter that `function`'s own code calls, or None."""
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    scope = function.__globals__
    for name in code.co_names:
        if any(scope.get(name) is starter for starter in STARTERS):
            return name
    return None


def process_use(item: pytest.Item) -> str | None:
    """How `item` uses a controller process (a few words), or None where it uses none."""
    called = starts_a_process(getattr(item, "function", None))
    if called:
        return f"calls {called}"
    info = getattr(item, "_fixtureinfo", None)
    for name, definitions in sorted(info.name2fixturedefs.items() if info else ()):
        # The last definition is the one in force here (a module's own over conftest's).
        called = starts_a_process(definitions[-1].func)
        if called:
            return f"uses the fixture {name!r} (it calls {called})"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker(END_TO_END) is not None:
        return
    use = process_use(item)
    if use is not None:
        pytest.fail(
            f"{item.nodeid} {use}, a controller process, but is not marked {END_TO_END}: "
            f"add `pytestmark = pytest.mark.{END_TO_END}` to its module (or mark the test)",
            pytrace=False,
        )

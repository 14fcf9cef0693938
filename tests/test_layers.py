"""tests/layers.py's check, run by pytest itself on made-up modules: a test that uses a
controller process without the end_to_end mark fails, skipped or not; a marked one, and
one in the test's process, run as written.

The check reads code (which function calls the harness's `running_controller`), so the
made-up fixtures below call it only behind `START = False`: they read as starting a
controller process, and start none."""

from __future__ import annotations

import pytest

CONFTEST = '''
import pytest

from tests.harness import running_controller

pytest_plugins = ["tests.layers"]
START = False


def pytest_configure(config):
    config.addinivalue_line("markers", "end_to_end: a controller process")


@pytest.fixture(scope="module")
def controller():
    if START:
        with running_controller([]) as ctl:
            yield ctl
    else:
        yield "a controller process"


@pytest.fixture(scope="module")
def site(request):
    """As conftest's: the process in a module marked end_to_end, else in process."""
    if request.node.get_closest_marker("end_to_end"):
        return request.getfixturevalue("controller")
    return "in process"


@pytest.fixture(scope="module")
def admin(site):
    return site
'''


@pytest.fixture
def run(pytester):
    """Run pytest on one made-up module beside CONFTEST: each test's outcome by its name
    (its setup's where that failed), and the run's result for its output."""
    pytester.makeconftest(CONFTEST)

    def run(source: str) -> tuple[dict[str, str], pytest.RunResult]:
        pytester.makepyfile(test_module=source)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA")
        outcomes = {}
        for report in result.reprec.getreports("pytest_runtest_logreport"):
            if report.when == "call" or report.outcome != "passed":
                outcomes.setdefault(report.head_line, report.outcome)
        return outcomes, result

    return run


def test_a_process_without_the_mark_fails_even_when_skipped(run):
    outcomes, result = run(
        """
import pytest

from tests.harness import running_controller

START = False

def test_direct(controller):
    pass

@pytest.mark.skip(reason="no cluster here")
def test_skipped(controller):
    pass

def test_restart():
    if START:
        with running_controller([]):
            pass

def test_in_process(admin):
    assert admin == "in process"
"""
    )
    assert outcomes == {
        "test_direct": "failed",
        "test_skipped": "failed",
        "test_restart": "failed",
        "test_in_process": "passed",
    }
    result.stdout.fnmatch_lines(
        [
            "*test_direct uses the fixture 'controller' (it calls running_controller), a "
            "controller process, but is not marked end_to_end*",
            "*test_restart calls running_controller*",
        ],
        consecutive=False,
    )


def test_a_modules_own_process_site_without_the_mark_fails(run):
    outcomes, result = run(
        """
import pytest

from tests.harness import running_controller

START = False

@pytest.fixture(scope="module")
def site():
    if START:
        with running_controller([]) as ctl:
            yield ctl
    else:
        yield "a controller process"

def test_through_admin(admin):
    pass
"""
    )
    assert outcomes == {"test_through_admin": "failed"}
    result.stdout.fnmatch_lines(["*test_through_admin uses the fixture 'site'*"])


def test_the_mark_on_the_module_or_the_test_lets_it_run(run):
    outcomes, _ = run(
        """
import pytest

pytestmark = pytest.mark.end_to_end

def test_direct(controller):
    pass

def test_through_site(admin):
    assert admin == "a controller process"
"""
    )
    assert outcomes == {"test_direct": "passed", "test_through_site": "passed"}
    outcomes, _ = run(
        """
import pytest

@pytest.mark.end_to_end
def test_marked(controller):
    pass
"""
    )
    assert outcomes == {"test_marked": "passed"}

"""A test that overruns its time limit fails alone: the run goes on and reports every other test.

The reproduction: a test that ends just inside its limit while a report hook is still slow. Under
pytest-timeout's whole-protocol alarm (the suite's old setting, ``timeout = 600``) the alarm then fires inside
pytest's own reporting and the session ends with an INTERNALERROR: the later tests never run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
pytest_plugins = ["pytester"]

SLOW_REPORT_CONFTEST = """
import time
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    yield
    if call.when == "call" and item.name == "test_just_inside":
        time.sleep(1.5)  # pytest's own work after the test body, as a loaded machine stretches it
"""

TESTS = """
import time
import pytest

def test_just_inside():
    time.sleep(0.6)

def test_overruns_its_call():
    time.sleep(30)

@pytest.fixture
def slow_fixture():
    time.sleep(30)
    yield

def test_overruns_its_setup(slow_fixture):
    pass

def test_after():
    assert True
"""


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str) -> pytest.RunResult:
    monkeypatch.setenv("PYTHONPATH", str(REPOSITORY))
    pytester.makeconftest(SLOW_REPORT_CONFTEST)
    pytester.makepyfile(test_sample=TESTS)
    return pytester.runpytest_subprocess(*args, timeout=120)


def test_an_overrun_fails_that_test_alone(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, "-p", "tests.phase_timeout", "--phase-timeout", "1", "-p", "no:timeout", f"--rootdir={pytester.path}")
    result.assert_outcomes(passed=2, failed=1, errors=1)
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(["E *PhaseTimeout: call of test_sample.py::test_overruns_its_call ran past 1 s*"])

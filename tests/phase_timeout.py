"""A per-phase time limit for tests that fails the one test that overruns, never the whole run.

pytest-timeout's signal method arms one alarm over a test's whole run protocol, report hooks included, so a
test that overruns while pytest is making or logging its report raises inside pytest itself: an INTERNALERROR
that ends the session (a fresh-clone ``make test`` on a loaded machine once stopped that way with 1,243 tests
never run). This plugin arms the alarm inside each phase's own hook (setup, call, teardown), where pytest turns
any exception into that test's failure or error, and disarms it before the phase's report is made.

The limit is the ini option ``phase_timeout`` (seconds; 0 turns it off) or ``--phase-timeout``, and a test may
set its own with ``@pytest.mark.phase_timeout(seconds)``.
"""

from __future__ import annotations

import signal
import sys
import threading
import traceback
from collections.abc import Iterator

import pytest

DEFAULT_SECONDS = 600.0


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare the ini option and its command-line override."""
    parser.addini("phase_timeout", "seconds each phase of a test (setup, call, teardown) may take; 0: no limit", default=str(DEFAULT_SECONDS))
    parser.addoption(
        "--phase-timeout", type=float, default=None, help="seconds each phase of a test may take (overrides the ini option; 0: no limit)"
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker that sets one test's limit."""
    config.addinivalue_line("markers", "phase_timeout(seconds): the time limit of each phase of this test")


def _limit(item: pytest.Item) -> float:
    marker = item.get_closest_marker("phase_timeout")
    if marker is not None:
        return float(marker.args[0])
    option = item.config.getoption("--phase-timeout")
    return float(option if option is not None else item.config.getini("phase_timeout"))


class PhaseTimeout(Exception):
    """A test phase ran past its limit; raised inside the phase so that pytest reports that test alone."""


def _armed(item: pytest.Item, phase: str) -> Iterator[None]:
    seconds = _limit(item)
    # Signals reach only the main thread; a test run elsewhere (pytest-xdist's workers do run in the main
    # thread) goes without a limit rather than with a broken one.
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def overrun(signum: int, frame: object) -> None:
        stacks = "".join(
            f"\n--- thread {thread.name} ---\n" + "".join(traceback.format_stack(sys._current_frames()[thread.ident]))
            for thread in threading.enumerate()
            if thread.ident in sys._current_frames() and thread is not threading.main_thread()
        )
        raise PhaseTimeout(f"{phase} of {item.nodeid} ran past {seconds:g} s (phase_timeout){stacks}")

    previous = signal.signal(signal.SIGALRM, overrun)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    """Limit the setup phase (fixtures)."""
    yield from _armed(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Limit the test function itself."""
    yield from _armed(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Limit the teardown phase (fixture finalisers)."""
    yield from _armed(item, "teardown")

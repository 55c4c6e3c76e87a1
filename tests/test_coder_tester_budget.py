"""Issue 32: a CoderTester tester's slow but valid asserts cost the server about its CPU budget, not a minute, and
the overrun counts against the tester."""

from __future__ import annotations

import dataclasses
import json

import pytest

from parlour.envs.coding import judge
from parlour.envs.core.match import Match
from parlour.envs.registry import game_class

CODER_TESTER = "parlour/CoderTester-v0"


def slowed(reference: str, entry: str, spin: float) -> str:
    """``reference`` with its first ten calls in a process made to spin ``spin`` CPU seconds each: the tester's ten
    asserts, run first in the reference's harness and in each mutant's, are slow; the hidden tests after them are not."""
    return (
        reference
        + f"""
_fast = {entry}
_calls = [0]
def {entry}(*args):
    import time
    _calls[0] += 1
    if _calls[0] <= 10:
        end = time.process_time() + {spin}
        while time.process_time() < end:
            pass
    return _fast(*args)
"""
    )


def play_slow_tester(options: dict, spin: float, monkeypatch) -> tuple[dict, float]:
    """One CoderTester episode whose tester submits ten valid asserts that take ``spin`` CPU seconds each on the
    reference: its record, and the CPU seconds the judging's harness runs took (as the harness measures them)."""
    spent = []
    execute = judge.execute

    def counted(*args, **kwargs):
        run = execute(*args, **kwargs)
        spent.extend(outcome.cpu for outcome in run.outcomes)
        return run

    monkeypatch.setattr(judge, "execute", counted)
    match = Match(game_class(CODER_TESTER), options)
    match.reset(5)
    game = match.game
    task = game.task
    game.task = dataclasses.replace(task, reference=slowed(task.reference, task.entry_point, spin))
    asserts = "\n".join(f"assert {task.entry_point}({', '.join(map(repr, args))}) == {expected!r}" for args, expected in (task.visible * 10)[:10])
    match.submit("tester", json.dumps({"tool": "submit", "arguments": {"code": asserts}}))
    match.submit("coder", json.dumps({"tool": "submit", "arguments": {"code": task.reference}}))
    return match.record(), sum(spent)


def test_slow_valid_tests_overrun_the_testers_budget(monkeypatch):
    record, seconds = play_slow_tester({}, 0.3, monkeypatch)
    tester = record["outcome"]["details"]["tester"]
    # Ten tests of 0.3 s are 3 s on the reference; the first mutant takes about as long again, past the 5 s budget: no
    # more mutants run (the twelve took about 40 s of CPU before the budget), and the tester scores -1.
    assert tester["overran"] and tester["valid"] == 10 and record["returns"]["tester"] == -1.0
    assert seconds < 12
    # The coder, who wrote a correct solution, is not charged for the tester's cost.
    assert record["outcome"]["details"]["coder"]["verdict"] == "pass" and record["returns"]["coder"] == 1.0


def test_tests_within_the_budget_count(monkeypatch):
    # Ten tests of 0.05 s, on the reference and one mutant: 1 s in all, within the default budget.
    record, _ = play_slow_tester({"mutants": 1}, 0.05, monkeypatch)
    tester = record["outcome"]["details"]["tester"]
    assert not tester["overran"] and tester["valid"] == 10 and record["returns"]["tester"] > -1.0


def test_the_budget_is_an_option_with_clear_errors():
    with pytest.raises(ValueError, match="cpu_budget must be a number from 0.5 to 60"):
        Match(game_class(CODER_TESTER), {"cpu_budget": 0})

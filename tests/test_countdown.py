"""Countdown: steps on known numbers, both endings, generated targets that are reachable, and the search solver."""

from __future__ import annotations

import pytest

from parlour.baselines import make_scripted
from parlour.baselines.countdown import plan
from parlour.envs.core.match import Match
from parlour.envs.puzzles.countdown import LEVELS, Countdown, combine

ENV_ID = "parlour/Countdown-v0"


def new_match(numbers: list[int] | None = None, target: int | None = None, difficulty: int = 2, seed: int = 0) -> Match:
    """A Countdown match reset with ``seed``, holding ``numbers`` and ``target`` if given."""
    match = Match(Countdown, {"difficulty": difficulty})
    match.reset(seed)
    if numbers is not None:
        game = match.game
        game.numbers, game.slots, game.target = list(numbers), list(numbers), target
        game.closest = min(abs(n - target) for n in numbers)
        match._refresh()
    return match


def test_combine_keeps_results_positive_and_whole():
    assert combine(7, "+", 3) == 10 and combine(7, "*", 3) == 21 and combine(7, "-", 3) == 4
    assert combine(3, "-", 7) is None and combine(3, "-", 3) is None
    assert combine(8, "/", 4) == 2 and combine(7, "/", 2) is None


def test_reaching_the_target_wins():
    match = new_match([25, 7, 3, 2], 180)
    match.submit("player_0", "I'll do A x B")
    assert match.game.slots == [175, None, 3, 2]
    match.submit("player_0", "A + C")
    assert not match.over
    match.submit("player_0", "A + D")
    assert match.over and match.returns == {"player_0": 1.0} and match.outcome.winners == ["player_0"]
    assert match.outcome.details == {"difficulty": 2, "success": True, "target": 180, "numbers": [25, 7, 3, 2], "steps": 3, "closest": 0}


def test_one_wrong_number_left_loses():
    match = new_match([25, 7, 3, 2], 180)
    for step in ("A + B", "A + C", "A * D"):
        match.submit("player_0", step)
    assert match.over and match.returns == {"player_0": 0.0} and match.outcome.winners == []
    assert match.outcome.details["closest"] == 110


def test_forbidden_steps_are_invalid_actions_that_say_why():
    match = new_match([25, 7, 3, 2], 180)
    match.submit("player_0", "C - A")
    assert "not a positive whole number" in match.last_error["player_0"]
    match.submit("player_0", "B + A")
    assert "earlier slot first" in match.last_error["player_0"]
    match.submit("player_0", "A / A")
    assert match.over and match.returns == {"player_0": -1.0} and match.outcome.details["difficulty"] == 2
    emptied = new_match([25, 7, 3, 2], 180)
    emptied.submit("player_0", "A * B")
    emptied.submit("player_0", "B + C")
    assert "must both hold numbers" in emptied.last_error["player_0"]


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_generated_targets_are_in_range_reachable_and_new(difficulty):
    count, low, high = LEVELS[difficulty]
    for seed in range(5):
        game = new_match(difficulty=difficulty, seed=seed).game
        assert len(game.numbers) == count and low <= game.target <= high and game.target not in game.numbers
        assert plan(game.slots, game.target) is not None


def test_the_solver_reaches_the_target_and_knows_an_impossible_one():
    assert plan([2, 3], 7) is None and plan([2, 3, 1], 7) == [(0, "*", 1), (0, "+", 2)]
    match = new_match(difficulty=4, seed=3)
    agent = make_scripted("solver", ENV_ID)
    while not match.over:
        match.submit("player_0", agent.act(match.agent_observation("player_0")))
    assert match.returns == {"player_0": 1.0}


def test_difficulty_is_validated_and_the_vector_scaled():
    with pytest.raises(ValueError, match="difficulty must be an int from 1 to 5"):
        Countdown(difficulty=0)
    vector = new_match([25, 7, 3, 2], 180).game.vector("player_0")
    assert vector.tolist() == pytest.approx([0.025, 0.007, 0.003, 0.002, 0.18])

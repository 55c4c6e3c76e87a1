"""FrozenLake: moves and slides on known lakes, both endings, generated lakes, and the value-iteration solver."""

from __future__ import annotations

import pytest

from parlour.baselines import make_scripted
from parlour.baselines.frozen_lake import distances, success_chances
from parlour.envs.core.match import Match
from parlour.envs.puzzles.frozen_lake import LEVELS, FrozenLake, outcomes, shortest_path

ENV_ID = "parlour/FrozenLake-v0"

#: Gymnasium's 4x4 map.
GYM_4X4 = ["SFFF", "FHFH", "FFFH", "HFFG"]


def new_match(difficulty: int = 1, slippery: bool = False, rows: list[str] | None = None, seed: int = 0) -> Match:
    """A FrozenLake match reset with ``seed``, on the lake drawn in ``rows`` if given."""
    match = Match(FrozenLake, {"difficulty": difficulty, "slippery": slippery})
    match.reset(seed)
    if rows is not None:
        game = match.game
        game.holes = frozenset((r, c) for r, row in enumerate(rows) for c, symbol in enumerate(row) if symbol == "H")
        game.shortest = shortest_path(game.holes, game.size)
        match._refresh()
    return match


def play(match: Match, moves: list[str]) -> None:
    """Submit ``moves`` in order."""
    for move in moves:
        match.submit("player_0", move)


def test_the_shortest_safe_path_reaches_the_goal_and_wins():
    match = new_match(rows=GYM_4X4)
    assert match.game.shortest == 6 and match.legal_moves("player_0") == ["down", "right"]
    play(match, ["down", "down", "right", "down", "right", "right"])
    assert match.over and match.returns == {"player_0": 1.0} and match.outcome.winners == ["player_0"]
    assert match.outcome.details == {"difficulty": 1, "slippery": False, "success": True, "steps": 6, "max_steps": 64, "fell": False, "shortest": 6}


def test_a_hole_ends_the_episode_as_a_failure():
    match = new_match(rows=GYM_4X4)
    play(match, ["go south", "east"])
    assert match.over and match.returns == {"player_0": 0.0} and match.outcome.details["fell"] is True
    assert match.outcome.reason == "fell into a hole"


def test_leaving_the_lake_is_an_invalid_action_and_the_step_limit_fails():
    match = new_match(rows=GYM_4X4)
    match.submit("player_0", "up")
    assert "leaves the lake" in match.last_error["player_0"] and match.game.steps == 0
    play(match, ["right", "left"] * 32)
    assert match.over and match.returns == {"player_0": 0.0} and match.outcome.reason == "the step limit ran out"


def test_slippery_moves_go_three_ways_and_stay_put_at_the_edge():
    assert outcomes(4, (0, 0), "down", True) == [(1 / 3, (1, 0)), (1 / 3, (0, 0)), (1 / 3, (0, 1))]
    assert outcomes(4, (1, 1), "right", False) == [(1.0, (1, 2))]
    landed = set()
    for seed in range(20):
        match = new_match(slippery=True, rows=["SFFF", "FFFF", "FFFF", "FFFG"], seed=seed)
        match.submit("player_0", "down")
        landed.add(tuple(match.game.position))
    assert landed == {(1, 0), (0, 0), (0, 1)}


def test_the_same_seed_slides_the_same_way():
    positions = []
    for _ in range(2):
        match = new_match(slippery=True, seed=7)
        for move in ["right", "down", "right", "down"]:
            if not match.over:
                match.submit("player_0", move)
        positions.append((match.game.position, match.game.steps))
    assert positions[0] == positions[1]


def test_value_iteration_on_known_lakes():
    holes = frozenset((r, c) for r, row in enumerate(GYM_4X4) for c, s in enumerate(row) if s == "H")
    firm = success_chances(holes, 4, False)
    assert all(firm[(r, c)] == 1.0 for r in range(4) for c in range(4) if (r, c) not in holes and (r, c) != (3, 0))
    assert distances(holes, 4)[(0, 0)] == 6
    # With no holes a slippery walker still always arrives, however long it takes.
    open_lake = success_chances(frozenset(), 4, True)
    assert all(abs(value - 1.0) < 1e-6 for value in open_lake.values())
    # Beside the goal with holes above: "right" reaches the goal, slides into (2, 2) or stays, each with chance 1/3, so
    # repeating it wins with chance 1/2; every other move risks more.
    cornered = frozenset({(2, 2), (2, 3), (3, 0)})
    assert abs(success_chances(cornered, 4, True)[(3, 2)] - 0.5) < 1e-6


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_generated_lakes_have_a_path_and_the_solver_walks_it_on_firm_ice(difficulty):
    agent = make_scripted("solver", ENV_ID)
    for seed in range(4):
        match = new_match(difficulty=difficulty, seed=seed)
        game = match.game
        assert game.size == LEVELS[difficulty][0] and (0, 0) not in game.holes and (game.size - 1, game.size - 1) not in game.holes
        assert shortest_path(game.holes, game.size) == game.shortest
        while not match.over:
            match.submit("player_0", agent.act(match.agent_observation("player_0")))
        assert match.returns == {"player_0": 1.0} and match.game.steps == game.shortest


def test_options_are_validated():
    with pytest.raises(ValueError, match="difficulty must be an int from 1 to 5"):
        FrozenLake(difficulty=0)
    with pytest.raises(ValueError, match="slippery"):
        FrozenLake(slippery="yes")


def test_vector_marks_holes_goal_and_player():
    match = new_match(rows=GYM_4X4)
    vector = match.game.vector("player_0")
    assert vector.shape == (49,) and vector[:16].sum() == 4 and vector[5] == 1 and vector[31] == 1 and vector[32] == 1

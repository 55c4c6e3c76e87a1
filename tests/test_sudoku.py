"""Sudoku: clashes and placements on a known grid, both endings, generated puzzles' unique solutions, and the solver."""

from __future__ import annotations

import pytest

from parlour.baselines import make_scripted
from parlour.envs.core.match import Match
from parlour.envs.puzzles.sudoku import LEVELS, Sudoku, box_of, candidates, full_grid, solutions

ENV_ID = "parlour/Sudoku-v0"

#: A well-known puzzle with a unique solution (Wikipedia's example) and its solution.
PUZZLE = "530070000600195000098000060800060003400803001700020006060000280000419005000080079"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"


def digits(text: str) -> list[int]:
    """A grid from 81 digits."""
    return [int(ch) for ch in text]


def new_match(grid: str | None = None, difficulty: int = 2) -> Match:
    """A Sudoku match reset with seed 0, holding ``grid`` if given."""
    match = Match(Sudoku, {"difficulty": difficulty})
    match.reset(0)
    if grid is not None:
        match.game.grid = digits(grid)
        match.game.clues = 81 - grid.count("0")
        match._refresh()
    return match


def test_the_solver_search_finds_the_unique_solution_and_sees_ambiguity():
    assert solutions(digits(PUZZLE)) == [digits(SOLUTION)]
    assert len(solutions([0] * 81)) == 2
    assert box_of(0) == 0 and box_of(40) == 4 and box_of(80) == 8
    assert candidates(digits(PUZZLE), 2) == (1 << 1) | (1 << 2) | (1 << 4)


def test_clashes_and_filled_cells_are_invalid_actions_that_say_why():
    match = new_match(PUZZLE)
    match.submit("player_0", "r1c3=5")
    assert "already in row 1" in match.last_error["player_0"]
    match.submit("player_0", "r1c1=4")
    assert "already holds 5" in match.last_error["player_0"]
    match.submit("player_0", "I think r1 c3: 4")
    assert match.game.grid[2] == 4 and match.game.placed == 1 and not match.over


def test_a_full_grid_wins():
    match = new_match(SOLUTION[:80] + "0")
    assert match.legal_moves("player_0") == ["r9c9=9"]
    match.submit("player_0", "r9c9=9")
    assert match.over and match.returns == {"player_0": 1.0} and match.outcome.winners == ["player_0"]
    assert match.outcome.details == {"difficulty": 2, "success": True, "clues": 80, "placed": 1, "empty": 0, "stuck": None}


def test_a_wrong_digit_that_leaves_a_cell_without_a_fit_loses():
    # r1c1, r1c4 and r2c1 blanked (5, 6, 6): 6 in r1c1 clashes with nothing, but leaves r1c4 only 5, which column 4 holds.
    grid = list(SOLUTION)
    for cell in (0, 3, 9):
        grid[cell] = "0"
    match = new_match("".join(grid))
    match.submit("player_0", "r1c1=6")
    assert match.over and match.returns == {"player_0": 0.0}
    assert match.outcome.details["stuck"] == "r1c4" and match.outcome.reason == "no digit fits r1c4"


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_generated_puzzles_have_one_solution_and_the_clue_count(difficulty):
    for seed in range(2):
        match = Match(Sudoku, {"difficulty": difficulty})
        match.reset(seed)
        grid = match.game.grid
        assert len(solutions(grid)) == 1 and LEVELS[difficulty] <= 81 - grid.count(0) == match.game.clues <= LEVELS[difficulty] + 3


def test_a_drawn_full_grid_is_a_solution():
    import numpy as np

    grid = full_grid(np.random.default_rng(3))
    assert all(sorted(grid[r * 9 : r * 9 + 9]) == list(range(1, 10)) for r in range(9))
    assert all(sorted(grid[c::9]) == list(range(1, 10)) for c in range(9))
    assert all(sorted(grid[i] for i in range(81) if box_of(i) == b) == list(range(1, 10)) for b in range(9))


def test_the_solver_fills_a_generated_puzzle():
    match = Match(Sudoku, {"difficulty": 5})
    match.reset(4)
    agent = make_scripted("solver", ENV_ID)
    while not match.over:
        match.submit("player_0", agent.act(match.agent_observation("player_0")))
    assert match.returns == {"player_0": 1.0}


def test_difficulty_is_validated_and_the_vector_one_hot():
    with pytest.raises(ValueError, match="difficulty must be an int from 1 to 5"):
        Sudoku(difficulty="hard")
    vector = new_match(PUZZLE).game.vector("player_0").reshape(81, 10)
    assert (vector.sum(axis=1) == 1).all() and vector[0, 5] == 1 and vector[2, 0] == 1

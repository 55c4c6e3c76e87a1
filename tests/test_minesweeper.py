"""Minesweeper: reveals and floods on known grids, the safe first reveal, both endings, and the solver's exact chances."""

from __future__ import annotations

import pytest

from parlour.baselines import make_scripted
from parlour.baselines.minesweeper import constraints_of, groups, mine_chances
from parlour.envs.core.match import Match
from parlour.envs.puzzles.minesweeper import LEVELS, Minesweeper, neighbours

ENV_ID = "parlour/Minesweeper-v0"


def new_match(difficulty: int = 1, mines: set[int] | None = None, seed: int = 0) -> Match:
    """A Minesweeper match reset with ``seed``; ``mines`` (flat cells) are laid as if a first reveal had placed them."""
    match = Match(Minesweeper, {"difficulty": difficulty})
    match.reset(seed)
    if mines is not None:
        game = match.game
        game.mines = frozenset(mines)
        game.mine_count = len(mines)
        game.counts = [sum(n in game.mines for n in neighbours(game.size, cell)) for cell in range(game.size**2)]
        game.moves_made = 1
    return match


def test_neighbours_on_corners_edges_and_inside():
    assert sorted(neighbours(5, 0)) == [1, 5, 6]
    assert len(neighbours(5, 2)) == 5 and len(neighbours(5, 12)) == 8


def test_a_reveal_with_no_neighbouring_mine_floods_outwards():
    # 5x5, mines at e1 and e2 (cells 4 and 9): revealing a5 opens every cell but the mines' column top.
    match = new_match(mines={4, 9})
    match.submit("player_0", "reveal a5")
    assert match.game.board_rows() == ["...2?", "...2?", "...11", ".....", "....."]
    assert match.over and match.returns == {"player_0": 1.0}
    assert match.outcome.details == {"difficulty": 1, "success": True, "moves": 2, "revealed": 23, "safe_cells": 23, "mines": 2}


def test_revealing_a_mine_loses_and_shows_every_mine():
    match = new_match(mines={4, 9})
    match.submit("player_0", "E1")
    assert match.over and match.returns == {"player_0": 0.0} and match.outcome.winners == []
    assert match.outcome.reason == "revealed a mine at e1" and "X" in match.game.render()


def test_revealed_and_off_grid_cells_are_invalid_actions():
    match = new_match(mines={4, 9, 24})
    match.submit("player_0", "reveal a1")
    assert not match.over and match.game.board_rows() == ["...2?", "...2?", "...1?", "...1?", "...1?"]
    match.submit("player_0", "a2")
    assert "already revealed" in match.last_error["player_0"]
    match.submit("player_0", "reveal f9")
    assert "off the grid" in match.last_error["player_0"]
    assert match.legal_moves("player_0") == ["e1", "e2", "e3", "e4", "e5"]


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_the_first_reveal_is_safe_and_opens_an_area(difficulty):
    size, mines = LEVELS[difficulty]
    for seed in range(10):
        match = new_match(difficulty=difficulty, seed=seed)
        first = seed % (size * size)
        match.submit("player_0", match.game.moves[first])
        game = match.game
        assert len(game.mines) == mines and first not in game.mines and not set(neighbours(size, first)) & game.mines
        assert game.counts[first] == 0 and len(game.revealed) > 1


def test_mine_chances_are_exact_on_a_small_board():
    # 3x3: a1 shows 1, everything else hidden: one mine among b1, a2, b2; the rest share the others.
    board = ["1??", "???", "???"]
    assert groups(constraints_of(board)[0]) == [([1, 3, 4], [([1, 3, 4], 1)])]
    chances = mine_chances(board, 2)
    assert all(abs(chances[c] - 1 / 3) < 1e-12 for c in (1, 3, 4)) and all(abs(chances[c] - 1 / 5) < 1e-12 for c in (2, 5, 6, 7, 8))
    chances = mine_chances(board, 3)
    assert abs(chances[1] - 1 / 3) < 1e-12 and abs(chances[8] - 2 / 5) < 1e-12
    # a1 = 1 and b1 = 1 share a2 and b2, whose one mine meets both: c1 and c2, b1's alone, are safe.
    chances = mine_chances(["11?", "???", "???"], 1)
    assert chances[2] == chances[5] == chances[8] == 0.0 and chances[3] == chances[4] == 0.5


def test_the_solver_reveals_a_proved_safe_cell():
    # Mines e1, e2, d1: d2 = 2 needs d1 and one of e1, e2, e3; d4 and d5 rule e3 out, and d3 then pairs e2 with e5
    # or e1 with e4. Only e3 is safe.
    match = new_match(mines={3, 9, 24})
    match.submit("player_0", "reveal a3")
    board = match.game.board_rows()
    assert board == ["..1??", "..12?", "...1?", "...1?", "...1?"]
    chances = mine_chances(board, 3)
    assert chances == {3: 1.0, 4: 0.5, 9: 0.5, 14: 0.0, 19: 0.5, 24: 0.5}
    assert make_scripted("solver", ENV_ID).act(match.agent_observation("player_0")) == "reveal e3"


def test_the_solver_wins_most_generated_boards():
    agent = make_scripted("solver", ENV_ID)
    wins = 0
    for seed in range(10):
        match = new_match(difficulty=2, seed=seed)
        agent.reset(seed)
        while not match.over:
            match.submit("player_0", agent.act(match.agent_observation("player_0")))
        wins += match.returns["player_0"] == 1.0
    assert wins >= 8


def test_difficulty_is_validated_and_the_vector_one_hot():
    with pytest.raises(ValueError, match="difficulty must be an int from 1 to 5"):
        Minesweeper(difficulty=9)
    match = new_match(mines={4, 9})
    match.submit("player_0", "a1")
    vector = match.game.vector("player_0").reshape(10, 25)
    assert (vector.sum(axis=0) == 1).all() and vector[0, 4] == 1 and vector[1, 0] == 1 and vector[3, 3] == 1

"""Breakthrough: moves, captures and every way a game ends on known positions, sizes, the ``minimax`` agent, and a
cross-check against OpenSpiel on several board sizes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.breakthrough import DIRECTIONS, Breakthrough
from tests.game_positions import play
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/Breakthrough-v0"


def position(rows: list[str], to_move: int = 0) -> Breakthrough:
    """A game in the position drawn by ``rows`` (``B``, ``W``, ``.``; top row first), ``to_move`` to play."""
    board = [[{"B": 0, "W": 1, ".": -1}[c] for c in row] for row in rows]
    return Breakthrough.from_view({"board": board, "to_move": to_move, "rows": len(rows), "columns": len(rows[0])})


def spiel_move(move: str, rows: int, columns: int) -> int:
    """``6 * cell + direction`` of a move name, as the module docstring says OpenSpiel numbers moves."""
    source, destination = re.findall(r"[a-z]\d+", move)
    (row, column), (to_row, to_column) = ((rows - int(c[1:]), ord(c[0]) - ord("a")) for c in (source, destination))
    return 6 * (row * columns + column) + DIRECTIONS.index((to_row - row, to_column - column))


def spiel_action(game: Breakthrough, seat: int, action: int) -> int:
    """OpenSpiel's ``2 * (6 * cell + direction) + capture`` of a ``Discrete`` action: the move's number from its name,
    and a capture where the destination holds a piece (a legal move onto a piece always takes it)."""
    destination = game._ends[action][1]
    return 2 * spiel_move(game.moves[action], game.rows, game.columns) + (game.board[destination] != -1)


def same_move_names(match: Match, state, seat: int) -> bool:
    """Whether the legal moves' names are OpenSpiel's, which star a capture that parlour names as any other move."""
    spiel = [state.action_to_string(seat, action).rstrip("*") for action in state.legal_actions()]
    return sorted(match.game.legal_moves(match.players[seat])) == sorted(spiel)


def test_opening_on_the_default_board():
    match = Match(Breakthrough, {})
    match.reset(0)
    game = match.game
    assert (game.rows, game.columns, game.pieces) == (6, 6, [12, 12])
    legal = game.legal_moves("player_0")
    assert len(legal) == 16 and legal[:3] == ["a5a4", "a5b4", "b5a4"]  # front row only: 6 straight + 10 diagonal
    assert "Black (B) starts at the top" in match.observation_text("player_0")


def test_small_boards_start_with_one_row_each():
    game = Breakthrough(rows=5, columns=4)
    assert game.board == [0] * 4 + [-1] * 12 + [1] * 4 and game.pieces == [4, 4]


def test_straight_moves_never_capture_and_diagonal_moves_do():
    game = position([
        "....",
        ".B..",
        ".WW.",
        "....",
        "....",
    ])  # fmt: skip
    assert game.legal_moves("player_0") == ["b4a3", "b4c3"]  # b3 is blocked by a white piece
    ctx = play(game, "b4c3")
    assert ctx.ending is None and game.pieces == [1, 1] and game.board[2 * 4 + 2] == 0


def test_reaching_the_far_row_wins():
    game = position(["....", "....", "....", "...B", "W..."])
    ctx = play(game, "d2d1")
    assert ctx.ending.winners == ["player_0"] and ctx.step_rewards == {"player_0": 1.0, "player_1": -1.0}
    game = position([".B..", "W...", "....", "....", "...."], to_move=1)
    assert play(game, "a4a5").ending.winners == ["player_1"]


def test_capturing_the_last_piece_wins():
    game = position(["....", "..B.", ".W..", "....", "...."], to_move=1)
    ctx = play(game, "b3c4")
    assert ctx.ending.winners == ["player_1"] and "captured every" in ctx.ending.reason


def test_sizes_are_validated():
    with pytest.raises(ValueError, match="rows must be an int from 4 to 26"):
        Breakthrough(rows=3)
    with pytest.raises(ValueError, match="columns must be an int from 2 to 26"):
        Breakthrough(columns=True)
    assert "a10a9" in Breakthrough(rows=10, columns=3).moves


def test_minimax_captures_a_piece_about_to_break_through():
    rows = ["BBBBBB", "......", "......", "......", "...B..", "W.W.W."]
    agent = parlour.make_agent("minimax", env_id=ENV_ID)
    for seed in range(5):
        agent.reset(seed=seed)
        view = position(rows, to_move=1).view("player_1")
        assert agent.act({"view": view}) in ("c1d2", "e1d2")


def test_matches_openspiel_legal_moves_and_returns_on_several_sizes():
    pytest.importorskip("pyspiel")
    moves = np.random.default_rng(7)  # one stream of random moves across the four sizes
    for rows, columns, episodes in ((6, 6, 60), (8, 8, 30), (5, 4, 30), (4, 3, 30)):
        size = {"rows": rows, "columns": columns}
        assert turn_based_disagreements(episodes, 0, Breakthrough, size, "breakthrough", size, same_move_names, to_spiel=spiel_action, rng=moves) == (
            episodes,
            0,
        ), size

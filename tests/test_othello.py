"""Othello: flips, passes and the end on known positions, the ``minimax`` agent, and a cross-check against OpenSpiel."""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.othello import CELLS, PASS, Othello
from tests.game_positions import play
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/Othello-v0"


def position(rows: list[str], to_move: int = 0) -> Othello:
    """A game in the position drawn by ``rows`` (``X``, ``O``, ``.``; row 1 first), ``to_move`` to play."""
    board = [[{"X": 0, "O": 1, ".": -1}[c] for c in row] for row in rows]
    return Othello.from_view({"board": board, "to_move": to_move})


def test_opening_moves_and_a_first_flip():
    match = Match(Othello, {})
    match.reset(0)
    assert match.game.legal_moves("player_0") == ["d3", "c4", "f5", "e6"]
    match.submit("player_0", "d3")
    assert match.game.board[2][3] == 0 and match.game.board[3][3] == 0  # d3 placed, d4 flipped
    assert [bits.bit_count() for bits in match.game.discs] == [4, 1]
    assert match.acting() == ["player_1"]


def test_one_disc_flips_every_line_it_closes_and_nothing_else():
    game = position([
        "X..X....",
        ".O.O.O..",
        "..OOO...",
        "XOO.OOOX",
        "..O.O...",
        ".X.O..X.",
        "...X....",
        "........",
    ])  # fmt: skip
    play(game, "d4")
    board = game.board
    assert board[3] == [0] * 8  # the row, closed both ways (a4 and h4)
    assert board[1][1] == board[2][2] == 0  # up-left, closed by a1
    assert board[1][3] == board[2][3] == 0  # up, closed by d1
    assert board[4][2] == 0  # down-left, closed by b6
    assert board[2][4] == board[1][5] == 1  # up-right: e3, f2 and then the edge, never closed
    assert board[4][4] == 1  # down-right: e5 then an empty f6
    assert board[5][3] == 1  # down: d5 is empty, so d6 is not reached
    assert game.discs[1].bit_count() == 4


def test_a_player_without_a_move_must_pass_and_the_game_goes_on():
    game = position(["XXXXXXXX"] * 6 + ["XXXXXXO.", "XXXXXX.."], to_move=1)
    assert game.legal_actions("player_1") == [PASS]
    ctx = play(game, "pass")
    assert ctx.ending is None and game.to_move() == ["player_0"]
    assert game.legal_moves("player_0") == ["h7", "g8", "h8"]


def test_the_game_ends_when_neither_player_can_move_and_more_discs_win():
    game = position(["XXXXXXXX"] * 6 + ["XXXXXXXO", "XXXXXXX."])
    ctx = play(game, "h8")
    assert ctx.ending is not None and ctx.ending.winners == ["player_0"]
    assert ctx.step_rewards == {"player_0": 1.0, "player_1": -1.0}


def test_equal_discs_at_the_end_are_a_draw():
    game = position([
        "OOOOOOOO",
        "OOOOOOOO",
        "OOOOOXXX",
        "XXXOXXXX",
        "XXXXOXXX",
        "XXXXXOXX",
        "XXXXXXOO",
        "OOOOOOO.",
    ])  # fmt: skip
    ctx = play(game, "h8")  # flips h7 only: the row and the diagonal to a1 hold no X to close them
    assert [bits.bit_count() for bits in game.discs] == [32, 32]
    assert ctx.ending is not None and ctx.ending.winners == [] and ctx.step_rewards == {}


def test_an_occupied_or_non_flipping_cell_is_an_invalid_action():
    match = Match(Othello, {})
    match.reset(0)
    for move in ("d4", "a1", "pass"):
        match.submit("player_0", move)
        assert "not legal" in match.last_error["player_0"]
    assert match.over and match.outcome.winner == "player_1"  # the default allowance is 2


def test_minimax_takes_a_win_at_once():
    game = position([
        "........",
        ".OOX....",
        "..X.....",
        "........",
        "........",
        "........",
        "........",
        "........",
    ])  # fmt: skip
    assert game.legal_moves("player_0") == ["a1", "c1", "a2"]  # only a2 flips both discs and ends the game
    agent = parlour.make_agent("minimax", env_id=ENV_ID)
    agent.reset(seed=0)
    assert agent.act({"view": {"board": game.board, "mark": 0, "to_move": 0}}) == "a2"


def test_matches_openspiel_legal_actions_and_returns():
    pyspiel = pytest.importorskip("pyspiel")
    found = turn_based_disagreements(100, 0, Othello, {}, "othello", {}, names=True, rng=np.random.default_rng(7))
    assert found == (100, 0)
    assert CELLS[19] == "d3" and pyspiel.load_game("othello").new_initial_state().action_to_string(0, 19) == "d3"

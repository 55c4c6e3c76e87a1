"""Hex: which chains win on known positions, the board sizes, the ``minimax`` agent, and a cross-check against OpenSpiel."""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.hex import Hex
from tests.game_positions import play
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/Hex-v0"


def position(rows: list[str], to_move: int = 0) -> Hex:
    """A game in the position drawn by ``rows`` (``X``, ``O``, ``.``; top row first), ``to_move`` to play."""
    board = [[{"X": 0, "O": 1, ".": -1}[c] for c in row] for row in rows]
    return Hex.from_view({"board": board, "to_move": to_move, "board_size": len(rows)})


def test_x_joins_top_and_bottom_along_the_shifted_diagonal():
    # (r, c) touches (r + 1, c - 1): c1, b2, a3 is a chain from the top edge to the bottom edge.
    game = position(["..X", ".X.", "..."])
    ctx = play(game, "a3")
    assert ctx.ending.winners == ["player_0"] and ctx.step_rewards == {"player_0": 1.0, "player_1": -1.0}


def test_cells_on_the_other_diagonal_do_not_touch():
    # (r, c) and (r + 1, c + 1) are not neighbours: a1, b2, c3 is no chain.
    game = position(["X..", ".X.", "..."])
    assert play(game, "c3").ending is None


def test_o_joins_left_and_right_and_a_top_bottom_chain_is_not_its_goal():
    game = position(["O..", "O..", "..."], to_move=1)
    assert play(game, "a3").ending is None  # column a runs top to bottom: X's edges, not O's
    game = position(["...", "OO.", "..."], to_move=1)
    ctx = play(game, "c2")
    assert ctx.ending.winners == ["player_1"] and "left and right" in ctx.ending.reason


def test_board_size_option():
    match = Match(Hex, {"board_size": 7})
    match.reset(0)
    assert len(match.game.legal_moves("player_0")) == 49 and match.game.moves[-1] == "g7"
    assert Match(Hex, {}).game.size == 5
    with pytest.raises(ValueError, match="board_size must be an int from 2 to 26"):
        Hex(board_size=1)


def test_an_occupied_cell_is_an_invalid_action():
    match = Match(Hex, {})
    match.reset(0)
    match.submit("player_0", "c3")
    match.submit("player_1", "c3")
    assert "not legal" in match.last_error["player_1"] and match.acting() == ["player_1"]


@pytest.mark.parametrize(
    "rows,to_move,answers",
    [
        (["X....", "X....", "X....", "X....", ".OOO."], 0, {"a5"}),  # X wins at once down column a
        (["X....", "X....", "X....", "X....", ".OOO."], 1, {"a5"}),  # O must block the one gap X has left
    ],
)
def test_minimax_wins_at_once_or_blocks_the_last_gap(rows, to_move, answers):
    agent = parlour.make_agent("minimax", env_id=ENV_ID)
    for seed in range(3):
        agent.reset(seed=seed)
        assert agent.act({"view": position(rows, to_move).view("player_0")}) in answers


def test_matches_openspiel_legal_actions_and_returns():
    pytest.importorskip("pyspiel")
    moves = np.random.default_rng(7)  # one stream of random moves across the three sizes
    for size, episodes in ((5, 100), (3, 50), (11, 20)):
        options = {"board_size": size}
        found = turn_based_disagreements(episodes, 0, Hex, options, "hex", options, names=True, rng=moves)
        assert found == (episodes, 0), size

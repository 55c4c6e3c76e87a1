"""Y: which groups win on known positions, the board sizes, the ``minimax`` agent and its connection distance, and a
cross-check against OpenSpiel's ``y``.

The cross-check's full count (the issue's 1000 episodes)::

    .venv/bin/python -c "from tests.test_y import disagreements; print(disagreements(1000))"
"""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.baselines.y import distance
from parlour.envs.core.match import Match
from parlour.envs.games.y import Y
from tests.game_positions import play
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/Y-v0"


def position(rows: list[str], to_move: int = 0) -> Y:
    """A game in the position drawn by ``rows`` (``X``, ``O``, ``.``; top row first, each one cell shorter), ``to_move`` to play."""
    board = [[{"X": 0, "O": 1, ".": -1}[c] for c in row] for row in rows]
    return Y.from_view({"board": board, "to_move": to_move, "board_size": len(rows)})


def test_a_group_on_all_three_sides_wins():
    # b1 (top), a2 (left) and b2 (the slanted side of a 3-board) touch one another through a2-b1 and a2-b2.
    game = position(["X..", "X.", "."])
    ctx = play(game, "b2")
    assert ctx.ending.winners == ["player_0"] and ctx.step_rewards == {"player_0": 1.0, "player_1": -1.0}


def test_two_sides_are_not_enough_and_a_corner_counts_for_two():
    game = position(["X...", "...", "..", "."])
    assert play(game, "a2").ending is None  # a1 and a2: column a and row 1 only
    game = position(["...X", "...", "..", "."])
    assert play(game, "c1").ending is None  # d1 is on the top and slanted sides; c1 adds nothing new
    ctx = play(position(["XXX.", "...", "..", "."]), "d1")
    assert ctx.ending.winners == ["player_0"]  # a1 (left and top) to d1 (top and slanted)


def test_cells_on_the_other_diagonal_do_not_touch():
    # (x, y) touches (x + 1, y - 1) but not (x + 1, y + 1): a1 (left and top) and b2 (slanted) stay apart.
    game = position(["X..", "..", "."])
    assert play(game, "b2").ending is None and game.sides_reached(4) == 0b100 and game.sides_reached(0) == 0b011
    game.turn = 0
    assert play(game, "a2").ending.winners == ["player_0"]  # a2 touches both


def test_o_wins_the_same_way():
    game = position([".O.", "O.", "X"], to_move=1)
    ctx = play(game, "b2")
    assert ctx.ending.winners == ["player_1"] and "three sides" in ctx.ending.reason


def test_board_size_option_and_names():
    match = Match(Y, {"board_size": 5})
    match.reset(0)
    assert len(match.game.legal_moves("player_0")) == 15 and match.game.moves[:6] == ["a1", "b1", "c1", "d1", "e1", "a2"]
    assert match.game.moves[-1] == "a5" and Match(Y, {}).game.size == 7
    with pytest.raises(ValueError, match="board_size must be an int from 2 to 26"):
        Y(board_size=1)


def test_an_occupied_or_off_board_cell_is_an_invalid_action():
    match = Match(Y, {"board_size": 4})
    match.reset(0)
    match.submit("player_0", "b2")
    match.submit("player_1", "b2")
    assert "not legal" in match.last_error["player_1"] and match.acting() == ["player_1"]
    match.submit("player_1", "d4")
    assert "No move found" in match.last_error["player_1"]


def test_connection_distance():
    # No two cells of a 3-board touch all three sides: a2, b1 and b2 (or a1, a2, a3, ...) are three.
    assert distance(position(["...", "..", "."]).board, 3, 0) == 3.0
    game = position(["X..", "..", "."])
    assert distance(game.board, 3, 0) == 2.0 and distance(game.board, 3, 1) == 3.0
    assert distance(position(["X..", "X.", "."]).board, 3, 0) == 1.0
    game = position([".O.", "O.", "."])
    assert distance(game.board, 3, 0) == 3.0 and distance(game.board, 3, 1) == 1.0  # X: c1, b2, a3
    game = position([".O.", "O.", "O"])
    assert distance(game.board, 3, 0) == float("inf") and distance(game.board, 3, 1) == 0.0


@pytest.mark.parametrize(
    "rows,to_move,answers",
    [
        (["X....", "X...", "X..", "X.", "O"], 0, {"b4"}),  # X wins at once: b4 joins column a to the slanted side
        (["X....", "X...", "X..", "X.", "O"], 1, {"b4"}),  # O must block the one cell that wins for X
    ],
)
def test_minimax_wins_at_once_or_blocks(rows, to_move, answers):
    agent = parlour.make_agent("minimax", env_id=ENV_ID)
    for seed in range(3):
        agent.reset(seed=seed)
        assert agent.act({"view": position(rows, to_move).view("player_0")}) in answers


def disagreements(episodes: int, seed: int = 0, board_size: int = 7) -> tuple[int, int]:
    """(episodes, episodes where any step differs from OpenSpiel's ``y``) on uniformly random play.

    Each step compares the player to move, the legal moves (as OpenSpiel's
    actions and their names), both players' observation tensors on the
    board's cells and whether the game is over; each episode's end compares
    the returns.
    """
    cells = [(x, y) for y in range(board_size) for x in range(board_size - y)]
    actions = [x + y * board_size for x, y in cells]  # OpenSpiel's action of each parlour move

    def observations(match: Match, state, seat: int) -> bool:
        tensors = (
            np.asarray(state.observation_tensor(observer), dtype=np.float32).reshape(3, -1)[:, actions].reshape(-1)
            for observer in range(len(match.players))
        )
        return all(np.array_equal(match.game.vector(name), tensor) for name, tensor in zip(match.players, tensors))

    size = {"board_size": board_size}
    return turn_based_disagreements(episodes, seed, Y, size, "y", size, observations, to_spiel=lambda game, seat, action: actions[action], names=True)


def test_matches_openspiel_on_random_play():
    pytest.importorskip("pyspiel")
    assert disagreements(120) == (120, 0)
    assert disagreements(40, board_size=2) == (40, 0)
    assert disagreements(30, board_size=19) == (30, 0)

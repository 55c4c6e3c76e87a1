"""Clobber: the opening, captures, the end of the game on known positions, sizes, the ``minimax`` agent, and a
cross-check against OpenSpiel on several board sizes.

The cross-check's full count (the issue's 1000 episodes)::

    .venv/bin/python -c "from tests.test_clobber import disagreements; print(disagreements(1000))"
"""

from __future__ import annotations

import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.clobber import DIRECTIONS, Clobber
from tests.game_positions import play
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/Clobber-v0"


def position(rows: list[str], to_move: int = 0) -> Clobber:
    """A game in the position drawn by ``rows`` (``o``, ``x``, ``.``; top row first), ``to_move`` to play."""
    board = [[{"o": 0, "x": 1, ".": -1}[c] for c in row] for row in rows]
    return Clobber.from_view({"board": board, "to_move": to_move, "rows": len(rows), "columns": len(rows[0])})


def spiel_action(game: Clobber, index: int) -> int:
    """``4 * cell + direction`` of a ``Discrete`` action, as the module docstring says OpenSpiel numbers moves."""
    source, destination = game._ends[index]
    step = (destination // game.columns - source // game.columns, destination % game.columns - source % game.columns)
    return 4 * source + DIRECTIONS.index(step)


def test_the_opening_is_a_full_checkerboard_with_o_on_a1():
    match = Match(Clobber, {})
    match.reset(0)
    game = match.game
    assert game.render().splitlines()[-2:] == ["1 o x o x o x", "  a b c d e f"]
    assert game.render().splitlines()[0] == "5 o x o x o x"
    # 49 of the board's 98 neighbouring pairs' directions belong to each side.
    assert len(game.legal_moves("player_0")) == len(game.legal_moves("player_1")) == 49
    assert game.legal_moves("player_0")[:3] == ["a5b5", "a5a4", "c5d5"]
    assert "o on a1" in match.observation_text("player_0")


def test_a_stone_moves_only_onto_an_adjacent_opponent_stone():
    game = position([
        "o.x",
        "xo.",
        "...",
    ])  # fmt: skip
    assert game.legal_moves("player_0") == ["a3a2", "b2a2"]  # a3 to b3 is empty, a3 to c3 is not adjacent
    assert game.legal_moves("player_1") == ["a2a3", "a2b2"]
    ctx = play(game, "b2a2")  # b2's stone replaces the one it took; no o now touches an x
    assert game.board == [0, -1, 1, 0, -1, -1, -1, -1, -1]
    assert ctx.ending.winners == ["player_0"] and ctx.step_rewards == {"player_0": 1.0, "player_1": -1.0}


def test_the_game_goes_on_while_any_stones_touch_and_the_last_to_move_wins():
    game = position(["ox.", "..o", "..x"])
    ctx = play(game, "a3b3")  # o takes the a3-b3 pair; c2 and c1 still touch, so x moves on
    assert ctx.ending is None and game.to_move() == ["player_1"]
    ctx = play(game, "c1c2")
    assert ctx.ending.winners == ["player_1"] and ctx.step_rewards == {"player_0": -1.0, "player_1": 1.0}
    assert "player_0 has no move left" in ctx.ending.reason


def test_sizes_are_validated_and_set_the_board():
    with pytest.raises(ValueError, match="rows must be an int from 2 to 26"):
        Clobber(rows=1)
    with pytest.raises(ValueError, match="columns must be an int from 2 to 26"):
        Clobber(columns=27)
    game = Clobber(rows=2, columns=2)
    assert game.board == [1, 0, 0, 1] and game.moves == ["a2b2", "a2a1", "b2b1", "b2a2", "a1a2", "a1b1", "b1b2", "b1a1"]
    assert game.vector("player_1").tolist() == [1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0]


def test_minimax_plays_the_endgame_out_exactly():
    # Two separate o-x pairs and an x-o-o line: o wins only by taking a3 from b3, which leaves no move in the line
    # and the two pairs for x to open and o to close; opening a pair first lets x take b3, leaving o to open one of two pairs.
    rows = ["xoo..", ".....", "ox.xo"]
    game = position(rows)
    agent = parlour.make_agent("minimax", env_id=ENV_ID)
    for seed in range(3):
        agent.reset(seed=seed)
        assert agent.act({"view": game.view("player_0")}) == "b3a3"


def disagreements(episodes: int, seed: int = 0, rows: int = 5, columns: int = 6) -> tuple[int, int]:
    """(episodes, episodes where any step differs from OpenSpiel's ``clobber``) on uniformly random play.

    Each step compares the player to move, the legal actions (as OpenSpiel's
    action numbers and its move names), both players' observation tensors and
    whether the game is over; each episode's end compares the returns.
    """

    def observations(match: Match, state, seat: int) -> bool:
        return all(match.game.vector(name).tolist() == state.observation_tensor(observer) for observer, name in enumerate(match.players))

    size = {"rows": rows, "columns": columns}
    return turn_based_disagreements(
        episodes, seed, Clobber, size, "clobber", size, observations, to_spiel=lambda game, seat, action: spiel_action(game, action), names=True
    )


def test_matches_openspiel_on_random_play():
    pytest.importorskip("pyspiel")
    assert disagreements(150) == (150, 0)
    for rows, columns in ((2, 2), (3, 7), (8, 8)):
        assert disagreements(20, rows=rows, columns=columns) == (20, 0)

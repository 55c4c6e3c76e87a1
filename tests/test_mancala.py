"""Mancala: sowing, the extra move, captures, the skipped store and the end on known positions, the ``minimax`` agent, and a cross-check against OpenSpiel.

The cross-check's full count (the issue's 1000 episodes)::

    .venv/bin/python -c "from tests.test_mancala import disagreements; print(disagreements(1000))"
"""

from __future__ import annotations

import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.mancala import Mancala
from tests.game_positions import play
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/Mancala-v0"


def position(board: list[int], to_move: int = 0) -> Mancala:
    """A game with ``board`` in OpenSpiel's layout (0: player_1's store, 1-6 player_0's pits, 7 its store, 8-13 player_1's pits)."""
    return Mancala.from_view({"board": board, "to_move": to_move, "moves_played": 0, "seeds": 4})


def test_the_last_seed_in_the_own_store_moves_again():
    match = Match(Mancala, {})
    match.reset(0)
    match.submit("player_0", "pit 3")  # 4 seeds from place 3: 4, 5, 6 and the store
    assert match.game.board == [0, 4, 4, 0, 5, 5, 5, 1, 4, 4, 4, 4, 4, 4]
    assert match.acting() == ["player_0"]
    match.submit("player_0", "pit 6")  # 5 seeds: the store, then player_1's pits 1-4
    assert match.game.board == [0, 4, 4, 0, 5, 5, 0, 2, 5, 5, 5, 5, 4, 4] and match.acting() == ["player_1"]


def test_sowing_skips_the_opponents_store_and_a_lone_last_seed_captures_the_opposite_pit():
    board = [0, 0, 0, 0, 0, 0, 10, 0, 1, 1, 1, 1, 1, 1]
    game = position(board)
    play(game, "pit 6")  # 10 seeds from place 6: 7, 8..13, skips 0, then 1, 2, 3: the last lands in empty place 3, opposite 11
    assert game.board == [0, 1, 1, 0, 0, 0, 0, 4, 2, 2, 2, 0, 2, 2]
    assert game.to_move() == ["player_1"]


def test_no_capture_when_the_opposite_pit_is_empty():
    game = position([0, 1, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 0, 4])
    play(game, "pit 1")
    assert game.board == [0, 0, 1, 0, 0, 0, 0, 0, 4, 4, 4, 4, 0, 4]


def test_an_empty_row_ends_the_game_and_each_side_keeps_its_seeds():
    game = position([10, 0, 0, 0, 0, 0, 1, 20, 1, 1, 1, 1, 1, 12], to_move=0)
    ctx = play(game, "pit 6")  # into the store: player_0's row is empty, the game ends before its extra move
    assert ctx.ending is not None and ctx.ending.winners == ["player_1"]  # 21 against 10 + 17
    assert ctx.step_rewards == {"player_0": -1.0, "player_1": 1.0}


def test_player_1_sows_its_own_row_into_its_own_store():
    game = position([0, 4, 4, 4, 4, 4, 4, 0, 4, 4, 4, 4, 4, 4], to_move=1)
    assert game.legal_moves("player_1") == [f"pit {k}" for k in range(1, 7)]
    play(game, "pit 3")  # place 10: 11, 12, 13 and its store 0
    assert game.board[0] == 1 and game.board[10] == 0 and game.to_move() == ["player_1"]
    assert game.vector("player_1")[6] == pytest.approx(1 / 48) and game.vector("player_0")[13] == pytest.approx(1 / 48)


def test_an_empty_pit_is_an_invalid_action():
    match = Match(Mancala, {})
    match.reset(0)
    match.submit("player_0", "pit 3")
    match.submit("player_0", "pit 3")
    assert "not legal" in match.last_error["player_0"]


def test_seeds_sets_the_starting_pits():
    game = Mancala(seeds=6)
    assert game.initial_board() == [0] + [6] * 6 + [0] + [6] * 6
    with pytest.raises(ValueError, match="seeds"):
        Mancala(seeds=0)


def test_minimax_takes_the_capture_that_wins():
    # player_0's pit 1 (1 seed) lands in empty place 2 and captures the 6 opposite: 18 seeds against 11, and player_1's
    # one move left empties its row. Pit 3 lands in place 4, whose opposite pit is empty: no capture.
    game = position([10, 1, 0, 1, 0, 0, 0, 10, 0, 0, 0, 0, 6, 1])
    agent = parlour.make_agent("minimax", env_id=ENV_ID)
    agent.reset(seed=0)
    assert agent.act({"view": game.view("player_0")}) == "pit 1"


def disagreements(episodes: int, seed: int = 0) -> tuple[int, int]:
    """(episodes, episodes where any step differs from OpenSpiel's ``mancala``) on uniformly random play.

    Each step compares the player to move, its legal actions and the whole
    position (OpenSpiel's observation tensor: the board, the player to move
    and the move number); each episode's end compares the returns.
    """

    def observations(match: Match, state, seat: int) -> bool:
        game = match.game
        return game.board + [game.turn, game.played] == state.observation_tensor(seat)

    return turn_based_disagreements(
        episodes, seed, Mancala, {}, "mancala", {}, observations, to_spiel=lambda game, seat, action: 1 + 7 * seat + action
    )


def test_matches_openspiel_moves_positions_and_returns():
    pytest.importorskip("pyspiel")
    assert disagreements(150) == (150, 0)

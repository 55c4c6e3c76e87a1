"""Oware: sowing, lapping, chained captures, the grand slam, feeding, every way a game ends on known positions, the
``minimax`` agent, and a cross-check against OpenSpiel on several board sizes.

The cross-check's full count (the issue's 1000 episodes)::

    .venv/bin/python -c "from tests.test_oware import disagreements; print(disagreements(1000))"
"""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.envs.core.match import Match
from parlour.envs.games.oware import Oware
from tests.game_positions import play
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/Oware-v0"


def position(board: list[int], scores: tuple[int, int] = (0, 0), to_move: int = 0, seen: tuple = ()) -> Oware:
    """A 6-house, 4-seed game with ``board`` in OpenSpiel's order (player_0's houses 1-6, then player_1's)."""
    view = {
        "board": board,
        "scores": list(scores),
        "to_move": to_move,
        "moves_played": 0,
        "houses": 6,
        "seeds": 4,
        "since_capture": [list(p) for p in seen],
    }
    return Oware.from_view(view)


def test_sowing_runs_counter_clockwise_from_the_next_house():
    match = Match(Oware, {})
    match.reset(0)
    match.submit("player_0", "house 3")
    assert match.game.board == [4, 4, 0, 5, 5, 5, 5, 4, 4, 4, 4, 4] and match.acting() == ["player_1"]
    match.submit("player_1", "house 6")  # player_1's last house sows on into player_0's row
    assert match.game.board == [5, 5, 1, 6, 5, 5, 5, 4, 4, 4, 4, 0]


def test_a_house_of_twelve_or_more_skips_itself():
    board = [0, 0, 0, 0, 0, 12, 4, 4, 4, 4, 4, 4]
    game = position(board)
    play(game, "house 6")  # 11 seeds round the other houses, the twelfth skips place 5 and lands in place 6
    assert game.board == [1, 1, 1, 1, 1, 0, 6, 5, 5, 5, 5, 5] and game.scores == [0, 0]


def test_a_capture_takes_the_run_of_twos_and_threes_going_back():
    game = position([4, 4, 4, 4, 0, 3, 1, 2, 1, 4, 4, 4])
    ctx = play(game, "house 6")  # places 6, 7, 8 become 2, 3, 2: all three go, back from the last seed
    assert game.scores == [7, 0] and game.board[6:9] == [0, 0, 0] and ctx.ending is None
    game = position([4, 4, 4, 4, 0, 3, 1, 4, 1, 4, 4, 4])
    play(game, "house 6")  # the run from place 8 stops at place 7's 5 seeds
    assert game.scores == [2, 0] and game.board[6:9] == [2, 5, 0]


def test_a_grand_slam_captures_nothing():
    game = position([4, 4, 4, 4, 0, 2, 1, 2, 0, 0, 0, 0])
    play(game, "house 6")  # places 6 and 7 become 2 and 3, all of player_1's seeds: the move stands, nothing is taken
    assert game.scores == [0, 0] and game.board[5:8] == [0, 2, 3]


def test_an_empty_opponent_must_be_fed():
    game = position([0, 0, 0, 5, 1, 0, 0, 0, 0, 0, 0, 1], to_move=1)
    play(game, "house 6")  # player_1's last seed goes round into player_0's house 1, emptying player_1's row
    assert game.legal_moves("player_0") == ["house 4"]  # houses 1 and 5 have too few seeds to reach player_1's row


def test_the_game_ends_when_the_player_to_move_cannot_move_and_each_side_keeps_its_row():
    game = position([0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0], scores=(22, 23))
    ctx = play(game, "house 6")  # player_1's houses 1 and 2 (1 and 2 seeds) must feed player_0 and cannot reach it
    assert "player_1 has no legal move" in ctx.ending.reason and game.scores == [22, 26] and game.board == [0] * 12
    assert ctx.ending.winners == ["player_1"]


def test_capturing_more_than_half_wins_at_once():
    game = position([0, 0, 0, 0, 0, 1, 1, 4, 0, 0, 0, 4], scores=(23, 15))
    ctx = play(game, "house 6")  # 2 more: 25 of 48
    assert ctx.ending.winners == ["player_0"] and ctx.step_rewards == {"player_0": 1.0, "player_1": -1.0}
    assert "player_0 has captured more than half" in ctx.ending.reason and game.scores == [25, 23]  # and, as in OpenSpiel, player_1 keeps its 8


def test_half_each_is_a_draw():
    game = position([0, 0, 0, 0, 0, 1, 1, 4, 0, 0, 0, 0], scores=(22, 20))
    ctx = play(game, "house 6")
    assert game.scores == [24, 24] and ctx.ending.winners == [] and ctx.step_rewards == {}


def test_a_repeated_position_ends_the_game():
    after = (4, 4, 0, 5, 5, 5, 5, 4, 4, 4, 4, 4, 1)
    game = position([4] * 12, seen=[after])
    ctx = play(game, "house 3")
    # Each side keeps its row: player_0's 23 seeds against player_1's 25.
    assert "repeated" in ctx.ending.reason and game.scores == [23, 25] and ctx.ending.winners == ["player_1"]


def test_options_set_the_board_and_are_validated():
    game = Oware(houses=3, seeds=2)
    assert game.board == [2] * 6 and game.moves == ["house 1", "house 2", "house 3"] and game.vector_size == 8
    with pytest.raises(ValueError, match="houses"):
        Oware(houses=1)


def test_minimax_takes_the_chained_capture():
    game = position([4, 4, 4, 4, 0, 3, 1, 2, 1, 4, 4, 4])
    agent = parlour.make_agent("minimax", env_id=ENV_ID)
    agent.reset(seed=0)
    assert agent.act({"view": game.view("player_0")}) == "house 6"


def disagreements(episodes: int, seed: int = 0, houses: int = 6, seeds: int = 4) -> tuple[int, int]:
    """(episodes, episodes where any step differs from OpenSpiel's ``oware``) on uniformly random play.

    Each step compares the player to move, its legal actions, the whole
    position (OpenSpiel's observation tensor: every house and both players'
    captured seeds, against ``player_0``'s vector and ``player_1``'s turned
    round) and whether the game is over; each episode's end compares the returns.
    """

    def observations(match: Match, state, seat: int) -> bool:
        tensor = np.asarray(state.observation_tensor(0), dtype=np.float32)
        turned = np.concatenate([tensor[houses : 2 * houses], tensor[:houses], tensor[[2 * houses + 1, 2 * houses]]])
        return np.array_equal(match.game.vector("player_0"), tensor) and np.array_equal(match.game.vector("player_1"), turned)

    return turn_based_disagreements(
        episodes,
        seed,
        Oware,
        {"houses": houses, "seeds": seeds},
        "oware",
        {"num_houses_per_player": houses, "num_seeds_per_house": seeds},
        observations,
    )


def test_matches_openspiel_on_random_play():
    pytest.importorskip("pyspiel")
    assert disagreements(150) == (150, 0)
    for houses, seeds in ((2, 1), (3, 2), (6, 6)):
        assert disagreements(20, houses=houses, seeds=seeds) == (20, 0)

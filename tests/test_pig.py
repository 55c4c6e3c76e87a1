"""Pig: rolls, a 1, stopping, winning, the horizon and the options on known positions, the ``hold`` agent, and a
cross-check against OpenSpiel (its chance nodes fed the dice parlour drew).

The cross-check's full count (the issue's 1000 episodes)::

    .venv/bin/python -c "from tests.test_pig import disagreements; print(disagreements(1000))"
"""

from __future__ import annotations

import numpy as np
import pytest

import parlour
from parlour.baselines.pig import break_even
from parlour.envs.core.context import Context
from parlour.envs.core.match import Match
from parlour.envs.games.pig import HORIZON, Pig
from tests.openspiel_crosscheck import turn_based_disagreements

ENV_ID = "parlour/Pig-v0"


def position(scores: list[int], turn_total: int = 0, to_move: int = 0, decisions: int = 0, **options) -> Pig:
    """A game with ``scores``, ``to_move`` holding ``turn_total`` after ``decisions`` rolls and stops."""
    view = {
        "scores": scores,
        "to_move": to_move,
        "turn_total": turn_total,
        "decisions": decisions,
        "last_roll": 0,
        "win_score": options.get("win_score", 100),
        "dice_outcomes": options.get("dice_outcomes", 6),
        "piglet": options.get("piglet", False),
    }
    return Pig.from_view(view)


def play(game: Pig, move: str, face: int = 1) -> Context:
    """Apply ``move`` for the player to move, with a generator whose first die (of the game's faces) shows ``face``."""
    seed = next(s for s in range(1000) if np.random.default_rng(s).integers(1, game.dice_outcomes + 1) == face)
    ctx = Context(game.players, np.random.default_rng(seed))
    game.apply(ctx, {game.to_move()[0]: move})
    return ctx


def test_a_roll_adds_its_face_and_a_one_loses_the_turn_total_and_the_turn():
    game = position([10, 20], turn_total=7)
    play(game, "roll", face=5)
    assert game.turn_total == 12 and game.to_move() == ["player_0"] and game.last_roll == 5
    ctx = play(game, "roll", face=1)
    assert game.turn_total == 0 and game.scores == [10, 20] and game.to_move() == ["player_1"] and ctx.ending is None


def test_stopping_banks_the_turn_total_and_passes_the_turn():
    game = position([10, 20, 30], turn_total=9, to_move=2, num_players=3)
    play(game, "stop")
    assert game.scores == [10, 20, 39] and game.turn_total == 0 and game.to_move() == ["player_0"]


def test_reaching_the_winning_score_wins_and_the_others_share_the_loss():
    game = position([95, 20, 30], turn_total=4, num_players=3)
    assert game.legal_moves("player_0") == ["roll", "stop"]
    play(game, "roll", face=2)
    assert game.legal_moves("player_0") == ["stop"]  # 95 + 6 reaches 100: rolling is no longer allowed
    ctx = play(game, "stop")
    assert ctx.ending.winners == ["player_0"] and ctx.step_rewards == {"player_0": 1.0, "player_1": -0.5, "player_2": -0.5}


def test_the_horizon_ends_in_a_draw_before_the_die_is_cast():
    game = position([50, 60], turn_total=3, decisions=HORIZON - 1)
    ctx = play(game, "roll", face=4)
    assert ctx.ending.winners == [] and ctx.step_rewards == {} and game.turn_total == 3 and game.last_roll == 0


def test_piglet_counts_one_point_a_roll_and_options_are_validated():
    game = position([0, 0], piglet=True, dice_outcomes=4, win_score=20)
    play(game, "roll", face=4)
    assert game.turn_total == 1
    with pytest.raises(ValueError, match="win_score"):
        Pig(win_score=5)
    with pytest.raises(ValueError, match="piglet"):
        Pig(piglet=1)
    assert Pig(num_players=4, win_score=10).vector_size == 5 * 11


def test_the_vector_is_turned_to_the_players_side():
    game = position([3, 7, 9], turn_total=2, to_move=1, num_players=3, win_score=10)
    rows = game.vector("player_1").reshape(4, 11)
    assert [int(np.argmax(row)) for row in rows] == [2, 7, 9, 3]


def test_hold_rolls_to_the_break_even_total_or_the_win():
    agent = parlour.make_agent("hold", env_id=ENV_ID)
    agent.reset(seed=0)
    assert break_even(6, False) == 20 and break_even(4, False) == 9 and break_even(6, True) == 5
    act = lambda game: agent.act({"view": game.view("player_0")})  # noqa: E731
    assert act(position([0, 0], turn_total=19)) == "roll" and act(position([0, 0], turn_total=20)) == "stop"
    assert act(position([90, 0], turn_total=10)) == "stop"
    assert act(position([0, 0], turn_total=9, dice_outcomes=4)) == "stop"


def disagreements(episodes: int, seed: int = 0, **options) -> tuple[int, int]:
    """(episodes, episodes where any step differs from OpenSpiel's ``pig``) on uniformly random play.

    After each roll OpenSpiel's chance node is given the face parlour drew.
    Each step compares the player to move, its legal actions, the
    observation tensor (turned to the player's side) and whether the game is
    over; each episode's end compares the returns.
    """
    game_options = Pig(**options)
    spiel_options = {
        "players": game_options.num_players,
        "winscore": game_options.win_score,
        "diceoutcomes": game_options.dice_outcomes,
        "piglet": game_options.piglet,
    }

    def observations(match: Match, state, seat: int) -> bool:
        game = match.game
        tensor = np.asarray(state.observation_tensor(seat), dtype=np.float32).reshape(1 + game.num_players, -1)
        turned = np.concatenate([tensor[:1], np.roll(tensor[1:], -seat, axis=0)]).reshape(-1)
        return np.array_equal(game.vector(match.players[seat]), turned)

    def chance_outcome(game: Pig) -> int:
        return int(game.last_roll != 1) if game.piglet else game.last_roll - 1

    return turn_based_disagreements(episodes, seed, Pig, options, "pig", spiel_options, observations, chance_outcome=chance_outcome)


def test_matches_openspiel_on_random_play():
    pytest.importorskip("pyspiel")
    assert disagreements(150) == (150, 0)
    assert disagreements(30, num_players=3, win_score=30) == (30, 0)
    assert disagreements(30, piglet=True, dice_outcomes=4, win_score=20) == (30, 0)

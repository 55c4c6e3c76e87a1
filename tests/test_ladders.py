"""``difficulty`` on every game's Gymnasium face: games with a difficulty option of their own take it; the others
climb an opponent ladder of scripted agents, weakest first (issue 35)."""

from __future__ import annotations

import gymnasium as gym
import pytest

import parlour
from parlour.agents import ladder_specs
from parlour.baselines import _LADDERS, register_ladder


@pytest.fixture
def tictactoe_ladder():
    """TicTacToe with a two-rung ladder for the test, the declared one put back afterwards."""
    saved = _LADDERS.get("parlour/TicTacToe-v0")
    register_ladder("parlour/TicTacToe-v0", ["random", ("minimax", {})])
    yield
    if saved is None:
        _LADDERS.pop("parlour/TicTacToe-v0")
    else:
        _LADDERS["parlour/TicTacToe-v0"] = saved


def test_difficulty_picks_the_rung_that_plays_the_other_seats(tictactoe_ladder: None) -> None:
    assert gym.make("parlour/TicTacToe-v0", difficulty=1).opponent_names == {"player_1": "random"}
    env = gym.make("parlour/TicTacToe-v0", difficulty=2, seat=1)
    assert env.opponent_names == {"player_0": "minimax"}
    env.reset(seed=0)
    assert env.record()["agents"]["player_0"] == "minimax"


def test_a_rung_with_options_is_named_after_them() -> None:
    register_ladder("parlour/Nim-v0", ["random", ("nim_sum", {})])
    try:
        assert [spec.name for spec in ladder_specs("parlour/Nim-v0")] == ["random", "nim_sum"]
        register_ladder("parlour/Nim-v0", [("random", {"seed_offset": 1})])
        assert [spec.name for spec in ladder_specs("parlour/Nim-v0")] == ["random(seed_offset=1)"]
    finally:
        _LADDERS.pop("parlour/Nim-v0", None)


def test_bad_difficulties_name_the_ladder(tictactoe_ladder: None) -> None:
    with pytest.raises(ValueError, match=r"an int from 1 to 2 \(1: random, 2: minimax\); got 3"):
        gym.make("parlour/TicTacToe-v0", difficulty=3)
    with pytest.raises(ValueError, match="give difficulty or opponent, not both"):
        gym.make("parlour/TicTacToe-v0", difficulty=1, opponent="minimax")
    with pytest.raises(ValueError, match="got '2'"):
        gym.make("parlour/TicTacToe-v0", difficulty="2")


def test_a_game_with_its_own_difficulty_keeps_it() -> None:
    env = gym.make("parlour/Market-v0", difficulty=3)
    assert env.match.game.difficulty == 3


def test_mixture_int_levels_reach_a_ladder(tictactoe_ladder: None) -> None:
    env = gym.make("parlour/Mixture-v0", entries=[{"env_id": "parlour/TicTacToe-v0", "levels": [2]}])
    env.reset(seed=0)
    assert env.record()["agents"]["player_1"] == "minimax"


def test_every_game_has_a_difficulty() -> None:
    """Every environment takes ``difficulty=1`` in its Gymnasium face: its own option or rung 1 of a ladder."""
    for env_id in parlour.list_envs():
        if env_id == "parlour/Mixture-v0":
            continue
        gym.make(env_id, difficulty=1)

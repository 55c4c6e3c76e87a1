"""``difficulty`` on every game's Gymnasium face: games with a difficulty option of their own take it; the others
climb an opponent ladder of scripted agents, weakest first (issue 35)."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import parlour
from parlour.agents import check_agent_spec, ladder_specs
from parlour.baselines import _LADDERS, opponent_ladder, register_ladder


@pytest.fixture
def declared_ladders() -> Iterator[None]:
    """The declared ladders put back after a test that declares its own, so later tests see them as declared."""
    opponent_ladder("parlour/TicTacToe-v0")  # loads every baselines module, so their ladders are in the copy
    saved = dict(_LADDERS)
    yield
    _LADDERS.clear()
    _LADDERS.update(saved)


@pytest.fixture
def tictactoe_ladder(declared_ladders: None) -> None:
    """TicTacToe with a two-rung ladder for the test, the declared one put back afterwards."""
    register_ladder("parlour/TicTacToe-v0", ["random", ("minimax", {})])


def test_difficulty_picks_the_rung_that_plays_the_other_seats(tictactoe_ladder: None) -> None:
    assert gym.make("parlour/TicTacToe-v0", difficulty=1).opponent_names == {"player_1": "random"}
    env = gym.make("parlour/TicTacToe-v0", difficulty=2, seat=1)
    assert env.opponent_names == {"player_0": "minimax"}
    env.reset(seed=0)
    assert env.record()["agents"]["player_0"] == "minimax"


def test_a_rung_with_options_is_named_after_them(declared_ladders: None) -> None:
    register_ladder("parlour/Nim-v0", ["random", ("nim_sum", {})])
    assert [spec.name for spec in ladder_specs("parlour/Nim-v0")] == ["random", "nim_sum"]
    register_ladder("parlour/Nim-v0", [("random", {"seed_offset": 1})])
    assert [spec.name for spec in ladder_specs("parlour/Nim-v0")] == ["random(seed_offset=1)"]


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


#: The environments with a ladder declared beyond the default one rung, ``random``.
LADDERS = [env_id for env_id in parlour.list_envs() if len(opponent_ladder(env_id)) > 1]
#: Episodes per rung in the climb: enough that a real step up shows beyond the tolerance below.
CLIMB_EPISODES = 200
#: Fewer where every rung but the first already beats a random player in every game (so the means are exact) and the
#: deeper searches are slow, or where a game is slow to play.
FEWER_EPISODES = {
    "parlour/Breakthrough-v0": 20,
    "parlour/Chess-v0": 8,
    "parlour/Clobber-v0": 40,
    "parlour/ConnectFour-v0": 40,
    "parlour/DotsAndBoxes-v0": 10,
    "parlour/Hex-v0": 20,
    "parlour/Mancala-v0": 40,
    "parlour/Othello-v0": 20,
    "parlour/Oware-v0": 20,
    "parlour/Y-v0": 10,
    "parlour/DonorGame-v0": 100,
    "parlour/GraphCoordination-v0": 100,
    "parlour/SplitMaze-v0": 40,
}
#: How far the learner's mean return may rise from one rung to the next before the ladder fails to climb: this many
#: standard errors of the difference of the two means (a one-sided chance of about 1 in 700 for rungs of equal
#: strength). The seeds are fixed, so the figures, and the verdict, are the same on every run.
RISE_TOLERANCE_SE = 3.0


def learner_returns(env_id: str, rung: parlour.AgentSpec, episodes: int, learner_seat: int) -> list[float]:
    """The returns of ``random`` in ``learner_seat`` of ``env_id`` with ``rung`` in every other seat, one per episode."""
    players = parlour.make_aec(env_id).possible_agents
    agents = {player: "random" if seat == learner_seat else rung for seat, player in enumerate(players)}
    results = parlour.evaluate(env_id, agents, episodes=episodes, seed=0, rotate_seats=False, progress=False)
    return [record["returns"][players[learner_seat]] for record in results.records]


@pytest.mark.parametrize("env_id", LADDERS)
def test_every_rung_of_a_ladder_builds(env_id: str) -> None:
    """Each rung is a scripted agent of the game with options it takes, and no rung repeats another."""
    specs = ladder_specs(env_id)
    for spec in specs:
        check_agent_spec(spec, env_id)
    names = [spec.name for spec in specs]
    assert len(set(names)) == len(names), names


@pytest.mark.slow
@pytest.mark.parametrize("env_id", LADDERS)
def test_every_ladder_climbs(env_id: str) -> None:
    """Against ``random`` in seat 0, each rung in every other seat holds the learner's mean return at or below the
    rung before it (within :data:`RISE_TOLERANCE_SE`); and each rung also plays seat 0 (the learner last), so it can
    hold whichever seat the learner leaves it."""
    episodes = FEWER_EPISODES.get(env_id, CLIMB_EPISODES)
    figures = []
    for rung in ladder_specs(env_id):
        returns = learner_returns(env_id, rung, episodes, learner_seat=0)
        figures.append((rung.name, statistics.mean(returns), statistics.stdev(returns) / math.sqrt(episodes)))
        learner_returns(env_id, rung, 2, learner_seat=len(parlour.make_aec(env_id).possible_agents) - 1)
    shown = ", ".join(f"{name} {mean:+.3f} (se {se:.3f})" for name, mean, se in figures)
    for (_, low_mean, low_se), (name, mean, se) in zip(figures, figures[1:]):
        assert mean <= low_mean + RISE_TOLERANCE_SE * math.hypot(low_se, se), f"{env_id}: {name} is easier than the rung below it: {shown}"


def test_the_readme_states_each_ladder() -> None:
    """README's ladders table gives every declared ladder, rung by rung, in a row that names the game."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for env_id in LADDERS:
        ladder = " → ".join(f"`{spec.name}`" for spec in ladder_specs(env_id))
        game = env_id.removeprefix("parlour/").rsplit("-v", 1)[0]
        rows = [line.split("|")[1] for line in readme.splitlines() if line.startswith("| ") and line.rstrip().endswith(f"| {ladder} |")]
        assert any(game in re.split(r"[\s,]+", row.strip()) for row in rows), f"README's ladders table does not give {game} its ladder {ladder}"

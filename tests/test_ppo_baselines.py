"""The shipped ``ppo`` agents: one small MaskablePPO policy per game with enumerable moves, registered as a scripted agent.

Figures measured with ``parlour.evaluate(env_id, ["ppo", opponent], episodes=200, seed=2024)`` (seats rotated)
when the policies were trained; each is asserted with a margin.
"""

from __future__ import annotations

import json

import pytest

import parlour
from parlour.baselines import make_scripted, scripted_names
from parlour.baselines.ppo import POLICIES, shipped_policies
from parlour.baselines.train.evaluation import outcome_counts

pytest.importorskip("sb3_contrib")

#: The games every shipped policy covers: the games with enumerable moves when they were trained.
GAMES = [
    "parlour/ColonelBlotto-v0",
    "parlour/ConnectFour-v0",
    "parlour/IteratedPrisonersDilemma-v0",
    "parlour/KuhnPoker-v0",
    "parlour/LeducHoldem-v0",
    "parlour/LiarsDice-v0",
    "parlour/Nim-v0",
    "parlour/TicTacToe-v0",
]
#: (env_id, opponent, statistic, measured, asserted floor): 200 episodes, seed 2024.
FIGURES = [
    ("parlour/ColonelBlotto-v0", "heuristic", "mean_return", 0.565, 0.35),
    ("parlour/ConnectFour-v0", "random", "win", 0.935, 0.85),
    ("parlour/IteratedPrisonersDilemma-v0", "random", "mean_return", 29.915, 25.0),
    ("parlour/IteratedPrisonersDilemma-v0", "tit_for_tat", "win", 0.98, 0.9),
    ("parlour/KuhnPoker-v0", "random", "mean_return", 0.28, 0.1),
    ("parlour/LeducHoldem-v0", "random", "mean_return", 0.465, 0.2),
    ("parlour/LiarsDice-v0", "random", "win", 1.0, 0.9),
    ("parlour/Nim-v0", "random", "win", 0.68, 0.58),
    ("parlour/TicTacToe-v0", "random", "non_loss", 0.975, 0.9),
]


def test_every_shipped_policy_is_small_documented_and_registered() -> None:
    shipped = shipped_policies()
    assert sorted(shipped) == GAMES
    for env_id, policy in shipped.items():
        assert policy.stat().st_size < 1_000_000
        metadata = json.loads(policy.with_suffix(".json").read_text())
        assert metadata["env_id"] == env_id
        assert metadata["command"].startswith(f"parlour train sb3 {env_id} ") and isinstance(metadata["seed"], int)
        assert metadata["steps"] > 0 and metadata["train_seconds"] > 0 and metadata["cpu_seconds"] > 0
        assert "ppo" in scripted_names(env_id)
    assert POLICIES.is_dir()


@pytest.mark.parametrize(("env_id", "opponent", "statistic", "measured", "floor"), FIGURES)
def test_shipped_policy_figures(env_id: str, opponent: str, statistic: str, measured: float, floor: float) -> None:
    results = parlour.evaluate(env_id, ["ppo", opponent], episodes=200, seed=2024, progress=False)
    counts = outcome_counts(results.records, "ppo")
    value = {
        "win": counts["wins"] / 200,
        "non_loss": (counts["wins"] + counts["draws"]) / 200,
        "mean_return": counts["mean_return"],
    }[statistic]
    print(f"{env_id} ppo vs {opponent}: {statistic} {value:.3f} (measured {measured})")
    assert value >= floor
    assert counts["invalid_rate"] == 0.0


@pytest.mark.parametrize("env_id", GAMES)
def test_ppo_episodes_replay_from_their_agent_seeds(env_id: str) -> None:
    # What the leaderboard does for a seat named after a built-in agent.
    results = parlour.evaluate(env_id, ["ppo", "random"], episodes=2, seed=5, progress=False)
    for record in results.records:
        seat = next(seat for seat, name in record["agents"].items() if name == "ppo")
        parlour.replay(record, agents={seat: make_scripted("ppo", env_id)})

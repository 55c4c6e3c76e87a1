"""Seeing that a trainer learns: evaluation against fixed opponents, Wilson intervals, the strong agent of each game.

:func:`evaluate_agent` plays an agent against each fixed opponent with seats
rotated (so it plays every seat equally often) on fixed seeds, so that the
curves of a run differ only because the agent changed. Each row holds the
win, draw and loss counts, the win rate with its Wilson 95% interval, the
non-losing rate, the mean return, the invalid-move rate and, for agents that
count it (:class:`~parlour.baselines.sb3_agent.PolicyAgent`), the mean
entropy of the policy over the decisions it made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from parlour.baselines import scripted_names
from parlour.evaluation.results import outcome_of

if TYPE_CHECKING:
    from parlour.envs.core.record import Record

#: Strong scripted agents, in order of preference, for the default evaluation opponent.
STRONG_AGENTS = ("minimax", "nash", "nim_sum", "probabilistic", "heuristic", "tit_for_tat", "boulware", "sustainable")
#: Scripted agent names that are trained policies, never used as fixed opponents or league anchors of a trainer.
TRAINED_AGENTS = ("ppo",)
#: The columns of an evaluation row, in CSV order.
EVAL_COLUMNS = (
    "update",
    "timesteps",
    "wall_s",
    "opponent",
    "episodes",
    "wins",
    "draws",
    "losses",
    "win_rate",
    "win_low",
    "win_high",
    "non_loss_rate",
    "mean_return",
    "invalid_rate",
    "entropy",
)


def strong_agent(env_id: str) -> str:
    """The strongest scripted agent parlour has for ``env_id`` (``random`` when there is no other)."""
    names = [name for name in scripted_names(env_id) if name not in TRAINED_AGENTS]
    for name in STRONG_AGENTS:
        if name in names:
            return name
    others = [name for name in names if name != "random"]
    return others[0] if others else "random"


def wilson(successes: float, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default); ``(0, 1)`` without trials."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def outcome_counts(records: Sequence[Record], name: str) -> dict[str, Any]:
    """Wins, draws and losses of the agent ``name`` over ``records`` (by the outcome's winners), its mean return and invalid-move rate."""
    wins = draws = losses = actions = invalid = 0
    total = 0.0
    for record in records:
        winners = outcome_of(record).get("winners") or []
        for seat, agent in record["agents"].items():
            if agent != name:
                continue
            total += float(record["returns"][seat])
            if not winners:
                draws += 1
            elif seat in winners:
                wins += 1
            else:
                losses += 1
            steps = [step for step in record["steps"] if step["player"] == seat]
            actions += len(steps)
            invalid += sum(step["error"] is not None for step in steps)
    games = wins + draws + losses
    return {
        "episodes": games,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "mean_return": total / games if games else math.nan,
        "invalid_rate": invalid / actions if actions else 0.0,
    }


def evaluate_agent(
    env_id: str,
    agent: Any,
    opponents: Sequence[Any],
    episodes: int,
    seed: int,
    env_kwargs: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """One row per opponent (see the module docstring) from ``episodes`` episodes of ``agent`` against it, seats rotated.

    ``agent`` is an agent object (its ``name`` labels it); each opponent a spec or an agent.
    """
    from parlour.evaluation import evaluate

    rows = []
    for opponent in opponents:
        results = evaluate(env_id, [agent, opponent], episodes=episodes, seed=seed, env_kwargs=env_kwargs, progress=False)
        name, other = results.agents
        row: dict[str, Any] = {"opponent": other, **outcome_counts(results.records, name)}
        row["win_rate"] = row["wins"] / row["episodes"]
        row["win_low"], row["win_high"] = wilson(row["wins"], row["episodes"])
        row["non_loss_rate"] = (row["wins"] + row["draws"]) / row["episodes"]
        stats = results.stats.get(name, {})
        decisions = stats.get("entropy_decisions", 0)
        row["entropy"] = stats["entropy_sum"] / decisions if decisions else math.nan
        rows.append(row)
    return rows

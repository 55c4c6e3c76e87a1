"""Ratings, recomputed from scratch from the stored episodes.

* Games of two or more seats: every episode is split into pairwise results
  between seats held by different agents (the higher return wins, equal
  returns are half a win each). A Bradley–Terry model is fitted by Newton's
  method with a weak Gaussian prior on the log-strengths (standard deviation
  :data:`PRIOR_SD`, which keeps undefeated or disconnected agents finite), and
  shown on an Elo-like scale: 400 points per factor of ten in odds, the anchor
  agent (:data:`ANCHOR`, the ``random`` baseline) at :data:`ANCHOR_RATING`.
  Without the anchor in an environment, the mean rating is put there instead.
  95% intervals come from a percentile bootstrap over episodes.
* Single-agent tasks: mean return with its standard error (interval: mean
  plus or minus 1.96 standard errors).
* Overall: per environment, scores normalised so that ``random`` is 0 and the
  best scripted baseline of that environment is 100, averaged over the
  environments an agent played; environments lacking either reference are
  left out of the average.

Episodes are sorted by fingerprint and the bootstrap has a fixed seed, so a
table depends only on the set of stored episodes, never on arrival order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

ANCHOR = "random"
ANCHOR_RATING = 1000.0
ELO_PER_NAT = 400.0 / math.log(10.0)
PRIOR_SD = 5.0
BOOTSTRAP = 200
BOOTSTRAP_SEED = 0

#: One stored episode: (fingerprint, {seat: agent}, {seat: return}).
Result = tuple[str, dict[str, str], dict[str, float]]


def pairwise(results: Sequence[Result], agents: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairwise results of ``results`` as arrays (episode index, agent i, agent j, score of i in [0, 1])."""
    index = {name: k for k, name in enumerate(agents)}
    episodes, first, second, score = [], [], [], []
    for e, (_, seating, returns) in enumerate(results):
        seats = sorted(seating)
        for a, seat_a in enumerate(seats):
            for seat_b in seats[a + 1 :]:
                if seating[seat_a] == seating[seat_b]:
                    continue
                ra, rb = returns.get(seat_a, 0.0), returns.get(seat_b, 0.0)
                episodes.append(e)
                first.append(index[seating[seat_a]])
                second.append(index[seating[seat_b]])
                score.append(1.0 if ra > rb else 0.0 if ra < rb else 0.5)
    return np.array(episodes, dtype=np.int64), np.array(first, dtype=np.int64), np.array(second, dtype=np.int64), np.array(score)


def fit_bradley_terry(wins: np.ndarray, prior_sd: float = PRIOR_SD, iterations: int = 100) -> np.ndarray:
    """Log-strengths maximising the Bradley–Terry posterior for win matrices ``wins`` of shape (..., K, K).

    ``wins[..., i, j]`` is how often i beat j (ties counted half to each).
    Returns log-strengths of shape (..., K), each batch centred on its mean.
    """
    wins = np.asarray(wins, dtype=float)
    games = wins + np.swapaxes(wins, -1, -2)
    k = wins.shape[-1]
    theta = np.zeros(wins.shape[:-1])
    eye = np.eye(k)
    won = wins.sum(axis=-1)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(theta[..., None, :] - theta[..., :, None]))
        gradient = won - (games * p).sum(axis=-1) - theta / prior_sd**2
        curvature = games * p * (1.0 - p)
        hessian = curvature - eye * curvature.sum(axis=-1)[..., None] - eye / prior_sd**2
        step = np.linalg.solve(hessian, gradient[..., None])[..., 0]
        # Clipped steps keep Newton's method from overshooting on lopsided data; the posterior is concave.
        step = np.clip(step, -2.0, 2.0)
        theta = theta - step
        if np.max(np.abs(step)) < 1e-9:
            break
    return theta - theta.mean(axis=-1, keepdims=True)


def _elo(theta: np.ndarray, anchor: int | None) -> np.ndarray:
    reference = theta[..., anchor] if anchor is not None else theta.mean(axis=-1)
    return ANCHOR_RATING + ELO_PER_NAT * (theta - reference[..., None])


def bradley_terry(
    results: Sequence[Result], bootstrap: int = BOOTSTRAP, seed: int = BOOTSTRAP_SEED, anchor: str = ANCHOR
) -> dict[str, Any]:
    """The Bradley–Terry table of ``results``: rows of agent, rating, 95% interval, games; plus the win-rate matrix."""
    agents = sorted({name for _, seating, _ in results for name in seating.values()})
    k = len(agents)
    episode, first, second, score = pairwise(results, agents)
    flat = np.concatenate([first * k + second, second * k + first])
    points = np.concatenate([score, 1.0 - score])
    wins = np.bincount(flat, weights=points, minlength=k * k).reshape(k, k)
    games_between = wins + wins.T
    anchor_index = agents.index(anchor) if anchor in agents else None

    rng = np.random.default_rng(seed)
    n = len(results)
    samples = np.empty((bootstrap, k, k))
    both = np.concatenate([episode, episode])
    for b in range(bootstrap):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n)
        samples[b] = np.bincount(flat, weights=points * counts[both], minlength=k * k).reshape(k, k)
    ratings = _elo(fit_bradley_terry(wins), anchor_index)
    low, high = ratings, ratings
    if bootstrap:
        resampled = _elo(fit_bradley_terry(samples), anchor_index)
        low, high = np.percentile(resampled, 2.5, axis=0), np.percentile(resampled, 97.5, axis=0)

    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(games_between > 0, wins / np.maximum(games_between, 1e-300), np.nan)
    rows = [
        {"agent": name, "rating": float(ratings[i]), "low": float(low[i]), "high": float(high[i]),
         "games": int(round(games_between[i].sum())), "score": float(wins[i].sum() / games_between[i].sum()) if games_between[i].sum() else None}
        for i, name in enumerate(agents)
    ]
    rows.sort(key=lambda row: (-row["rating"], row["agent"]))
    return {
        "kind": "bradley-terry",
        "anchor": anchor if anchor_index is not None else None,
        "rows": rows,
        "agents": agents,
        "win_rate": [[None if math.isnan(x) else float(x) for x in line] for line in rate],
        "episodes": n,
    }


def mean_scores(results: Sequence[Result]) -> dict[str, Any]:
    """The single-agent table of ``results``: rows of agent, mean return, interval of 1.96 standard errors, episodes."""
    by_agent: dict[str, list[float]] = {}
    for _, seating, returns in results:
        for seat, name in seating.items():
            by_agent.setdefault(name, []).append(float(returns.get(seat, 0.0)))
    rows = []
    for name, scores in by_agent.items():
        values = np.array(scores)
        error = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0
        mean = float(values.mean())
        rows.append({"agent": name, "rating": mean, "low": mean - 1.96 * error, "high": mean + 1.96 * error,
                     "stderr": error, "games": len(values), "score": mean})
    rows.sort(key=lambda row: (-row["rating"], row["agent"]))
    return {"kind": "mean-score", "anchor": None, "rows": rows, "agents": sorted(by_agent), "win_rate": None, "episodes": len(results)}


def env_table(results: Sequence[Result], seats: int, bootstrap: int = BOOTSTRAP) -> dict[str, Any]:
    """The rating table of one environment with ``seats`` players: Bradley–Terry, or mean score for one seat."""
    results = sorted(results, key=lambda result: result[0])
    if seats == 1:
        return mean_scores(results)
    return bradley_terry(results, bootstrap=bootstrap)


def normalised(table: dict[str, Any], baselines: Iterable[str], anchor: str = ANCHOR) -> dict[str, float] | None:
    """Each agent's score on the 0 (``anchor``) to 100 (best of ``baselines``) scale; None without both references."""
    value = {row["agent"]: row["rating"] for row in table["rows"]}
    best = [value[name] for name in baselines if name in value and name != anchor]
    if anchor not in value or not best or max(best) == value[anchor]:
        return None
    zero, hundred = value[anchor], max(best)
    return {name: 100.0 * (v - zero) / (hundred - zero) for name, v in value.items()}


def overall(normalised_by_env: dict[str, dict[str, float] | None]) -> dict[str, Any]:
    """The overall table: each agent's mean normalised score over the environments it covered, best first."""
    usable = {env: scores for env, scores in normalised_by_env.items() if scores is not None}
    per_agent: dict[str, dict[str, float]] = {}
    for env, scores in usable.items():
        for name, value in scores.items():
            per_agent.setdefault(name, {})[env] = value
    rows = [
        {"agent": name, "score": float(np.mean(list(envs.values()))), "environments": len(envs), "envs": envs}
        for name, envs in per_agent.items()
    ]
    rows.sort(key=lambda row: (-row["score"], row["agent"]))
    return {"rows": rows, "environments": sorted(usable), "unnormalised": sorted(set(normalised_by_env) - set(usable))}

"""Bradley–Terry intervals by simulation: how often each covers the true rating, and how often it tells a strong
agent from ``random``.

An agent of known expected score against ``random`` (wins, plus half its draws)
plays ``--episodes`` two-seat games, seats alternating, with no first-mover
advantage in truth. Its true rating is ``1000 + ELO_PER_NAT · logit(score)``.
For every simulated table the two bootstraps of
:func:`parlour.leaderboard.ratings.bradley_terry` are drawn once, and two
interval rules are applied to the same draws:

- ``now``: the rule the leaderboard uses (the union of the two percentile
  intervals, widened only as far as the rating);
- ``mirrored``: FORMAT 5's rule, the same ends mirrored about the rating so
  the interval reaches the farther one on both sides.

Printed per cell: coverage of the true rating with its 95% Wilson interval
(the target is 0.95), the share of tables whose interval lies wholly above
``random``'s 1000 ("separated"), and the median width. Every table comes from
``--seed``, so the figures reproduce on any machine.

    .venv/bin/python benchmarks/rating_coverage.py [--tables 200] [--episodes 40 80 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from parlour.evaluation.results import wilson_interval
from parlour.leaderboard import ratings

SEATS = ["player_0", "player_1"]
#: (expected score against random, share of draws): from an even match to minimax against random at TicTacToe.
CELLS = ((0.6, 0.2), (0.75, 0.1), (0.9, 0.1), (0.95, 0.1), (0.975, 0.05), (0.99, 0.02))


def mirrored(rating: np.ndarray, resampled: np.ndarray, parametric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FORMAT 5's interval: the farther of the two bootstraps' percentile ends, mirrored about the rating."""
    low, high = ratings._bootstrap_interval(rating, resampled, parametric)
    half = np.maximum(rating - low, high - rating)
    return rating - half, rating + half


RULES = {"now": ratings._bootstrap_interval, "mirrored": mirrored}


def simulated_table(score: float, draws: float, episodes: int, rng: np.random.Generator) -> list[ratings.Result]:
    """``episodes`` games of ``strong`` against ``random`` with the given expected score and draw share."""
    win = score - draws / 2
    results = []
    for index in range(episodes):
        strong, weak = SEATS if index % 2 == 0 else SEATS[::-1]
        u = rng.random()
        outcome = 1.0 if u < win else 0.0 if u < win + draws else -1.0
        results.append((f"{index:06d}", {strong: "strong", weak: "random"}, {strong: outcome, weak: -outcome}))
    return results


def measure(score: float, draws: float, episodes: int, tables: int, bootstrap: int, seed: int) -> dict[str, tuple[int, int, float]]:
    """Per rule: tables covering the truth, tables separated from random, median width."""
    rng = np.random.default_rng([seed, episodes, round(score * 1000)])
    truth = ratings.ANCHOR_RATING + ratings.ELO_PER_NAT * math.log(score / (1 - score))
    agents = ["random", "strong"]
    covered = dict.fromkeys(RULES, 0)
    separated = dict.fromkeys(RULES, 0)
    widths: dict[str, list[float]] = {rule: [] for rule in RULES}
    for table in range(tables):
        results = simulated_table(score, draws, episodes, rng)
        episode, first, second, points = ratings.pairwise(results, agents, SEATS)
        wins, games = ratings._first_seat_matrices(first, second, points, np.ones(len(points)), 2)
        theta, eta, _ = ratings.fit_bradley_terry(wins, games, True, covariance=False)
        rating = ratings._elo(theta, 0)
        resampled, parametric = ratings._bootstrap_ratings(
            (episode, first, second, points), wins, games, np.r_[theta, eta], episodes, bootstrap, table, True, 0
        )
        for rule, interval in RULES.items():
            low, high = interval(rating, resampled, parametric)
            covered[rule] += bool(low[1] <= truth <= high[1])
            separated[rule] += bool(low[1] > ratings.ANCHOR_RATING)
            widths[rule].append(float(high[1] - low[1]))
    return {rule: (covered[rule], separated[rule], float(np.median(widths[rule]))) for rule in RULES}


def main() -> None:
    """Print coverage, separation and width per cell and rule."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200, help="simulated tables per cell")
    parser.add_argument("--episodes", type=int, nargs="+", default=[40, 80, 200], help="episodes per table")
    parser.add_argument("--bootstrap", type=int, default=ratings.BOOTSTRAP, help="samples of each bootstrap")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"{args.tables} tables a cell, seed {args.seed}; coverage target 0.95")
    worst = 1.0
    for episodes in args.episodes:
        for score, draws in CELLS:
            figures = measure(score, draws, episodes, args.tables, args.bootstrap, args.seed)
            parts = []
            for rule, (covered, separated, width) in figures.items():
                low, high = wilson_interval(covered, args.tables)
                share = covered / args.tables
                parts.append(f"{rule}: cover {share:.3f} [{low:.3f}-{high:.3f}] separated {separated / args.tables:.3f} width {width:4.0f}")
                if rule == "now":
                    worst = min(worst, share)
            print(f"episodes {episodes:4d} score {score:.3f}  " + "  |  ".join(parts), flush=True)
    print(f"lowest coverage of the leaderboard's rule: {worst:.3f} (target 0.95)")


if __name__ == "__main__":
    main()

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
``random``'s 1000 ("separated"), and the median width. Then a field of six
agents of known log-strengths (0 to 3, ``random`` the weakest) playing
``--field-games`` games between random pairs: coverage over every agent but
the anchor, pooled. Every table comes from ``--seed``, so the figures
reproduce on any machine.

    .venv/bin/python benchmarks/rating_coverage.py [--tables 200] [--episodes 40 80 200] [--field-games 150 500 1500] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
from typing import cast

import numpy as np

from parlour.evaluation.results import wilson_interval
from parlour.leaderboard import ratings

SEATS = ["player_0", "player_1"]
#: (expected score against random, share of draws): from an even match to minimax against random at TicTacToe.
CELLS = ((0.6, 0.2), (0.75, 0.1), (0.9, 0.1), (0.95, 0.1), (0.975, 0.05), (0.99, 0.02))
#: The field's log-strengths (those of ``tests/test_leaderboard_ratings.py``).
FIELD = {"random": 0.0, "weak": 0.4, "fair": 0.9, "good": 1.5, "strong": 2.2, "best": 3.0}
#: Episodes as (fingerprint, seating, returns): the ratings read a result by position, so these serve as ``store.Result``.
Table = list[tuple[str, dict[str, str], dict[str, float]]]


def mirrored(rating: np.ndarray, resampled: np.ndarray, parametric: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FORMAT 5's interval: the farther of the two bootstraps' percentile ends, mirrored about the rating."""
    low, high = ratings._bootstrap_interval(rating, resampled, parametric)
    half = np.maximum(rating - low, high - rating)
    return rating - half, rating + half


RULES = {"now": ratings._bootstrap_interval, "mirrored": mirrored}


def simulated_table(score: float, draws: float, episodes: int, rng: np.random.Generator) -> Table:
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
        rating, resampled, parametric = rated(results, agents, bootstrap, table)
        for rule, interval in RULES.items():
            low, high = interval(rating, resampled, parametric)
            covered[rule] += bool(low[1] <= truth <= high[1])
            separated[rule] += bool(low[1] > ratings.ANCHOR_RATING)
            widths[rule].append(float(high[1] - low[1]))
    return {rule: (covered[rule], separated[rule], float(np.median(widths[rule]))) for rule in RULES}


def rated(results: Table, agents: list[str], bootstrap: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Elo ratings of ``agents`` (``random`` the anchor) and their two bootstraps, as the leaderboard draws them."""
    episode, first, second, points = ratings.pairwise(cast("list[ratings.Result]", results), agents, SEATS)
    wins, games = ratings._first_seat_matrices(first, second, points, np.ones(len(points)), len(agents))
    theta, eta, _ = ratings.fit_bradley_terry(wins, games, True, covariance=False)
    anchor = agents.index("random")
    resampled, parametric = ratings._bootstrap_ratings(
        (episode, first, second, points), wins, games, np.r_[theta, eta], len(results), bootstrap, seed, True, anchor
    )
    return ratings._elo(theta, anchor), resampled, parametric


def measure_field(games: int, tables: int, bootstrap: int, seed: int) -> tuple[dict[str, int], int]:
    """Per rule, how many of the field's intervals (every agent but the anchor, every table) cover the truth; and of how many."""
    rng = np.random.default_rng([seed, games])
    agents = sorted(FIELD)
    truth = np.array([ratings.ANCHOR_RATING + ratings.ELO_PER_NAT * FIELD[name] for name in agents])
    others = np.array([name != "random" for name in agents])
    covered = dict.fromkeys(RULES, 0)
    for table in range(tables):
        results = []
        for index in range(games):
            a, b = rng.choice(len(agents), size=2, replace=False)
            win = rng.random() < 1.0 / (1.0 + math.exp(FIELD[agents[b]] - FIELD[agents[a]]))
            results.append(
                (f"{index:08d}", {SEATS[0]: agents[a], SEATS[1]: agents[b]}, {SEATS[0]: 1.0 if win else -1.0, SEATS[1]: -1.0 if win else 1.0})
            )
        rating, resampled, parametric = rated(results, agents, bootstrap, table)
        for rule, interval in RULES.items():
            low, high = interval(rating, resampled, parametric)
            covered[rule] += int(((low <= truth) & (truth <= high))[others].sum())
    return covered, tables * int(others.sum())


def main() -> None:
    """Print coverage, separation and width per cell and rule."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200, help="simulated tables per cell")
    parser.add_argument("--episodes", type=int, nargs="+", default=[40, 80, 200], help="episodes per table")
    parser.add_argument("--field-games", type=int, nargs="+", default=[150, 500, 1500], help="games per table of the six-agent field")
    parser.add_argument("--field-tables", type=int, default=100, help="simulated tables per field size")
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
    for games in args.field_games:
        field_covered, total = measure_field(games, args.field_tables, args.bootstrap, args.seed)
        parts = []
        for rule, count in field_covered.items():
            low, high = wilson_interval(count, total)
            parts.append(f"{rule}: cover {count / total:.3f} [{low:.3f}-{high:.3f}]")
            if rule == "now":
                worst = min(worst, count / total)
        print(f"field of six, {games:5d} games, {total} intervals  " + "  |  ".join(parts), flush=True)
    print(f"lowest coverage of the leaderboard's rule: {worst:.3f} (target 0.95)")


if __name__ == "__main__":
    main()

"""Leaderboard scale: time to verify (replay) a large submission, and to fit ratings for many agents.

1. Verification: a bundle of ``--episodes`` TicTacToe episodes (random against
   minimax, played by the evaluation runner) is checked with
   :func:`parlour.leaderboard.verify.verify_bundle`, which replays every
   episode and re-runs every move of the seats named after built-in agents
   (minimax's search is most of the time); then the verified bundle is stored
   in a fresh SQLite database in one transaction (reported separately). The
   same is measured for a submitted agent (playing random moves) against
   ``random``, where replay itself is most of the time.
2. Ratings: ``--agents`` agents with known log-strengths play ``--games``
   two-seat games drawn at random. Bradley–Terry with its first-mover term is
   fitted with ``--bootstrap`` samples of each bootstrap, over episodes and
   parametric (:func:`parlour.leaderboard.ratings.bradley_terry`); then the
   same games with chip payoffs (the loser pays 1 or 2, as in poker) get the
   expected-payoff table: the per-pair payoff matrix with its bootstrap, the
   field ratings (:func:`parlour.leaderboard.ratings.payoff_table`) and Nash averaging over every agent
   (:func:`parlour.leaderboard.ratings.meta_game`).
   Reported: the wall times, and the rank correlation between fitted and true
   strengths as a sanity check. ``--agents`` takes several counts (default 50
   and 200) over the same number of games; the last line gives each count's
   total time over the first's.

Targets: under 10 s each on 2 cores; 200 agents within 5 times the time of 50
over the same 500,000 games (issue 22). Each figure is wall time, with the
process's CPU time beside it: on a machine shared with other work the wall
time grows, the CPU time does not.

    .venv/bin/python benchmarks/leaderboard_scale.py [--episodes 10000] [--agents 50 200] [--games 500000] [--bootstrap 200] [--skip-verify]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import cast

import numpy as np
from scipy.stats import spearmanr

import parlour
from parlour.leaderboard import ratings
from parlour.leaderboard.store import Store
from parlour.leaderboard.verify import as_bundle, verify_bundle

ENV = "parlour/TicTacToe-v0"


class Submitted:
    """A submitted agent: random moves under a name of its own, so verification replays it without re-running it."""

    name = "submitted"

    def __init__(self):
        self.inner = parlour.make_agent("random", env_id=ENV)

    def reset(self, seed=None):
        """Reseed the random play."""
        self.inner.reset(seed=seed)

    def act(self, observation):
        """A random legal move."""
        return self.inner.act(observation)


def verification(episodes: int, agents: list) -> dict[str, float]:
    """Seconds to verify and to store a bundle of ``episodes`` episodes between ``agents``."""
    bundle = as_bundle(parlour.evaluate(ENV, agents, episodes=episodes, seed=0, progress=False))
    started, cpu = time.perf_counter(), time.process_time()
    verified = verify_bundle(bundle)
    verify_s, verify_cpu = time.perf_counter() - started, time.process_time() - cpu
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{folder}/scale.db")
        store.add_submitter("bench")
        started = time.perf_counter()
        store.add_submission("bench", ENV, verified.env_version, verified.summary, verified.episodes, builtin=verified.builtin)
        store_s = time.perf_counter() - started
        store.close()
    return {"verify_s": verify_s, "verify_cpu_s": verify_cpu, "episodes_per_s": episodes / verify_s, "store_s": store_s}


def fitting(agents: int, games: int, bootstrap: int) -> dict[str, float]:
    """Seconds to fit Bradley–Terry with ``bootstrap`` samples on synthetic games, and the rank correlation recovered."""
    rng = np.random.default_rng(0)
    names = ["random"] + [f"agent_{k:02d}" for k in range(1, agents)]
    strength = dict(zip(names, rng.normal(0.0, 1.0, size=agents)))
    first = rng.integers(0, agents, size=games)
    # A second agent drawn from the others: shifting by 1..agents-1 never lands on the first.
    pairs = np.stack([first, (first + rng.integers(1, agents, size=games)) % agents], axis=1)
    values = np.array([strength[name] for name in names])
    gap = values[pairs[:, 0]] - values[pairs[:, 1]]
    first_wins = rng.random(games) < 1.0 / (1.0 + np.exp(-gap))
    results = [
        (f"{index:08d}", {"player_0": names[a], "player_1": names[b]}, {"player_0": 1.0 if win else -1.0, "player_1": -1.0 if win else 1.0})
        for index, ((a, b), win) in enumerate(zip(pairs, first_wins))
    ]
    # The ratings read a result by position, so these (fingerprint, seating, returns) tuples serve as ``store.Result``.
    started, cpu = time.perf_counter(), time.process_time()
    table = ratings.bradley_terry(cast("list[ratings.Result]", results), bootstrap=bootstrap, players=["player_0", "player_1"])
    fit_s, fit_cpu = time.perf_counter() - started, time.process_time() - cpu
    fitted = {row["agent"]: row["rating"] for row in table["rows"]}
    correlation = spearmanr([strength[name] for name in names], [fitted[name] for name in names]).statistic
    widths = [row["high"] - row["low"] for row in table["rows"] if row["agent"] != "random"]
    stakes = rng.choice([1.0, 2.0], size=games)
    chips = [(key, seating, {seat: value * stake for seat, value in returns.items()}) for (key, seating, returns), stake in zip(results, stakes)]
    started, cpu = time.perf_counter(), time.process_time()
    payoff = ratings.payoff_table(cast("list[ratings.Result]", chips), bootstrap=bootstrap)
    ratings.meta_game(payoff, payoff["agents"], zero_sum=True)
    payoff_s, payoff_cpu = time.perf_counter() - started, time.process_time() - cpu
    by_payoff = {row["agent"]: row["rating"] for row in payoff["rows"]}
    payoff_correlation = spearmanr([strength[name] for name in names], [by_payoff[name] for name in names]).statistic
    return {
        "fit_s": fit_s,
        "rank_correlation": float(correlation),
        "median_interval_width": float(np.median(widths)),
        "payoff_s": payoff_s,
        "payoff_rank_correlation": float(payoff_correlation),
        "fit_cpu_s": fit_cpu,
        "payoff_cpu_s": payoff_cpu,
    }


def main() -> None:
    """Run both measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--agents", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--games", type=int, default=500_000)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--skip-verify", action="store_true", help="measure only the rating fits")
    args = parser.parse_args()
    if not args.skip_verify:
        for label, agents in (("random vs minimax", ["random", "minimax"]), ("a submitted agent vs random", [Submitted(), "random"])):
            verify = verification(args.episodes, agents)
            print(
                f"verify {args.episodes} episodes of {label}: {verify['verify_s']:.2f} s, CPU {verify['verify_cpu_s']:.2f} s ({verify['episodes_per_s']:.0f} episodes/s); "
                f"store them in one transaction: {verify['store_s']:.2f} s"
            )
    totals = []
    for count in args.agents:
        fit = fitting(count, args.games, args.bootstrap)
        totals.append(fit["fit_s"] + fit["payoff_s"])
        print(
            f"Bradley-Terry for {count} agents, {args.games} games, {args.bootstrap} bootstrap samples: {fit['fit_s']:.2f} s, CPU {fit['fit_cpu_s']:.2f} s "
            f"(rank correlation with the true strengths {fit['rank_correlation']:.3f}, median 95% interval width {fit['median_interval_width']:.0f} Elo)"
        )
        print(
            f"expected payoff with Nash averaging, same games in chips: {fit['payoff_s']:.2f} s, CPU {fit['payoff_cpu_s']:.2f} s "
            f"(rank correlation {fit['payoff_rank_correlation']:.3f})",
            flush=True,
        )
    if len(totals) > 1:
        print(
            "time of both fits over the first count's: "
            + ", ".join(f"{count} agents {total / totals[0]:.2f}x" for count, total in zip(args.agents, totals))
        )


if __name__ == "__main__":
    main()

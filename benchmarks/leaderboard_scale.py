"""Leaderboard scale: time to verify (replay) a large submission, and to fit ratings for many agents.

1. Verification: a bundle of ``--episodes`` TicTacToe episodes (random against
   minimax, played by the evaluation runner) is checked with
   :func:`parlour.leaderboard.verify.verify_bundle`, which replays every
   episode; then the verified bundle is stored in a fresh SQLite database in
   one transaction (reported separately).
2. Ratings: ``--agents`` agents with known log-strengths play ``--games``
   two-seat games drawn at random; Bradley–Terry is fitted with ``--bootstrap``
   bootstrap samples (:func:`parlour.leaderboard.ratings.bradley_terry`).
   Reported: the wall time, and the rank correlation between fitted and true
   strengths as a sanity check.

Target: under 10 s each on 2 cores.

    .venv/bin/python benchmarks/leaderboard_scale.py [--episodes 10000] [--agents 50] [--games 100000] [--bootstrap 200]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np
from scipy.stats import spearmanr

import parlour
from parlour.leaderboard import ratings
from parlour.leaderboard.store import Store
from parlour.leaderboard.verify import as_bundle, verify_bundle

ENV = "parlour/TicTacToe-v0"


def verification(episodes: int) -> dict[str, float]:
    """Seconds to verify and to store a bundle of ``episodes`` episodes."""
    bundle = as_bundle(parlour.evaluate(ENV, ["random", "minimax"], episodes=episodes, seed=0, progress=False))
    started = time.perf_counter()
    verified = verify_bundle(bundle)
    verify_s = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{folder}/scale.db")
        store.add_submitter("bench")
        started = time.perf_counter()
        store.add_submission("bench", ENV, verified.env_version, verified.summary, verified.episodes)
        store_s = time.perf_counter() - started
        store.close()
    return {"verify_s": verify_s, "episodes_per_s": episodes / verify_s, "store_s": store_s}


def fitting(agents: int, games: int, bootstrap: int) -> dict[str, float]:
    """Seconds to fit Bradley–Terry with ``bootstrap`` samples on synthetic games, and the rank correlation recovered."""
    rng = np.random.default_rng(0)
    names = ["random"] + [f"agent_{k:02d}" for k in range(1, agents)]
    strength = dict(zip(names, rng.normal(0.0, 1.0, size=agents)))
    pairs = np.array([rng.choice(agents, size=2, replace=False) for _ in range(games)])
    gap = np.array([strength[names[a]] - strength[names[b]] for a, b in pairs])
    first_wins = rng.random(games) < 1.0 / (1.0 + np.exp(-gap))
    results = [
        (f"{index:08d}", {"player_0": names[a], "player_1": names[b]},
         {"player_0": 1.0 if win else -1.0, "player_1": -1.0 if win else 1.0})
        for index, ((a, b), win) in enumerate(zip(pairs, first_wins))
    ]
    started = time.perf_counter()
    table = ratings.bradley_terry(results, bootstrap=bootstrap)
    fit_s = time.perf_counter() - started
    fitted = {row["agent"]: row["rating"] for row in table["rows"]}
    correlation = spearmanr([strength[name] for name in names], [fitted[name] for name in names]).statistic
    widths = [row["high"] - row["low"] for row in table["rows"] if row["agent"] != "random"]
    return {"fit_s": fit_s, "rank_correlation": float(correlation), "median_interval_width": float(np.median(widths))}


def main() -> None:
    """Run both measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--bootstrap", type=int, default=200)
    args = parser.parse_args()
    verify = verification(args.episodes)
    print(f"verify {args.episodes} episodes: {verify['verify_s']:.2f} s ({verify['episodes_per_s']:.0f} episodes/s); "
          f"store them in one transaction: {verify['store_s']:.2f} s")
    fit = fitting(args.agents, args.games, args.bootstrap)
    print(f"Bradley-Terry for {args.agents} agents, {args.games} games, {args.bootstrap} bootstrap samples: {fit['fit_s']:.2f} s "
          f"(rank correlation with the true strengths {fit['rank_correlation']:.3f}, median 95% interval width {fit['median_interval_width']:.0f} Elo)")


if __name__ == "__main__":
    main()

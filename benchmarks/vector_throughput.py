"""Moves per CPU second of the batched vector face, beside PettingZoo classic, OpenSpiel and parlour's one-episode vector face.

Measured as ``env_throughput.py`` measures: every library runs in this one
process, interleaved, each round playing every library in turn on the same game
for ``--seconds`` of CPU time; a ratio is taken within the round; the unit is a
*move*, an action that changes the game, by any seat, and every library
builds the acting player's observation at every move. The batched face
(``gymnasium.make_vec(..., obs_mode="vector")``) is stepped with a random
legal move per episode for the learner, drawn with numpy from the mask it
returns; the other seat is a batched policy that draws a random legal move
the same way from the observations and masks the face builds for it (the
built-in ``opponent="random"`` skips building them, so it is faster still);
its moves are both seats' (``VectorGame.moves_played``), so the autoreset
steps, whose actions are ignored, count only for the opponents' opening moves
they play. The other loops are ``env_throughput.py``'s: PettingZoo classic's
AEC loop and OpenSpiel's C++ games driven from Python, each building the
acting player's observation every move, and parlour's one-episode vector face
through the AEC loop.

Printed: for each game the median moves per CPU second of each library, and
for N = 64 and N = 1024 the median ratio to each peer with its range over the
rounds, beside its target; a missed target is flagged. Targets: >= 10x
PettingZoo classic, >= 1x OpenSpiel.

Run: ``.venv/bin/python benchmarks/vector_throughput.py [--rounds 5] [--seconds 0.4] [--games TicTacToe,...] [--sizes 64,1024]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Callable

import gymnasium
import numpy as np
from env_throughput import OPENSPIEL_NAMES, PETTINGZOO_NAMES, Loop, measure, openspiel_loop, parlour_loop, pettingzoo_loop, report_ratio

import parlour  # noqa: F401  (registers the environments)

GAMES = ["TicTacToe", "ConnectFour", "KuhnPoker", "LeducHoldem", "Nim"]
#: OpenSpiel's games, Nim with parlour's default heaps.
OPENSPIEL = {**OPENSPIEL_NAMES, "Nim": "nim(pile_sizes=3;5;7)"}
TARGETS = {"PettingZoo": 10.0, "OpenSpiel": 1.0}


def random_legal(rng: np.random.Generator) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A batched policy: a uniformly random legal move per row of the int8 masks (any index for a row without one)."""

    def policy(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        # The legal move with the largest random key.
        return (rng.random(masks.shape) * masks).argmax(axis=1)

    return policy


def batched_loop(env_id: str, num_envs: int) -> Loop:
    """The batched vector face, both seats playing random legal moves from the observations it builds; moves by both seats."""
    rng = np.random.default_rng(0)
    learner = random_legal(rng)
    envs = gymnasium.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point", obs_mode="vector", opponent=random_legal(rng))
    game = envs.unwrapped
    observations, _ = envs.reset(seed=0)

    def loop(seconds: float) -> tuple[int, float]:
        nonlocal observations
        before = game.moves_played
        start = time.process_time()
        while time.process_time() - start < seconds:
            # Ended episodes (all-zero masks) take any index: the next step restarts them and ignores it.
            observations, *_ = envs.step(learner(observations["observation"], observations["action_mask"]))
        return game.moves_played - before, time.process_time() - start

    return loop


def libraries(name: str, sizes: list[int]) -> dict[str, Loop]:
    """The loops to compare for the game ``name``."""
    env_id = f"parlour/{name}-v0"
    loops: dict[str, Loop] = {f"batched N={n}": batched_loop(env_id, n) for n in sizes}
    loops["one-episode vector"] = parlour_loop(env_id, "vector")
    if name in PETTINGZOO_NAMES:
        loops["PettingZoo"] = pettingzoo_loop(PETTINGZOO_NAMES[name])
    if name in OPENSPIEL:
        try:
            loops["OpenSpiel"] = openspiel_loop(OPENSPIEL[name])
        except ImportError:
            pass
    return loops


def main() -> None:
    """Measure every game's libraries in interleaved rounds and print rates and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--seconds", type=float, default=0.4, help="CPU seconds per library per round (default 0.4)")
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated game names")
    parser.add_argument("--sizes", default="64,1024", help="comma-separated numbers of episodes stepped together (default 64,1024)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    warnings.simplefilter("ignore")
    missed = 0
    print(f"moves per CPU second, median of {args.rounds} interleaved rounds of {args.seconds}s each\n")
    for name in args.games.split(","):
        rates = measure(libraries(name, sizes), args.rounds, args.seconds)
        print(name + ": " + ", ".join(f"{library} {statistics.median(r):,.0f}" for library, r in rates.items()))
        for size in sizes:
            for peer in ("PettingZoo", "OpenSpiel", "one-episode vector"):
                if peer in rates:
                    missed += report_ratio(f"batched N={size}", peer, rates, TARGETS.get(peer), separator=" / ")
    print(f"\n{missed} target(s) missed")


if __name__ == "__main__":
    main()

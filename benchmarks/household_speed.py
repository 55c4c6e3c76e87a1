"""Household: the expert's and the random agent's success at every difficulty, and what a reset and a step cost.

Success: ``expert`` and ``random`` (uniform over the admissible commands) play
``--episodes`` episodes per difficulty (seeds 0..n-1, the default split,
``test``) on the engine directly; the targets are expert success >= 0.99 at
every difficulty and random success <= 0.05 at difficulty 3.

Speed, on one core (the process is pinned to its first allowed CPU): the
Gymnasium face in text mode, ``reset(seed=...)`` (drawing the world, the first
observation with the rules) and ``step(command)`` (reading the command,
applying it, the next observation and the infos with the admissible
commands), at the median and p95 over random-admissible play, against the
targets of 20 ms per reset and 2 ms per step. The command is drawn from the
infos' admissible commands outside the timed call. Times are CPU time of this
process (``time.process_time``), which a shared machine disturbs less than
wall time.

Run: ``.venv/bin/python benchmarks/household_speed.py [--episodes 1000] [--timed-episodes 200]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import numpy as np
from agentic_worlds import percentile, pin_one_core, success_rate

from parlour.envs.agentic.household_world import LEVELS

ENV_ID = "parlour/Household-v0"
RESET_TARGET_MS = 20.0
STEP_TARGET_MS = 2.0


def timings(difficulty: int, episodes: int) -> tuple[list[float], list[float]]:
    """CPU milliseconds of each ``reset`` and each ``step`` of random-admissible play on the Gymnasium face, text mode."""
    env = gymnasium.make(ENV_ID, difficulty=difficulty)
    rng = np.random.default_rng(difficulty)
    resets, steps = [], []
    for seed in range(episodes):
        start = time.process_time()
        _, info = env.reset(seed=seed)
        resets.append((time.process_time() - start) * 1000)
        done = False
        while not done:
            legal = info["legal_moves"]
            command = legal[int(rng.integers(len(legal)))]
            start = time.process_time()
            _, _, terminated, truncated, info = env.step(command)
            steps.append((time.process_time() - start) * 1000)
            done = terminated or truncated
    return resets, steps


def main() -> None:
    """Measure and print success and speed per difficulty."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000, help="episodes per difficulty and agent for the success rates")
    parser.add_argument("--timed-episodes", type=int, default=200, help="episodes per difficulty for the timings")
    args = parser.parse_args()
    pin_one_core()
    print(f"{ENV_ID}: success over {args.episodes} episodes per difficulty (seeds 0..{args.episodes - 1}, split test)")
    print("difficulty  rooms  step limit  expert  random")
    for difficulty, level in LEVELS.items():
        expert, random = success_rate(ENV_ID, "expert", difficulty, args.episodes), success_rate(ENV_ID, "random", difficulty, args.episodes)
        print(f"{difficulty:>10}  {level.rooms:>5}  {level.max_steps:>10}  {expert:>6.3f}  {random:>6.3f}")
    print(f"\nspeed on one core, Gymnasium face, text mode, random-admissible play, {args.timed_episodes} episodes per difficulty (CPU ms)")
    print("difficulty  reset p50  reset p95  step p50  step p95  steps")
    all_resets, all_steps = [], []
    for difficulty in LEVELS:
        resets, steps = timings(difficulty, args.timed_episodes)
        all_resets += resets
        all_steps += steps
        print(
            f"{difficulty:>10}  {statistics.median(resets):>9.3f}  {percentile(resets, 95):>9.3f}  {statistics.median(steps):>8.3f}  "
            f"{percentile(steps, 95):>8.3f}  {len(steps):>5}"
        )
    reset_p50, step_p50 = statistics.median(all_resets), statistics.median(all_steps)
    print(
        f"\nall difficulties: reset p50 {reset_p50:.3f} ms ({'ok' if reset_p50 <= RESET_TARGET_MS else 'MISSED'}, target {RESET_TARGET_MS:g}), "
        f"step p50 {step_p50:.3f} ms ({'ok' if step_p50 <= STEP_TARGET_MS else 'MISSED'}, target {STEP_TARGET_MS:g})"
    )


if __name__ == "__main__":
    main()

"""Shop: the expert's, the first-result baseline's and the random agent's reward and success at every difficulty,
and what a reset and a step cost.

Reward and success: ``expert``, ``first_result`` (search the instruction, buy
the first result) and ``random`` (uniform over the legal moves) play
``--episodes`` episodes per difficulty (seeds 0..n-1, the default split,
``test``) on the engine directly; success is a reward of 1. The targets:
expert success >= 0.99 at every difficulty, the first-result baseline's mean
reward at least 0.4 below the expert's at difficulty 3, random success <= 0.05
at difficulty 3.

Speed, on one core (the process is pinned to its first allowed CPU): the
Gymnasium face in text mode, ``reset(seed=...)`` (drawing the goal, the first
observation with the rules) and ``step(action)`` (reading the action, a
search or a click, the next observation and the infos with the legal moves),
at the median and p95, over the expert's play (free-text searches, item,
description and option clicks) and random-legal play, against the targets of
20 ms per reset and 2 ms per step. Each difficulty's catalogue is generated
and its BM25 index built or loaded once per process, before the timed resets;
that one-time cost is printed apart. The action is chosen outside the timed
call. Times are CPU time of this process (``time.process_time``), which a
shared machine disturbs less than wall time.

Run: ``.venv/bin/python benchmarks/shop_speed.py [--episodes 1000] [--timed-episodes 200]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import cast

import gymnasium
from agentic_worlds import outcomes, percentile, pin_one_core, succeeded

from parlour.baselines import make_scripted
from parlour.envs.agentic.shop_catalogue import LEVELS, catalogue
from parlour.envs.core.gym import GymGame

ENV_ID = "parlour/Shop-v0"
AGENTS = ("expert", "first_result", "random")
RESET_TARGET_MS = 20.0
STEP_TARGET_MS = 2.0


def scores(agent_name: str, difficulty: int, episodes: int) -> tuple[float, float]:
    """``agent_name``'s mean reward and success rate over ``episodes`` (seeds 0..episodes-1) at ``difficulty``."""
    played = outcomes(ENV_ID, agent_name, difficulty, episodes)
    return statistics.mean(outcome.scores["player_0"] for outcome in played), sum(map(succeeded, played)) / episodes


def timings(agent_name: str, difficulty: int, episodes: int) -> tuple[list[float], list[float]]:
    """CPU milliseconds of each ``reset`` and each ``step`` of ``agent_name``'s play on the Gymnasium face, text mode."""
    env = gymnasium.make(ENV_ID, difficulty=difficulty)
    agent = make_scripted(agent_name, ENV_ID)
    match = cast(GymGame, env.unwrapped).match
    resets, steps = [], []
    for seed in range(episodes):
        agent.reset(seed)
        start = time.process_time()
        env.reset(seed=seed)
        resets.append((time.process_time() - start) * 1000)
        done = False
        while not done:
            action = agent.act(match.agent_observation("player_0"))
            start = time.process_time()
            _, _, terminated, truncated, _ = env.step(action)
            steps.append((time.process_time() - start) * 1000)
            done = terminated or truncated
    return resets, steps


def main() -> None:
    """Measure and print reward, success and speed per difficulty."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000, help="episodes per difficulty and agent for the scores")
    parser.add_argument("--timed-episodes", type=int, default=200, help="episodes per difficulty and agent for the timings")
    args = parser.parse_args()
    pin_one_core()
    print("one-time cost per process: generating each catalogue and building (or loading) its BM25 index")
    for difficulty, level in LEVELS.items():
        start = time.perf_counter()
        catalogue(difficulty).search("warm up")
        print(
            f"  difficulty {difficulty}: {level.products} products, {time.perf_counter() - start:.3f} s "
            f"(index {'loaded from the cache' if catalogue(difficulty).retriever.loaded_from_cache else 'built'})"
        )
    print(f"\n{ENV_ID}: mean reward / success over {args.episodes} episodes per difficulty (seeds 0..{args.episodes - 1}, split test)")
    print("difficulty  products  step limit  " + "  ".join(f"{name:>18}" for name in AGENTS))
    gap = 0.0
    for difficulty, level in LEVELS.items():
        cells = {name: scores(name, difficulty, args.episodes) for name in AGENTS}
        if difficulty == 3:
            gap = cells["expert"][0] - cells["first_result"][0]
        print(
            f"{difficulty:>10}  {level.products:>8}  {level.max_steps:>10}  "
            + "  ".join(f"{reward:>8.3f} / {success:>6.3f}" for reward, success in cells.values())
        )
    print(f"difficulty 3: expert's mean reward minus first_result's: {gap:.3f} ({'ok' if gap >= 0.4 else 'MISSED'}, target 0.4)")
    print(f"\nspeed on one core, Gymnasium face, text mode, {args.timed_episodes} episodes per difficulty and agent (CPU ms)")
    print("difficulty  agent   reset p50  reset p95  step p50  step p95  steps")
    all_resets, all_steps = [], []
    for difficulty in LEVELS:
        for name in ("expert", "random"):
            resets, steps = timings(name, difficulty, args.timed_episodes)
            all_resets += resets
            all_steps += steps
            print(
                f"{difficulty:>10}  {name:<6}  {statistics.median(resets):>9.3f}  {percentile(resets, 95):>9.3f}  "
                f"{statistics.median(steps):>8.3f}  {percentile(steps, 95):>8.3f}  {len(steps):>5}"
            )
    reset_p50, step_p50 = statistics.median(all_resets), statistics.median(all_steps)
    print(
        f"\nall: reset p50 {reset_p50:.3f} ms ({'ok' if reset_p50 <= RESET_TARGET_MS else 'MISSED'}, target {RESET_TARGET_MS:g}), "
        f"step p50 {step_p50:.3f} ms ({'ok' if step_p50 <= STEP_TARGET_MS else 'MISSED'}, target {STEP_TARGET_MS:g})"
    )


if __name__ == "__main__":
    main()

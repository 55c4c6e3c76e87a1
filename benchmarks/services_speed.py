"""Services: the expert's, the literal agent's and the random agent's success at every difficulty, and what a reset and a step cost.

Success: ``expert`` (the privileged planner over the goal state), ``literal``
(honest and weak) and ``random`` (random calls of the offered tools) play
``--episodes`` episodes per difficulty (seeds 0..n-1, the default split,
``test``) on the engine directly; the targets are expert success >= 0.99 at
every difficulty and random success <= 0.02 at difficulty 3.

Speed, on one core (the process is pinned to its first allowed CPU): the
Gymnasium face in text mode. ``reset(seed=...)`` draws the world and makes
the first observation with the rules. Steps are timed by kind: a *change* is
one call that changes a service (``write_file``, ``transfer``,
``create_event``, ...: the planner's calls, sent one per step as
``{"tool", "arguments"}`` JSON), a *query* one ``list_*`` call (each turn
starts with one), and a *finish* the ``finish`` call that judges the turn
(the goal-state comparison) and tells the next request. Each step reads the
action, answers it and builds the next observation. Targets: 20 ms per reset
and 2 ms per non-query step at the median. Times are CPU time of this process
(``time.process_time``), which a shared machine disturbs less than wall time.

Run: ``.venv/bin/python benchmarks/services_speed.py [--episodes 1000] [--timed-episodes 200]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import cast

import gymnasium
import numpy as np
from agentic_worlds import pin_one_core, success_rate

from parlour.baselines.services import plan
from parlour.envs.agentic.services_world import LEVELS, goal_channel
from parlour.envs.core.gym import GymGame

ENV_ID = "parlour/Services-v0"
RESET_TARGET_MS = 20.0
STEP_TARGET_MS = 2.0
#: The query each timed turn starts with, per service.
QUERIES = {
    "files": ("list_dir", {"path": "/home"}),
    "messages": ("list_inbox", {}),
    "calendar": ("list_events", {}),
    "bank": ("list_accounts", {}),
    "tickets": ("list_tickets", {}),
}


def timings(difficulty: int, episodes: int) -> dict[str, list[float]]:
    """CPU milliseconds of each ``reset`` and of each step by kind (change, query, finish) on the Gymnasium face, text mode."""
    env = gymnasium.make(ENV_ID, difficulty=difficulty)
    match = cast(GymGame, env.unwrapped).match
    times: dict[str, list[float]] = {"reset": [], "change": [], "query": [], "finish": []}

    def timed(kind: str, action: str) -> bool:
        start = time.process_time()
        _, _, terminated, truncated, _ = env.step(action)
        times[kind].append((time.process_time() - start) * 1000)
        return terminated or truncated

    for seed in range(episodes):
        start = time.process_time()
        env.reset(seed=seed)
        times["reset"].append((time.process_time() - start) * 1000)
        done = False
        while not done:
            view = match.agent_observation("player_0")["view"]
            world = goal_channel().world(view["task_id"])
            index = view["turn"] - 1
            turn = world.turns[index]
            name, arguments = QUERIES[world.services[0]]
            timed("query", json.dumps({"tool": name, "arguments": arguments}))
            for name, arguments in plan(world.turns[index - 1].goal if index else world.initial, turn.goal):
                timed("change", json.dumps({"tool": name, "arguments": arguments}))
            finish = {"answer": " ".join(value for _, value in turn.answers), "impossible": turn.impossible}
            done = timed("finish", json.dumps({"tool": "finish", "arguments": finish}))
    return times


def p50_p95(values: list[float]) -> str:
    """``p50 / p95`` of CPU milliseconds, or a dash where a short run timed no step of that kind."""
    if not values:
        return f"{'-':>6} / {'-':>6}"
    return f"{statistics.median(values):>6.3f} / {np.percentile(values, 95):>6.3f}"


def main() -> None:
    """Measure and print success and speed per difficulty."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000, help="episodes per difficulty and agent for the success rates")
    parser.add_argument("--timed-episodes", type=int, default=200, help="episodes per difficulty for the timings")
    args = parser.parse_args()
    pin_one_core()
    print(f"{ENV_ID}: success over {args.episodes} episodes per difficulty (seeds 0..{args.episodes - 1}, split test)")
    print("difficulty  services  turns  expert  literal  random")
    for difficulty, level in LEVELS.items():
        rates = [success_rate(ENV_ID, name, difficulty, args.episodes) for name in ("expert", "literal", "random")]
        print(f"{difficulty:>10}  {level.services:>8}  {level.turns:>5}  {rates[0]:>6.3f}  {rates[1]:>7.3f}  {rates[2]:>6.3f}")
    print(f"\nspeed on one core, Gymnasium face, text mode, {args.timed_episodes} episodes per difficulty (CPU ms, p50 / p95)")
    print("difficulty  reset            change step      query step       finish step")
    everything: dict[str, list[float]] = {}
    for difficulty in LEVELS:
        times = timings(difficulty, args.timed_episodes)
        for kind, values in times.items():
            everything.setdefault(kind, []).extend(values)
        print(f"{difficulty:>10}  " + "  ".join(p50_p95(times[k]) for k in ("reset", "change", "query", "finish")))
    reset_p50 = statistics.median(everything["reset"])
    step_p50 = statistics.median(everything["change"] + everything["finish"])
    print(
        f"\nall difficulties: reset p50 {reset_p50:.3f} ms ({'ok' if reset_p50 <= RESET_TARGET_MS else 'MISSED'}, target {RESET_TARGET_MS:g}), "
        f"non-query step p50 {step_p50:.3f} ms ({'ok' if step_p50 <= STEP_TARGET_MS else 'MISSED'}, target {STEP_TARGET_MS:g})"
    )


if __name__ == "__main__":
    main()

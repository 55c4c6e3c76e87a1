"""The ServiceDesk game's figures: agents' success per difficulty with the scripted customer, pass^k, reset and step latency.

    .venv/bin/python benchmarks/service_desk_speed.py [--episodes 200] [--repeats 300]

Prints, on one core:

* the success rate of ``expert`` (the policy-following agent; target >= 0.99) at every difficulty, of ``compliant``
  (the weak honest agent) and of ``random`` tool use (target <= 0.02 at difficulty 3), each with the scripted
  ``customer`` in the customer seat;
* pass^k of ``expert`` and ``compliant`` at difficulty 3 over 10 tasks played 100 times in all (``tasks=10``),
  through :func:`parlour.evaluate` and the summary of :class:`Results`;
* the p50 and p90 of ``reset`` (building the world; target p50 <= 20 ms) and of a non-query ``step`` (a message
  from either seat; target p50 <= 2 ms), of a tool call (``get_user``/``get_order``) for comparison, and of the
  Gymnasium face's step (the agent's message, the scripted customer's reply and the observation).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import cast

import gymnasium
from agentic_worlds import pin_one_core, success_rate

import parlour
from parlour.baselines import make_scripted
from parlour.envs.agentic.service_desk import ServiceDesk
from parlour.envs.core.gym import GymGame
from parlour.envs.core.match import Match

ENV = "parlour/ServiceDesk-v0"


def pass_hat(agent: str) -> str:
    """pass^k of ``agent`` at difficulty 3 over 10 tasks played 100 times in all (each task's trials drawn by the run),
    as the summary reports it: every k up to the fewest trials of any task, over the same tasks."""
    results = parlour.evaluate(
        ENV,
        {"agent": agent, "customer": "customer"},
        episodes=100,
        seed=0,
        rotate_seats=False,
        env_kwargs={"difficulty": 3, "tasks": 10},
        progress=False,
    )
    figures = results.summary[agent]["pass_hat_k"]
    return ", ".join(f"pass^{k} {value:.3f}" for k, value in figures.items()) + f" (mean reward {results.summary[agent]['mean_reward']:.3f})"


def percentiles(samples: list[float]) -> str:
    cuts = statistics.quantiles(samples, n=10)
    return f"p50 {statistics.median(samples) * 1000:.3f} ms, p90 {cuts[8] * 1000:.3f} ms"


def latencies(repeats: int) -> None:
    """Reset at every difficulty; message steps and tool calls on difficulty 5, driven by the expert and the customer."""
    for difficulty in (1, 3, 5):
        match = Match(ServiceDesk, {"difficulty": difficulty})
        resets = []
        for seed in range(repeats):
            start = time.perf_counter()
            match.reset(seed)
            resets.append(time.perf_counter() - start)
        print(f"reset (difficulty {difficulty}): {percentiles(resets)}")
    steps, calls = [], []
    for seed in range(repeats // 10):
        match = Match(ServiceDesk, {"difficulty": 5})
        match.reset(seed)
        seats = {"agent": make_scripted("expert", ENV), "customer": make_scripted("customer", ENV)}
        while not match.over:
            (seat,) = match.acting()
            action = seats[seat].act(match.agent_observation(seat))
            start = time.perf_counter()
            match.submit(seat, action)
            elapsed = time.perf_counter() - start
            if action.startswith('{"tool": "get_'):
                calls.append(elapsed)
            elif not action.startswith("{"):
                steps.append(elapsed)
    print(f"non-query step (a message; {len(steps)} steps): {percentiles(steps)}")
    print(f"tool call (get_user, get_order; {len(calls)} calls): {percentiles(calls)}")
    # The Gymnasium face's step: the agent's message, the scripted customer's reply, and the observation built.
    # parlour's ids register their face without wrappers, so make() returns the GymGame itself.
    env = cast(GymGame, gymnasium.make(ENV, difficulty=5))
    expert = make_scripted("expert", ENV)
    face = []
    for seed in range(repeats // 10):
        env.reset(seed=seed)
        expert.reset(seed)
        done = False
        while not done:
            action = expert.act(env.match.agent_observation("agent"))
            start = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            if not action.startswith("{"):
                face.append(time.perf_counter() - start)
            done = terminated or truncated
    print(f"Gymnasium step (a message and the customer simulator's reply; {len(face)} steps): {percentiles(face)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()
    pin_one_core()
    for difficulty in range(1, 6):
        print(
            f"difficulty {difficulty}: expert {success_rate(ENV, 'expert', difficulty, args.episodes):.3f}, "
            f"compliant {success_rate(ENV, 'compliant', difficulty, args.episodes):.3f}, random {success_rate(ENV, 'random', difficulty, args.episodes):.3f} "
            f"({args.episodes} episodes each, scripted customer)"
        )
    for agent in ("expert", "compliant"):
        print(f"{agent} at difficulty 3, 10 tasks, 100 episodes: {pass_hat(agent)}")
    latencies(args.repeats)
    print(json.dumps({"cpu_count": os.cpu_count()}))


if __name__ == "__main__":
    main()

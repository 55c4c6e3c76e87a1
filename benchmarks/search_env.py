"""Search environment overhead: what a step of ``parlour/Search-v0`` costs without the model.

The oracle's actions for ``--episodes`` episodes on ``world-v1`` are computed
first; then they are played again, timing only the environment: per step,
``Match.submit`` of the action (reading the tool call, validating it,
searching or scoring, the reward) and ``Match.agent_observation`` of what the
agent sees next (the text, the messages, the structured view). Reported:
median and p95 per step, for tool-call steps and answer steps, and the cost
of ``reset`` (drawing and verifying a fresh question), each against the
target of 5 ms per step. The share of each step the core spends validating
the call's arguments with ``jsonschema`` is shown beside it, since it is
outside the game.

Times are CPU time of this process (``time.process_time``), which a shared
machine disturbs less than wall time.

Run: ``.venv/bin/python benchmarks/search_env.py [--episodes 200]``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jsonschema
import numpy as np

import parlour
from parlour.baselines import make_scripted
from parlour.envs.core.match import Match
from parlour.envs.search.toolkit import search_tool

ENV_ID = "parlour/Search-v0"
STEP_TARGET_MS = 5.0


def oracle_actions(episodes: int) -> list[list[str]]:
    """The oracle's actions in each episode (seeds 0..episodes-1)."""
    game_cls = parlour.game_class(ENV_ID)
    agent = make_scripted("oracle", ENV_ID)
    played = []
    for seed in range(episodes):
        match = Match(game_cls, {})
        match.reset(seed)
        agent.reset(seed)
        actions = []
        while not match.over:
            action = agent.act(match.agent_observation("player_0"))
            actions.append(action)
            match.submit("player_0", action)
        played.append(actions)
    return played


def verdict(ms: float) -> str:
    """``ok`` or a flag that the per-step target was missed."""
    return "ok" if ms <= STEP_TARGET_MS else f"MISSED (target {STEP_TARGET_MS:g} ms)"


def main() -> None:
    """Measure and print every figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args()

    started = time.process_time()
    Match(parlour.game_class(ENV_ID), {}).reset(0)
    print(f"first reset (generate world-v1, load its index, verify a question): {time.process_time() - started:.2f} s CPU")
    played = oracle_actions(args.episodes)
    game_cls = parlour.game_class(ENV_ID)
    resets: list[float] = []
    tools: list[float] = []
    answers: list[float] = []
    for seed, actions in enumerate(played):
        match = Match(game_cls, {})
        start = time.process_time()
        match.reset(seed)
        match.agent_observation("player_0")
        resets.append(time.process_time() - start)
        for action in actions:
            start = time.process_time()
            match.submit("player_0", action)
            if not match.over:
                match.agent_observation("player_0")
            (answers if match.over else tools).append(time.process_time() - start)
    schema = search_tool(20).parameters
    start = time.process_time()
    for _ in range(200):
        jsonschema.validate({"query": "Tavelon", "k": 3}, schema)
    validation = (time.process_time() - start) / 200

    print(f"{args.episodes} oracle episodes of {ENV_ID} on world-v1, {len(tools)} tool steps, {len(answers)} answers:")
    for label, samples in (("tool call step (search/open + next observation)", tools), ("answer step (score, outcome)", answers)):
        p50, p95 = (float(x) * 1000 for x in np.percentile(samples, [50, 95]))
        print(f"  {label}: p50 {p50:.2f} ms, p95 {p95:.2f} ms, mean {statistics.fmean(samples) * 1000:.2f} ms  {verdict(p50)}")
    p50 = float(np.median(resets)) * 1000
    print(f"  reset (fresh verified question + first observation): p50 {p50:.2f} ms")
    print(f"  of which the core's jsonschema.validate of one call: {validation * 1000:.2f} ms")


if __name__ == "__main__":
    main()

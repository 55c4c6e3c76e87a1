"""The Shop in a real browser (parlour.bridges.browser): what a browser step costs, against the target of a median of
150 ms from a BrowserGym action to the next page's accessibility tree.

The expert's plan is played through browser actions (each search a fill and a click, each click a click on the
button of that name) for ``--episodes`` episodes (seeds 0..n-1) at ``--difficulty``; every ``step`` is timed in
wall-clock time (the work is in Chromium's processes as much as in this one): the action run by BrowserGym in
headless Chromium, the form sent to the loopback server and the game's action played, the next page loaded, its
elements marked with bids and its accessibility tree read and flattened. One search before the timed episodes
warms the catalogue's index, and Chromium's launch and each reset are printed apart. The machine's load and CPU
count are printed beside the figures, since other processes on the same cores slow Chromium down.

Run: ``.venv/bin/python benchmarks/shop_browser_speed.py [--episodes 10] [--difficulty 2]`` (needs
``pip install 'parlour[browser]'`` and Chromium).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from parlour.baselines import make_scripted
from parlour.bridges.browser import ShopBrowserEnv, browser_unavailable

ENV_ID = "parlour/Shop-v0"
STEP_TARGET_MS = 150.0


def main() -> int:
    """Time the browser face's steps over the expert's play; prints the figures against the target."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--difficulty", type=int, default=2)
    args = parser.parse_args()
    missing = browser_unavailable()
    if missing is not None:
        print(f"skipped: {missing}")
        return 0
    start = time.perf_counter()
    env = ShopBrowserEnv(difficulty=args.difficulty)
    env.reset(seed=10_000)
    launch = time.perf_counter() - start
    for action in env.browser_actions("search[warm up]"):
        env.step(action)
    agent = make_scripted("expert", ENV_ID)
    resets, steps, rewards = [], [], []
    try:
        for seed in range(args.episodes):
            agent.reset(seed=seed)
            start = time.perf_counter()
            env.reset(seed=seed)
            resets.append((time.perf_counter() - start) * 1000)
            done, total = False, 0.0
            while not done:
                for action in env.browser_actions(agent.act(env.match.agent_observation("player_0"))):
                    start = time.perf_counter()
                    _, reward, terminated, truncated, _ = env.step(action)
                    steps.append((time.perf_counter() - start) * 1000)
                    total += reward
                    done = terminated or truncated
            rewards.append(total)
    finally:
        env.close()
    p50, p95 = statistics.median(steps), float(np.percentile(steps, 95))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (1 min)")
    print(f"Chromium launch and first reset: {launch * 1000:.0f} ms; reset median {statistics.median(resets):.0f} ms")
    print(
        f"{len(steps)} browser steps over {args.episodes} expert episodes at difficulty {args.difficulty} "
        f"(mean reward {statistics.mean(rewards):.3f})"
    )
    print(f"step p50 {p50:.0f} ms (target <= {STEP_TARGET_MS:.0f} ms: {'met' if p50 <= STEP_TARGET_MS else 'NOT met'}), p95 {p95:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

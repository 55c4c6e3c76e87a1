"""The Shop in a real browser (parlour.bridges.browser): what a browser step costs, against the target of a median of
150 ms from a BrowserGym action to the next page's accessibility tree.

The expert's plan is played through browser actions (each search a fill and a click, each click a click on the
button of that name) for ``--episodes`` episodes (seeds 0..n-1) at ``--difficulty``; every ``step`` is timed in
wall-clock time (the work is in Chromium's processes as much as in this one): the action run by BrowserGym in
headless Chromium, the form sent to the loopback server and the game's action played, the next page loaded, its
elements marked with bids and its accessibility tree read and flattened. One search before the timed episodes
warms the catalogue's index, and Chromium's launch and each reset are printed apart. The machine's load and CPU
count are printed beside the figures, since other processes on the same cores slow Chromium down.

``--phases`` also prints where a step's time goes (medians and means over the timed steps): BrowserGym's action
(``execute_python_code``: the locator found by bid, the click or fill), the wait for the page shown (the form sent,
the server's game action and page, the page put in place), the accessibility tree read, its flattening, and the rest
of the observation (BrowserGym's marking, the focused element, the unmarking: three calls into the page).

Run: ``.venv/bin/python benchmarks/shop_browser_speed.py [--episodes 10] [--difficulty 2] [--phases]`` (needs
``pip install 'parlour[browser]'`` and Chromium).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from parlour.baselines import make_scripted
from parlour.bridges.browser import ShopBrowserEnv, browser_unavailable

ENV_ID = "parlour/Shop-v0"
STEP_TARGET_MS = 150.0


def timed(phases: dict[str, list[float]], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, adding each call's wall-clock milliseconds to ``phases[name]``."""

    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            phases[name].append((time.perf_counter() - start) * 1000)

    return run


def time_phases(env: ShopBrowserEnv) -> dict[str, list[float]]:
    """Wrap the face's phases (its methods on ``env``, BrowserGym's functions it calls) in timers; the lists fill as
    steps run."""
    import browsergym.core.action.base
    import browsergym.utils.obs

    phases: dict[str, list[float]] = collections.defaultdict(list)
    action = browsergym.core.action.base
    action.execute_python_code = timed(phases, "action", action.execute_python_code)
    browsergym.utils.obs.flatten_axtree_to_str = timed(phases, "flatten", browsergym.utils.obs.flatten_axtree_to_str)
    for name, method in (("page shown", "_settle"), ("observation", "_observe"), ("tree", "_axtree")):
        setattr(env, method, timed(phases, name, getattr(env, method)))
    return phases


def print_phases(phases: dict[str, list[float]]) -> None:
    """Each phase's median and mean per step; the observation's rest is what is not the tree or its flattening."""
    phases["marking, focus, unmarking"] = [
        whole - tree - flat for whole, tree, flat in zip(phases["observation"], phases["tree"], phases["flatten"], strict=True)
    ]
    for name in ("action", "page shown", "tree", "flatten", "marking, focus, unmarking", "observation"):
        times = phases[name]
        print(f"  {name:26s} p50 {statistics.median(times):6.1f} ms, mean {statistics.mean(times):6.1f} ms")


def main() -> int:
    """Time the browser face's steps over the expert's play; prints the figures against the target."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--difficulty", type=int, default=2)
    parser.add_argument("--phases", action="store_true", help="also print where a step's time goes")
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
    phases = time_phases(env) if args.phases else None
    agent = make_scripted("expert", ENV_ID)
    resets, steps, rewards = [], [], []
    try:
        for seed in range(args.episodes):
            agent.reset(seed=seed)
            start = time.perf_counter()
            env.reset(seed=seed)
            resets.append((time.perf_counter() - start) * 1000)
            if phases is not None:
                # Only the steps' phases: the reset's observation is not a step's.
                for name in ("observation", "tree", "flatten"):
                    phases[name].pop()
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
    if phases is not None:
        print_phases(phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())

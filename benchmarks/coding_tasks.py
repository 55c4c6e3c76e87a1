"""Coding tasks checked per second: the reference solution of procgen tasks judged on their hidden tests.

Modes, each over the same tasks (seeds 0..N-1, default depth 2 and size 8):

* ``generate``: procgen task generation alone (composition, reference, tests, quality checks), on the host;
* ``judge, fresh sandbox``: what ``submit`` does, a new sandbox per task and 24 hidden tests in one harness run;
* ``judge, warm sandbox``: the same tests in the process's warm sandbox (what ``run_tests`` costs per test set);
* ``Code-v0 episodes``: whole episodes of ``parlour/Code-v0`` with the ``reference`` agent through
  ``parlour.evaluate`` (generation, observation, submission, judging);
* ``CoderTester-v0 episodes``: reference against phrasebook, mutants included.

Every judged task must pass (the benchmark fails otherwise). Reported: tasks (or episodes) per second and
milliseconds per task, with the machine's load.

    .venv/bin/python benchmarks/coding_tasks.py [--tasks 100]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

# The repository root, so that the benchmark runs from a checkout without an install.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import parlour  # noqa: E402
from parlour.envs.coding import judge  # noqa: E402
from parlour.envs.coding.tasks import generate_task  # noqa: E402

if TYPE_CHECKING:
    from parlour.envs.core.game import OutcomeDict


def timed(label: str, count: int, action) -> tuple[str, int, float]:
    """Run ``action()`` and return ``(label, count, seconds)``."""
    started = time.perf_counter()
    action()
    return label, count, time.perf_counter() - started


def main() -> int:
    """Measure and print the table; 1 if a reference failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100, help="tasks (and Code-v0 episodes) per mode")
    args = parser.parse_args()
    n = args.tasks
    load_before = os.getloadavg()[0]
    tasks = [generate_task(seed) for seed in range(n)]
    warm = judge.warm_sandbox()
    failures: list[str] = []

    def judge_fresh() -> None:
        for task in tasks:
            with judge.fresh_sandbox() as sandbox:
                if task.judge(sandbox, task.reference).verdict != "pass":
                    failures.append(task.task_id)

    def judge_warm() -> None:
        for task in tasks:
            if task.judge(warm, task.reference).verdict != "pass":
                failures.append(task.task_id)

    def episodes() -> None:
        results = parlour.evaluate("parlour/Code-v0", ["reference"], episodes=n, seed=0, progress=False)
        # A finished episode's record always has its outcome.
        failures.extend(cast("OutcomeDict", r["outcome"])["details"]["task"] for r in results.records if r["returns"]["coder"] != 1.0)

    pairs = max(2, n // 10)
    rows = [
        timed("generate (host)", n, lambda: [generate_task(seed) for seed in range(n)]),
        timed("judge, fresh sandbox (submit)", n, judge_fresh),
        timed("judge, warm sandbox (run_tests)", n, judge_warm),
        timed("Code-v0 episodes (reference)", n, episodes),
        timed(
            "CoderTester-v0 episodes",
            pairs,
            lambda: parlour.evaluate("parlour/CoderTester-v0", ["reference", "phrasebook"], episodes=pairs, seed=0, progress=False),
        ),
    ]
    load_after = os.getloadavg()[0]
    print(
        f"{n} procgen tasks (seeds 0-{n - 1}, depth 2, size 8, 24 hidden tests each); {os.cpu_count()} CPUs, "
        f"load average {load_before:.2f} before, {load_after:.2f} after"
    )
    print(f"{'mode':<34} {'count':>6} {'per second':>11} {'ms each':>9}")
    for label, count, seconds in rows:
        print(f"{label:<34} {count:>6} {count / seconds:>11.1f} {1000 * seconds / count:>9.1f}")
    if failures:
        print(f"FAILED: the reference did not pass {len(failures)} task(s): {failures[:5]}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``evaluate(..., workers=N)`` against one process on the same episodes: wall time and CPU time.

Plays ``--env`` between ``--agents`` (default: Connect Four, minimax against
random, whose episodes cost tens of milliseconds of CPU each) for each
episode count of ``--episodes``, once with ``workers=1`` and once with
``workers=--workers``, interleaved for ``--rounds`` rounds in this process.
Wall time is ``time.perf_counter``; CPU time is this process's
``time.process_time`` plus the CPU time of the worker processes it spawned
and reaped (``resource.getrusage(RUSAGE_CHILDREN)``). Each run says whether
it spawned workers (children's CPU time above zero). Both runs must produce
the same records (checked), so the work is the same.

Printed per episode count: median wall and CPU seconds of each run with their
range, and the median ratio of the workers run to the one-process run, round
by round. Target (issue 25): ``workers=N`` is never slower in wall time than
one process (ratio <= 1.05, the 5% allowing for timing noise); a miss is
flagged. The CPU ratio is printed beside it: workers spend more CPU than one
process (each imports parlour and builds its agents), and the rule spawns them
only where the wall time they save outweighs that (see
:func:`parlour.evaluation.rollout.workers_to_spawn`).

Run: ``.venv/bin/python benchmarks/workers.py [--episodes 200,2000] [--workers 2] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
import warnings
from typing import TYPE_CHECKING

import parlour

if TYPE_CHECKING:
    from parlour.envs.core.record_types import Record

#: workers=N wall time over one process's, at most (the 5% is timing noise).
WALL_TARGET = 1.05


def children_cpu() -> float:
    """CPU seconds of this process's reaped children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(env_id: str, agents: list[str], episodes: int, workers: int) -> tuple[float, float, bool, list[Record]]:
    """One evaluation: wall seconds, CPU seconds (this process and its workers), whether workers were spawned, the records."""
    wall, cpu, children = time.perf_counter(), time.process_time(), children_cpu()
    results = parlour.evaluate(env_id, agents, episodes=episodes, workers=workers, progress=False)
    spawned = children_cpu() - children
    return time.perf_counter() - wall, time.process_time() - cpu + spawned, spawned > 0, results.records


def spread(values: list[float]) -> str:
    """Median and range of ``values``."""
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    """Time both runs per episode count in interleaved rounds and print the medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="parlour/ConnectFour-v0")
    parser.add_argument("--agents", default="minimax,random", help="comma-separated agent specs")
    parser.add_argument("--episodes", default="200,2000", help="comma-separated episode counts (default 200,2000)")
    parser.add_argument("--workers", type=int, default=2, help="the workers run's workers (default 2)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    agents = args.agents.split(",")
    missed = 0
    print(f"{args.env}, {' vs '.join(agents)}: workers={args.workers} against one process, {args.rounds} interleaved rounds\n")
    for episodes in (int(count) for count in args.episodes.split(",")):
        runs: dict[int, list[tuple[float, float, bool]]] = {1: [], args.workers: []}
        for _ in range(args.rounds):
            records = {}
            for workers in runs:
                wall, cpu, spawned, records[workers] = timed(args.env, agents, episodes, workers)
                runs[workers].append((wall, cpu, spawned))
            assert records[1] == records[args.workers], "the workers run played other episodes"
        print(f"{episodes} episodes:")
        for workers, timings in runs.items():
            walls, cpus, spawns = zip(*timings)
            print(
                f"  workers={workers}: wall {spread(list(walls))} s, CPU {spread(list(cpus))} s, spawned workers in {sum(spawns)} of {len(spawns)} runs"
            )
        one, many = runs[1], runs[args.workers]
        wall_ratios = [b[0] / a[0] for a, b in zip(one, many)]
        cpu_ratios = [b[1] / a[1] for a, b in zip(one, many)]
        missed_here = statistics.median(wall_ratios) > WALL_TARGET
        missed += missed_here
        print(
            f"  workers={args.workers} / one process: wall {spread(wall_ratios)}x  target <= {WALL_TARGET:g}x: {'MISSED' if missed_here else 'met'};"
            f" CPU {spread(cpu_ratios)}x"
        )
    print(f"\n{missed} target(s) missed")


if __name__ == "__main__":
    main()

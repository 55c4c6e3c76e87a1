"""How long the default demo takes, in CPU and wall time, against the first-run target (issue 35).

Target: the whole default demo (``parlour demo``, every environment, its default budget) finishes within 5 minutes
of CPU on 2 cores. This runs ``parlour demo --no-serve`` in a fresh folder as a subprocess and reports its wall
time and the CPU time of it and its children (engines such as Stockfish run as processes), with the machine's cores
and load average, since a loaded machine stretches the wall time (and the probes' measured costs) but not the CPU.

    python benchmarks/demo_time.py                      # the default demo
    python benchmarks/demo_time.py --env parlour/Chess-v0 --env parlour/Nim-v0
    python benchmarks/demo_time.py -- --budget 120      # any other flag of parlour demo after --
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The first-run target: CPU seconds for the whole default demo on 2 cores.
TARGET_CPU_S = 300.0


def main() -> None:
    """Time one demo and print its figures beside the target."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", action="append", default=[], help="only this environment (repeatable; default: all)")
    parser.add_argument("--out", help="the demo's folder (default: a fresh temporary one)")
    parser.add_argument("rest", nargs="*", help="flags passed to parlour demo as they stand (after --)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(args.out or Path(scratch) / "demo")
        command = [sys.executable, "-m", "parlour.cli", "demo", "--no-serve", "--out", str(out), *args.rest]
        for env_id in args.env:
            command += ["--env", env_id]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = os.getloadavg()[0]
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"parlour demo failed ({done.returncode}):\n{done.stderr[-3000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        plan = json.loads((out / "demo.json").read_text())["plan"]
        episodes = sum(run["episodes"] for entry in plan["envs"].values() for run in entry["lineups"])
        cut = sorted(env_id for env_id, entry in plan["envs"].items() if any(run["episodes"] < run["want"] for run in entry["lineups"]))
    print(f"parlour demo ({len(plan['envs'])} environments, budget {plan['budget']:g} s): {episodes} episodes")
    print(f"  wall {wall:.0f} s, CPU {cpu:.0f} s (target: CPU under {TARGET_CPU_S:.0f} s on 2 cores: {'met' if cpu <= TARGET_CPU_S else 'NOT met'})")
    print(f"  machine: {os.cpu_count()} cores, load average {load:.1f} at the start (wall time stretches with load)")
    print(f"  cut to fit the budget: {', '.join(cut) if cut else 'none'}")


if __name__ == "__main__":
    main()

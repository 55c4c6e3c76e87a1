"""Latency of a trivial sandboxed program: fresh sandbox (cold), warm sandbox, and a plain subprocess.

Each round runs ``print(1)`` once per mode, in a rotating order, so that every mode sees the same machine
load: ``run_python`` (cold: a new bubblewrap sandbox and interpreter per run), ``Sandbox.run`` (warm: a
fork of the server in a running sandbox), and two plain subprocesses without any sandbox, ``python -s -P
-S -X utf8 -c`` (the interpreter and flags the sandbox starts, the like-for-like baseline) and ``python -c``
(this interpreter with its defaults, site packages included). Reported: p50 and p95 in milliseconds, the
ratio of each p50 to the like-for-like plain subprocess's, and the targets (cold p50 <= 30 ms, warm p50 <=
8 ms), flagged where missed.

    .venv/bin/python benchmarks/sandbox_latency.py [--rounds 60]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

# The repository root, so that the benchmark runs from a checkout without an install.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parlour.sandbox import Sandbox, _interpreter, run_python  # noqa: E402

PROGRAM = "print(1)"
TARGETS_MS = {"cold (run_python)": 30.0, "warm (Sandbox.run)": 8.0}
BASELINE = "plain python -s -P -S -X utf8 -c"


def percentile(samples: list[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def plain(command: list[str]) -> Callable[[], str]:
    """A runner of ``command`` as an ordinary subprocess; returns its stdout."""
    return lambda: subprocess.run(command, capture_output=True, text=True, check=True).stdout


def measure(rounds: int) -> dict[str, list[float]]:
    """Seconds per run of each mode, interleaved round by round."""
    with Sandbox() as warm:
        modes: dict[str, Callable[[], str]] = {
            "cold (run_python)": lambda: run_python(PROGRAM).stdout,
            "warm (Sandbox.run)": lambda: warm.run(PROGRAM).stdout,
            BASELINE: plain([_interpreter(), "-s", "-P", "-S", "-X", "utf8", "-c", PROGRAM]),
            "plain python -c (defaults)": plain([sys.executable, "-c", PROGRAM]),
        }
        for run in modes.values():
            assert run() == "1\n"
        samples: dict[str, list[float]] = {name: [] for name in modes}
        names = list(modes)
        for index in range(rounds):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                started = time.perf_counter()
                output = modes[name]()
                samples[name].append(time.perf_counter() - started)
                assert output == "1\n", (name, output)
    return samples


def main() -> int:
    """Measure, print the table, and return 1 if a target was missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="runs of each mode (interleaved)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    samples = measure(args.rounds)
    load_after = os.getloadavg()[0]
    baseline = statistics.median(samples[BASELINE])
    print(f"{args.rounds} runs of {PROGRAM!r} per mode, interleaved; {os.cpu_count()} CPUs, "
          f"load average {load_before:.2f} before, {load_after:.2f} after")
    print(f"{'mode':<34} {'p50 ms':>8} {'p95 ms':>8} {'p50 / plain':>12}  target")
    missed = False
    for name, times in samples.items():
        p50, p95 = statistics.median(times) * 1000, percentile(times, 0.95) * 1000
        target = TARGETS_MS.get(name)
        verdict = ""
        if target is not None:
            verdict = f"p50 <= {target:g} ms: " + ("met" if p50 <= target else "MISSED")
            missed = missed or p50 > target
        print(f"{name:<34} {p50:8.2f} {p95:8.2f} {p50 / (baseline * 1000):11.2f}x  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

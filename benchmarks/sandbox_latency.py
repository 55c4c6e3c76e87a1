"""Latency of a trivial sandboxed program, cold and warm, beside plain Python started the same way, interleaved.

Each round runs every mode once, in a rotating order, so that all modes see the same machine load:

* ``cold (run_python)``: a new bubblewrap sandbox (slot, cgroup, seccomp filter, interpreter) per run of ``pass``,
  as a judge gets it: the spare the launcher started ahead for it (see ``parlour.sandbox``), ready since the
  previous round;
* ``cold, right after another``: the second of two ``run_python`` in a row, timed alone: its spare was started
  while the first ran, so it shows what back-to-back judging gets when that start competes for the CPUs;
* ``cold, started on the spot``: ``run_python`` with ``START_AHEAD`` off, every step of the start on the clock;
* ``warm (Sandbox.run)``: a fork of the server in a running sandbox;
* ``plain python -S -c pass``: the same interpreter as a plain subprocess, no site module; the issue's reference,
  which the ratios are taken against;
* ``plain python -s -P -S -X utf8 -c pass``: the interpreter with the flags the sandbox starts it with.

``--before REF`` adds the cold and warm modes of the sandbox at a git revision (say, the one before the
hardening), loaded from a copy of that revision's ``parlour/sandbox.py`` and its server, in the same rounds.

Reported: p50 and p95 in milliseconds, each p50 over the reference's, and the targets (cold p50 <= 30 ms and
<= 3.5 x plain Python, warm p50 <= 8 ms), flagged where missed. The targets are for a quiet machine: the load
average, printed before and after, says how quiet this one was.

    .venv/bin/python benchmarks/sandbox_latency.py [--rounds 60] [--before c4f84e5]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, cast

# The repository root, so that the benchmark runs from a checkout without an install.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import parlour.sandbox as sandbox  # noqa: E402

PROGRAM = "pass"
REFERENCE = "plain python -S -c pass"
COLD, WARM = "cold (run_python)", "warm (Sandbox.run)"
TARGETS_MS = {COLD: 30.0, WARM: 8.0}
COLD_RATIO = 3.5


def percentile(samples: list[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def plain(command: list[str]) -> Callable[[], object]:
    """A runner of ``command`` as an ordinary subprocess, which must succeed."""
    return lambda: subprocess.run(command, capture_output=True, check=True)


def sandboxed(module: ModuleType, warm) -> Callable[[], object]:
    """A runner of ``PROGRAM`` in ``warm`` (a running Sandbox) or, if None, in a fresh sandbox of ``module``."""

    def run() -> object:
        result = warm.run(PROGRAM) if warm is not None else module.run_python(PROGRAM)
        assert result.verdict == "ok", result
        return result

    return run


def right_after_another(module: ModuleType) -> Callable[[], float]:
    """A runner of two fresh sandboxes in a row that returns the second's seconds, timed alone."""
    run = sandboxed(module, None)

    def twice() -> float:
        run()
        started = time.perf_counter()
        run()
        return time.perf_counter() - started

    return twice


def on_the_spot(module: ModuleType) -> Callable[[], object]:
    """A runner of ``PROGRAM`` in a fresh sandbox started in full on the caller's clock (no spare)."""
    run = sandboxed(module, None)
    # ModuleType declares no attributes to assign; cast once here, outside the timed runner.
    settings = cast(Any, module)

    def spot() -> object:
        settings.START_AHEAD = False
        try:
            return run()
        finally:
            settings.START_AHEAD = True

    return spot


def load_revision(revision: str, folder: Path) -> ModuleType:
    """``parlour/sandbox.py`` as it was at ``revision``, with its server beside it, imported under its own name."""
    for name in ("sandbox.py", "sandbox_server.py"):
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:parlour/{name}"], capture_output=True, check=True).stdout
        (folder / name).write_bytes(source)
    name = "sandbox_at_" + "".join(c if c.isalnum() else "_" for c in revision)
    spec = importlib.util.spec_from_file_location(name, folder / "sandbox.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def measure(rounds: int, before: ModuleType | None, revision: str) -> dict[str, list[float]]:
    """Seconds per run of each mode, interleaved round by round."""
    interpreter = sandbox._interpreter()
    warm_sandboxes = [sandbox.Sandbox()] + ([before.Sandbox()] if before is not None else [])
    try:
        modes: dict[str, Callable[[], object]] = {
            COLD: sandboxed(sandbox, None),
            "cold, right after another": right_after_another(sandbox),
            "cold, started on the spot": on_the_spot(sandbox),
            WARM: sandboxed(sandbox, warm_sandboxes[0]),
            REFERENCE: plain([interpreter, "-S", "-c", PROGRAM]),
            "plain python -s -P -S -X utf8 -c pass": plain([interpreter, "-s", "-P", "-S", "-X", "utf8", "-c", PROGRAM]),
        }
        if before is not None:
            modes[f"cold at {revision}"] = sandboxed(before, None)
            modes[f"warm at {revision}"] = sandboxed(before, warm_sandboxes[1])
        for run in modes.values():
            run()
        samples: dict[str, list[float]] = {name: [] for name in modes}
        names = list(modes)
        for index in range(rounds):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:
                started = time.perf_counter()
                timed = modes[name]()
                # A runner that times itself returns its seconds.
                samples[name].append(timed if isinstance(timed, float) else time.perf_counter() - started)
    finally:
        for warm in warm_sandboxes:
            warm.close()
    return samples


def main() -> int:
    """Measure, print the table, and return 1 if a target was missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60, help="runs of each mode (interleaved)")
    parser.add_argument("--before", metavar="REVISION", help="also measure the sandbox at this git revision")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="parlour-sandbox-before-") as folder:
        before = load_revision(args.before, Path(folder)) if args.before else None
        samples = measure(args.rounds, before, args.before)
    load_after = os.getloadavg()
    reference = statistics.median(samples[REFERENCE]) * 1000
    print(
        f"{args.rounds} runs of {PROGRAM!r} per mode, interleaved; {os.cpu_count()} CPUs; load average "
        f"{' '.join(f'{x:.2f}' for x in load_before)} before, {' '.join(f'{x:.2f}' for x in load_after)} after"
    )
    print(f"{'mode':<40} {'p50 ms':>8} {'p95 ms':>8} {'p50 / ref':>10}  target")
    missed = False
    for name, times in samples.items():
        p50, p95 = statistics.median(times) * 1000, percentile(times, 0.95) * 1000
        checks = []
        if name in TARGETS_MS:
            checks.append((f"p50 <= {TARGETS_MS[name]:g} ms", p50 <= TARGETS_MS[name]))
        if name == COLD:
            checks.append((f"p50 <= {COLD_RATIO:g} x ref", p50 <= COLD_RATIO * reference))
        missed = missed or not all(ok for _, ok in checks)
        verdict = "; ".join(f"{label}: {'met' if ok else 'MISSED'}" for label, ok in checks)
        print(f"{name:<40} {p50:8.2f} {p95:8.2f} {p50 / reference:9.2f}x  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

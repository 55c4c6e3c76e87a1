"""The garbage collector's pauses during LLM rollouts, with and without the frozen heap (:mod:`parlour.evaluation.heap`).

One process loads the tiny GPT-2 of ``rollout_throughput.py`` (torch and
transformers imported: several hundred thousand tracked objects) and plays
``--episodes`` episodes of ``--env`` with the ``score_legal`` policy against
``random``, ``--rounds`` times each way, alternating: with ``Rollout.play``'s
frozen heap, and with it replaced by a null context (the code before the
freeze). Printed per way: CPU seconds per run, the share of time outside the
model, and the full (generation-2) collections with the CPU time they took,
beside all collections' time, counted by ``gc.callbacks``. Full collections
come when a quarter as many long-lived objects again have piled up, so runs of
a few hundred episodes or more are needed to see them.

    .venv/bin/python benchmarks/gc_pauses.py [--episodes 512] [--rounds 2] [--env parlour/TicTacToe-v0]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import tempfile
import time
from typing import Any, Callable

import rollout_throughput

import parlour.evaluation.rollout as rollout
from parlour.wrappers.tiny_model import make_tiny_model


def main() -> None:
    """Alternate frozen and plain runs and print their collections, pauses and times."""
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="parlour/TicTacToe-v0")
    parser.add_argument("--episodes", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    events: list[tuple[str, int, float]] = []
    gc.callbacks.append(lambda phase, info: events.append((phase, info["generation"], time.process_time())))
    # Context-manager factories returning Any, so that nullcontext may stand in for frozen_heap (a _GeneratorContextManager).
    ways: dict[str, Callable[[], Any]] = {"frozen heap": rollout.frozen_heap, "plain": contextlib.nullcontext}
    runs: dict[str, list[tuple[float, float, int, float, float]]] = {way: [] for way in ways}
    with tempfile.TemporaryDirectory() as folder:
        model = make_tiny_model(folder, corpus=rollout_throughput.domain_corpus(), vocab_size=2000, n_embd=64, n_layer=2, n_head=1)
        config = rollout_throughput.score_legal_config(model, None, kv_reuse=False)
        rollout_throughput.measure(config, args.env, 2, 2, False)  # warm-up: imports, caches
        print(f"{len(gc.get_objects()):,} objects tracked by the collector after loading the model")
        try:
            for round_ in range(args.rounds):
                order = list(ways) if round_ % 2 == 0 else list(reversed(ways))
                for way in order:
                    rollout.frozen_heap = ways[way]
                    events.clear()
                    result = rollout_throughput.measure(config, args.env, args.episodes, 32, False)
                    pauses = [(start, end) for start, end in zip(events[::2], events[1::2])]
                    full = [end[2] - start[2] for start, end in pauses if start[1] == 2]
                    every = sum(end[2] - start[2] for start, end in pauses)
                    runs[way].append((result["seconds"], result["outside_model"], len(full), sum(full), every))
        finally:
            rollout.frozen_heap = ways["frozen heap"]
    print(f"{args.env}: {args.episodes} episodes per run, {args.rounds} runs each way, CPU time (1 torch thread)")
    for way, rows in runs.items():
        seconds = [row[0] for row in rows]
        outside = [row[1] * 100 for row in rows]
        print(
            f"  {way:<12} {statistics.median(seconds):.2f} s per run [{min(seconds):.2f}, {max(seconds):.2f}], "
            f"outside the model {statistics.median(outside):.1f}% [{min(outside):.1f}, {max(outside):.1f}]; "
            f"full collections {sum(row[2] for row in rows)} taking {sum(row[3] for row in rows):.3f} s, "
            f"all collections {sum(row[4] for row in rows):.3f} s"
        )


if __name__ == "__main__":
    main()

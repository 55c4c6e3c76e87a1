"""Search foundation speed: knowledge-base generation, BM25 index build, and retrieval latency as the corpus grows.

* generation: ``World.generate(seed, 8000)``, the leaderboard corpus's size;
* index build: ``Retriever(passages)`` over those 8000 passages into an empty
  cache (tokenise, stem, index, save), and the load of that cached index;
* retrieval: ``search(question, k=5)`` latency, p50 and p95, over worlds of
  20k and 200k passages from the same generator, the queries being questions
  sampled from each world. Rounds alternate between the corpora so that
  background load on a shared machine falls on both alike.

Times are CPU time of this process (``time.process_time``), which a busy
machine disturbs far less than wall time; wall time is printed beside it.
Each one-off measurement is the median of ``--repeats`` runs.
Targets: generation <= 2 s, index build <= 3 s (8000 passages); a missed
target is flagged.

Run: ``.venv/bin/python benchmarks/search_retrieval.py [--repeats 3] [--rounds 5] [--queries 200]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from typing import Callable

import numpy as np

from parlour.envs.search.retriever import Retriever
from parlour.envs.search.world import World

GENERATION_TARGET_S = 2.0
BUILD_TARGET_S = 3.0


def timed(action: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median (CPU seconds, wall seconds) of ``repeats`` runs of ``action``."""
    cpu, wall = [], []
    for _ in range(repeats):
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        action()
        cpu.append(time.process_time() - cpu_start)
        wall.append(time.perf_counter() - wall_start)
    return statistics.median(cpu), statistics.median(wall)


def verdict(seconds: float, target: float) -> str:
    """``ok`` or a flag that the target was missed."""
    return "ok" if seconds <= target else f"MISSED (target {target:g} s)"


def build_into_empty_cache(passages: list[dict[str, str]]) -> Retriever:
    """A retriever built from scratch: a fresh cache directory every time, so nothing is loaded."""
    with tempfile.TemporaryDirectory() as cache:
        return Retriever(passages, cache)


def latencies(retrievers: dict[int, Retriever], queries: dict[int, list[str]], rounds: int) -> dict[int, dict]:
    """Per corpus size, the CPU and wall time of every search, rounds interleaved across sizes."""
    samples: dict[int, dict[str, list[float]]] = {size: {"cpu": [], "wall": []} for size in retrievers}
    sizes = list(retrievers)
    for round_number in range(rounds):
        for size in sizes if round_number % 2 == 0 else sizes[::-1]:
            retriever = retrievers[size]
            for query in queries[size]:
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                retriever.search(query, k=5)
                samples[size]["cpu"].append(time.process_time() - cpu_start)
                samples[size]["wall"].append(time.perf_counter() - wall_start)
    return {size: {kind: np.percentile(values, [50, 95]) * 1000 for kind, values in by_kind.items()} for size, by_kind in samples.items()}


def main() -> None:
    """Measure and print every figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 200_000])
    args = parser.parse_args()

    generation_cpu, generation_wall = timed(lambda: World.generate(0, 8000), args.repeats)
    print(f"generate 8000 passages: {generation_cpu:.2f} s CPU ({generation_wall:.2f} s wall)  {verdict(generation_cpu, GENERATION_TARGET_S)}")
    world = World.generate(0, 8000)
    build_cpu, build_wall = timed(lambda: build_into_empty_cache(world.passages), args.repeats)
    print(f"build the index of 8000 passages: {build_cpu:.2f} s CPU ({build_wall:.2f} s wall)  {verdict(build_cpu, BUILD_TARGET_S)}")
    with tempfile.TemporaryDirectory() as cache:
        Retriever(world.passages, cache)
        load_cpu, load_wall = timed(lambda: Retriever(world.passages, cache), args.repeats)
    print(f"load it from the cache: {load_cpu:.3f} s CPU ({load_wall:.3f} s wall)")

    retrievers, queries = {}, {}
    with tempfile.TemporaryDirectory() as cache:
        for size in args.sizes:
            cpu_start = time.process_time()
            big = World.generate(1, size)
            generated = time.process_time() - cpu_start
            retrievers[size] = Retriever(big.passages, cache)
            built = time.process_time() - cpu_start - generated
            queries[size] = [q.question for q in big.questions(args.queries, seed=0)]
            print(f"{size} passages: generated in {generated:.1f} s CPU, indexed in {built:.1f} s CPU")
    results = latencies(retrievers, queries, args.rounds)
    print(f"search(k=5), {args.queries} questions x {args.rounds} interleaved rounds:")
    for size, figures in results.items():
        (cpu50, cpu95), (wall50, wall95) = figures["cpu"], figures["wall"]
        print(f"  {size:>7} passages: p50 {cpu50:.2f} ms, p95 {cpu95:.2f} ms CPU (wall p50 {wall50:.2f} ms, p95 {wall95:.2f} ms)")


if __name__ == "__main__":
    main()

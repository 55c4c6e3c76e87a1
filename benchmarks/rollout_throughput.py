"""Rollout throughput of the evaluation runner with an LLM agent: batched against one episode at a time.

The LLM is the tiny random GPT-2 of ``tests/tiny_lm.py`` (built in a temporary
folder and loaded through ``hf:<folder>``, like a real checkpoint; its
tokenizer trained on the environments' own text, so prompts have realistic
token counts) playing
TicTacToe against ``random``. The same episodes (same seeds and seating) are
played twice: with ``in_flight`` episodes at once, so the agent gets one
batched ``generate`` per step, and with one episode at a time. Reported:
episodes per second, generated tokens per second, and the share of wall time
spent outside the model (environment, prompting, parsing, bookkeeping),
measured against the time spent in the backend's ``generate`` calls.

    .venv/bin/python benchmarks/rollout_throughput.py [--episodes 32] [--in-flight 32]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The repository root, so that the test helper that builds the tiny model imports as tests.tiny_lm.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import parlour  # noqa: E402
from parlour.envs.core.match import Match  # noqa: E402
from tests.tiny_lm import make_tiny_model  # noqa: E402


def measure(model: str, env_id: str, episodes: int, in_flight: int, max_new_tokens: int, device: str | None) -> dict[str, Any]:
    """Play ``episodes`` with ``in_flight`` at once; returns the wall time and the LLM agent's accounting."""
    agent = parlour.make_agent(f"hf:{model}", max_new_tokens=max_new_tokens, device=device, seed=0)
    started = time.perf_counter()
    results = parlour.evaluate(env_id, [agent, "random"], episodes=episodes, seed=0, in_flight=in_flight, progress=False)
    wall = time.perf_counter() - started
    stats = results.stats[agent.name]
    return {
        "wall_s": wall,
        "episodes_per_s": episodes / wall,
        "tokens_per_s": stats["completion_tokens"] / wall,
        "generate_calls": stats["batches"],
        "seconds_per_generate": stats["latency_s"] / stats["batches"],
        "decisions": stats["decisions"],
        "outside_model": 1.0 - stats["latency_s"] / wall,
    }


def domain_corpus() -> list[str]:
    """The text LLM agents read: every environment's rules and opening prompt, for each seat.

    A tokenizer trained on it reaches about the characters per token of a real
    LLM tokenizer on this text, so prompt lengths in tokens are realistic.
    """
    texts = []
    for env_id in parlour.list_envs():
        match = Match(parlour.game_class(env_id))
        match.reset(0)
        texts += [match.observation_text(player) for player in match.players]
    return texts


def main() -> None:
    """Run both configurations and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="parlour/TicTacToe-v0")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--device", default=None, help="torch device (default: CUDA when available, else CPU)")
    parser.add_argument("--vocab-size", type=int, default=2000, help="tokenizer vocabulary, trained on the environments' text")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        model = make_tiny_model(folder, corpus=domain_corpus(), vocab_size=args.vocab_size)
        measure(model, args.env, 2, 2, args.max_new_tokens, args.device)  # warm-up: imports, kernels, caches
        batched = measure(model, args.env, args.episodes, args.in_flight, args.max_new_tokens, args.device)
        sequential = measure(model, args.env, args.episodes, 1, args.max_new_tokens, args.device)
    print(f"{args.env}, tiny GPT-2 vs random, {args.episodes} episodes, max_new_tokens={args.max_new_tokens}")
    print(f"{'':<22}{'episodes/s':>12}{'tokens/s':>12}{'generate calls':>16}{'s/generate':>12}{'decisions':>11}{'outside model':>15}")
    for label, row in ((f"batched ({args.in_flight} in flight)", batched), ("one at a time", sequential)):
        print(
            f"{label:<22}{row['episodes_per_s']:>12.2f}{row['tokens_per_s']:>12.0f}{row['generate_calls']:>16}"
            f"{row['seconds_per_generate']:>12.3f}"
            f"{row['decisions']:>11}{row['outside_model']:>15.1%}"
        )
    print(f"speed-up (episodes/s): {batched['episodes_per_s'] / sequential['episodes_per_s']:.1f}x")


if __name__ == "__main__":
    main()

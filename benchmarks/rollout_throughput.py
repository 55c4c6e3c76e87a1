"""Rollout throughput of the evaluation runner with an LLM agent on real episodes: batched against one at a time.

The model is the tiny random GPT-2 of ``parlour tiny-model`` (:mod:`parlour.wrappers.tiny_model`; built in a
temporary folder and loaded through ``from_pretrained``, like a real
checkpoint; its tokenizer trained on the environments' own text, so prompts
have realistic token counts), playing ``--env`` against ``random``. Every
episode is a real game of legal moves, played to its end:

* ``score_legal``: the LLM trainer's policy
  (:class:`parlour.wrappers.llm_policy.LMPolicy`), a softmax over the
  legal moves' log-likelihoods, greedy, so it can only play legal moves; one
  forward pass of each prompt per decision, with and without its KV-cache
  reuse across turns (with it, only the tokens added since the last turn run).
* ``generate``: the ``hf:`` agent (:class:`parlour.wrappers.LLMAgent` on the
  transformers backend), decoding greedily up to ``--max-new-tokens`` tokens
  per decision, with and without the backend's KV-cache reuse across turns.
  A random model's text names no move, so its reply is mapped onto a legal
  move by a hash of the reply (:func:`legal_by_hash`): the model does all the
  work of a player that writes its move (whole conversations, every token
  generated), and the episodes are full games instead of three forfeited turns.

The same episodes (seeds, seating) are played with ``--in-flight`` episodes at
once, so the agent gets one batched call per step, and with one episode at a
time; greedy decoding makes both produce the same tokens in float32 (checked: the
token counts and every episode's moves are compared; in half precision on a GPU
near-ties may round the other way, and the share of identical episodes is
printed). The configurations run
interleaved for ``--rounds`` rounds in one process. Timing is CPU time of the
process on a CPU device (torch limited to ``--threads`` threads) and wall time
on CUDA, where the CPU waits on the GPU. Reported per configuration, as the
median and range over rounds: episodes per second, and the share of wall time
outside the model (environment, prompts, tokenisation, parsing, bookkeeping:
one minus the time in the model's forward passes and ``generate`` calls, up
to the copy of their results to the host, over the run's wall time: the
policy's own scoring code counts as outside), split into its two parts: the
agent's own code (its time in ``act_batch`` less the model's: prompts,
tokenisation, batch layout, picking moves) and the time outside the agent
(the environments, the random opponent, the rollout's scheduling and
records); model tokens per second (the
tokens the model ran: prompt tokens not taken from a KV cache, and the
generated or chosen move's tokens); also the tokens (prompt tokens scored for
``score_legal``, generated tokens for ``generate``), the moves played and
the moves refused (``errors``, 0 when every move is legal). Targets: batched >= 5x one at a time, and < 10% of the
time outside the model; a miss is flagged.

    .venv/bin/python benchmarks/rollout_throughput.py [--episodes 32] [--in-flight 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import zlib
from collections.abc import Callable
from typing import Any

import parlour
from parlour.envs.core.match import Match
from parlour.wrappers.tiny_model import make_tiny_model

#: Batched episodes per second over one-at-a-time, at least.
SPEEDUP_TARGET = 5.0
#: Share of wall time outside the model, at most (batched runs).
OUTSIDE_TARGET = 0.10


def legal_by_hash(text: str, legal: list[str] | None) -> str | None:
    """A legal move picked by a hash of the reply text: a random model's replies become real, deterministic games."""
    if not legal:
        return text or None
    return legal[zlib.crc32(text.encode()) % len(legal)]


def domain_corpus() -> list[str]:
    """The text LLM agents read: every environment's rules and opening prompt, for each seat.

    A tokenizer trained on it reaches about the characters per token of a real
    LLM tokenizer on this text, so prompt lengths in tokens are realistic.
    """
    texts = []
    for env_id in parlour.list_envs():
        match = Match(parlour.game_class(env_id))
        try:
            match.reset(0)
        except Exception:  # noqa: BLE001, S112 - an environment that cannot start on this machine (a missing extra, no sandbox) adds no text
            continue
        texts += [match.observation_text(player) for player in match.players]
    return texts


class Config:
    """One agent configuration: how to build it once, and how to read and zero its model time and tokens."""

    def __init__(
        self,
        label: str,
        agent: Any,
        model_seconds: Callable[[], float],
        tokens: Callable[[], int],
        model_tokens: Callable[[], int],
        zero: Callable[[], None],
    ):
        self.label = label
        self.agent = agent
        self.model_seconds = model_seconds
        self.tokens = tokens
        self.model_tokens = model_tokens
        self.zero = zero


def score_legal_config(model: str, device: str | None, kv_reuse: bool) -> Config:
    """The LLM trainer's policy in ``score_legal`` mode, greedy."""
    from parlour.wrappers.llm_policy import LMPolicy
    from parlour.wrappers.transformers_backend import TransformersBackend

    label = f"score_legal, KV reuse {'on' if kv_reuse else 'off'}"
    backend = TransformersBackend(model, device=device, kv_reuse=kv_reuse)
    policy = LMPolicy(backend, mode="score_legal", greedy=True, history_turns=None, name=label)

    def zero() -> None:
        # Every run starts with an empty store: the same seeds would otherwise find their prompts kept from the last run.
        policy.usage = dict.fromkeys(policy.usage, 0)
        if policy.kv_store is not None:
            policy.kv_store.clear()

    def model_tokens() -> int:
        # Read at call time: zero() replaces the dict.
        return int(policy.usage["prompt_tokens"] - policy.usage["cached_tokens"] + policy.usage["completion_tokens"])

    return Config(label, policy, lambda: float(policy.usage["model_s"]), lambda: int(policy.usage["prompt_tokens"]), model_tokens, zero)


def generate_config(model: str, device: str | None, max_new_tokens: int, kv_reuse: bool) -> Config:
    """The ``hf:`` LLM agent decoding greedily, its replies mapped onto legal moves by :func:`legal_by_hash`."""
    label = f"generate, KV reuse {'on' if kv_reuse else 'off'}"
    agent = parlour.make_agent(
        f"hf:{model}",
        max_new_tokens=max_new_tokens,
        device=device,
        do_sample=False,
        extraction=legal_by_hash,
        kv_reuse=kv_reuse,
        name=label,
        seed=0,
    )
    backend = agent.backend

    def zero() -> None:
        # Every run starts with an empty store: the same seeds would otherwise find their prompts kept from the last run.
        agent.reset_stats()
        backend.usage = dict.fromkeys(backend.usage, 0)
        backend.clear_kv_cache()

    def generated() -> int:
        return int(agent.stats()["completion_tokens"])

    def model_tokens() -> int:
        return int(backend.usage["prompt_tokens"] - backend.usage["cached_tokens"]) + generated()

    return Config(label, agent, lambda: float(backend.usage["model_s"]), generated, model_tokens, zero)


def measure(config: Config, env_id: str, episodes: int, in_flight: int, on_cuda: bool) -> dict[str, Any]:
    """Play ``episodes`` with ``in_flight`` at once: time, model time, tokens and the moves played."""
    import torch

    config.zero()
    if on_cuda:
        torch.cuda.synchronize()
    cpu, wall = time.process_time(), time.perf_counter()
    results = parlour.evaluate(env_id, [config.agent, "random"], episodes=episodes, seed=0, in_flight=in_flight, progress=False)
    if on_cuda:
        torch.cuda.synchronize()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    steps = [step for record in results.records for step in record["steps"]]
    seconds = wall if on_cuda else cpu
    model_s, agent_s = config.model_seconds(), results.stats[config.label]["act_seconds"]
    return {
        "seconds": seconds,
        "wall_s": wall,
        "episodes_per_s": episodes / seconds,
        "tokens_per_s": config.model_tokens() / seconds,
        "outside_model": 1.0 - model_s / wall,
        "agent_code": (agent_s - model_s) / wall,
        "outside_agent": 1.0 - agent_s / wall,
        "tokens": config.tokens(),
        "moves": len(steps),
        "games": [[step["move"] for step in record["steps"]] for record in results.records],
        "errors": sum(step["error"] is not None for step in steps),
    }


def summary(values: list[float], digits: int = 2) -> str:
    """``median [low, high]`` of ``values``."""
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}, {max(values):.{digits}f}]"


def main() -> None:
    """Run every configuration batched and one at a time, interleaved over rounds, and print the figures against the targets."""
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="parlour/TicTacToe-v0")
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--device", default=None, help="torch device (default: CUDA when available, else CPU)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (CPU time is summed over them)")
    parser.add_argument("--vocab-size", type=int, default=2000, help="tokenizer vocabulary, trained on the environments' text")
    parser.add_argument("--n-embd", type=int, default=64, help="model width (GPT-2 small: 768)")
    parser.add_argument("--n-layer", type=int, default=2, help="model depth (GPT-2 small: 12)")
    parser.add_argument("--only", choices=("score_legal", "generate"), default=None, help="run one kind of agent only")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    on_cuda = (args.device or ("cuda" if torch.cuda.is_available() else "cpu")).startswith("cuda")
    with tempfile.TemporaryDirectory() as folder:
        heads = max(1, args.n_embd // 64)
        model = make_tiny_model(folder, corpus=domain_corpus(), vocab_size=args.vocab_size, n_embd=args.n_embd, n_layer=args.n_layer, n_head=heads)
        configs = []
        if args.only in (None, "score_legal"):
            configs += [score_legal_config(model, args.device, kv_reuse) for kv_reuse in (True, False)]
        if args.only in (None, "generate"):
            configs += [generate_config(model, args.device, args.max_new_tokens, kv_reuse) for kv_reuse in (True, False)]
        for config in configs:
            measure(config, args.env, 2, 2, on_cuda)  # warm-up: imports, kernels, caches
        rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        runs = [(config, mode, in_flight) for config in configs for mode, in_flight in (("batched", args.in_flight), ("one at a time", 1))]
        for round_ in range(args.rounds):
            # Rotating the order spreads any drift in the machine's speed over every configuration.
            shift = round_ % len(runs)
            for config, mode, in_flight in runs[shift:] + runs[:shift]:
                rows.setdefault((config.label, mode), []).append(measure(config, args.env, args.episodes, in_flight, on_cuda))
    timer = "wall" if on_cuda else f"CPU ({args.threads} thread{'s' if args.threads > 1 else ''})"
    print(
        f"{args.env}: tiny GPT-2 ({args.n_layer}x{args.n_embd}) vs random, {args.episodes} episodes, {args.in_flight} in flight, "
        f"{args.rounds} rounds, {timer} time; median [range]"
    )
    print(
        f"{'configuration':<44}{'episodes/s':>22}{'model tokens/s':>28}{'outside model':>22}{'= agent code':>22}{'+ outside agent':>22}"
        f"{'tokens':>9}{'moves':>7}{'errors':>7}"
    )
    for (label, mode), runs_ in rows.items():
        outside, code, rest = ([run[key] * 100 for run in runs_] for key in ("outside_model", "agent_code", "outside_agent"))
        print(
            f"{label + ', ' + mode:<44}{summary([run['episodes_per_s'] for run in runs_]):>22}"
            f"{summary([run['tokens_per_s'] for run in runs_], 0):>28}{summary(outside) + '%':>22}{summary(code) + '%':>22}{summary(rest) + '%':>22}"
            f"{runs_[0]['tokens']:>9}{runs_[0]['moves']:>7}{runs_[0]['errors']:>7}"
        )
    print(f"targets: batched >= {SPEEDUP_TARGET:g}x one at a time; < {OUTSIDE_TARGET:.0%} of wall time outside the model (batched)")
    for config in configs:
        batched, single = rows[(config.label, "batched")], rows[(config.label, "one at a time")]
        ratios = [b["episodes_per_s"] / s["episodes_per_s"] for b, s in zip(batched, single)]
        outside = [b["outside_model"] for b in batched]
        same = batched[0]["tokens"] == single[0]["tokens"] and batched[0]["games"] == single[0]["games"]
        identical = sum(a == b for a, b in zip(batched[0]["games"], single[0]["games"])) / len(batched[0]["games"])
        flags = []
        if statistics.median(ratios) < SPEEDUP_TARGET:
            flags.append(f"MISSED speed-up by {SPEEDUP_TARGET / statistics.median(ratios):.1f}x")
        if statistics.median(outside) >= OUTSIDE_TARGET:
            flags.append(f"MISSED outside-model share ({statistics.median(outside):.0%})")
        if not same:
            flags.append(f"batched and one-at-a-time runs differ in tokens or moves ({identical:.0%} of episodes identical)")
        print(
            f"  {config.label}: speed-up {summary(ratios)}x, outside model (batched) {summary([o * 100 for o in outside])}%"
            f"  {'; '.join(flags) or 'targets met'}"
        )
    labels = [config.label for config in configs]
    for kind in ("score_legal", "generate"):
        if f"{kind}, KV reuse on" in labels and f"{kind}, KV reuse off" in labels:
            on, off = rows[(f"{kind}, KV reuse on", "batched")], rows[(f"{kind}, KV reuse off", "batched")]
            gains = [a["episodes_per_s"] / b["episodes_per_s"] for a, b in zip(on, off)]
            print(f"  {kind}, KV reuse on / off (batched): {summary(gains)}x")


if __name__ == "__main__":
    main()

"""Trainer throughput: learner steps per second of ``parlour train sb3`` and ``parlour train llm``, and where the time goes.

Trains MaskablePPO by self-play (:func:`parlour.baselines.train.sb3.train_sb3`)
for ``--steps`` steps on each ``--env`` with evaluation kept out of the way
(one small evaluation before and after, not counted), and reports:

* ``steps_per_s``: learner environment steps per second of training wall time;
* ``outside_model``: the share of that time spent outside the learner's
  network, in the self-play environments (the game engine, the league's
  opponents and their moves, observation building), as
  :class:`~parlour.baselines.train.sb3.SelfPlayEnv` accounts it; the rest is
  the learner's forward passes while collecting and PPO's updates;
* ``cpu_per_wall``: process CPU seconds per wall second (below 1 when other
  processes share the cores: compare runs only at similar values).

LLM trainer (``--llm``; :class:`parlour.baselines.train.llm.LLMTrainer` in
``score_legal`` mode, REINFORCE, evaluation left out), per environment, as
median [low, high] over the updates measured:

* ``trainer_tokens_per_s``: prompt and move tokens of the learner's decisions
  per second of an update (rollout plus update);
* ``raw_forward_backward_tokens_per_s`` and ``raw_prefill_tokens_per_s``: the
  same model's plain passes (``model(ids, labels=ids).loss.backward()``, and
  ``model(ids)`` under ``inference_mode``) on ``micro_batch`` rows as wide as
  the update's decisions, timed between the updates;
* ``efficiency``: trainer tokens per second over the pipeline limit
  ``1 / (1 / forward_backward + 1 / prefill)`` (each token runs forward in the
  rollout and forward and backward in the update), against the 0.6 target;
* ``outside_model``: the share of the updates' wall time spent outside the
  model, in the rollouts (game engine, league opponents, prompt building and
  tokenisation, the policy's own code).

Time is wall time after waiting for the GPU on CUDA (bf16 there), and this
process's CPU time on a CPU (fp32), where other processes sharing the machine
would otherwise count.

The model is GPT-2 from a config (no download) with a tokenizer trained on the
game's prompts: ``--llm-size tiny`` (2 layers of 64), ``small`` (GPT-2 small's
12 layers of 768) or ``medium`` (GPT-2 medium's 24 layers of 1024, about 300M
parameters), or any local folder with ``--llm-model``; on a GPU when one is there.

    .venv/bin/python benchmarks/trainer_throughput.py [--env parlour/TicTacToe-v0 ...] [--steps 20000]
    .venv/bin/python benchmarks/trainer_throughput.py --llm [--llm-size small] [--updates 4] [--episodes 64]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from parlour.baselines.train.sb3 import SB3TrainConfig, train_sb3

DEFAULT_ENVS = ("parlour/TicTacToe-v0", "parlour/KuhnPoker-v0", "parlour/ConnectFour-v0")


def measure_sb3(env_id: str, steps: int, n_envs: int) -> dict[str, Any]:
    """Train for ``steps`` steps on ``env_id``; the throughput figures of the module docstring."""
    with tempfile.TemporaryDirectory() as out:
        config = SB3TrainConfig(
            env_id=env_id,
            out=Path(out),
            steps=steps,
            n_envs=n_envs,
            eval_every=steps * 10,
            snapshot_every=max(1, steps // 5),
            eval_episodes=2,
            opponents=["random"],
            anchors=["random"],
            progress=False,
        )
        cpu = time.process_time()
        wall = time.perf_counter()
        summary = train_sb3(config)
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
    training = summary["train_seconds"] - summary["eval_seconds"]
    return {
        "env_id": env_id,
        "steps": summary["metadata"]["steps"],
        "train_s": round(training, 2),
        "steps_per_s": round(summary["metadata"]["steps"] / training, 1),
        "outside_model": round(summary["env_seconds"] / training, 3),
        "cpu_per_wall": round(cpu / wall, 2),
    }


#: (n_embd, n_layer, n_head) of the ``--llm-size`` models: GPT-2 small's shape and GPT-2 medium's (about 300M parameters
#: with the benchmark's 1000-token vocabulary).
LLM_SIZES = {"tiny": (64, 2, 2), "small": (768, 12, 12), "medium": (1024, 24, 16)}
#: Trainer tokens per second over the pipeline limit of raw passes, at least (issue 25).
EFFICIENCY_TARGET = 0.6


def _timer(device: Any) -> Any:
    """A clock for ``device``: wall time after waiting for the GPU there, else this process's CPU time (other
    processes on a shared machine then cost nothing)."""
    import torch

    if device.type == "cuda":

        def clock() -> float:
            torch.cuda.synchronize(device)
            return time.perf_counter()

        return clock
    return time.process_time


def raw_passes(model: Any, batch: int, width: int, vocab: int, clock: Any, repeats: int) -> dict[str, float]:
    """Tokens per second of the model's plain forward+backward (``model(ids, labels=ids).loss.backward()``) and of its
    prefill (``model(ids)`` under ``inference_mode``) on random ids of ``batch`` rows of ``width``, after a warm-up."""
    import torch

    device = next(model.parameters()).device
    ids = torch.randint(0, vocab, (batch, width), device=device)
    figures = {}
    for name in ("forward_backward", "prefill"):
        for repeat in range(repeats + 1):
            if repeat == 1:
                started = clock()
            if name == "prefill":
                with torch.inference_mode():
                    model(ids)
            else:
                model(ids, labels=ids).loss.backward()
        figures[name] = batch * width * repeats / (clock() - started)
    model.zero_grad(set_to_none=True)
    return figures


def measure_llm(env_id: str, model: str | None, size: str, updates: int, episodes: int, micro_batch: int, device: str | None) -> dict[str, Any]:
    """The LLM trainer's tokens per second on ``env_id`` beside its model's raw passes on the same shapes, interleaved.

    After one warm-up update, each round times one trainer update (rollout and update), then the raw
    forward+backward and prefill passes of the same model on a batch of ``micro_batch`` rows as wide as the
    update's decisions were on average (prompt and move, rounded up to 16 tokens). A trainer update runs each
    token once forward (the rollout) and once forward and backward (the update), so its limit is
    ``1 / (1 / forward_backward + 1 / prefill)`` tokens per second; ``efficiency`` is the trainer's share of it.
    """
    import torch

    from parlour.baselines.train.llm import LLMTrainConfig, LLMTrainer
    from parlour.wrappers.tiny_model import game_corpus, make_tiny_model

    with tempfile.TemporaryDirectory() as out:
        if model is None:
            n_embd, n_layer, n_head = LLM_SIZES[size]
            folder = make_tiny_model(Path(out) / "model", corpus=game_corpus(env_id), vocab_size=1000, n_embd=n_embd, n_layer=n_layer, n_head=n_head)
        else:
            folder = model
        config = LLMTrainConfig(
            env_id=env_id,
            model=folder,
            out=str(Path(out) / "run"),
            updates=updates,
            episodes=episodes,
            group_size=4,
            learning_rate=1e-4,
            mirror=0.5,
            snapshots=0.0,
            anchors=0.5,
            anchor_agents=["random"],
            micro_batch=micro_batch,
            keep_records=False,
            progress=False,
            device=device,
        )
        trainer = LLMTrainer(config)
        unwrapped = trainer.accelerator.unwrap_model(trainer.model)
        used = next(unwrapped.parameters()).device
        clock = _timer(used)
        trainer.step(0)
        rounds = []
        for update in range(1, updates + 1):
            started = clock()
            (row,) = trainer.step(update)
            seconds = clock() - started
            width = -(-row["tokens"] // (16 * max(1, row["decisions"]))) * 16
            raw = raw_passes(unwrapped, micro_batch, width, unwrapped.config.vocab_size, clock, repeats=3)
            limit = 1 / (1 / raw["forward_backward"] + 1 / raw["prefill"])
            rounds.append({**row, "seconds": seconds, "width": width, **raw, "limit": limit, "trainer": row["tokens"] / seconds})
        parameters = sum(p.numel() for p in unwrapped.parameters())
        dtype = str(next(unwrapped.parameters()).dtype).removeprefix("torch.")

    def spread(key: str) -> list[float]:
        values = [r[key] for r in rounds]
        return [round(statistics.median(values), 1), round(min(values), 1), round(max(values), 1)]

    efficiency = [r["trainer"] / r["limit"] for r in rounds]
    wall = sum(r["rollout_s"] + r["update_s"] for r in rounds)
    return {
        "env_id": env_id,
        "trainer": "llm",
        "model": model or f"gpt2-{size}",
        "parameters": parameters,
        "device": str(used) if used.type == "cpu" else torch.cuda.get_device_name(used),
        "dtype": dtype,
        "clock": "wall" if used.type == "cuda" else "process CPU",
        "updates": updates,
        "episodes_per_update": episodes,
        "micro_batch": micro_batch,
        "turns": sum(r["decisions"] for r in rounds),
        "turns_per_s": round(sum(r["decisions"] for r in rounds) / sum(r["seconds"] for r in rounds), 1),
        "trainer_tokens_per_s": spread("trainer"),
        "raw_shape": [micro_batch, rounds[-1]["width"]],
        "raw_forward_backward_tokens_per_s": spread("forward_backward"),
        "raw_prefill_tokens_per_s": spread("prefill"),
        "pipeline_limit_tokens_per_s": spread("limit"),
        "efficiency": [round(statistics.median(efficiency), 3), round(min(efficiency), 3), round(max(efficiency), 3)],
        "efficiency_target": EFFICIENCY_TARGET,
        "efficiency_met": statistics.median(efficiency) >= EFFICIENCY_TARGET,
        "rollout_share": round(sum(r["rollout_s"] for r in rounds) / wall, 3),
        "outside_model": round(sum(r["rollout_s"] - r["rollout_model_s"] for r in rounds) / wall, 3),
    }


def main() -> None:
    """Measure each environment and print one JSON line per environment."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", action="append", dest="envs", metavar="ENV_ID", help=f"environment (repeatable; default {', '.join(DEFAULT_ENVS)})")
    parser.add_argument("--steps", type=int, default=20_000, help="learner steps per environment (default 20000)")
    parser.add_argument("--n-envs", type=int, default=8, help="environments stepped together (default 8)")
    parser.add_argument("--llm", action="store_true", help="measure the LLM trainer instead (default environment TicTacToe)")
    parser.add_argument("--llm-size", choices=sorted(LLM_SIZES), default="tiny", help="GPT-2 built from a config (default tiny)")
    parser.add_argument("--llm-model", metavar="PATH", help="a local model folder instead of --llm-size")
    parser.add_argument("--updates", type=int, default=4, help="LLM updates measured after one warm-up (default 4)")
    parser.add_argument("--episodes", type=int, default=64, help="LLM episodes per update (default 64)")
    parser.add_argument("--micro-batch", type=int, default=64, help="LLM rows per update pass, and the raw passes' batch (default 64)")
    parser.add_argument("--device", help="LLM device (default: the GPU when there is one)")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1: CPU time is summed over them, and spinning threads on a shared machine inflate it)",
    )
    args = parser.parse_args()
    print(json.dumps({"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}))
    if args.llm:
        import torch

        torch.set_num_threads(args.threads)
        for env_id in args.envs or ["parlour/TicTacToe-v0"]:
            print(
                json.dumps(measure_llm(env_id, args.llm_model, args.llm_size, args.updates, args.episodes, args.micro_batch, args.device)), flush=True
            )
        return
    for env_id in args.envs or DEFAULT_ENVS:
        print(json.dumps(measure_sb3(env_id, args.steps, args.n_envs)), flush=True)


if __name__ == "__main__":
    main()

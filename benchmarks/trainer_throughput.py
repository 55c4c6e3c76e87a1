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
``score_legal`` mode, REINFORCE, evaluation left out), per environment:

* ``turns_per_s``: learner decisions per second of training wall time
  (rollouts plus updates);
* ``tokens_per_s``: prompt and completion tokens of those decisions per second;
* ``outside_model``: the share of that time spent outside the model, in the
  rollouts (game engine, league opponents, prompt building and tokenisation);
  the rest is the model's batched forward passes while acting and the updates.

The model is GPT-2 from a config (no download) with a tokenizer trained on the
game's prompts: ``--llm-size tiny`` (2 layers of 64) or ``small`` (GPT-2 small's
12 layers of 768), or any local folder with ``--llm-model``; on a GPU when one is there.

    .venv/bin/python benchmarks/trainer_throughput.py [--env parlour/TicTacToe-v0 ...] [--steps 20000]
    .venv/bin/python benchmarks/trainer_throughput.py --llm [--llm-size small] [--updates 4] [--episodes 64]
"""

from __future__ import annotations

import argparse
import json
import os
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
            env_id=env_id, out=out, steps=steps, n_envs=n_envs, eval_every=steps * 10, snapshot_every=max(1, steps // 5),
            eval_episodes=2, opponents=["random"], anchors=["random"], progress=False,
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


#: (n_embd, n_layer, n_head) of the ``--llm-size`` models.
LLM_SIZES = {"tiny": (64, 2, 2), "small": (768, 12, 12)}


def measure_llm(env_id: str, model: str | None, size: str, updates: int, episodes: int, device: str | None) -> dict[str, Any]:
    """Train ``updates`` updates of the LLM trainer on ``env_id`` after one warm-up update; the figures of the module docstring."""
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
            env_id=env_id, model=folder, out=str(Path(out) / "run"), updates=updates, episodes=episodes, group_size=4,
            learning_rate=1e-4, mirror=0.5, snapshots=0.0, anchors=0.5, anchor_agents=["random"], micro_batch=64,
            keep_records=False, progress=False, device=device,
        )
        trainer = LLMTrainer(config)
        trainer.step(0)
        rows = [trainer.step(update) for update in range(1, updates + 1)]
        parameters = sum(p.numel() for p in trainer.model.parameters())
        used = str(next(trainer.model.parameters()).device)
    wall = sum(row["rollout_s"] + row["update_s"] for row in rows)
    rollout = sum(row["rollout_s"] for row in rows)
    return {
        "env_id": env_id,
        "trainer": "llm",
        "model": model or f"gpt2-{size}",
        "parameters": parameters,
        "device": used if used == "cpu" else torch.cuda.get_device_name(),
        "updates": updates,
        "episodes_per_update": episodes,
        "turns": sum(row["decisions"] for row in rows),
        "train_s": round(wall, 2),
        "turns_per_s": round(sum(row["decisions"] for row in rows) / wall, 1),
        "tokens_per_s": round(sum(row["tokens"] for row in rows) / wall, 1),
        "rollout_share": round(rollout / wall, 3),
        "outside_model": round(sum(row["rollout_s"] - row["rollout_model_s"] for row in rows) / wall, 3),
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
    parser.add_argument("--device", help="LLM device (default: the GPU when there is one)")
    args = parser.parse_args()
    print(json.dumps({"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}))
    if args.llm:
        for env_id in args.envs or ["parlour/TicTacToe-v0"]:
            print(json.dumps(measure_llm(env_id, args.llm_model, args.llm_size, args.updates, args.episodes, args.device)), flush=True)
        return
    for env_id in args.envs or DEFAULT_ENVS:
        print(json.dumps(measure_sb3(env_id, args.steps, args.n_envs)), flush=True)


if __name__ == "__main__":
    main()

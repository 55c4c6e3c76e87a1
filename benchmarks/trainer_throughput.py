"""Trainer throughput: learner steps per second of ``parlour train sb3`` and where the time goes.

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

    .venv/bin/python benchmarks/trainer_throughput.py [--env parlour/TicTacToe-v0 ...] [--steps 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
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


def main() -> None:
    """Measure each environment and print one JSON line per environment."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", action="append", dest="envs", metavar="ENV_ID", help=f"environment (repeatable; default {', '.join(DEFAULT_ENVS)})")
    parser.add_argument("--steps", type=int, default=20_000, help="learner steps per environment (default 20000)")
    parser.add_argument("--n-envs", type=int, default=8, help="environments stepped together (default 8)")
    args = parser.parse_args()
    print(json.dumps({"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()]}))
    for env_id in args.envs or DEFAULT_ENVS:
        print(json.dumps(measure_sb3(env_id, args.steps, args.n_envs)), flush=True)


if __name__ == "__main__":
    main()

"""The ``ppo`` agents: small MaskablePPO policies trained by ``parlour train sb3``, shipped with parlour.

``baselines/policies/<Env>.zip`` holds the policy of ``parlour/<Env>-v<N>``
and ``<Env>.json`` beside it how it was made: the exact command, the seed,
the steps, the training time and machine, and its final evaluation. Each is
registered as the scripted agent ``ppo`` of its environment, so it plays in
``parlour demo``'s round-robin and on the leaderboard next to the hand-written
agents; the leaderboard re-runs it from its recorded seeds like any other
built-in agent (it samples from its policy with a generator reseeded every
episode, or plays greedily where its metadata says ``deterministic``).

The agents are registered only when stable-baselines3 and sb3-contrib are
installed (the ``sb3`` extra); a policy is loaded on first use and shared by
every copy. To retrain one, run the command in its ``.json``.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from parlour.baselines import register_scripted

#: Where the shipped policies are (package data).
POLICIES = Path(__file__).with_name("policies")


def shipped_policies() -> dict[str, Path]:
    """Environment id -> the shipped policy ``.zip`` for it."""
    found = {}
    for meta in sorted(POLICIES.glob("*.json")):
        policy = meta.with_suffix(".zip")
        if policy.exists():
            found[json.loads(meta.read_text(encoding="utf-8"))["env_id"]] = policy
    return found


def _factory(policy: Path):
    def make(env_id: str, **kwargs: Any) -> Any:
        from parlour.baselines.sb3_agent import load_agent

        return load_agent(f"sb3:{policy}", env_id=env_id, name="ppo", **kwargs)

    return make


if importlib.util.find_spec("sb3_contrib") is not None:
    for _env_id, _policy in shipped_policies().items():
        register_scripted("ppo", _env_id, _factory(_policy))

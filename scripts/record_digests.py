"""Digests of seeded episodes of every registered game, to show that an engine change keeps every record the same.

For each environment, each line-up of its reference agents (seated as the leaderboard's demo seats them,
:func:`parlour.evaluation.seating.lineups`) plays ``--episodes`` seeded episodes through :func:`parlour.evaluate`;
the digest of an episode is the sha256 of its record as canonical JSON. Each record's actions are then played
again through the PettingZoo AEC face and, where the face can take them in the recorded order, the Parallel
face: their digests cover every observation (rendered text and typed messages), info, reward, termination and
truncation the face gave, and the face's own record.

Save the digests before a change and compare after it::

    .venv/bin/python scripts/record_digests.py --save /tmp/digests.json
    .venv/bin/python scripts/record_digests.py --check /tmp/digests.json

``--check`` prints each digest that differs (or is missing on one side) and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
import warnings
from typing import Any

import parlour
from parlour.envs.core.agent import AgentFailure
from parlour.envs.core.match import make_game
from parlour.envs.registry import game_class, list_envs
from parlour.evaluation.seating import lineups


def canonical(value: Any) -> str:
    """``value`` as canonical JSON: keys sorted, anything JSON cannot hold (an array, a set) as its ``repr``."""
    return json.dumps(value, sort_keys=True, default=repr)


def digest(value: Any) -> str:
    """The sha256 of ``value``'s canonical JSON."""
    return hashlib.sha256(canonical(value).encode("utf-8", "surrogatepass")).hexdigest()


def recorded_action(step: dict[str, Any]) -> Any:
    """The action a record's step played: its text or index, or the agent failure it stands for (as replay reads it)."""
    return AgentFailure(str(step["failure"]), bool(step.get("forfeit"))) if "failure" in step else step["action"]


def aec_digest(record: dict[str, Any]) -> str:
    """The record's actions played through the AEC face: a digest of everything the face gave, then of its record."""
    env = parlour.make_aec(record["env_id"], **record["options"])
    env.reset(seed=record["seed"])
    seen: list[Any] = []
    steps = iter(record["steps"])
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        seen.append([agent, observation, reward, termination, truncation, info])
        if termination or truncation:
            env.step(None)
            continue
        step = next(steps, None)
        if step is None:  # an episode the record leaves unfinished
            break
        env.match.recorded_outputs = [call.get("output") for call in step.get("calls") or []]
        env.step(recorded_action(step))
    seen.append(env.infos)
    seen.append(env.record(record.get("agents")))
    return digest(seen)


def parallel_digest(record: dict[str, Any]) -> str | None:
    """The record's actions played through the Parallel face (``None`` where it cannot take them in the recorded order).

    A Parallel step submits one action per acting agent, in acting order; a record whose steps do not come in
    those groups (an invalid action in a simultaneous step, say, then a teammate's move), or that needs a tool's
    recorded answer played back, is left to the AEC face.
    """
    steps = record["steps"]
    if any("output" in call for step in steps for call in step.get("calls") or []):
        return None
    env = parlour.make_parallel(record["env_id"], **record["options"])
    seen: list[Any] = [env.reset(seed=record["seed"])]
    index = 0
    while env.agents and index < len(steps):
        acting = list(env.match.acting())
        group = steps[index : index + len(acting)]
        if [step["player"] for step in group] != acting:
            return None
        index += len(group)
        seen.append(env.step({step["player"]: recorded_action(step) for step in group}))
    seen.append(env.record(record.get("agents")))
    return digest(seen)


def fuzz_digest(env_id: str, seed: int) -> str | None:
    """A seeded AEC episode of legal moves mixed with malformed and illegal ones (invalid actions, forfeits).

    ``None`` for a game whose moves cannot be enumerated, where a random legal move cannot be drawn.
    """
    env = parlour.make_aec(env_id)
    env.reset(seed=seed)
    if env.match.game.moves is None:
        return None
    rng = random.Random(seed)
    seen: list[Any] = []
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        seen.append([agent, observation, reward, termination, truncation, info])
        if termination or truncation:
            env.step(None)
            continue
        draw = rng.random()
        illegal = [move for move in env.match.game.moves if move not in info["legal_moves"]]
        if draw < 0.1:
            action: Any = "no move here"
        elif draw < 0.2 and illegal:
            action = rng.choice(illegal)
        elif draw < 0.25:
            action = 3.5
        else:
            action = rng.choice(info["legal_moves"])
        env.step(action)
    seen.append(env.infos)
    seen.append(env.record())
    return digest(seen)


def evaluated(env_ids: list[str], episodes: int) -> dict[str, dict[str, Any]]:
    """Seeded episodes of each environment's reference line-ups through :func:`parlour.evaluate`, keyed by line-up and episode."""
    records: dict[str, dict[str, Any]] = {}
    for env_id in env_ids:
        game_cls = game_class(env_id)
        players = list(make_game(game_cls, {}).players)
        for lineup in lineups(env_id, sorted(game_cls.reference_agents)):
            run = parlour.evaluate(env_id, lineup.spec(players), episodes=episodes, seed=0, progress=False)
            for record in run.records:
                records[f"{env_id} {lineup.label} {record['episode']}"] = record
    return records


def face_digests(records: dict[str, dict[str, Any]], env_ids: list[str], fuzzed: int) -> dict[str, str]:
    """The digests of the given records played through the engine and both faces, and of ``fuzzed`` fuzzed episodes a game."""
    out: dict[str, str] = {}
    for key, record in records.items():
        out[f"{key} replay"] = digest(parlour.replay(record))
        out[f"{key} aec"] = aec_digest(record)
        parallel = parallel_digest(record)
        if parallel is not None:
            out[f"{key} parallel"] = parallel
    for env_id in env_ids:
        for seed in range(fuzzed):
            fuzz = fuzz_digest(env_id, seed)
            if fuzz is not None:
                out[f"{env_id} fuzz {seed} aec"] = fuzz
    return out


def main() -> int:
    """Save the records and digests to a file, or compare with a saved one (its records played again)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--save", metavar="FILE", help="write the records and digests to FILE")
    action.add_argument("--check", metavar="FILE", help="compare with the digests saved in FILE")
    parser.add_argument("--episodes", type=int, default=10, help="evaluated episodes per line-up (default 10)")
    parser.add_argument("--fuzzed", type=int, default=10, help="fuzzed AEC episodes per game (default 10)")
    parser.add_argument("--envs", help="comma-separated environment ids (default: every registered one)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    env_ids = args.envs.split(",") if args.envs else list_envs()
    started = time.process_time()
    records = evaluated(env_ids, args.episodes)
    found = {f"{key} evaluate": digest(record) for key, record in records.items()}
    if args.save:
        found.update(face_digests(records, env_ids, args.fuzzed))
        with open(args.save, "w", encoding="utf-8") as file:
            json.dump({"records": records, "digests": found}, file, sort_keys=True)
        print(f"{len(found)} digests saved to {args.save} ({time.process_time() - started:.0f}s CPU)")
        return 0
    with open(args.check, encoding="utf-8") as file:
        saved = json.load(file)
    # The saved records are played again, so that a change elsewhere (an agent, the seating) that changes what
    # evaluate plays shows as an "evaluate" difference alone, not as one of every face.
    kept = {key: record for key, record in saved["records"].items() if key.split(" ", 1)[0] in env_ids}
    found.update(face_digests(kept, env_ids, args.fuzzed))
    before = {key: value for key, value in saved["digests"].items() if key.split(" ", 1)[0] in env_ids}
    differ = sorted(key for key in before.keys() | found.keys() if before.get(key) != found.get(key))
    for key in differ:
        print(f"DIFFERS {key}: saved {before.get(key, 'missing')}, now {found.get(key, 'missing')}")
    print(f"{len(found)} digests, {len(differ)} differ ({time.process_time() - started:.0f}s CPU)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

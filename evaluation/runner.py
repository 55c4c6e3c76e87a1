"""The evaluation runner: :func:`evaluate` plays many episodes of an environment between agents and keeps the bundle.

The episodes are played by :mod:`parlour.evaluation.rollout` (the batched scheduler; its
docstring gives the seating, seed and batching rules, which the leaderboard
recomputes for every submitted episode); this module adds what an evaluation
needs around it: arguments checked first, worker processes, the progress bar,
the bundle and its resume.

Bundles and resume. With ``out=DIR`` every finished episode is appended to
``DIR/episodes.jsonl`` at once; rerunning the same evaluation with the same
``out`` skips the episode indices already there (a larger ``episodes`` extends
the run), and ``summary.json`` is written at the end (see
:mod:`parlour.evaluation.results`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from parlour.envs.registry import game_class
from parlour.evaluation.results import EPISODES_FILE, RUN_KEYS, SUMMARY_FILE, Metadata, Results, merge_stats, read_records, write_json
from parlour.evaluation.rollout import Plan, Rollout, agent_names, default_lineup, make_plan, play_in_workers, play_on_ray, seat_order
from parlour.version import __version__

if TYPE_CHECKING:
    from parlour.envs.core.record import Record

# The seating rules live in parlour.evaluation.rollout; the leaderboard's verifier imports them from here too.
__all__ = ["Plan", "Rollout", "agent_names", "default_lineup", "evaluate", "seat_order"]


def _resume(out: Path, meta: Metadata) -> tuple[list[Record], dict[str, Any]]:
    """The records already in bundle ``out`` and its stats, after checking that it holds the same run.

    Records of episodes an agent could not play through (an :class:`~parlour.envs.core.agent.AgentFailure`
    in a step) are dropped, so the resumed run plays them again.
    """
    summary_path = out / SUMMARY_FILE
    episodes_path = out / EPISODES_FILE
    if not summary_path.exists():
        if episodes_path.exists():
            raise ValueError(f"{out} has {EPISODES_FILE} but no {SUMMARY_FILE}: it is not a parlour bundle; choose another out")
        return [], {}
    previous = json.loads(summary_path.read_text(encoding="utf-8"))
    for key in RUN_KEYS:
        if previous.get(key) != meta[key]:
            raise ValueError(
                f"{out} holds another evaluation ({key} {previous.get(key)!r}, now {meta[key]!r}); choose another out directory to start a new one"
            )
    # Episodes in which an agent could not decide (its backend failed) are played again.
    records = [r for r in read_records(episodes_path) if not any("failure" in step for step in r["steps"])]
    beyond = [r["episode"] for r in records if r["episode"] >= meta["episodes"]]
    if beyond:
        raise ValueError(f"{out} already holds episode {max(beyond)}, beyond the {meta['episodes']} asked for")
    # Rewrite without a line cut short by the interruption, so appended records start on a line of their own.
    with episodes_path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    return records, dict(previous.get("stats") or {})


def evaluate(
    env_id: str,
    agents: Any,
    episodes: int = 100,
    seed: int = 0,
    rotate_seats: bool = True,
    env_kwargs: dict[str, Any] | None = None,
    workers: int = 1,
    in_flight: int = 32,
    out: str | os.PathLike[str] | None = None,
    progress: bool = True,
    challenge: str | dict[str, Any] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> Results:
    """Play ``episodes`` episodes of ``env_id`` between ``agents`` and summarise them.

    Args:
        env_id: a registered environment, e.g. ``"parlour/TicTacToe-v0"``.
        agents: a list of agents (spec strings such as ``"random"``, ``"minimax"``,
            ``"hf:PATH"``, or objects with ``act``), one agent, or a dict
            ``{seat: agent}`` for a fixed seating; see the module docstring for
            seating with fewer agents than seats.
        episodes: how many episodes to play (indices ``0 .. episodes-1``).
        seed: the base seed; every game and agent seed derives from it and the episode index.
        rotate_seats: rotate the line-up with the episode index so every agent plays every seat.
        env_kwargs: the game's options.
        workers: processes that play a share of the episodes each (CPU-bound agents and games);
            one process plays them all where workers would not pay off (see :mod:`parlour.evaluation.rollout`).
        in_flight: episodes played at once in each process; each agent is asked once per step for all of them.
        out: a bundle directory: finished episodes are appended as they end, a rerun resumes, the summary is written at the end.
        progress: show a progress bar (episodes done, rate, ETA).
        challenge: play a leaderboard's challenge (see :mod:`parlour.evaluation.challenges`): the
            leaderboard's URL (a challenge is asked for with ``$PARLOUR_TOKEN``, ``episodes`` as a
            wish) or a challenge it issued; its episode count and the seed derived from its nonce
            replace ``episodes`` and ``seed``, and the bundle names it, so that it counts.
        executor: ``"local"`` (this process, or ``workers`` processes) or ``"ray"``: the episodes
            are spread over a Ray cluster, every CPU of every node playing (an LLM agent is
            loaded once per node; see :func:`parlour.evaluation.rollout.play_on_ray`);
            ``workers`` is then unused.
        ray_address: the Ray cluster to join with ``executor="ray"``: the head's ``"HOST:PORT"``, or
            ``"auto"`` for the cluster started on this machine with ``ray start`` (default:
            ``$RAY_ADDRESS``, else a new local instance on loopback).

    Returns:
        :class:`Results` with the records sorted by episode index.
    """
    if not isinstance(episodes, int) or episodes < 0:
        raise ValueError(f"episodes must be a non-negative int, got {episodes!r}")
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    if executor not in ("local", "ray"):
        raise ValueError(f"executor must be 'local' or 'ray', got {executor!r}")
    plan = make_plan(env_id, agents, env_kwargs, seed, rotate_seats, in_flight)
    if plan.rotate_seats and game_class(env_id).fixed_roles and len(plan.names) > 1:
        # Refused before any episode: rotation would seat, say, a judge as a debater and fail mid-run.
        raise ValueError(
            f"{env_id} has fixed roles (seats {', '.join(plan.players)}): rotating seats would put an agent in a role it "
            "was not built for. Give the agents in seat order without rotation: --no-rotate on the command line, "
            "rotate_seats=False in parlour.evaluate (or a dict {seat: agent})"
        )
    issued = None
    if challenge is not None:
        from parlour.evaluation.challenges import challenge_seed, resolve_challenge

        if env_kwargs:
            raise ValueError("a challenge is played with the environment's default options")
        issued = resolve_challenge(challenge, env_id, plan.names, episodes, plan.lineup, plan.rotate_seats)
        plan.seed = seed = challenge_seed(issued["nonce"])
        episodes = int(issued["episodes"])
    results = Results(
        env_id=env_id,
        env_version=game_class(env_id).version,
        agents=list(plan.names),
        seed=seed,
        episodes=episodes,
        env_kwargs=dict(plan.env_kwargs),
        records=[],
        rotate_seats=plan.rotate_seats,
        parlour_version=__version__,
        challenge=None if issued is None else {"id": issued["id"], "nonce": issued["nonce"]},
        lineup=None if plan.lineup == default_lineup(len(plan.names), len(plan.players)) else list(plan.lineup),
    )
    totals: list[dict[str, Any]] = [{} for _ in plan.names]
    handle = None
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        results.records, previous_stats = _resume(out, results.metadata())
        for total, name in zip(totals, plan.names):
            merge_stats(total, previous_stats.get(name))
        write_json(out / SUMMARY_FILE, {**results.metadata(), "stats": previous_stats})
        handle = (out / EPISODES_FILE).open("a", encoding="utf-8")
    done = {record["episode"] for record in results.records}
    pending = [index for index in range(episodes) if index not in done]
    bar = tqdm(total=episodes, initial=episodes - len(pending), unit="episode", disable=not progress, desc=env_id)
    rollout: Rollout | None = None
    try:
        if not pending:
            stream: Iterator[Record] = iter(())
        elif executor == "ray":
            stream = play_on_ray(plan, pending, ray_address, totals)
        elif workers == 1 or len(pending) == 1:
            rollout = Rollout(plan)
            stream = rollout.run(pending)
        else:
            stream = play_in_workers(plan, pending, workers, totals)
        for record in stream:
            results.records.append(record)
            if handle is not None:
                handle.write(json.dumps(record) + "\n")
                handle.flush()
            bar.update(1)
        if rollout is not None:
            for total, stats in zip(totals, rollout.agent_stats()):
                merge_stats(total, stats)
    finally:
        bar.close()
        if handle is not None:
            handle.close()
    results.records.sort(key=lambda record: record["episode"])
    results.stats = dict(zip(plan.names, totals))
    if out is not None:
        results.save_summary(out)
    return results

"""The evaluation runner: :func:`evaluate` plays many episodes of an environment between agents.

Scheduling. One process keeps up to ``in_flight`` episodes going at once. At
each step it collects every pending decision and groups them by agent. Agents
without ``act_batch`` (cheap scripted ones) move first, until every episode
waits on a batching agent; then each batching agent is asked once for all its
pending decisions through ``act_batch`` (an LLM agent turns that into one
batched generate call, an HTTP agent into overlapping requests). With
``workers=K`` the episodes are shared out to K processes, each running its share
this way; agents are rebuilt there from their spec strings, or sent pickled.

Seating. ``agents`` is a list. With as many agents as seats, seats rotate with
the episode index (episode i puts agent j in seat (i + j) mod n), so over a
multiple of n episodes every agent plays every seat equally often. With fewer
agents than seats, the last agent fills the remaining seats: ``[a, b]`` in a
four-player game is the line-up ``a, b, b, b``, rotated the same way; so
``agents[0]`` is the one evaluated against the field, and a single agent plays
itself. ``rotate_seats=False`` keeps the line-up in seat order for every
episode. A dict ``{seat: agent}`` fixes the seating instead (equal specs share
one agent).

Seeds and determinism. Episode i uses the seeds of
``SeedSequence(seed, spawn_key=(0, i))``: one for the game and one per seat for
the agent in it. Agents without ``act_batch`` (scripted agents) get their own
copy for each seat of each episode (``copy.deepcopy`` of the built agent, then
``reset(seed=seat seed)``), so an episode depends only on the base seed and its
index, never on the episodes beside it, the number of workers, or a resume.
Agents with ``act_batch`` are shared by every episode of a process: they key
per-episode state on ``observation["episode"]`` (the runner puts the episode
index there), are reset once per process, and are told ``forget(episode)``
when an episode ends if they have that method (LLM agents drop its conversation).

Bundles and resume. With ``out=DIR`` every finished episode is appended to
``DIR/episodes.jsonl`` at once; rerunning the same evaluation with the same
``out`` skips the episode indices already there (a larger ``episodes`` extends
the run), and ``summary.json`` is written at the end (see
:mod:`parlour.leaderboard.results`).
"""

from __future__ import annotations

import copy
import importlib
import json
import multiprocessing
import os
import pickle
import queue
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from parlour.agents import agent_name, make_agent
from parlour.envs.core.agent import act_batch, reset_agent
from parlour.envs.core.match import Match, make_game
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class, list_envs, register
from parlour.leaderboard.results import EPISODES_FILE, RUN_KEYS, SUMMARY_FILE, Results, merge_stats, read_records, write_json


# The seating and seed rules are pure functions of the run's settings and the episode index, so that the
# leaderboard can recompute them for every submitted episode and refuse chosen seeds or seats.


def agent_names(names: Sequence[str]) -> list[str]:
    """The run's agent names from the agents' own ``names``: a repeated name gets ``" #2"``, ``" #3"``, ... appended."""
    unique: list[str] = []
    for name in names:
        count = sum(1 for known in unique if known == name or known.startswith(name + " #"))
        unique.append(name if count == 0 else f"{name} #{count + 1}")
    return unique


def default_lineup(n_agents: int, n_seats: int) -> list[int]:
    """The agent number in each seat before rotation: agents in order, the last one filling the remaining seats."""
    return list(range(n_agents)) + [n_agents - 1] * (n_seats - n_agents)


def seat_order(lineup: Sequence[int], episode: int, rotate: bool) -> list[int]:
    """The agent number in each seat of ``episode``: ``lineup`` shifted right by the episode index if ``rotate``."""
    if not rotate:
        return list(lineup)
    shift = episode % len(lineup)
    return list(lineup[-shift:]) + list(lineup[:-shift]) if shift else list(lineup)


@dataclass
class Plan:
    """Everything a process needs to play its share of an evaluation (picklable, for worker processes)."""

    env_id: str
    env_kwargs: dict[str, Any]
    specs: list[Any]
    names: list[str]
    players: list[str]
    #: Agent number per seat before rotation.
    lineup: list[int]
    seed: int
    rotate_seats: bool
    in_flight: int
    #: ``(module, qualified name)`` of the game class, so a worker process can register a user's game too.
    game_ref: tuple[str, str]

    def seating(self, episode: int) -> list[int]:
        """The agent number in each seat of ``episode``."""
        return seat_order(self.lineup, episode, self.rotate_seats)

    def seeds(self, episode: int) -> tuple[int, list[int]]:
        """The game's seed and each seat's agent seed for ``episode``."""
        return episode_seeds(self.seed, episode, len(self.players))

    def shared_seed(self, share: int) -> int:
        """The seed that resets the shared (batching) agents of worker ``share``."""
        return int(np.random.SeedSequence(self.seed, spawn_key=(1, share)).generate_state(1, np.uint64)[0] >> 1)


@dataclass
class _Episode:
    """One episode in flight: its match, the agent object and number in each seat, and the seeds of per-seat agents."""

    index: int
    match: Match
    agents: dict[str, Any]
    numbers: dict[str, int]
    seeds: dict[str, int] = field(default_factory=dict)


class Rollout:
    """Plays episodes of a :class:`Plan` in one process, many in flight, one grouped call per agent per step."""

    def __init__(self, plan: Plan, share: int = 0):
        self.plan = plan
        self.game_cls = game_class(plan.env_id)
        self.agents = [make_agent(spec, env_id=plan.env_id) for spec in plan.specs]
        self.shared = [hasattr(agent, "act_batch") for agent in self.agents]
        for agent, shared in zip(self.agents, self.shared):
            if shared:
                reset_agent(agent, plan.shared_seed(share))
        self.stats: list[dict[str, Any]] = [{"decisions": 0, "act_calls": 0, "act_seconds": 0.0} for _ in self.agents]

    def _start(self, index: int) -> _Episode:
        plan = self.plan
        match = Match(self.game_cls, plan.env_kwargs)
        game_seed, seat_seeds = plan.seeds(index)
        match.reset(game_seed)
        episode = _Episode(index, match, agents={}, numbers={})
        for player, number, seat_seed in zip(plan.players, plan.seating(index), seat_seeds):
            agent = self.agents[number]
            if not self.shared[number]:
                agent = copy.deepcopy(agent)
                reset_agent(agent, seat_seed)
                episode.seeds[player] = seat_seed
            episode.agents[player] = agent
            episode.numbers[player] = number
        return episode

    def _finish(self, episode: _Episode) -> dict[str, Any]:
        for player, agent in episode.agents.items():
            if not self.shared[episode.numbers[player]]:
                merge_stats(self.stats[episode.numbers[player]], _agent_stats(agent))
            elif hasattr(agent, "forget"):
                agent.forget(episode.index)
        record = episode.match.record(agents={player: self.plan.names[n] for player, n in episode.numbers.items()})
        record["episode"] = episode.index
        # The leaderboard re-runs scripted agents from these seeds to check that a seat named after one was it.
        record["agent_seeds"] = dict(episode.seeds)
        return record

    def run(self, indices: Sequence[int]) -> Iterator[dict[str, Any]]:
        """Play the episodes ``indices``, yielding each record as its episode ends (not in index order).

        Agents without ``act_batch`` move first, as long as any episode waits on
        one; then each batching agent is asked once for every episode waiting on
        it, so its batches hold all the episodes in flight where it is to act.
        """
        waiting = iter(indices)
        live: list[_Episode] = []
        while True:
            while len(live) < self.plan.in_flight and (index := next(waiting, None)) is not None:
                live.append(self._start(index))
            if not live:
                break
            groups = self._decisions(live)
            if not groups and not any(episode.match.over for episode in live):
                raise RuntimeError(f"{self.plan.env_id}: an unfinished episode has nobody to act")
            unbatched = [group for group in groups if not self.shared[group[1]]]
            for agent, number, decisions in unbatched or groups:
                started = time.perf_counter()
                actions = act_batch(agent, [observation for _, _, observation in decisions])
                stats = self.stats[number]
                stats["act_seconds"] += time.perf_counter() - started
                stats["act_calls"] += 1
                stats["decisions"] += len(decisions)
                for (episode, player, _), action in zip(decisions, actions):
                    # A forfeit earlier in a simultaneous step ends the game before the others' moves count.
                    if not episode.match.over:
                        episode.match.submit(player, action)
            running = []
            for episode in live:
                if episode.match.over:
                    yield self._finish(episode)
                else:
                    running.append(episode)
            live = running

    @staticmethod
    def _decisions(live: list[_Episode]) -> list[tuple[Any, int, list[tuple[_Episode, str, dict[str, Any]]]]]:
        """The pending decisions of the episodes in flight, grouped by agent object: (agent, number, decisions)."""
        groups: dict[int, tuple[Any, int, list[tuple[_Episode, str, dict[str, Any]]]]] = {}
        for episode in live:
            for player in episode.match.acting():
                observation = episode.match.agent_observation(player)
                observation["episode"] = episode.index
                agent = episode.agents[player]
                groups.setdefault(id(agent), (agent, episode.numbers[player], []))[2].append((episode, player, observation))
        return list(groups.values())

    def agent_stats(self) -> list[dict[str, Any]]:
        """Per agent number: the runner's accounting plus the shared agents' own (copies are added as they finish)."""
        totals = [dict(stats) for stats in self.stats]
        for total, agent, shared in zip(totals, self.agents, self.shared):
            if shared:
                merge_stats(total, _agent_stats(agent))
        return totals


def _agent_stats(agent: Any) -> dict[str, Any] | None:
    """An agent's own accounting: its ``stats`` attribute, or what its ``stats()`` method returns."""
    stats = getattr(agent, "stats", None)
    if callable(stats):
        stats = stats()
    return stats if isinstance(stats, dict) else None


def ensure_registered(env_id: str, game_ref: tuple[str, str]) -> None:
    """Register the game behind ``env_id`` in this process from its class reference, if importing parlour did not.

    A user's game registered with ``parlour.register`` in the parent process is
    unknown to a fresh worker process until its module is imported.
    """
    if env_id in list_envs():
        return
    module_name, qualname = game_ref
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = getattr(target, part)
    if env_id not in list_envs():
        register(target)


def _work(plan: Plan, share: int, indices: list[int], messages: Any) -> None:
    """A worker process: play ``indices`` and send ("record", r) per episode, then ("stats", s), or ("error", text)."""
    try:
        ensure_registered(plan.env_id, plan.game_ref)
        rollout = Rollout(plan, share)
        for record in rollout.run(indices):
            messages.put(("record", record))
        messages.put(("stats", rollout.agent_stats()))
    except BaseException:
        messages.put(("error", traceback.format_exc()))


def _parallel(plan: Plan, indices: list[int], workers: int, totals: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Play ``indices`` in ``workers`` spawned processes, yielding records as they arrive."""
    for spec, name in zip(plan.specs, plan.names):
        if not isinstance(spec, str):
            try:
                pickle.dumps(spec)
            except Exception as error:
                raise TypeError(
                    f"agent {name!r} cannot be sent to worker processes ({error}); give it as a spec string "
                    "such as 'python:package.module:factory', make it picklable, or use workers=1"
                ) from None
    context = multiprocessing.get_context("spawn")
    messages = context.Queue()
    processes = [
        context.Process(target=_work, args=(plan, share, indices[share::workers], messages), daemon=True)
        for share in range(workers)
        if indices[share::workers]
    ]
    for process in processes:
        process.start()
    finished = 0
    try:
        while finished < len(processes):
            try:
                kind, payload = messages.get(timeout=1.0)
            except queue.Empty:
                if any(process.exitcode not in (None, 0) for process in processes):
                    raise RuntimeError("an evaluation worker process died; see its output above") from None
                continue
            if kind == "record":
                yield payload
            elif kind == "stats":
                finished += 1
                for total, stats in zip(totals, payload):
                    merge_stats(total, stats)
            else:
                raise RuntimeError(f"an evaluation worker failed:\n{payload}")
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join()


def _plan(
    env_id: str,
    agents: Any,
    env_kwargs: dict[str, Any],
    seed: int,
    rotate_seats: bool,
    in_flight: int,
) -> Plan:
    """Resolve the seating rule into a :class:`Plan`; errors name the fix."""
    try:
        # In JSON form from the start, as records and bundles hold them, so a resumed run plays the same options.
        env_kwargs = json.loads(json.dumps(env_kwargs))
    except TypeError as error:
        raise TypeError(f"env_kwargs must be JSON values, since every record stores them: {error}") from None
    game_cls = game_class(env_id)
    players = list(make_game(game_cls, dict(env_kwargs)).players)
    if isinstance(agents, Mapping):
        unknown = sorted(set(agents) - set(players))
        missing = [p for p in players if p not in agents]
        if unknown or missing:
            raise ValueError(f"agents dict must name every seat of {env_id} {players}; unknown {unknown}, missing {missing}")
        specs: list[Any] = []
        lineup = []
        for player in players:
            spec = agents[player]
            same = [j for j, known in enumerate(specs) if known is spec or (isinstance(spec, str) and known == spec)]
            if not same:
                specs.append(spec)
            lineup.append(same[0] if same else len(specs) - 1)
        rotate_seats = False
    else:
        specs = [agents] if isinstance(agents, str) or hasattr(agents, "act") else list(agents)
        if not specs:
            raise ValueError("evaluate needs at least one agent")
        if len(specs) > len(players):
            raise ValueError(f"{env_id} has {len(players)} seats {players}, but {len(specs)} agents were given")
        lineup = default_lineup(len(specs), len(players))
    names = agent_names([agent_name(spec) for spec in specs])
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if in_flight < 1:
        raise ValueError(f"in_flight must be at least 1, got {in_flight}")
    game_ref = (game_cls.__module__, game_cls.__qualname__)
    return Plan(env_id, dict(env_kwargs), specs, names, players, lineup, seed, rotate_seats, in_flight, game_ref)


def _resume(out: Path, meta: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The records already in bundle ``out`` and its stats, after checking that it holds the same run."""
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
                f"{out} holds another evaluation ({key} {previous.get(key)!r}, now {meta[key]!r}); "
                "choose another out directory to start a new one"
            )
    records = read_records(episodes_path)
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
        workers: processes that play a share of the episodes each (CPU-bound agents and games).
        in_flight: episodes played at once in each process; each agent is asked once per step for all of them.
        out: a bundle directory: finished episodes are appended as they end, a rerun resumes, the summary is written at the end.
        progress: show a progress bar (episodes done, rate, ETA).

    Returns:
        :class:`Results` with the records sorted by episode index.
    """
    import parlour

    if not isinstance(episodes, int) or episodes < 0:
        raise ValueError(f"episodes must be a non-negative int, got {episodes!r}")
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    plan = _plan(env_id, agents, dict(env_kwargs or {}), seed, rotate_seats, in_flight)
    results = Results(
        env_id=env_id,
        env_version=game_class(env_id).version,
        agents=list(plan.names),
        seed=seed,
        episodes=episodes,
        env_kwargs=dict(plan.env_kwargs),
        records=[],
        rotate_seats=plan.rotate_seats,
        parlour_version=parlour.__version__,
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
            stream: Iterator[dict[str, Any]] = iter(())
        elif workers == 1 or len(pending) == 1:
            rollout = Rollout(plan)
            stream = rollout.run(pending)
        else:
            stream = _parallel(plan, pending, workers, totals)
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

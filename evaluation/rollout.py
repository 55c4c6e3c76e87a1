"""Rollouts: many episodes of an environment in flight, one grouped call per agent per step.

This is the scheduler behind :func:`parlour.evaluate` and the trainers.

Scheduling. One process keeps up to ``in_flight`` episodes going at once. At
each step it collects every pending decision and groups them by agent. Agents
without ``act_batch`` (cheap scripted ones) move first, until every episode
waits on a batching agent; then each batching agent is asked once for all its
pending decisions through ``act_batch`` (an LLM agent turns that into one
batched generate call, an HTTP agent into overlapping requests). With several
worker processes (:func:`play_in_workers`) the episodes are shared out, each
process running its share this way; agents are rebuilt there from their spec
strings, or sent pickled, and records come back in lists, not one by one.

When workers pay off. A spawned worker re-imports parlour and builds its
agents before it plays, and more processes than cores only take turns, so
:func:`play_in_workers` first plays in its own process when every agent is a
per-episode copy (scripted agents, whose records do not depend on where they
are played). After :data:`PROBE_SECONDS`, and after every episode from then
on, :func:`workers_to_spawn` predicts from the wall and CPU time per
episode so far whether ``min(workers, cores)`` workers (the cores this
process may run on) would finish the rest in clearly less wall time than
this process alone, counting their start (:data:`WORKER_START_S` to import,
plus what building the agents took here) and the other processes that want
the cores (a shared machine). If so the rest goes to that many workers;
otherwise this process plays it all, so ``workers=N`` costs a short run
nothing. With a batching agent (an LLM), whose samples depend on the batches
it sees, the rule is fixed instead of timed, so a run is reproducible: workers
are used only when each gets at least ``in_flight`` episodes.

On a Ray cluster (:func:`play_on_ray`) scripted agents play in one task per
CPU of the cluster at a time, each task a chunk of consecutive episodes, so
every core of every node plays. Batching agents are held by one actor per node
instead (an LLM is loaded once per node and serves every episode played
there), which plays chunks of episodes dealt round-robin in index order, so
that a cluster of the same size plays the same batches.

Seating. ``agents`` is a list. With as many agents as seats, seats rotate with
the episode index (episode i puts agent j in seat (i + j) mod n), so over a
multiple of n episodes every agent plays every seat equally often. With fewer
agents than seats, the last agent fills the remaining seats: ``[a, b]`` in a
four-player game is the line-up ``a, b, b, b``, rotated the same way; so
``agents[0]`` is the one evaluated against the field, and a single agent plays
itself. ``rotate_seats=False`` keeps the line-up in seat order for every
episode. A dict ``{seat: agent}`` fixes the seating instead (equal specs share
one agent). A trainer may choose each episode's seating itself
(``Rollout.play(..., seating=...)``), e.g. an opponent drawn from a league.

Seeds and determinism. Episode i uses the seeds of
``SeedSequence(seed, spawn_key=(0, i))`` (:func:`parlour.envs.core.seeding.episode_seeds`):
one for the game and one per seat for the agent in it. Agents without
``act_batch`` (scripted agents) get their own copy for each seat of each
episode (``copy.deepcopy`` of the built agent, then ``reset(seed=seat seed)``;
a stateless agent holding a large model may return itself from
``__deepcopy__``), so an episode depends only on the base seed and its index,
never on the episodes beside it, the number of workers, or a resume. Agents
with ``act_batch`` are shared by every episode of a process: they key
per-episode state on ``observation["episode"]`` (the rollout puts the episode
index there), are reset once per process, and are told ``forget(episode)``
when an episode ends if they have that method (LLM agents drop its conversation).

Actions and turns. An agent may answer with an :class:`Action` (text plus
metadata such as token ids and log-probabilities) instead of a string: the
engine plays the text. :meth:`Rollout.play` hands back, beside each episode's
record, a :class:`TurnTable` with one :class:`Turn` per decision of the
tracked agents: what the agent saw, what it answered and the metadata, the
parsed move or the error, and the rewards, so a trainer can learn from the
turns and anyone can replay the record.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import ipaddress
import json
import multiprocessing
import os
import pickle
import queue
import socket
import time
import traceback
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from parlour.agents import AgentSpec, agent_name, is_batching, make_agent
from parlour.envs.core.agent import (
    Action,
    AgentFailure,
    decide,
    reset_agent,
    wants_vector,
)
from parlour.envs.core.match import Match, make_game
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class, list_envs, register
from parlour.evaluation.heap import frozen_heap
from parlour.evaluation.results import merge_stats

if TYPE_CHECKING:
    from parlour.envs.core.record import Record

__all__ = [
    "Action",
    "Plan",
    "Played",
    "Rollout",
    "Turn",
    "TurnTable",
    "agent_names",
    "default_lineup",
    "make_plan",
    "play_in_workers",
    "play_on_ray",
    "seat_order",
    "start_local_ray",
    "usable_cores",
    "workers_to_spawn",
]


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
    """Everything a process needs to play its share of a run (picklable, for worker processes)."""

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


def make_plan(
    env_id: str,
    agents: Any,
    env_kwargs: dict[str, Any] | None = None,
    seed: int = 0,
    rotate_seats: bool = True,
    in_flight: int = 32,
) -> Plan:
    """Resolve the seating rule (see the module docstring) into a :class:`Plan`; errors name the fix.

    ``agents`` is a list of agents or specs, one agent, or a dict ``{seat: agent}``.
    """
    try:
        # In JSON form from the start, as records and bundles hold them, so a resumed run plays the same options.
        env_kwargs = json.loads(json.dumps(dict(env_kwargs or {})))
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
            # Equal specs (strings or AgentSpecs) are one agent, built once and shared by its seats.
            same = [j for j, known in enumerate(specs) if known is spec or (isinstance(spec, (str, AgentSpec)) and known == spec)]
            if not same:
                specs.append(spec)
            lineup.append(same[0] if same else len(specs) - 1)
        rotate_seats = False
    else:
        specs = [agents] if isinstance(agents, str) or hasattr(agents, "act") else list(agents)
        if not specs:
            raise ValueError("a run needs at least one agent")
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


@dataclass
class Turn:
    """One decision of one seat in one episode, as a trainer sees it.

    ``reward`` is what the seat was paid from this decision up to its next one
    (the rewards paid before its first decision count on its first), so a
    seat's turns' rewards add up to its ``final_return``.
    """

    #: The episode's index in the run (its record's ``"episode"``).
    episode: int
    #: The seat (player name) that decided.
    seat: str
    #: The name of the agent in that seat (the record's ``agents[seat]``).
    agent: str
    #: The seat's own decision count in the episode: 0 for its first decision.
    turn: int
    #: Index of this decision in the record's ``steps``.
    step: int
    #: The observation text the agent was shown.
    observation: str
    #: The legal moves offered (``None`` when moves are not enumerable).
    legal_moves: list[str] | None
    #: The seat's structured view when it decided (only what that player knows).
    view: Any
    #: What the agent answered (the text the engine played).
    action: Any
    #: The agent's :attr:`Action.metadata` (``prompt_ids``, ``completion_ids``, ``logprobs``, ...); empty for a plain string.
    metadata: dict[str, Any]
    #: The move the engine read, or ``None`` (an invalid action, or tool calls without a move).
    move: Any
    #: Why the action was invalid, or ``None``.
    error: str | None
    #: What the seat was paid from this decision to its next (see the class docstring).
    reward: float = 0.0
    #: The seat's return at the end of the episode.
    final_return: float = 0.0

    @property
    def valid(self) -> bool:
        """Whether the engine accepted the action."""
        return self.error is None


#: The columns of :meth:`TurnTable.to_columns` that every table has, in order.
TURN_COLUMNS = tuple(f.name for f in fields(Turn))


class TurnTable(list):
    """The :class:`Turn` rows of one or more episodes (a list), with a columnar view for trainers."""

    def to_columns(self) -> dict[str, list[Any]]:
        """One list per field of :class:`Turn`, plus ``valid``, plus one per metadata key any row has (``None`` where a row lacks it)."""
        columns: dict[str, list[Any]] = {name: [getattr(row, name) for row in self] for name in TURN_COLUMNS}
        columns["valid"] = [row.valid for row in self]
        keys = dict.fromkeys(key for row in self for key in row.metadata)
        for key in keys:
            if key in columns:
                raise ValueError(f"metadata key {key!r} clashes with a turn column; rename it")
            columns[key] = [row.metadata.get(key) for row in self]
        return columns


@dataclass
class Played:
    """One finished episode: its record and the turns of the tracked agents."""

    record: Record
    turns: TurnTable


@dataclass
class _Episode:
    """One episode in flight: its match, the agent object and number in each seat, seeds, and its turns so far."""

    index: int
    match: Match
    agents: dict[str, Any]
    numbers: dict[str, int]
    seeds: dict[str, int] = field(default_factory=dict)
    turns: TurnTable = field(default_factory=TurnTable)
    #: The latest turn row of each tracked seat, which the rewards paid next are credited to.
    latest: dict[str, Turn] = field(default_factory=dict)
    #: Rewards paid to each tracked seat before its first decision.
    unclaimed: dict[str, float] = field(default_factory=dict)
    #: Each seat's decision count so far.
    counts: dict[str, int] = field(default_factory=dict)


class Rollout:
    """Plays episodes of a :class:`Plan` in one process, many in flight, one grouped call per agent per step."""

    def __init__(self, plan: Plan, share: int = 0):
        self.plan = plan
        self.game_cls = game_class(plan.env_id)
        self.agents = [make_agent(spec, env_id=plan.env_id) for spec in plan.specs]
        self.shared = [hasattr(agent, "act_batch") for agent in self.agents]
        self.vectors = [wants_vector(agent) for agent in self.agents]
        for agent, shared in zip(self.agents, self.shared):
            if shared:
                reset_agent(agent, plan.shared_seed(share))
        self.stats: list[dict[str, Any]] = [{"decisions": 0, "act_calls": 0, "act_seconds": 0.0} for _ in self.agents]

    def _start(self, index: int, seating: Sequence[int], track: Collection[int] | None) -> _Episode:
        plan = self.plan
        match = Match(self.game_cls, plan.env_kwargs)
        game_seed, seat_seeds = plan.seeds(index)
        match.reset(game_seed)
        episode = _Episode(index, match, agents={}, numbers={})
        if len(seating) != len(plan.players):
            raise ValueError(f"episode {index}: a seating names one agent per seat ({len(plan.players)}), got {list(seating)}")
        for player, number, seat_seed in zip(plan.players, seating, seat_seeds):
            if not 0 <= number < len(self.agents):
                raise ValueError(f"episode {index}: agent number {number} in the seating, but the plan has {len(self.agents)} agents")
            agent = self.agents[number]
            if not self.shared[number]:
                agent = copy.deepcopy(agent)
                reset_agent(agent, seat_seed)
                episode.seeds[player] = seat_seed
            episode.agents[player] = agent
            episode.numbers[player] = number
            if track is None or number in track:
                episode.unclaimed[player] = match.returns[player]
        return episode

    def _finish(self, episode: _Episode) -> Played:
        for player, agent in episode.agents.items():
            if not self.shared[episode.numbers[player]]:
                merge_stats(self.stats[episode.numbers[player]], _agent_stats(agent))
            elif hasattr(agent, "forget"):
                agent.forget(episode.index)
        record = episode.match.record(agents={player: self.plan.names[n] for player, n in episode.numbers.items()})
        record["episode"] = episode.index
        # The leaderboard re-runs scripted agents from these seeds to check that a seat named after one was it.
        record["agent_seeds"] = dict(episode.seeds)
        returns = record["returns"]
        for turn in episode.turns:
            turn.final_return = returns[turn.seat]
        return Played(record, episode.turns)

    def run(self, indices: Sequence[int]) -> Iterator[Record]:
        """Play the episodes ``indices``, yielding each record as its episode ends (not in index order)."""
        for played in self.play(indices, track=()):
            yield played.record

    def play(
        self,
        indices: Iterable[int],
        seating: Callable[[int], Sequence[int]] | None = None,
        track: Collection[int] | None = None,
    ) -> Iterator[Played]:
        """Play the episodes ``indices``, yielding each as it ends (not in index order), with its turn rows.

        Agents without ``act_batch`` move first, as long as any episode waits on
        one; then each batching agent is asked once for every episode waiting on
        it, so its batches hold all the episodes in flight where it is to act.

        Args:
            indices: episode indices, taken one at a time as episodes start; each one's seeds derive from the plan's seed and the index.
            seating: the agent number in each seat of an episode, given its index (default: the plan's rotation).
            track: the agent numbers whose decisions become :class:`Turn` rows (default: every agent).
        """
        seat_of = seating or self.plan.seating
        waiting = iter(indices)
        live: list[_Episode] = []
        # The episodes in flight keep their records until they end: without the freeze, the full collections this
        # triggers would walk the whole heap of torch and transformers every time (see parlour.evaluation.heap).
        with frozen_heap():
            while True:
                while len(live) < self.plan.in_flight and (index := next(waiting, None)) is not None:
                    live.append(self._start(index, seat_of(index), track))
                if not live:
                    break
                groups = self._decisions(live)
                if not groups and not any(episode.match.over for episode in live):
                    raise RuntimeError(f"{self.plan.env_id}: an unfinished episode has nobody to act")
                unbatched = [group for group in groups if not self.shared[group[1]]]
                for agent, number, decisions in unbatched or groups:
                    started = time.perf_counter()
                    actions = decide(agent, [observation for _, _, observation in decisions])
                    stats = self.stats[number]
                    stats["act_seconds"] += time.perf_counter() - started
                    stats["act_calls"] += 1
                    stats["decisions"] += len(decisions)
                    for (episode, player, observation), action in zip(decisions, actions):
                        # A forfeit earlier in a simultaneous step ends the game before the others' moves count.
                        if not episode.match.over:
                            self._submit(episode, player, observation, action)
                running = []
                for episode in live:
                    if episode.match.over:
                        yield self._finish(episode)
                    else:
                        running.append(episode)
                live = running

    def _submit(self, episode: _Episode, player: str, observation: dict[str, Any], action: Action) -> None:
        """Play ``action`` for ``player``, add its turn row if the seat is tracked, and credit the rewards paid."""
        match = episode.match
        rewards = match.submit(player, action.text)
        if player in episode.unclaimed:
            step = match.steps[-1]
            turn = Turn(
                episode=episode.index,
                seat=player,
                agent=self.plan.names[episode.numbers[player]],
                turn=episode.counts.get(player, 0),
                step=len(match.steps) - 1,
                observation=observation["text"],
                legal_moves=observation["legal_moves"],
                view=observation["view"],
                action=None if isinstance(action.text, AgentFailure) else action.text,
                metadata=action.metadata,
                move=step["move"],
                error=step["error"],
                reward=0.0 if player in episode.latest else episode.unclaimed[player],
            )
            episode.counts[player] = turn.turn + 1
            episode.latest[player] = turn
            episode.turns.append(turn)
        for seat, amount in rewards.items():
            if seat in episode.latest:
                episode.latest[seat].reward += amount
            elif seat in episode.unclaimed:
                episode.unclaimed[seat] += amount

    def _decisions(self, live: list[_Episode]) -> list[tuple[Any, int, list[tuple[_Episode, str, dict[str, Any]]]]]:
        """The pending decisions of the episodes in flight, grouped by agent object: (agent, number, decisions)."""
        groups: dict[int, tuple[Any, int, list[tuple[_Episode, str, dict[str, Any]]]]] = {}
        for episode in live:
            for player in episode.match.acting():
                agent = episode.agents[player]
                number = episode.numbers[player]
                observation = episode.match.agent_observation(player, self.vectors[number])
                observation["episode"] = episode.index
                groups.setdefault(id(agent), (agent, number, []))[2].append((episode, player, observation))
        return list(groups.values())

    def agent_stats(self) -> list[dict[str, Any]]:
        """Per agent number: the rollout's accounting plus the shared agents' own (copies are added as they finish)."""
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


#: Seconds a worker process's records may wait before they are sent, as one list.
SEND_EVERY_S = 0.2
#: Seconds :func:`play_in_workers` plays in its own process to time the episodes before it decides on workers.
PROBE_SECONDS = 1.0
#: CPU seconds a spawned worker takes to start a Python interpreter and import parlour, generously
#: (0.4 s measured on a 2-core x86 machine; its agents are built on top of this).
WORKER_START_S = 1.0
#: Workers are spawned only where they are predicted to take at most this share of one process's wall time:
#: parallel play is never perfect (records are pickled and sent, other processes come and go).
WORKERS_MUST_TAKE = 0.9


def usable_cores() -> int:
    """The number of CPU cores this process may run on (its affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def workers_to_spawn(per_episode_s: float, remaining: int, workers: int, cores: int, start_s: float, slowdown: float = 1.0) -> int:
    """How many worker processes to hand the ``remaining`` episodes to: ``min(workers, cores)``, or 0 to play them here.

    Args:
        per_episode_s: wall seconds per episode in this process so far.
        remaining: episodes left to play.
        workers: the workers asked for.
        cores: the cores this process may run on.
        start_s: CPU seconds a worker takes before it plays (interpreter, imports, agents).
        slowdown: this process's wall time over its CPU time so far (above 1 when it waited for a core).

    The model: the cores are shared evenly among the processes that want
    one. Besides this process, ``cores * slowdown - 1`` of them do (at least
    ``cores - 1``: a process that never waited cannot tell an idle core from a
    busy one), so this process alone runs at ``1 / slowdown`` of a core and
    each of ``n`` workers at ``cores / (cores * slowdown - 1 + n)`` (at most
    one). Workers are worth it when ``n >= 2`` (one worker is one process
    plus its start) and their predicted wall time, start included, is at most
    :data:`WORKERS_MUST_TAKE` of this process's alone.
    """
    spawn = min(workers, cores)
    if spawn < 2:
        return 0
    wanting = cores * max(slowdown, 1.0)  # processes that want a core, this one included
    alone = per_episode_s * remaining
    work_cpu = alone * min(1.0, cores / wanting)
    worker_share = min(1.0, cores / (wanting - 1 + spawn))
    with_workers = (start_s + work_cpu / spawn) / worker_share
    return spawn if with_workers <= WORKERS_MUST_TAKE * alone else 0


def _work(plan: Plan, share: int, indices: list[int], messages: Any) -> None:
    """A worker process: play ``indices`` and send ("records", [r, ...]) now and then, then ("stats", s), or ("error", text)."""
    try:
        ensure_registered(plan.env_id, plan.game_ref)
        rollout = Rollout(plan, share)
        batch: list[Record] = []
        sent = time.perf_counter()
        for record in rollout.run(indices):
            batch.append(record)
            if time.perf_counter() - sent >= SEND_EVERY_S:
                messages.put(("records", batch))
                batch, sent = [], time.perf_counter()
        if batch:
            messages.put(("records", batch))
        messages.put(("stats", rollout.agent_stats()))
    except BaseException:
        messages.put(("error", traceback.format_exc()))


def _check_sendable(plan: Plan, where: str) -> None:
    """Refuse agents that cannot be pickled to ``where``, naming the fix."""
    for spec, name in zip(plan.specs, plan.names):
        if not isinstance(spec, str):
            try:
                pickle.dumps(spec)
            except Exception as error:
                raise TypeError(
                    f"agent {name!r} cannot be sent to {where} ({error}); give it as a spec string "
                    "such as 'python:package.module:factory', make it picklable, or play in one process"
                ) from None


def play_in_workers(plan: Plan, indices: list[int], workers: int, totals: list[dict[str, Any]]) -> Iterator[Record]:
    """Play ``indices`` in up to ``workers`` spawned processes, yielding records as they arrive; agent stats are added to ``totals``.

    Falls back to this process where workers cannot pay off (see the module docstring).
    """
    _check_sendable(plan, "worker processes")
    # A model is not loaded here just to learn that the workers will play.
    if any(is_batching(spec) for spec in plan.specs) and len(indices) >= workers * plan.in_flight:
        yield from _spawn(plan, indices, workers, totals)[1]
        return
    building = time.perf_counter()
    local = Rollout(plan)
    # A worker builds the same agents before it plays.
    build_s = time.perf_counter() - building
    processes: list[Any] = []
    try:
        if any(local.shared):
            if len(indices) >= workers * plan.in_flight:
                yield from _spawn(plan, indices, workers, totals)[1]
            else:
                yield from local.run(indices)
            return
        # Episodes are handed to this process one at a time, so that it can stop taking new ones and finish those it began.
        taken: list[int] = []
        stop = False

        def feed() -> Iterator[int]:
            for index in indices:
                if stop:
                    return
                taken.append(index)
                yield index

        cores = usable_cores()
        started, cpu_started = time.perf_counter(), time.process_time()
        for played, record in enumerate(local.play(feed(), track=()), start=1):
            yield record.record
            elapsed = time.perf_counter() - started
            if stop or len(taken) == len(indices) or elapsed < PROBE_SECONDS:
                continue
            slowdown = elapsed / max(time.process_time() - cpu_started, 1e-9)
            spawn = workers_to_spawn(elapsed / played, len(indices) - played, workers, cores, WORKER_START_S + build_s, slowdown)
            if spawn:
                stop = True
                # The workers start now and import while this process finishes the episodes it began.
                processes, rest = _spawn(plan, indices[len(taken) :], spawn, totals)
        if stop:
            yield from rest
    finally:
        for total, stats in zip(totals, local.agent_stats()):
            merge_stats(total, stats)
        # Workers started for the rest are stopped too when this process's share failed.
        _stop(processes)


def _spawn(plan: Plan, indices: list[int], workers: int, totals: list[dict[str, Any]]) -> tuple[list[Any], Iterator[Record]]:
    """Start ``workers`` spawned processes on ``indices`` now: the processes, and an iterator of their records (see :func:`play_in_workers`)."""
    context = multiprocessing.get_context("spawn")
    messages = context.Queue()
    # Each worker a run of consecutive episodes, not every workers-th one: seats rotate with the index, so striding
    # could give a worker one seating throughout, and one seating may cost more than another (minimax moving first).
    size = max(1, -(-len(indices) // workers))
    processes = [
        context.Process(target=_work, args=(plan, share, indices[start : start + size], messages), daemon=True)
        for share, start in enumerate(range(0, len(indices), size))
    ]
    for process in processes:
        process.start()
    return processes, _collect(processes, messages, totals)


def _collect(processes: list[Any], messages: Any, totals: list[dict[str, Any]]) -> Iterator[Record]:
    """The records of started worker processes as they arrive; their agent stats are added to ``totals``."""
    finished = 0
    try:
        while finished < len(processes):
            try:
                kind, payload = messages.get(timeout=1.0)
            except queue.Empty:
                if any(process.exitcode not in (None, 0) for process in processes):
                    raise RuntimeError("an evaluation worker process died; see its output above") from None
                continue
            if kind == "records":
                yield from payload
            elif kind == "stats":
                finished += 1
                for total, stats in zip(totals, payload):
                    merge_stats(total, stats)
            else:
                raise RuntimeError(f"an evaluation worker failed:\n{payload}")
    finally:
        _stop(processes)


def _stop(processes: list[Any]) -> None:
    """End worker processes that are still running and reap them all."""
    for process in processes:
        if process.is_alive():
            process.terminate()
        process.join()


#: Chunks of episodes per CPU of a Ray cluster (scripted agents): enough that a node finishing early takes more
#: work while a slower one ends its last chunk, few enough that each chunk's round trip is small beside its play.
RAY_CHUNKS_PER_CPU = 8
#: Chunks queued per CPU at once, so that a CPU finishing a chunk starts the next without waiting for the driver.
RAY_QUEUED_PER_CPU = 2


def _play_chunk(plan: Plan, indices: list[int]) -> tuple[list[Record], list[dict[str, Any]], str]:
    """A Ray task: the records of ``indices``, the agents' accounting, and the id of the node that played them."""
    import ray

    ensure_registered(plan.env_id, plan.game_ref)
    rollout = Rollout(plan)
    records = list(rollout.run(indices))
    return records, rollout.agent_stats(), ray.get_runtime_context().get_node_id()


class _NodeRollout:
    """A Ray actor's state: one :class:`Rollout` (its agents built once) that plays the chunks sent to it."""

    def __init__(self, plan: Plan, share: int):
        ensure_registered(plan.env_id, plan.game_ref)
        self.rollout = Rollout(plan, share)

    def play(self, indices: list[int]) -> tuple[list[Record], str]:
        """The records of ``indices``, as one list, and the id of the node that played them."""
        import ray

        return list(self.rollout.run(indices)), ray.get_runtime_context().get_node_id()

    def stats(self) -> list[dict[str, Any]]:
        """The agents' accounting so far."""
        return self.rollout.agent_stats()


def play_on_ray(
    plan: Plan,
    indices: list[int],
    address: str | None,
    totals: list[dict[str, Any]],
    placed: dict[str, int] | None = None,
) -> Iterator[Record]:
    """Play ``indices`` on a Ray cluster, yielding records as chunks finish; agent stats are added to ``totals``.

    ``address`` is the cluster's GCS address ``"HOST:PORT"`` (the port that
    ``ray start --head --port`` was given, 6379 by default), ``"auto"`` for the
    cluster started on this machine with ``ray start``, or ``None`` for
    ``$RAY_ADDRESS`` or else a new local instance. A local instance, and a
    driver joining a cluster on a loopback address, stay on loopback. An
    already connected driver is used as it is. A cluster that wants an auth
    token this process does not send is refused at once, naming the fix.

    Scripted agents: one task per CPU of the cluster at a time, each playing a
    chunk of consecutive episodes (their records depend only on the episode
    index, so any node may play any chunk). Batching agents (an LLM): one actor
    per node holding them, on one GPU where the node has one, playing chunks of
    at least ``in_flight`` episodes dealt round-robin in index order, so the
    same cluster plays the same batches. Either way the records are those of
    one process. ``placed``, if given, gets the episodes each node played
    (node id to count).
    """
    try:
        import ray
    except ImportError:
        raise ImportError("executor='ray' needs Ray: pip install 'parlour[ray]'") from None
    _check_sendable(plan, "a Ray cluster")
    if not ray.is_initialized():
        _join_ray(ray, address)
    # A node without a CPU (a head started with --num-cpus 0) plays nothing.
    nodes = sorted((node for node in ray.nodes() if node["Alive"] and node["Resources"].get("CPU", 0) >= 1), key=lambda node: node["NodeID"])
    if not nodes:
        raise RuntimeError("the Ray cluster has no live node with a CPU; add one (ray start --address=HEAD:PORT)")
    placed = {} if placed is None else placed
    # A model is not loaded here just to learn that it batches; scripted agents are cheap to build.
    if any(is_batching(spec) for spec in plan.specs) or any(Rollout(plan).shared):
        yield from _play_on_node_actors(ray, plan, indices, nodes, totals, placed)
    else:
        cpus = int(sum(node["Resources"]["CPU"] for node in nodes))
        yield from _play_in_tasks(ray, plan, indices, cpus, totals, placed)


def _play_in_tasks(ray: Any, plan: Plan, indices: list[int], cpus: int, totals: list[dict[str, Any]], placed: dict[str, int]) -> Iterator[Record]:
    """Scripted agents on Ray: chunks as tasks of one CPU each, :data:`RAY_QUEUED_PER_CPU` per CPU queued at a time."""
    # Tasks, not actors: Ray keeps a job's worker processes, so a driver that evaluates again finds parlour imported.
    task = ray.remote(_play_chunk).options(num_cpus=1, scheduling_strategy="SPREAD")
    plan_ref = ray.put(plan)
    size = max(1, -(-len(indices) // (RAY_CHUNKS_PER_CPU * cpus)))
    chunks = (indices[start : start + size] for start in range(0, len(indices), size))
    waiting = [task.remote(plan_ref, chunk) for _, chunk in zip(range(RAY_QUEUED_PER_CPU * cpus), chunks)]
    try:
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            chunk = next(chunks, None)
            if chunk is not None:
                waiting.append(task.remote(plan_ref, chunk))
            records, per_agent, node = ray.get(done[0])
            for total, stats in zip(totals, per_agent):
                merge_stats(total, stats)
            placed[node] = placed.get(node, 0) + len(records)
            yield from records
    finally:
        # Chunks not yet played are dropped when the caller stops early or a chunk failed.
        for ref in waiting:
            ray.cancel(ref)


def _play_on_node_actors(
    ray: Any, plan: Plan, indices: list[int], nodes: list[dict[str, Any]], totals: list[dict[str, Any]], placed: dict[str, int]
) -> Iterator[Record]:
    """Batching agents on Ray: one actor per node holding them, chunks dealt round-robin in index order."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    remote = ray.remote(_NodeRollout)
    actors = [
        remote.options(
            num_cpus=1,
            num_gpus=1 if node["Resources"].get("GPU", 0) >= 1 else 0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False),
        ).remote(plan, share)
        for share, node in enumerate(nodes)
    ]
    size = max(plan.in_flight, -(-len(indices) // (4 * len(actors))))
    chunks = [indices[start : start + size] for start in range(0, len(indices), size)]
    waiting = [actors[number % len(actors)].play.remote(chunk) for number, chunk in enumerate(chunks)]
    try:
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            records, node = ray.get(done[0])
            placed[node] = placed.get(node, 0) + len(records)
            yield from records
        for per_agent in ray.get([actor.stats.remote() for actor in actors]):
            for total, stats in zip(totals, per_agent):
                merge_stats(total, stats)
    finally:
        for actor in actors:
            ray.kill(actor)


#: Ray's names for this machine's loopback interface, which it rewrites to the machine's network address.
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextlib.contextmanager
def _loopback_kept() -> Iterator[None]:
    """Keep Ray from rewriting 127.0.0.1 to the machine's network address while it starts or joins a node.

    Ray rewrites a loopback node address unless its multi-node switch
    (``$RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``, read once when Ray is imported) is
    off; it is turned off for the call only, since this process never starts a
    second node.
    """
    from ray._private import ray_constants

    enabled = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = enabled


def start_local_ray(**options: Any) -> None:
    """Start a Ray instance on this machine for this process, listening on loopback only (``options`` go to ``ray.init``)."""
    import ray

    with _loopback_kept():
        ray.init(address="local", _node_ip_address="127.0.0.1", include_dashboard=False, **options)


def _join_ray(ray: Any, address: str | None) -> None:
    """Connect this process to the cluster at ``address``, or start a local instance (see :func:`play_on_ray`)."""
    quiet = {"logging_level": "warning", "log_to_driver": False}
    target = address or os.environ.get("RAY_ADDRESS") or None
    if target in (None, "local"):
        start_local_ray(**quiet)
        return
    host, _, port = target.rpartition(":")
    host = host.strip("[]")
    if target == "auto" or "://" in target or not port.isdigit() or not _answers(host, int(port)):
        # Ray resolves these itself ("auto" finds the cluster started here; a loopback name the cluster did not
        # bind may reach it at the machine's address) and says what is wrong.
        ray.init(address=target, **quiet)
        return
    nodes = _node_addresses(target)
    # A driver joins through a node at its own address: a cluster on loopback is joined on loopback, one that
    # advertises the machine's address (a plain `ray start --head`) through that address, as Ray rewrites it.
    local = [node for node in nodes if _is_loopback(node)] if nodes is not None else [host]
    if _is_loopback(host) and local:
        own = "127.0.0.1" if host in _LOOPBACK_NAMES else host
        with _loopback_kept():
            ray.init(address=target, _node_ip_address=own if own in local else local[0], **quiet)
    else:
        ray.init(address=target, **quiet)


def _answers(host: str, port: int) -> bool:
    """Whether something accepts connections at ``host:port`` within a few seconds."""
    try:
        with socket.create_connection((host, port), timeout=5.0):
            return True
    except OSError:
        return False


def _node_addresses(address: str) -> list[str] | None:
    """The addresses of the nodes of the cluster at ``address``, or ``None`` where its GCS cannot be asked.

    A cluster that wants an auth token this process does not send is refused here, within seconds
    (``ray.init`` retries for about 20 s and then says only that it could not connect).
    """
    import ray.exceptions
    from ray._raylet import GcsClient  # type: ignore[attr-defined]  # Ray's stub of _raylet leaves out what the module has

    # An older Ray has no token auth, and no error for it.
    AuthenticationError = getattr(ray.exceptions, "AuthenticationError", ())
    try:
        return [node.node_manager_address for node in GcsClient(address=address).get_all_node_info().values()]
    except AuthenticationError:
        if os.environ.get("RAY_AUTH_MODE", "").lower() == "token":
            problem, fix = "refused this process's auth token", "give this process the cluster's token"
        else:
            problem, fix = "wants an auth token", "set RAY_AUTH_MODE=token and give this process the cluster's token"
        raise PermissionError(
            f"the Ray cluster at {address} {problem}: {fix} (in ~/.ray/auth_token, $RAY_AUTH_TOKEN_PATH or "
            "$RAY_AUTH_TOKEN; `ray get-auth-token` on the head node prints it)"
        ) from None
    except Exception:  # noqa: BLE001 - any other failure is ray.init's to report, with its own advice
        return None

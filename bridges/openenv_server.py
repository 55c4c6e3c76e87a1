"""Any parlour environment as an OpenEnv server: OpenEnv's routes, payloads and clients, parlour's games and records.

``create_app(env_id, ...)`` builds the FastAPI app with OpenEnv's own server
(:class:`openenv.core.env_server.HTTPEnvServer`), so the routes and payloads
are exactly OpenEnv's: the WebSocket session endpoint ``/ws`` (what
``openenv.core.GenericEnvClient`` and every ``EnvClient`` speak), ``/reset``,
``/step``, ``/state``, ``/schema``, ``/health`` and ``/metadata``.
``serve(env_id, ...)`` runs it with uvicorn (``parlour serve``), and
:class:`BackgroundServer` runs it in a thread (tests, notebooks, benchmarks).

Each WebSocket session is one seat of an episode. The other seats are played
by agents named by specs (``"minimax"``, ``"sb3:PATH"``, ``"hf:PATH"``, ...,
through :func:`parlour.make_agent`; by default the game's ``default_opponents``, such as
ServiceDesk's customer simulator, and ``random`` elsewhere) or, for seats whose spec is
:data:`CLIENT`, by other connected sessions: the first session to reset waits
(up to ``pair_timeout`` seconds) for the others, seats are filled in seat
order, and two trainers play each other. ``reset`` takes ``seed``,
``episode_id``, ``seat`` (with agent opponents only) and ``name`` (the seat's
name in the record). A step's action is ``{"text": ...}``: a move or tool
calls in any syntax parlour reads. The observation holds what a parlour agent
is given (``text``, ``messages``, ``legal_moves``, ``view``, ``tools``, ...),
so a parlour agent can play from the client side; its reward is what the
seat was paid since its previous action (its opponents' moves included), so
the rewards of a session's reset and steps sum to the seat's return. The last
observation carries the episode's ``record`` (agent seeds included), which
:func:`parlour.replay` re-executes, with every seat's ``turn_rewards``
(:func:`parlour.export.turn_rewards`: a step's reward, the reset's added to the
first); :func:`parlour.export.to_text` turns it into the seat's conversation
with the spans the environment inserted. A reset with seed ``s`` deals the episode
the Gymnasium face's ``reset(seed=s)`` deals, with the same agent seeds; one
that the other seats end before the session's seat acts comes back from
``reset`` already done, with its record. A session whose client disconnects is
freed; its seat forfeits the episode when next to act.

OpenEnv's HTTP ``/reset``, ``/step`` and ``/state`` are stateless (a fresh
environment per request): ``/reset`` deals a fresh episode, and ``/step``,
which has no episode to step, answers 409 pointing to ``/ws``.

No client can shut the others out (:func:`create_app`'s options, ``parlour
serve``'s flags): one client address holds at most ``max_sessions_per_client``
sessions (default 16); a session with no message from its client for
``idle_timeout`` seconds (default 300) is closed, and its seat forfeits; a
client seat told to act that sends nothing for ``turn_timeout`` seconds
(default 120) while another session waits on it forfeits, which releases the
other; and the sandboxes of all episodes together are held to
``sandbox_memory_mb`` (default: half this machine's memory; each episode of a
coding game reserves what its sandboxes may hold), a new episode beyond it
refused with HTTP 503. A bad reset argument (a seed that is not an integer
from 0 to 2**63-1, a seat that is not a player or an index, an unknown
argument) is answered with HTTP 422 whose body names the field, or over
``/ws`` with an error message that starts with it.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import json
import math
import os
import socket
import threading
import time
import uuid
from typing import Any, Callable, Collection

import uvicorn
from fastapi import FastAPI, Request, WebSocketDisconnect
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field

from parlour.agents import make_agent, scheme_of
from parlour.bridges.arguments import BadArgument, seat_argument, seed_argument, text_argument

# OpenEnv's server package, loaded without its Gradio web UI and MCP client, which are not served.
from parlour.bridges.openenv_lean import Action, Environment, EnvironmentMetadata, HTTPEnvServer, Observation, State
from parlour.envs.coding import judge
from parlour.envs.coding.common import ScratchSandboxes
from parlour.envs.core.agent import AgentFailure, act_batch, reset_agent, wants_vector
from parlour.envs.core.game import Game
from parlour.envs.core.match import Match, entropy_seed
from parlour.envs.core.record import Record
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class
from parlour.export import turn_rewards

#: The opponent spec of a seat played by another connected client.
CLIENT = "client"
#: Seconds a session that needs other clients waits for them at reset.
DEFAULT_PAIR_TIMEOUT = 60.0
#: Seconds a WebSocket session may go without a message from its client before the server closes it.
DEFAULT_IDLE_TIMEOUT = 300.0
#: Seconds a client seat told to act may take to send its action while another session waits on it.
DEFAULT_TURN_TIMEOUT = 120.0
#: Concurrent WebSocket sessions one client address may hold.
DEFAULT_SESSIONS_PER_CLIENT = 16
#: Whether the server offers WebSocket compression (permessage-deflate) by default: no. An observation is a few
#: kilobytes of JSON, and deflating each one (the server) and inflating it (the client) costs more CPU per step than
#: the bytes it saves on the loopback or local network a trainer and its server share; a client that offers
#: compression is answered uncompressed, as the WebSocket protocol provides. ``ws_compression=True`` offers it.
WS_COMPRESSION = False
#: The observation's fields a server may leave out (``create_app(fields=...)``); the others (player, env_id, acting,
#: done, reward, record) are always sent.
OPTIONAL_FIELDS: tuple[str, ...] = ("text", "messages", "legal_moves", "view", "invalid_action", "tools", "tool_calls_left")


def default_sandbox_memory_mb() -> int:
    """Half this machine's physical memory, in MB: the default budget for the sandboxes of the server's episodes."""
    return max(1, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2 >> 20)


def episode_sandbox_mb(game: Game, players: list[str]) -> int:
    """The most sandbox memory (MB) one episode of ``game`` holds at once: 0 for a game that runs no code.

    The coding games (those with :class:`~parlour.envs.coding.common.ScratchSandboxes`) give each player a
    scratch sandbox of its own, kept until the episode ends, and judge in a fresh sandbox, one at a time; every
    sandbox's processes together are held to its limits' ``memory_mb`` (see :mod:`parlour.sandbox`).
    """
    if not isinstance(getattr(game, "scratch", None), ScratchSandboxes):
        return 0
    return len(players) * judge.SCRATCH_LIMITS.memory_mb + judge.JUDGE_LIMITS.memory_mb


class ParlourAction(Action):
    """One action of a seat: a move, or tool calls, as text in any syntax parlour reads."""

    text: str = Field(description="the move (one of legal_moves where moves are enumerable) or tool calls")


class ParlourObservation(Observation):
    """What the seat sees: the fields a parlour agent is given, and the record once the episode is over."""

    player: str = Field(default="", description="the seat this session plays")
    env_id: str = Field(default="", description="the environment")
    text: str = Field(default="", description="what the player sees this turn, as an LLM is shown it")
    messages: list[dict[str, Any]] = Field(default_factory=list, description="the typed messages behind text")
    legal_moves: list[str] | None = Field(default=None, description="the exact moves accepted now; null where not enumerable")
    view: dict[str, Any] = Field(default_factory=dict, description="a structured view of what the player knows (scripted agents)")
    invalid_action: str | None = Field(default=None, description="why the previous action was refused, if it was")
    tools: list[dict[str, Any]] | None = Field(default=None, description="the player's tools (OpenAI function specs); null without tools")
    tool_calls_left: int | None = Field(default=None, description="tool calls left this turn; null without tools")
    acting: bool = Field(default=False, description="whether the seat is to act")
    record: dict[str, Any] | None = Field(default=None, description="the episode's parlour record, once it is over")


class ParlourState(State):
    """The session's episode: its environment, seat, seed, who acts, whether it is over and the seat's return."""

    env_id: str = ""
    seat: str | None = None
    seed: int | None = None
    players: list[str] = Field(default_factory=list)
    acting: list[str] = Field(default_factory=list)
    done: bool = False
    episode_return: float = 0.0


class SessionlessStep(RuntimeError):
    """A request OpenEnv's stateless HTTP routes cannot serve (a ``/step``, a ``/reset`` that needs other clients):
    episodes live in ``/ws`` sessions. Answered with HTTP 409."""


class ServerBusy(RuntimeError):
    """A new episode the server has no room for now (its sandboxes' memory budget is in use); HTTP 503."""


class Table:
    """One episode: its match, the agents in some seats, and the sessions seated in the others.

    Every change to the match happens under ``condition``; a session's step plays its action, lets agents
    (and seats whose client left, which forfeit) act until some session's seat must act or the game ends,
    then waits until its own seat acts again or the game is over. A session that waits on another session's
    seat waits at most ``turn_timeout`` seconds from the moment that seat was told to act: then the silent
    seat forfeits, so no client can hold another forever. ``release`` is called once, when the episode ends,
    to give back what the table reserved (its sandboxes' memory).
    """

    def __init__(
        self,
        match: Match,
        agents: dict[str, Any],
        names: dict[str, str],
        client_seats: list[str],
        turn_timeout: float = DEFAULT_TURN_TIMEOUT,
        release: Callable[[], None] | None = None,
        fields: tuple[str, ...] = OPTIONAL_FIELDS,
    ):
        self.match = match
        self.fields = fields
        self.agents = agents
        self.names = names
        self.client_seats = client_seats
        self.turn_timeout = turn_timeout
        self.release = release
        self.taken: list[str] = []
        self.gone: set[str] = set()
        self.owed: dict[str, float] = {}
        self.agent_seeds: dict[str, int] = {}
        #: When each client seat to act was told to (time.monotonic()), and why a seat forfeited for its silence.
        self.told: dict[str, float] = {}
        self.silent: dict[str, str] = {}
        self.started = False
        self.condition = threading.Condition()

    @property
    def over(self) -> bool:
        """Whether the episode has ended."""
        return self.match.over

    def start(self, seed: int) -> None:
        """Deal the episode (seeds as the Gymnasium face's ``reset(seed=seed)``) and play until a session acts."""
        match = self.match
        game_seed, seat_seeds = episode_seeds(seed, 0, len(match.players))
        match.reset(game_seed)
        for player, seat_seed in zip(match.players, seat_seeds):
            if player in self.agents:
                reset_agent(self.agents[player], seat_seed)
                self.agent_seeds[player] = seat_seed
        self.owed = {seat: 0.0 for seat in self.client_seats}
        self.started = True
        self._advance()
        self._changed()

    def begin(self, seed: int) -> None:
        """:meth:`start`, giving back what the table reserved if the episode cannot start (a sandbox that fails)."""
        try:
            self.start(seed)
        except BaseException:
            if self.release is not None:
                release, self.release = self.release, None
                release()
            raise

    def _book(self, rewards: dict[str, float]) -> None:
        for seat in self.client_seats:
            self.owed[seat] += rewards.get(seat, 0.0)

    def _advance(self) -> None:
        """Let agents and departed sessions act until a present session is to act or the game ends."""
        match = self.match

        def decide(player: str) -> Any:
            if player in self.gone:
                return AgentFailure("its client disconnected", forfeit=True)
            agent = self.agents[player]
            return act_batch(agent, [match.agent_observation(player, wants_vector(agent))])[0]

        self._book(match.play_until(decide, seats=set(self.agents) | self.gone))

    def _changed(self, mover: str | None = None) -> None:
        """After a change to the match (holding ``condition``): restart the turn clocks, release what the table
        reserved once the episode is over, and wake the waiting sessions.

        A client seat's clock starts when it is first told to act, and again after each of its own actions
        (``mover``): a tool call answered keeps the seat to act, with a fresh turn to send its next action.
        """
        now = time.monotonic()
        acting = set() if self.match.over else set(self.match.acting())
        for seat in self.client_seats:
            if seat in acting and seat not in self.gone:
                if seat == mover or seat not in self.told:
                    self.told[seat] = now
            else:
                self.told.pop(seat, None)
        if self.match.over and self.release is not None:
            release, self.release = self.release, None
            release()
        self.condition.notify_all()

    def _silence_expired(self) -> None:
        """Forfeit every client seat that was told to act more than ``turn_timeout`` seconds ago (holding ``condition``)."""
        now = time.monotonic()
        late = [seat for seat, since in self.told.items() if now - since >= self.turn_timeout]
        if not late:
            return
        for seat in late:
            if self.match.over:
                break
            reason = f"its client did not move within {self.turn_timeout:g} s (the server's --turn-timeout)"
            self.silent[seat] = reason
            # Like a departed session's: the seat forfeits now, and forfeits again whenever it is to act later.
            self.gone.add(seat)
            self._book(self.match.submit(seat, AgentFailure(reason, forfeit=True)))
        self._advance()
        self._changed()

    def wait_turn(self, seat: str) -> ParlourObservation:
        """Wait (holding ``condition``) until ``seat`` is to act or the game is over; its observation, with the reward owed.

        While it waits on other client seats, one silent past ``turn_timeout`` forfeits (see :meth:`_silence_expired`).
        """
        match = self.match
        while not match.over and seat not in match.acting():
            others = [since for other, since in self.told.items() if other != seat]
            self.condition.wait(None if not others else max(0.0, min(others) + self.turn_timeout - time.monotonic()))
            self._silence_expired()
        reward, self.owed[seat] = self.owed[seat], 0.0
        return self.observe(seat, reward)

    def play(self, seat: str, text: str) -> ParlourObservation:
        """Play ``seat``'s action, let the others act, and return once ``seat`` is to act again or the game is over."""
        with self.condition:
            if seat in self.silent:
                raise RuntimeError(f"your seat {seat} forfeited this episode: {self.silent[seat]}; reset to start a new one")
            if self.match.over:
                raise RuntimeError("the episode is over; reset to start a new one")
            self._book(self.match.submit(seat, text))
            self._advance()
            self._changed(mover=seat)
            return self.wait_turn(seat)

    def leave(self, seat: str) -> None:
        """The session in ``seat`` has gone: before the start its seat is free again, after it the seat forfeits when to act."""
        with self.condition:
            if not self.started:
                self.taken.remove(seat)
                return
            self.gone.add(seat)
            if not self.match.over:
                self._advance()
                self._changed()

    def observe(self, seat: str, reward: float | None = None) -> ParlourObservation:
        """``seat``'s observation now, paying ``reward``, with the record when the episode is over."""
        match = self.match
        observation = match.agent_observation(seat)
        # Every field is built here in its declared type (the engine's observation is plain JSON data), so the model
        # is constructed without validating it again: validation would copy the messages, the view and the record.
        # Every field is given, those left out empty: pydantic's model_construct inspects the signature of each default
        # factory it calls, which costs more than the rest of the observation.
        shown = {name: observation.get(name) for name in self.fields}
        return ParlourObservation.model_construct(
            player=seat,
            env_id=observation["env_id"],
            text=shown.get("text", ""),
            messages=shown.get("messages", []),
            legal_moves=shown.get("legal_moves"),
            view=shown.get("view", {}),
            invalid_action=shown.get("invalid_action"),
            tools=shown.get("tools"),
            tool_calls_left=shown.get("tool_calls_left"),
            acting=seat in match.acting(),
            done=match.over,
            reward=reward,
            metadata={},
            record=self.record() if match.over else None,
        )

    def record(self) -> Record:
        """The episode's record, with every seat's name, the agents' seeds (so ``replay`` can check agents too) and turn rewards."""
        record = self.match.record(self.names)
        record["agent_seeds"] = dict(self.agent_seeds)
        record["turn_rewards"] = {seat: turn_rewards(record, seat) for seat in record["players"]}
        return record


class Hall:
    """Seats sessions: with agents in every other seat, a table of its own; else the table waiting for clients.

    Args:
        game_cls: the game served.
        options: the game's and the engine's options.
        opponent: who plays the other seats: a spec (:data:`CLIENT` for another session), a list of specs, one
            per other seat in seat order, a dict from seat to spec, or ``None``: the game's ``default_opponents``
            (ServiceDesk's customer simulator), ``random`` in the seats it names none for.
        seat: the sessions' seat (index or player name) when agents play every other seat; a reset may pick another.
        pair_timeout: seconds a session waits at reset for the other clients of its table.
        turn_timeout: seconds a session waits on another session's seat told to act before that seat forfeits.
        sandbox_memory_mb: the budget for the sandboxes of all the tables at once: each table of a game that runs
            code reserves what its episode may hold (:func:`episode_sandbox_mb`) until the episode ends, and a
            table beyond the budget is refused with :class:`ServerBusy`.
    """

    def __init__(
        self,
        game_cls: type[Game],
        options: dict[str, Any],
        opponent: Any,
        seat: int | str,
        pair_timeout: float,
        turn_timeout: float = DEFAULT_TURN_TIMEOUT,
        sandbox_memory_mb: int | None = None,
        fields: tuple[str, ...] = OPTIONAL_FIELDS,
    ):
        self.game_cls = game_cls
        self.fields = fields
        self.options = dict(options)
        match = Match(game_cls, self.options)
        self.players = list(match.players)
        self.opponent = opponent
        self.seat = self.seat_name(seat)
        self.pair_timeout = pair_timeout
        self.turn_timeout = turn_timeout
        self.pairs = CLIENT in self.lineup(self.seat).values()
        self.lock = threading.Lock()
        self.waiting: Table | None = None
        self.table_memory_mb = episode_sandbox_mb(match.game, self.players)
        #: Whether a session's reset and step run on the server's event loop rather than in the session's thread:
        #: only when nothing in them waits (no other client to wait for, no sandbox, no tool, every other seat a
        #: scripted baseline, none an LLM or a program), so they never hold the loop up for longer than the game's
        #: own work, which the interpreter's lock would serialise with the loop's in threads anyway.
        self.inline = not self.pairs and not self.table_memory_mb and not match.tools and self._scripted_only()
        self.memory_budget_mb = default_sandbox_memory_mb() if sandbox_memory_mb is None else sandbox_memory_mb
        if self.table_memory_mb > self.memory_budget_mb:
            raise ValueError(
                f"an episode of {game_cls.env_id()} may hold {self.table_memory_mb} MB of sandboxes, more than the "
                f"sandbox memory budget of {self.memory_budget_mb} MB: raise sandbox_memory_mb (--sandbox-memory-mb)"
            )
        # The budget's own lock, taken last (under a table's condition when an episode ends), so it cannot deadlock.
        self.memory_lock = threading.Lock()
        self.reserved_mb = 0

    def _scripted_only(self) -> bool:
        """Whether every other seat, whichever seat the sessions take, is played by a scripted baseline named by a spec."""
        for seat in self.players:
            try:
                specs = self.lineup(seat).values()
            except ValueError:
                continue  # opponents named per seat for another seat than this one: a reset cannot choose it
            if not all(isinstance(spec, str) and scheme_of(spec) is None for spec in specs):
                return False
        return True

    def seat_name(self, seat: int | str) -> str:
        """The player name of ``seat`` (an index or a name); :class:`BadArgument` listing the players otherwise."""
        return seat_argument(seat, self.players)

    def reserve(self) -> Callable[[], None] | None:
        """Reserve a new table's sandbox memory; the function that gives it back (None for a game without sandboxes).

        Raises :class:`ServerBusy` when the tables already playing hold too much of the budget.
        """
        if not self.table_memory_mb:
            return None
        with self.memory_lock:
            if self.reserved_mb + self.table_memory_mb > self.memory_budget_mb:
                raise ServerBusy(
                    f"the server's sandbox memory budget ({self.memory_budget_mb} MB, --sandbox-memory-mb) is taken by the "
                    f"episodes playing now ({self.reserved_mb} MB; an episode of {self.game_cls.env_id()} reserves "
                    f"{self.table_memory_mb} MB): retry once one ends, or serve with a larger budget"
                )
            self.reserved_mb += self.table_memory_mb

        def release() -> None:
            with self.memory_lock:
                self.reserved_mb -= self.table_memory_mb

        return release

    def lineup(self, seat: str) -> dict[str, str]:
        """The spec of every seat but ``seat``, from ``opponent`` (a spec, a list in seat order, a dict, or None)."""
        others = [p for p in self.players if p != seat]
        opponent = self.opponent
        if opponent is None:
            # As the Gymnasium face seats them: a simulated person is its scripted simulator, not a random one.
            return {p: self.game_cls.default_opponents.get(p, "random") for p in others}
        if isinstance(opponent, dict):
            if set(opponent) != set(others):
                raise ValueError(f"the opponents must name exactly the seats {others}, got {sorted(opponent)}")
            return {p: opponent[p] for p in others}
        if isinstance(opponent, (list, tuple)):
            if len(opponent) == 1:
                return {p: opponent[0] for p in others}
            if len(opponent) != len(others):
                raise ValueError(f"give one opponent for all other seats or one per seat ({len(others)}: {others}), got {len(opponent)}")
            return dict(zip(others, opponent))
        return {p: opponent for p in others}

    def table(self, seat: str, agents: dict[str, Any], match: Match | None = None) -> Table:
        """A new table for a session in ``seat`` with ``agents`` in the other seats; :class:`ServerBusy` past the memory budget.

        ``match``: a finished match of this hall's game to deal the episode in (its next ``reset`` starts it
        afresh, as the Gymnasium face's does), instead of a new one.
        """
        lineup = self.lineup(seat)
        client_seats = [p for p in self.players if p == seat or lineup.get(p) == CLIENT]
        names = {p: spec for p, spec in lineup.items() if spec != CLIENT}
        release = self.reserve()
        if match is None:
            try:
                match = Match(self.game_cls, self.options)
            except BaseException:
                if release is not None:
                    release()
                raise
        return Table(match, agents, names, client_seats, self.turn_timeout, release, self.fields)

    def sit(self, session: ParlourEnvironment, seed: int, name: str) -> tuple[Table, str]:
        """Seat ``session``: alone against agents, or at the table waiting for clients (it waits for it to fill)."""
        table: Table | None
        if not self.pairs:
            seat = session.seat or self.seat
            table = self.table(seat, session.agents_for(seat, self.lineup(seat)), session.take_match())
            table.taken.append(seat)
            table.names[seat] = name
            with table.condition:
                table.begin(seed)
            return table, seat
        with self.lock:
            table = self.waiting
            if table is None:
                # Another session's agents may still be playing its unfinished tables, so each table gets its own.
                lineup = self.lineup(self.seat)
                env_id = self.game_cls.env_id()
                table = self.waiting = self.table(self.seat, {p: make_agent(s, env_id=env_id) for p, s in lineup.items() if s != CLIENT})
            with table.condition:
                seat = next(p for p in table.client_seats if p not in table.taken)
                table.taken.append(seat)
                table.names[seat] = name
                if len(table.taken) == len(table.client_seats):
                    self.waiting = None
                    table.begin(seed)
        with table.condition:
            joined = table.condition.wait_for(lambda: table.started, timeout=self.pair_timeout)
        if not joined:
            # The hall's lock before the table's, as everywhere, so that no two sessions wait on each other.
            with self.lock, table.condition:
                if not table.started:
                    table.taken.remove(seat)
                    del table.names[seat]
                    raise TimeoutError(
                        f"no other client joined within {self.pair_timeout:g} s: the seats "
                        f"{[p for p in table.client_seats if p != seat]} are played by other clients (--opponent {CLIENT}); "
                        "connect them, or serve with agent opponents"
                    )
        return table, seat


class ParlourEnvironment(Environment[ParlourAction, ParlourObservation, ParlourState]):
    """One OpenEnv session: a seat at a :class:`Table` of the :class:`Hall`, a new table per reset."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, hall: Hall):
        super().__init__()
        self.hall = hall
        # OpenEnv builds the environment of a /ws session in the session's own thread, and those of its stateless
        # HTTP routes on the event loop: an HTTP /reset must never wait for other clients.
        try:
            asyncio.get_running_loop()
            self.stateless = True
        except RuntimeError:
            self.stateless = False
        self.table: Table | None = None
        self.seat: str | None = None
        self.seed: int | None = None
        self.episode_id: str | None = None
        self.step_count = 0
        self._agents: dict[str, dict[str, Any]] = {}
        # The finished match of the session's last table against agents, dealt again at its next reset.
        self._spare_match: Match | None = None

    def agents_for(self, seat: str, lineup: dict[str, str]) -> dict[str, Any]:
        """Agents for the seats of ``lineup``, built once per session and seat (a model loads once, not per episode).

        Only tables with agents in every other seat use them, and a session leaving such a table plays it out
        (its seat forfeits), so no unfinished table still holds them when the session sits at the next.
        """
        agents = self._agents.get(seat)
        if agents is None:
            env_id = self.hall.game_cls.env_id()
            agents = self._agents[seat] = {p: make_agent(spec, env_id=env_id) for p, spec in lineup.items()}
        return agents

    def take_match(self) -> Match | None:
        """The match of the session's last finished table against agents, to deal its next episode in; None if there is none.

        Building a match builds the game (its rules text, its tools), which costs more than dealing a new episode
        in a finished one; a table shared with other clients keeps its own match, so only this session's are kept.
        """
        match, self._spare_match = self._spare_match, None
        return match

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, seat: int | str | None = None, name: str = CLIENT, **unknown: Any
    ) -> ParlourObservation:
        """Leave the current episode and sit at a new one; the seat's first observation (and any reward paid before it).

        Every argument is checked before anything changes: a bad one raises :class:`BadArgument` naming it
        (HTTP 422; the WebSocket's error message), and the session keeps its episode.
        """
        if unknown:
            first = sorted(unknown)[0]
            raise BadArgument(first, f"{', '.join(sorted(unknown))}: not an argument of reset, which takes seed, episode_id, seat and name")
        seed = entropy_seed() if seed is None else seed_argument(seed)
        episode_id = str(uuid.uuid4()) if episode_id is None else text_argument(episode_id, "episode_id")
        name = text_argument(name, "name")
        if self.hall.pairs and seat is not None:
            raise BadArgument(
                "seat", f"seat cannot be chosen when other clients play (--opponent {CLIENT}): seats go to clients in arrival order; drop seat"
            )
        chosen = None if seat is None else self.hall.seat_name(seat)
        if self.hall.pairs and self.stateless:
            raise SessionlessStep(f"HTTP /reset is stateless: play against other clients (--opponent {CLIENT}) over the /ws session endpoint")
        self.close()
        self.seat, self.seed, self.episode_id = chosen, seed, episode_id
        self.step_count = 0
        table, self.seat = self.hall.sit(self, self.seed, name)
        self.table = table
        with table.condition:
            return table.wait_turn(self.seat)

    def step(self, action: ParlourAction, timeout_s: float | None = None, **kwargs: Any) -> ParlourObservation:
        """Play the seat's action; the next observation once the seat is to act again, and the reward since its last."""
        if self.table is None:
            if self.stateless:
                raise SessionlessStep(
                    "OpenEnv's HTTP /step is stateless (a fresh environment per request), so it has no episode to step: "
                    "play over the WebSocket session endpoint /ws (openenv.core.GenericEnvClient or any EnvClient)"
                )
            raise RuntimeError("call reset before step")
        assert self.seat is not None, "reset seats the session at its table"
        observation = self.table.play(self.seat, action.text)
        self.step_count += 1
        return observation

    @property
    def state(self) -> ParlourState:
        """The session's episode (see :class:`ParlourState`)."""
        hall, table = self.hall, self.table
        state = ParlourState(
            episode_id=self.episode_id,
            step_count=self.step_count,
            env_id=hall.game_cls.env_id(),
            seat=self.seat,
            seed=self.seed,
            players=list(hall.players),
        )
        if table is not None:
            assert self.seat is not None, "reset seats the session at its table"
            with table.condition:
                state.acting = list(table.match.acting())
                state.done = table.match.over
                state.episode_return = float(table.match.returns.get(self.seat, 0.0))
        return state

    def get_metadata(self) -> EnvironmentMetadata:
        """The environment's id, the first line of its description, its version and its whole docstring."""
        game_cls = self.hall.game_cls
        doc = (game_cls.__doc__ or game_cls.name).strip()
        return EnvironmentMetadata(
            name=game_cls.env_id(), description=doc.splitlines()[0], version=str(game_cls.version), readme_content=doc, author="parlour"
        )

    def close(self) -> None:
        """Leave the current table, if any: a seat left mid-episode forfeits when next to act."""
        if self.table is not None:
            assert self.seat is not None, "reset seats the session at its table"
            table = self.table
            table.leave(self.seat)
            self.table = None
            # Against agents only, leaving plays the episode out: its match is finished and no one else holds it.
            if not self.hall.pairs and table.over:
                self._spare_match = table.match


class InlineParlourEnvironment(ParlourEnvironment):
    """A session whose reset and step OpenEnv awaits on its event loop (see :attr:`Hall.inline`), not in a thread.

    OpenEnv hands a synchronous ``reset`` or ``step`` to the session's thread and waits for the answer: two thread
    switches a request, which cost more than a scripted turn of a board game.
    """

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, seat: int | str | None = None, name: str = CLIENT, **unknown: Any
    ) -> ParlourObservation:
        """:meth:`ParlourEnvironment.reset`, on the event loop."""
        return self.reset(seed, episode_id, seat, name, **unknown)

    async def step_async(self, action: ParlourAction, timeout_s: float | None = None, **kwargs: Any) -> ParlourObservation:
        """:meth:`ParlourEnvironment.step`, on the event loop."""
        return self.step(action, timeout_s, **kwargs)


class QuietDisconnects:
    """ASGI middleware that keeps a client's normal goodbye out of the error log.

    OpenEnv 0.3.0's ``/ws`` handler closes the socket after the client's ``close`` message, when the client has
    already gone; Starlette raises ``WebSocketDisconnect`` for that, after the session was freed, and uvicorn
    would log it as an error of the application.
    """

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise


class SessionGuard:
    """ASGI middleware in front of the WebSocket sessions: a cap per client address, and an idle timeout.

    * A client address (the connection's peer: uvicorn runs without proxy headers, so a client cannot claim
      another address; behind a reverse proxy every client shares the proxy's) holds at most ``per_client`` sessions at
      once; one more is accepted only to be told why (an OpenEnv error message, code ``CAPACITY_REACHED``) and
      closed (1013, try again later), before OpenEnv creates a session for it.
    * A session whose client sends no message for ``idle_timeout`` seconds, counted from the server's last
      answer (so neither a long step nor a wait for other clients counts), is told why (code ``IDLE_TIMEOUT``)
      and closed (1001); OpenEnv's handler then sees the client gone and frees the session, whose seat
      forfeits when next to act.
    """

    def __init__(self, app: Any, per_client: int, idle_timeout: float):
        self.app = app
        self.per_client = per_client
        self.idle_timeout = idle_timeout
        self.sessions: dict[str, int] = {}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        address = str((scope.get("client") or ("an unknown address",))[0])
        held = self.sessions.get(address, 0)
        if held >= self.per_client:
            await self._refuse(address, held, receive, send)
            return
        # The event loop runs one coroutine at a time, so the count needs no lock.
        self.sessions[address] = held + 1
        watch = _IdleWatch(receive, send, self.idle_timeout)
        try:
            await self.app(scope, watch.receive, watch.send)
        finally:
            self.sessions[address] -= 1
            if not self.sessions[address]:
                del self.sessions[address]

    async def _refuse(self, address: str, held: int, receive: Any, send: Any) -> None:
        """Accept the handshake only to say why the session is refused, then close it."""
        if (await receive())["type"] != "websocket.connect":
            return
        message = (
            f"{address} already holds {held} sessions, the most one client address may hold (the server's "
            "--max-sessions-per-client): close one of them, or serve with a larger cap"
        )
        error = {"type": "error", "data": {"message": message, "code": "CAPACITY_REACHED", "max_sessions_per_client": self.per_client}}
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": json.dumps(error)})
        await send({"type": "websocket.close", "code": 1013, "reason": "too many sessions from this address"})


class _IdleWatch:
    """The ``receive`` and ``send`` of one WebSocket session, with the idle timeout of :class:`SessionGuard`."""

    def __init__(self, receive: Any, send: Any, idle_timeout: float):
        self._receive = receive
        self._send = send
        self.idle_timeout = idle_timeout
        self.closed = False

    async def receive(self) -> dict:
        """The client's next message; a disconnect once the session was idle for ``idle_timeout`` seconds."""
        if self.closed:
            return {"type": "websocket.disconnect", "code": 1001}
        # A timer on the wait itself, not a task beside it (which costs more than the rest of a scripted turn's
        # request): on the timeout the server's receive is cancelled, which loses nothing, as uvicorn's takes
        # from a queue and a cancelled take leaves the message there; the session is closed anyway.
        try:
            async with asyncio.timeout(self.idle_timeout):
                return await self._receive()
        except TimeoutError:
            await self._close_idle()
            return {"type": "websocket.disconnect", "code": 1001}

    async def send(self, message: dict) -> None:
        """Pass ``message`` on, unless the session was closed for idling (OpenEnv's handler still says goodbye)."""
        if not self.closed:
            await self._send(message)

    async def _close_idle(self) -> None:
        """Tell the client why, then close the connection."""
        self.closed = True
        message = (
            f"the session had no message for {self.idle_timeout:g} s and is closed (the server's --idle-timeout); "
            "its seat forfeits the episode. Reconnect and reset to play again"
        )
        try:
            await self._send({"type": "websocket.send", "text": json.dumps({"type": "error", "data": {"message": message, "code": "IDLE_TIMEOUT"}})})
            await self._send({"type": "websocket.close", "code": 1001, "reason": f"idle for more than {self.idle_timeout:g} s"})
        except (OSError, RuntimeError):
            # The client went away at the same moment: there is no one left to tell.
            pass


def _finite(value: Any) -> Any:
    """``value`` (JSON-like) with every NaN or infinity written as text, so that an error can quote what was sent."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def action_model(game_cls: type[Game]) -> type[ParlourAction]:
    """The action model of ``game_cls``: :class:`ParlourAction` whose JSON schema also lists the game's tools and moves."""
    match = Match(game_cls)
    extra: dict[str, Any] = {"tools": [tool.spec() for tool in match.tools.values()]}
    if match.game.moves is not None:
        extra["moves"] = list(match.game.moves)
    config = ConfigDict(**ParlourAction.model_config, json_schema_extra=extra)
    return type(f"{game_cls.name}Action", (ParlourAction,), {"model_config": config, "__module__": __name__})


def create_app(
    env_id: str,
    *,
    max_sessions: int = 64,
    opponent: Any = None,
    seat: int | str = 0,
    options: dict[str, Any] | None = None,
    pair_timeout: float = DEFAULT_PAIR_TIMEOUT,
    max_sessions_per_client: int = DEFAULT_SESSIONS_PER_CLIENT,
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
    turn_timeout: float = DEFAULT_TURN_TIMEOUT,
    sandbox_memory_mb: int | None = None,
    fields: Collection[str] | None = None,
) -> FastAPI:
    """The OpenEnv app serving ``env_id``: up to ``max_sessions`` concurrent ``/ws`` sessions, each a seat.

    ``opponent`` plays the other seats (a spec, a list of specs in seat order, or a dict from seat to spec;
    :data:`CLIENT` for another session; default: the game's ``default_opponents``, ``random`` elsewhere); ``seat`` is the sessions' seat against agents; ``options`` are the
    game's and the engine's. ``app.state.openenv`` is OpenEnv's server (``active_sessions``, capacity).

    The guards, so that no client can shut the others out: one client address holds at most
    ``max_sessions_per_client`` sessions; a session without a message for ``idle_timeout`` seconds is closed
    (:class:`SessionGuard`); a client seat told to act that sends nothing for ``turn_timeout`` seconds while
    another session waits on it forfeits (:class:`Table`); and the sandboxes of all episodes together are held to
    ``sandbox_memory_mb`` (default: half this machine's memory), a new episode beyond it refused with HTTP 503.
    A bad reset argument is answered with HTTP 422 naming the field.

    ``fields``: the fields of :data:`OPTIONAL_FIELDS` the observations carry (default all of them); those left out
    are sent empty or null, the schema unchanged. A client that reads only ``legal_moves`` (or ``text``) is served
    a smaller message: less to serialise on the server and to parse on the client at every step.
    """
    game_cls = game_class(env_id)
    for field, value in (
        ("max_sessions", max_sessions),
        ("max_sessions_per_client", max_sessions_per_client),
        ("sandbox_memory_mb", 1 if sandbox_memory_mb is None else sandbox_memory_mb),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{field} (--{field.replace('_', '-')}) must be an integer of at least 1, got {value!r}")
    for field, seconds in (("pair_timeout", pair_timeout), ("idle_timeout", idle_timeout), ("turn_timeout", turn_timeout)):
        if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"{field} (--{field.replace('_', '-')}) must be a positive number of seconds, got {seconds!r}")
    if fields is None:
        shown = OPTIONAL_FIELDS
    else:
        chosen = [fields] if isinstance(fields, str) else list(fields)
        unknown = sorted(set(chosen) - set(OPTIONAL_FIELDS))
        if unknown:
            raise ValueError(f"fields: {unknown} are not fields a server may leave out; choose among {list(OPTIONAL_FIELDS)}")
        shown = tuple(name for name in OPTIONAL_FIELDS if name in chosen)
    hall = Hall(game_cls, options or {}, opponent, seat, pair_timeout, turn_timeout, sandbox_memory_mb, shown)
    # Fail now, not at a client's first reset, on an agent spec that names nothing.
    for spec in hall.lineup(hall.seat).values():
        if spec != CLIENT:
            make_agent(spec, env_id=game_cls.env_id())
    session_cls = InlineParlourEnvironment if hall.inline else ParlourEnvironment
    server = HTTPEnvServer(functools.partial(session_cls, hall), action_model(game_cls), ParlourObservation, max_concurrent_envs=max_sessions)
    app = FastAPI(
        title=f"parlour {game_cls.env_id()} (OpenEnv)",
        version=importlib.metadata.version("parlour"),
        description=(game_cls.__doc__ or game_cls.name).strip(),
    )

    # FastAPI's decorator registers each handler with add_exception_handler, and types it as written (Starlette's
    # add_exception_handler wants a handler of any Exception, though it calls each with its own class).
    @app.exception_handler(SessionlessStep)
    async def sessionless_step(request: Request, error: SessionlessStep) -> JSONResponse:
        return JSONResponse(status_code=409, content={"detail": str(error)})

    @app.exception_handler(BadArgument)
    async def bad_argument(request: Request, error: BadArgument) -> JSONResponse:
        # FastAPI's own shape for a request it could not validate, so clients read both alike.
        return JSONResponse(status_code=422, content={"detail": [{"type": "value_error", "loc": ["body", error.field], "msg": str(error)}]})

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        # FastAPI's default answer quotes the input, and JSON has no NaN or infinity: a seed of NaN made it fail (500).
        return JSONResponse(status_code=422, content={"detail": _finite(jsonable_encoder(error.errors()))})

    @app.exception_handler(ServerBusy)
    async def server_busy(request: Request, error: ServerBusy) -> JSONResponse:
        return JSONResponse(status_code=503, content={"detail": str(error)})

    app.add_middleware(QuietDisconnects)
    app.add_middleware(SessionGuard, per_client=max_sessions_per_client, idle_timeout=idle_timeout)
    server.register_routes(app)
    app.state.openenv = server
    app.state.hall = hall
    return app


def serve(env_id: str, *, host: str = "127.0.0.1", port: int = 8000, ws_compression: bool = WS_COMPRESSION, **kwargs: Any) -> None:
    """Serve ``env_id`` until interrupted (``parlour serve``); ``kwargs`` go to :func:`create_app`.

    The app is built first, so a bad environment, option or agent spec fails before anything listens.
    ``ws_compression``: offer WebSocket compression (permessage-deflate) to clients; see :data:`WS_COMPRESSION`.
    """
    app = create_app(env_id, **kwargs)
    server = app.state.openenv
    print(
        f"serving {env_id} to OpenEnv clients at http://{host}:{port} (WebSocket sessions at /ws, up to {server.max_concurrent_envs}); Ctrl-C stops",
        flush=True,
    )
    # No proxy headers: the per-client cap counts the connection's own peer, which a client cannot rewrite.
    uvicorn.run(app, host=host, port=port, log_level="warning", proxy_headers=False, ws_per_message_deflate=ws_compression)


class BackgroundServer:
    """Runs an app with uvicorn in a thread: ``with BackgroundServer(app) as url: ...`` (port 0 picks a free one).

    ``ws_compression``: as :func:`serve`'s.
    """

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0, ws_compression: bool = WS_COMPRESSION):
        self.socket = socket.create_server((host, port))
        self.url = f"http://{host}:{self.socket.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", proxy_headers=False, ws_per_message_deflate=ws_compression))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError(f"the server at {self.url} failed to start")
            self.thread.join(0.01)
        return self.url

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join()
        self.socket.close()

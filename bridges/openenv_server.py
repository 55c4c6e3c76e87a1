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
through :func:`parlour.make_agent`) or, for seats whose spec is
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
"""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import socket
import threading
import uuid
from typing import Any

import numpy as np
import uvicorn
from fastapi import FastAPI, Request, WebSocketDisconnect
from fastapi.responses import JSONResponse
from openenv.core.env_server import Action, Environment, HTTPEnvServer, Observation, State
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import ConfigDict, Field

from parlour.agents import make_agent
from parlour.envs.core.agent import AgentFailure, act_batch, reset_agent, wants_vector
from parlour.envs.core.game import Game
from parlour.envs.core.match import Match
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class
from parlour.export import turn_rewards

#: The opponent spec of a seat played by another connected client.
CLIENT = "client"
#: Seconds a session that needs other clients waits for them at reset.
DEFAULT_PAIR_TIMEOUT = 60.0


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
    """A step over OpenEnv's stateless HTTP ``/step``, which has no episode: episodes live in ``/ws`` sessions."""


class Table:
    """One episode: its match, the agents in some seats, and the sessions seated in the others.

    Every change to the match happens under ``condition``; a session's step plays its action, lets agents
    (and seats whose client left, which forfeit) act until some session's seat must act or the game ends,
    then waits until its own seat acts again or the game is over.
    """

    def __init__(self, match: Match, agents: dict[str, Any], names: dict[str, str], client_seats: list[str]):
        self.match = match
        self.agents = agents
        self.names = names
        self.client_seats = client_seats
        self.taken: list[str] = []
        self.gone: set[str] = set()
        self.owed: dict[str, float] = {}
        self.agent_seeds: dict[str, int] = {}
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
        self.condition.notify_all()

    def _book(self, rewards: dict[str, float]) -> None:
        for seat in self.client_seats:
            self.owed[seat] += rewards.get(seat, 0.0)

    def _advance(self) -> None:
        """Let agents and departed sessions act until a present session is to act or the game ends."""
        match = self.match
        while not match.over:
            waiting = [p for p in match.acting() if p in self.agents or p in self.gone]
            if not waiting:
                return
            for player in waiting:
                if match.over:
                    return
                if player in self.gone:
                    action = AgentFailure("its client disconnected", forfeit=True)
                else:
                    agent = self.agents[player]
                    (action,) = act_batch(agent, [match.agent_observation(player, wants_vector(agent))])
                self._book(match.submit(player, action))

    def wait_turn(self, seat: str) -> tuple[ParlourObservation, float]:
        """Wait (holding ``condition``) until ``seat`` is to act or the game is over; its observation and the reward owed."""
        match = self.match
        while not match.over and seat not in match.acting():
            self.condition.wait()
        reward, self.owed[seat] = self.owed[seat], 0.0
        return self.observe(seat), reward

    def play(self, seat: str, text: str) -> tuple[ParlourObservation, float]:
        """Play ``seat``'s action, let the others act, and return once ``seat`` is to act again or the game is over."""
        with self.condition:
            if self.match.over:
                raise RuntimeError("the episode is over; reset to start a new one")
            self._book(self.match.submit(seat, text))
            self._advance()
            self.condition.notify_all()
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
                self.condition.notify_all()

    def observe(self, seat: str) -> ParlourObservation:
        """``seat``'s observation now, with the record when the episode is over."""
        match = self.match
        observation = match.agent_observation(seat)
        return ParlourObservation(
            player=seat,
            env_id=observation["env_id"],
            text=observation["text"],
            messages=observation["messages"],
            legal_moves=observation["legal_moves"],
            view=observation["view"],
            invalid_action=observation["invalid_action"],
            tools=observation.get("tools"),
            tool_calls_left=observation.get("tool_calls_left"),
            acting=seat in match.acting(),
            done=match.over,
            record=self.record() if match.over else None,
        )

    def record(self) -> dict[str, Any]:
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
            per other seat in seat order, or a dict from seat to spec.
        seat: the sessions' seat (index or player name) when agents play every other seat; a reset may pick another.
        pair_timeout: seconds a session waits at reset for the other clients of its table.
    """

    def __init__(self, game_cls: type[Game], options: dict[str, Any], opponent: Any, seat: int | str, pair_timeout: float):
        self.game_cls = game_cls
        self.options = dict(options)
        self.players = list(Match(game_cls, self.options).players)
        self.opponent = opponent
        self.seat = self.seat_name(seat)
        self.pair_timeout = pair_timeout
        self.pairs = CLIENT in self.lineup(self.seat).values()
        self.lock = threading.Lock()
        self.waiting: Table | None = None

    def seat_name(self, seat: int | str) -> str:
        """The player name of ``seat`` (an index or a name); ``ValueError`` listing the players otherwise."""
        if isinstance(seat, str) and seat in self.players:
            return seat
        if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(self.players):
            return self.players[seat]
        raise ValueError(f"seat must be one of {self.players} or an index below {len(self.players)}, got {seat!r}")

    def lineup(self, seat: str) -> dict[str, str]:
        """The spec of every seat but ``seat``, from ``opponent`` (a spec, a list in seat order, or a dict)."""
        others = [p for p in self.players if p != seat]
        opponent = self.opponent
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

    def table(self, seat: str, agents: dict[str, Any]) -> Table:
        """A new table for a session in ``seat`` with ``agents`` in the other seats."""
        lineup = self.lineup(seat)
        client_seats = [p for p in self.players if p == seat or lineup.get(p) == CLIENT]
        names = {p: spec for p, spec in lineup.items() if spec != CLIENT}
        return Table(Match(self.game_cls, self.options), agents, names, client_seats)

    def sit(self, session: ParlourEnvironment, seed: int, name: str) -> tuple[Table, str]:
        """Seat ``session``: alone against agents, or at the table waiting for clients (it waits for it to fill)."""
        if not self.pairs:
            seat = session.seat or self.seat
            table = self.table(seat, session.agents_for(seat, self.lineup(seat)))
            table.taken.append(seat)
            table.names[seat] = name
            with table.condition:
                table.start(seed)
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
                    table.start(seed)
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

    def reset(self, seed: int | None = None, episode_id: str | None = None, seat: int | str | None = None,
              name: str = CLIENT, **unknown: Any) -> ParlourObservation:
        """Leave the current episode and sit at a new one; the seat's first observation (and any reward paid before it)."""
        if unknown:
            raise ValueError(f"reset takes seed, episode_id, seat and name; got unknown {sorted(unknown)}")
        if self.hall.pairs and seat is not None:
            raise ValueError(f"seats go to clients in arrival order when other clients play (--opponent {CLIENT}); drop seat")
        if self.hall.pairs and self.stateless:
            raise ValueError(f"HTTP /reset is stateless: play against other clients (--opponent {CLIENT}) over the /ws session endpoint")
        self.close()
        self.seat = None if seat is None else self.hall.seat_name(seat)
        self.seed = int(np.random.SeedSequence().entropy % (1 << 63)) if seed is None else int(seed)
        self.episode_id = episode_id or str(uuid.uuid4())
        self.step_count = 0
        table, self.seat = self.hall.sit(self, self.seed, str(name))
        self.table = table
        with table.condition:
            observation, reward = table.wait_turn(self.seat)
        observation.reward = reward
        return observation

    def step(self, action: ParlourAction, timeout_s: float | None = None, **kwargs: Any) -> ParlourObservation:
        """Play the seat's action; the next observation once the seat is to act again, and the reward since its last."""
        if self.table is None:
            if self.stateless:
                raise SessionlessStep(
                    "OpenEnv's HTTP /step is stateless (a fresh environment per request), so it has no episode to step: "
                    "play over the WebSocket session endpoint /ws (openenv.core.GenericEnvClient or any EnvClient)"
                )
            raise RuntimeError("call reset before step")
        observation, reward = self.table.play(self.seat, action.text)
        self.step_count += 1
        observation.reward = reward
        return observation

    @property
    def state(self) -> ParlourState:
        """The session's episode (see :class:`ParlourState`)."""
        hall, table = self.hall, self.table
        state = ParlourState(episode_id=self.episode_id, step_count=self.step_count, env_id=hall.game_cls.env_id(),
                             seat=self.seat, seed=self.seed, players=list(hall.players))
        if table is not None:
            with table.condition:
                state.acting = list(table.match.acting())
                state.done = table.match.over
                state.episode_return = float(table.match.returns.get(self.seat, 0.0))
        return state

    def get_metadata(self) -> EnvironmentMetadata:
        """The environment's id, the first line of its description, its version and its whole docstring."""
        game_cls = self.hall.game_cls
        doc = (game_cls.__doc__ or game_cls.name).strip()
        return EnvironmentMetadata(name=game_cls.env_id(), description=doc.splitlines()[0], version=str(game_cls.version),
                                   readme_content=doc, author="parlour")

    def close(self) -> None:
        """Leave the current table, if any: a seat left mid-episode forfeits when next to act."""
        if self.table is not None:
            self.table.leave(self.seat)
            self.table = None


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


def action_model(game_cls: type[Game]) -> type[ParlourAction]:
    """The action model of ``game_cls``: :class:`ParlourAction` whose JSON schema also lists the game's tools and moves."""
    match = Match(game_cls)
    extra: dict[str, Any] = {"tools": [tool.spec() for tool in match.tools.values()]}
    if match.game.moves is not None:
        extra["moves"] = list(match.game.moves)
    config = ConfigDict(**ParlourAction.model_config, json_schema_extra=extra)
    return type(f"{game_cls.name}Action", (ParlourAction,), {"model_config": config, "__module__": __name__})


def create_app(env_id: str, *, max_sessions: int = 64, opponent: Any = "random", seat: int | str = 0,
               options: dict[str, Any] | None = None, pair_timeout: float = DEFAULT_PAIR_TIMEOUT) -> FastAPI:
    """The OpenEnv app serving ``env_id``: up to ``max_sessions`` concurrent ``/ws`` sessions, each a seat.

    ``opponent`` plays the other seats (a spec, a list of specs in seat order, or a dict from seat to spec;
    :data:`CLIENT` for another session); ``seat`` is the sessions' seat against agents; ``options`` are the
    game's and the engine's. ``app.state.openenv`` is OpenEnv's server (``active_sessions``, capacity).
    """
    game_cls = game_class(env_id)
    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
    hall = Hall(game_cls, options or {}, opponent, seat, pair_timeout)
    # Fail now, not at a client's first reset, on an agent spec that names nothing.
    for p, spec in hall.lineup(hall.seat).items():
        if spec != CLIENT:
            make_agent(spec, env_id=game_cls.env_id())
    server = HTTPEnvServer(functools.partial(ParlourEnvironment, hall), action_model(game_cls), ParlourObservation,
                           max_concurrent_envs=max_sessions)
    app = FastAPI(title=f"parlour {game_cls.env_id()} (OpenEnv)", version=importlib.metadata.version("parlour"),
                  description=(game_cls.__doc__ or game_cls.name).strip())

    async def sessionless_step(request: Request, error: SessionlessStep) -> JSONResponse:
        return JSONResponse(status_code=409, content={"detail": str(error)})

    app.add_exception_handler(SessionlessStep, sessionless_step)
    app.add_middleware(QuietDisconnects)
    server.register_routes(app)
    app.state.openenv = server
    app.state.hall = hall
    return app


def serve(env_id: str, *, host: str = "127.0.0.1", port: int = 8000, **kwargs: Any) -> None:
    """Serve ``env_id`` until interrupted (``parlour serve``); ``kwargs`` go to :func:`create_app`.

    The app is built first, so a bad environment, option or agent spec fails before anything listens.
    """
    app = create_app(env_id, **kwargs)
    server = app.state.openenv
    print(f"serving {env_id} to OpenEnv clients at http://{host}:{port} (WebSocket sessions at /ws, up to "
          f"{server.max_concurrent_envs}); Ctrl-C stops", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


class BackgroundServer:
    """Runs an app with uvicorn in a thread: ``with BackgroundServer(app) as url: ...`` (port 0 picks a free one)."""

    def __init__(self, app: FastAPI, host: str = "127.0.0.1", port: int = 0):
        self.socket = socket.create_server((host, port))
        self.url = f"http://{host}:{self.socket.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
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

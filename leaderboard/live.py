"""Live matches: the server runs the environment and a remote agent plays it over HTTP, turn by turn.

A live match is the strongest evidence a leaderboard can give: the remote
agent sees only its observations (the same dict a local agent gets from
:meth:`parlour.envs.core.match.Match.agent_observation`), never a seed or the
game's hidden state, so an agent that would read the hidden cards off the
seed has nothing to read. The server seats its built-in opponent, keeps the
base seed secret until the match is over, and stores the records as its own
(source ``live``, counted in the ratings); they replay like any other record.

On the server, :class:`LiveHub` holds the matches in memory (a restart loses
the matches in progress, never a stored one). A turn not answered within
``turn_timeout`` seconds is played as an empty (invalid) action, so a client
that walks away from a losing match forfeits it rather than erasing it.

The player's side, :func:`connect` (``parlour connect AGENT --server URL``)::

    POST /api/live                {"env_id", "agent", "opponent", "episodes"}  -> {"match", ...}
    GET  /api/live/<id>/turn?wait=S   -> {"status": "act", "turn", "episode", "observation"} | {"status": "wait"}
                                         | {"status": "done", "submission", "returns"}
    POST /api/live/<id>/act       {"turn", "action"}
"""

from __future__ import annotations

import copy
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parlour.envs.core.agent import act_batch, reset_agent
from parlour.envs.core.match import Match, make_game
from parlour.envs.core.record import replay
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class
from parlour.evaluation.challenges import challenge_seed
from parlour.leaderboard.store import NewEpisode, outcome_details
from parlour.leaderboard.verify import Rejected, check_name, fingerprint
from parlour.evaluation.rollout import default_lineup, seat_order

if TYPE_CHECKING:
    from parlour.leaderboard.api import Leaderboard

#: What the remote seat sends when it lets a turn pass its deadline: an invalid action, counted against its allowance.
TIMED_OUT = ""


@dataclass
class LiveMatch:
    """One live match in progress: the run's settings, the episode being played, and the turn awaited from the remote agent."""

    id: str
    submitter: str
    env_id: str
    names: list[str]
    episodes: int
    seed: int
    turn_timeout: float
    players: list[str]
    builtin: dict[str, Any]
    condition: threading.Condition = field(default_factory=threading.Condition)
    index: int = 0
    match: Match | None = None
    seats: dict[str, Any] = field(default_factory=dict)
    seat_names: dict[str, str] = field(default_factory=dict)
    agent_seeds: dict[str, int] = field(default_factory=dict)
    turn: int = 0
    pending: dict[str, Any] | None = None
    deadline: float = 0.0
    records: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: str | None = None

    @property
    def remote(self) -> str:
        """The remote agent's name."""
        return self.names[0]


class LiveHub:
    """The live matches of a leaderboard server (see the module docstring)."""

    def __init__(self, board: Leaderboard, turn_timeout: float = 60.0, max_episodes: int = 2000):
        self.board = board
        self.turn_timeout = turn_timeout
        self.max_episodes = max_episodes
        self.matches: dict[str, LiveMatch] = {}
        self._lock = threading.Lock()
        self._sweeper: threading.Thread | None = None

    def create(self, submitter: str, env_id: Any, agent: Any, opponent: Any = "random", episodes: Any = None) -> dict[str, Any]:
        """Start a live match of ``agent`` (the submitter's remote agent) against the built-in ``opponent``; :class:`Rejected` for bad settings."""
        from parlour.baselines import make_scripted, scripted_names

        if not isinstance(env_id, str):
            raise Rejected("env_id must be an environment id")
        try:
            game_cls = game_class(env_id)
        except KeyError as error:
            raise Rejected(str(error.args[0])) from None
        name = check_name(agent, "agent name")
        builtins = scripted_names(env_id)
        if name in builtins:
            raise Rejected(f"{name!r} is a built-in agent's name; name your own agent differently")
        if opponent not in builtins:
            raise Rejected(f"opponent must be a built-in agent of {env_id}: {', '.join(builtins)}")
        clash = self.board.store.name_clash(name, submitter)
        if clash is not None:
            raise Rejected(clash)
        count = self.board.challenge_episodes if episodes is None else episodes
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= self.max_episodes:
            raise Rejected(f"episodes must be an int from 1 to {self.max_episodes}")
        players = list(make_game(game_cls, {}).players)
        if len(players) < 2:
            raise Rejected(f"{env_id} has one seat; evaluate it with a challenge instead")
        live = LiveMatch(
            id=secrets.token_urlsafe(12), submitter=submitter, env_id=env_id, names=[name, opponent], episodes=count,
            seed=challenge_seed(secrets.token_hex(32)), turn_timeout=self.turn_timeout, players=players,
            builtin={opponent: make_scripted(opponent, env_id)},
        )
        with live.condition:
            self._advance(live)
        with self._lock:
            self.matches[live.id] = live
            self._start_sweeper()
        return {"match": live.id, "env_id": env_id, "agents": list(live.names), "episodes": count, "players": players,
                "turn_timeout": self.turn_timeout}

    def get(self, match_id: str, submitter: str) -> LiveMatch:
        """The match ``match_id`` of ``submitter``; ``KeyError`` if there is none."""
        live = self.matches.get(match_id)
        if live is None or live.submitter != submitter:
            raise KeyError(f"no live match {match_id!r} of yours on this server")
        return live

    def turn(self, live: LiveMatch, wait: float) -> dict[str, Any]:
        """The turn awaited from the remote agent, waiting up to ``wait`` seconds for one; or that the match is over."""
        end = time.monotonic() + max(0.0, min(wait, 60.0))
        with live.condition:
            while True:
                self._expire(live)
                if live.error is not None:
                    return {"status": "error", "detail": live.error}
                if live.result is not None:
                    return {"status": "done", **live.result}
                if live.pending is not None:
                    return {"status": "act", **live.pending}
                left = end - time.monotonic()
                if left <= 0:
                    return {"status": "wait"}
                live.condition.wait(left)

    def act(self, live: LiveMatch, turn: Any, action: Any) -> dict[str, Any]:
        """Play the remote agent's ``action`` for ``turn``; :class:`Rejected` if that turn is not the one awaited."""
        with live.condition:
            self._expire(live)
            if live.pending is None or turn != live.pending["turn"]:
                raise Rejected(f"turn {turn!r} is not awaited (the match awaits {None if live.pending is None else live.pending['turn']})")
            if not isinstance(action, (str, int, dict)) or isinstance(action, bool):
                action = None  # the engine's "not an action", an invalid move like any other
            self._play_remote(live, action)
            live.condition.notify_all()
            return {"status": "ok"}

    # ------------------------------------------------------------- internals
    def _play_remote(self, live: LiveMatch, action: Any) -> None:
        assert live.match is not None and live.pending is not None
        live.match.submit(live.pending["player"], action)
        live.pending = None
        self._advance(live)

    def _expire(self, live: LiveMatch) -> None:
        """Play every turn whose deadline has passed as an invalid action."""
        while live.pending is not None and time.monotonic() > live.deadline:
            self._play_remote(live, TIMED_OUT)

    def _start_episode(self, live: LiveMatch) -> None:
        game_seed, seat_seeds = episode_seeds(live.seed, live.index, len(live.players))
        live.match = Match(game_class(live.env_id), {})
        live.match.reset(game_seed)
        order = seat_order(default_lineup(2, len(live.players)), live.index, True)
        live.seats, live.agent_seeds = {}, {}
        live.seat_names = {player: live.names[number] for player, number in zip(live.players, order)}
        for player, number, seat_seed in zip(live.players, order, seat_seeds):
            if number == 0:
                live.seats[player] = None
            else:
                agent = copy.deepcopy(live.builtin[live.names[number]])
                reset_agent(agent, seat_seed)
                live.seats[player] = agent
                live.agent_seeds[player] = seat_seed

    def _advance(self, live: LiveMatch) -> None:
        """Play the built-in seats until the remote agent is to act or the match is over (then store it)."""
        try:
            while live.result is None:
                if live.match is None:
                    if live.index >= live.episodes:
                        self._store(live)
                        return
                    self._start_episode(live)
                match = live.match
                assert match is not None
                if match.over:
                    record = match.record(dict(live.seat_names))
                    record["episode"] = live.index
                    record["agent_seeds"] = dict(live.agent_seeds)
                    live.records.append(record)
                    live.match = None
                    live.index += 1
                    continue
                # Everyone acting decides on the same position (simultaneous games), so observe before anyone submits.
                acting = [(player, match.agent_observation(player)) for player in match.acting()]
                remote = [(player, observation) for player, observation in acting if live.seats[player] is None]
                for player, observation in acting:
                    agent = live.seats[player]
                    if agent is not None and not match.over:
                        observation["episode"] = live.index
                        (action,) = act_batch(agent, [observation])
                        match.submit(player, action)
                if remote and not match.over:
                    player, observation = remote[0]
                    observation["episode"] = live.index
                    live.turn += 1
                    live.pending = {"turn": live.turn, "episode": live.index, "player": player, "observation": observation}
                    live.deadline = time.monotonic() + live.turn_timeout
                    return
        except Exception as error:  # noqa: BLE001 - a server-side failure ends this match with its reason, never the server
            live.error = f"the match failed on the server: {type(error).__name__}: {error}"

    def _store(self, live: LiveMatch) -> None:
        """Replay the match's records, store them as a live submission, and publish the result."""
        env_id = live.env_id
        game_cls = game_class(env_id)
        from parlour.baselines import make_scripted

        episodes = []
        for record in live.records:
            checked = {seat: make_scripted(name, env_id) for seat, name in record["agents"].items() if name in live.builtin}
            fresh = replay(record, agents=checked)
            episodes.append(NewEpisode(
                env_id=env_id, env_version=game_cls.version, seed=fresh["seed"], seating=dict(fresh["agents"]),
                returns={seat: float(value) for seat, value in fresh["returns"].items()}, fingerprint=fingerprint(fresh),
                record=fresh, details=outcome_details(fresh),
            ))
        summary = {"env_id": env_id, "env_version": game_cls.version, "agents": list(live.names), "seed": live.seed,
                   "episodes": live.episodes, "rotate_seats": True, "live": live.id}
        from parlour.leaderboard.verify import VerifiedBundle

        verified = VerifiedBundle(env_id, game_cls.version, summary, episodes, builtin=set(live.builtin))
        stored = self.board.store_verified(verified, live.submitter, source="live")
        returns: dict[str, list[float]] = {}
        for episode in episodes:
            for seat, name in episode.seating.items():
                returns.setdefault(name, []).append(episode.returns[seat])
        live.result = {"submission": stored["submission"], "episodes": len(episodes), "seed": live.seed,
                       "returns": {name: sum(values) / len(values) for name, values in returns.items()}}

    def _start_sweeper(self) -> None:
        """A daemon thread that plays expired turns of matches nobody is polling, so abandoned matches end."""
        if self._sweeper is not None:
            return

        def sweep() -> None:
            while True:
                time.sleep(min(1.0, self.turn_timeout / 2))
                for live in list(self.matches.values()):
                    with live.condition:
                        if live.result is None and live.error is None:
                            self._expire(live)
                            live.condition.notify_all()

        self._sweeper = threading.Thread(target=sweep, name="parlour-live-sweeper", daemon=True)
        self._sweeper.start()


def connect(
    agent: Any,
    server: str,
    env_id: str,
    opponent: str = "random",
    episodes: int | None = None,
    token: str | None = None,
    progress: bool = True,
    timeout: float = 120.0,
) -> dict[str, Any]:
    """Play a live match on the leaderboard at ``server`` with ``agent`` (a spec or an agent object); returns the server's result.

    The token is ``token`` or ``$PARLOUR_TOKEN``. The agent sees only its
    observations; the server keeps the seeds and plays ``opponent``. Returns
    ``{"submission", "episodes", "seed", "returns"}`` (mean return per agent).
    """
    import os

    import httpx

    from parlour.agents import agent_name, make_agent

    token = token or os.environ.get("PARLOUR_TOKEN")
    if not token:
        raise ValueError("set PARLOUR_TOKEN to your submitter token (from `parlour leaderboard add-submitter`) to play a live match")
    player = make_agent(agent, env_id=env_id) if isinstance(agent, str) else agent
    base = server.rstrip("/")
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=timeout) as client:

        def call(method: str, path: str, **kwargs: Any) -> dict[str, Any]:
            try:
                response = client.request(method, path, **kwargs)
            except httpx.HTTPError as error:
                raise ConnectionError(f"cannot reach the leaderboard at {base}: {error}") from None
            answer = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
            if not response.is_success:
                raise ValueError(f"the leaderboard refused ({response.status_code}): {answer.get('detail', response.text[:300])}")
            return answer

        created = call("POST", "/api/live", json={"env_id": env_id, "agent": agent_name(player), "opponent": opponent, "episodes": episodes})
        match_id = created["match"]
        current = None
        seeds = secrets.SystemRandom()
        while True:
            turn = call("GET", f"/api/live/{match_id}/turn", params={"wait": 30})
            if turn["status"] == "done":
                return {key: turn[key] for key in ("submission", "episodes", "seed", "returns")}
            if turn["status"] == "error":
                raise RuntimeError(turn["detail"])
            if turn["status"] != "act":
                continue
            if turn["episode"] != current:
                current = turn["episode"]
                reset_agent(player, seeds.randrange(2**63))
                if progress:
                    print(f"{env_id}: live episode {current + 1} of {created['episodes']}", flush=True)
            (action,) = act_batch(player, [turn["observation"]])
            call("POST", f"/api/live/{match_id}/act", json={"turn": turn["turn"], "action": action if isinstance(action, (str, int, dict)) else str(action)})

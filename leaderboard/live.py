"""Live matches: the server runs the environment and a remote agent plays it over HTTP, turn by turn.

A live match is the only way a submitter's own agent is counted (see
:meth:`parlour.leaderboard.api.Leaderboard.issue_challenge`): whoever runs an
episode knows its seed, so a run played on the submitter's machine lets the
agent re-simulate the deal and the seeded opponents. Here the server holds
the environment, the chance and the built-in opponents; the remote agent sees
only its observations (the same dict a local agent gets from
:meth:`parlour.envs.core.match.Match.agent_observation`), never a seed or the
game's hidden state.

Commit-reveal. Each match draws a 32-byte server secret; every game and
opponent seed derives from it (:func:`parlour.evaluation.challenges.challenge_seed`,
then the runner's per-episode rule). The match's creation answers with
``commitment`` = SHA-256 of the secret, and the final result reveals the
secret and the seed, so the submitter can check (as :func:`connect` does)
that the seeds were fixed before the first move and not chosen afterwards.
The stored summary keeps both; the records replay like any other.

A stopping rule. Every live match has the server's fixed size
(``episodes``, not the client's choice), and an agent gets one live match per
opponent and environment, its rating unit: the counted record is one block
fixed before play, so stopping when ahead (many 1-episode matches, or leaving
a good streak) selects nothing. A turn not answered within ``turn_timeout``
seconds is played as an empty (invalid) action, so a client that walks away
forfeits the rest of its match rather than erasing it.

No player action erases a match. Whatever fails on the server during a live
match (the game raising on a move, a built-in agent failing, an episode whose
record does not replay when the match is stored) ends only the episode it
happened in: that episode is kept as it was played, with the reason, and is
played again from its start with the same seeds, the remote agent forfeiting
its first turn (an :class:`~parlour.envs.core.agent.AgentFailure` carrying the
reason, so the record replays). The server cannot tell its own fault from one
the remote agent provoked, and the remote agent is the only untrusted party,
so every such failure counts against it: provoking one is never better than
walking away from the episode. If even the forfeit cannot be played (no
remote move is left in it, so the fault is the server's alone), the match
stops there. In every case the match is stored, marked ``"status": "failed"``
in its summary with each failure's episode, reason and record as played, and
the agent's one live match against that opponent is used: it cannot start
again to erase a loss. Only if the database itself refuses the match does it
end in ``error`` unstored.

Limits. At most ``max_matches`` matches in flight on the server and
``max_per_submitter`` per submitter (one per environment); the server
rate-limits creation. The storage quota is checked when a match starts, not
when it is stored: a match that was let in is stored whole, so filling one's
quota during a match cannot void it. A finished match is kept ``keep_finished`` seconds for
its result to be fetched, then dropped; its records are freed once stored.

On the server, :class:`LiveHub` holds the matches in memory (a restart loses
the matches in progress, never a stored one). The player's side,
:func:`connect` (``parlour connect AGENT --server URL``)::

    POST /api/live                {"env_id", "agent", "opponent"}  -> {"match", "commitment", "episodes", ...}
    GET  /api/live/<id>/turn?wait=S   -> {"status": "act", "turn", "episode", "observation"} | {"status": "wait"}
                                         | {"status": "done", "submission", "returns", "seed", "secret", "failures"}
    POST /api/live/<id>/act       {"turn", "action"}  -> {"status": "ok"} | {"status": "failed", "detail": why the episode failed}

:func:`play_local` plays an agent object through a hub in the same process
(tests, and boards seeded in-process), with exactly what a remote client gets.
"""

from __future__ import annotations

import copy
import hashlib
import random
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from parlour.envs.core.agent import AgentFailure, act_batch, reset_agent
from parlour.envs.core.match import Match, make_game
from parlour.envs.core.record import Record, replay
from parlour.envs.core.seeding import episode_seeds
from parlour.envs.registry import game_class
from parlour.evaluation.challenges import challenge_seed
from parlour.evaluation.rollout import default_lineup, seat_order
from parlour.leaderboard.store import NewEpisode, outcome_details
from parlour.leaderboard.verify import Rejected, brief, check_name, check_unprivileged, fingerprint, unrated_reason

if TYPE_CHECKING:
    from parlour.leaderboard.api import Leaderboard

#: What the remote seat sends when it lets a turn pass its deadline: an invalid action, counted against its allowance.
TIMED_OUT = ""
#: Characters of a failure's reason that are kept (an exception's message may quote a whole move).
REASON_CHARS = 500
#: Events a live match keeps for spectators (turns and episode ends); older ones are dropped, half at a time.
TRANSCRIPT_EVENTS = 2000
#: Characters of a failed remote move that are kept with its failure.
ACTION_CHARS = 20_000


def failure_reason(error: BaseException, what: str) -> str:
    """A server-side failure in words: ``what`` failed, the exception's type and message (cut to :data:`REASON_CHARS`)."""
    text = f"{what}: {type(error).__name__}: {error}"
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 3] + "..."


@dataclass
class LiveMatch:
    """One live match in progress: the run's settings, the episode being played, and the turn awaited from the remote agent."""

    id: str
    submitter: str
    env_id: str
    names: list[str]
    episodes: int
    #: The server secret every seed derives from, revealed in the result; ``commitment`` is its SHA-256, given at creation.
    secret: str
    commitment: str
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
    records: list[Record] = field(default_factory=list)
    #: The episodes that failed on the server, as ``{"episode", "reason", "record"}`` (the record as far as it was played).
    failures: list[dict[str, Any]] = field(default_factory=list)
    #: Why the match stopped before its last episode (the server could not play even a forfeit), or None.
    stopped: str | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    #: When the match ended (time.monotonic()), for dropping it ``keep_finished`` seconds later.
    finished_at: float | None = None
    #: What a spectator is shown as it happens (:meth:`LiveHub.events`): the remote seat's turns (what it saw, what it
    #: played) and each episode's end. Only what the remote agent itself knows, so watching leaks nothing to it.
    transcript: list[dict[str, Any]] = field(default_factory=list)
    #: Events dropped from the front of ``transcript`` to keep it within :data:`TRANSCRIPT_EVENTS` (numbering goes on).
    transcript_dropped: int = 0

    def log(self, event: dict[str, Any]) -> None:
        """Add ``event`` to the transcript, dropping its older half once it holds :data:`TRANSCRIPT_EVENTS` (a long match
        would otherwise keep every observation it showed; a spectator who joins late starts from what is kept)."""
        self.transcript.append(event)
        if len(self.transcript) > TRANSCRIPT_EVENTS:
            half = len(self.transcript) // 2
            del self.transcript[:half]
            self.transcript_dropped += half

    @property
    def remote(self) -> str:
        """The remote agent's name."""
        return self.names[0]

    @property
    def over(self) -> bool:
        """Whether the match has a result or failed."""
        return self.result is not None or self.error is not None


def commitment_of(secret: str) -> str:
    """The commitment a live match publishes for its server secret: the secret's SHA-256, in hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Events(NamedTuple):
    """A spectator's view of a live match (:meth:`LiveHub.events`): the events, the number to ask from next, and
    whether the match is over."""

    events: list[dict[str, Any]]
    following: int
    over: bool


class LiveHub:
    """The live matches of a leaderboard server (see the module docstring).

    Args:
        board: the leaderboard the matches are stored on.
        turn_timeout: seconds a turn waits for the remote agent before it is played as invalid.
        episodes: the size of every live match (the stopping rule: the client does not choose it).
        max_matches: matches in flight on the server at once.
        max_per_submitter: matches in flight per submitter (besides one per environment).
        keep_finished: seconds a finished match's result stays fetchable before the match is dropped.
        match_secrets: makes each match's secret, which seeds its games (default: 32 bytes from :mod:`secrets`);
            tests pass a seeded one so that they play the same games every run.
    """

    def __init__(
        self,
        board: Leaderboard,
        turn_timeout: float = 60.0,
        episodes: int = 100,
        max_matches: int = 64,
        max_per_submitter: int = 4,
        keep_finished: float = 600.0,
        match_secrets: Callable[[], str] | None = None,
    ):
        self.board = board
        self.turn_timeout = turn_timeout
        self.episodes = episodes
        self.max_matches = max_matches
        self.max_per_submitter = max_per_submitter
        self.keep_finished = keep_finished
        self.match_secrets = match_secrets or (lambda: secrets.token_hex(32))
        self.matches: dict[str, LiveMatch] = {}
        self._lock = threading.Lock()
        self._sweeper: threading.Thread | None = None

    def create(self, submitter: str, env_id: Any, agent: Any, opponent: Any = "random", episodes: Any = None) -> dict[str, Any]:
        """Start a live match of ``agent`` (the submitter's remote agent) against the built-in ``opponent``; :class:`Rejected` for bad settings.

        A one-seat environment takes no opponent (pass None). ``episodes`` may
        only repeat the server's fixed size (see the module docstring). A
        privileged oracle is no opponent, and an environment that is not
        rateable has no live match (see :mod:`parlour.leaderboard.verify`).
        """
        from parlour.baselines import make_scripted, scripted_names

        if not isinstance(env_id, str):
            raise Rejected("env_id must be an environment id (a string such as 'parlour/KuhnPoker-v0')")
        try:
            game_cls = game_class(env_id)
        except KeyError as error:
            raise Rejected(str(error.args[0])) from None
        name = check_name(agent, "agent name")
        builtins = scripted_names(env_id)
        if name in builtins:
            raise Rejected(f"{name!r} is a built-in agent's name; name your own agent differently")
        players = list(make_game(game_cls, {}).players)
        if len(players) == 1:
            if opponent not in (None, "random"):
                raise Rejected(f"{env_id} has one seat: a live match of it has no opponent")
            names = [name]
        elif not isinstance(opponent, str) or opponent not in builtins:
            raise Rejected(f"opponent must be a built-in agent of {env_id}: {', '.join(builtins)}")
        else:
            names = [name, opponent]
        check_unprivileged(env_id, names)
        unrated = unrated_reason(game_cls)
        if unrated is not None:
            raise Rejected(unrated)
        if episodes is not None and episodes != self.episodes:
            raise Rejected(
                f"a live match on this server is {self.episodes} episodes, fixed before play so that stopping when "
                "ahead selects nothing; leave episodes out"
            )
        clash = self.board.store.name_clash(name, submitter)
        if clash is not None:
            raise Rejected(clash)
        played = self.board.store.live_match_of(submitter, env_id, names)
        if played is not None:
            raise Rejected(
                f"{name!r} already played its live match against {names[-1]!r} on {env_id} (submission {played}); "
                "each agent gets one, fixed before play: a new version of your agent needs a new name"
            )
        quota = self.board.quota
        used = self.board.store.submitter(submitter)
        if used is not None and (
            (quota.max_bytes is not None and used["bytes"] >= quota.max_bytes)
            or (quota.max_episodes is not None and used["stored_episodes"] + self.episodes > quota.max_episodes)
        ):
            raise Rejected(
                f"your storage quota has no room for a live match of {self.episodes} episodes (you store {used['stored_episodes']} "
                f"episodes, {used['bytes']} bytes); ask the leaderboard admin for a larger quota"
            )
        secret = self.match_secrets()
        live = LiveMatch(
            id=secrets.token_urlsafe(12),
            submitter=submitter,
            env_id=env_id,
            names=names,
            episodes=self.episodes,
            secret=secret,
            commitment=commitment_of(secret),
            seed=challenge_seed(secret),
            turn_timeout=self.turn_timeout,
            players=players,
            builtin={other: make_scripted(other, env_id) for other in names[1:]},
        )
        with self._lock:
            self._drop_finished()
            running = [other for other in self.matches.values() if not other.over]
            mine = [other for other in running if other.submitter == submitter]
            if any(other.env_id == env_id for other in mine):
                raise Rejected(f"you have a live match of {env_id} in progress; finish it first (one per environment at a time)")
            if len(mine) >= self.max_per_submitter:
                raise Rejected(f"you have {len(mine)} live matches in progress, the most allowed; finish one first")
            if len(running) >= self.max_matches:
                raise Rejected(f"the server is playing {len(running)} live matches, its limit; retry in a few minutes")
            self.matches[live.id] = live
            self._start_sweeper()
        with live.condition:
            self._advance(live)
        return {
            "match": live.id,
            "env_id": env_id,
            "agents": list(live.names),
            "episodes": live.episodes,
            "players": players,
            "turn_timeout": self.turn_timeout,
            "commitment": live.commitment,
        }

    def get(self, match_id: str, submitter: str) -> LiveMatch:
        """The match ``match_id`` of ``submitter``; ``KeyError`` if there is none."""
        live = self.matches.get(match_id)
        if live is None or live.submitter != submitter:
            raise KeyError(f"no live match {match_id!r} of yours on this server (a finished one is kept {self.keep_finished:g} s)")
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
        """Play the remote agent's ``action`` for ``turn``; :class:`Rejected` if that turn is not the one awaited.

        Answers ``{"status": "failed", "detail"}`` when the server failed on the move: its episode was forfeited
        (see the module docstring) and the match goes on.
        """
        with live.condition:
            self._expire(live)
            if live.pending is None or turn != live.pending["turn"]:
                raise Rejected(f"turn {brief(turn)} is not awaited (the match awaits {None if live.pending is None else live.pending['turn']})")
            if not isinstance(action, (str, int, dict)) or isinstance(action, bool):
                action = None  # the engine's "not an action", an invalid move like any other
            failed = self._play_remote(live, action)
            live.condition.notify_all()
            return {"status": "ok"} if failed is None else {"status": "failed", "detail": failed}

    def watchable(self) -> list[dict[str, Any]]:
        """The matches a spectator may watch (in progress or kept after their end): id, environment, agents, progress."""
        return [
            {
                "match": live.id,
                "env_id": live.env_id,
                "agents": list(live.names),
                "episode": min(live.index + 1, live.episodes),
                "episodes": live.episodes,
                "over": live.over,
            }
            for live in list(self.matches.values())
        ]

    def events(self, match_id: str, start: int) -> Events | None:
        """A spectator's view of match ``match_id``: the events from number ``start`` on (or the oldest kept), each turn
        once it is played, then, when the match is over, an ``end`` event; the number to ask from next; and whether the
        match is over. None for an unknown match. See :attr:`LiveMatch.transcript`."""
        live = self.matches.get(match_id)
        if live is None:
            return None
        with live.condition:
            self._expire(live)
            events = []
            start = max(start, live.transcript_dropped)
            for event in live.transcript[start - live.transcript_dropped :]:
                if event["kind"] == "turn" and event["action"] is None:
                    break  # a turn is shown once it is played
                events.append(dict(event))
            if live.over and start + len(events) == live.transcript_dropped + len(live.transcript):
                end = {
                    "kind": "end",
                    "submission": None if live.result is None else live.result["submission"],
                    "error": live.error,
                    "returns": None if live.result is None else live.result["returns"],
                }
                events.append(end)
            return Events(events, start + sum(event["kind"] != "end" for event in events), live.over)

    def _drop_finished(self) -> None:
        """Forget matches that ended more than ``keep_finished`` seconds ago (call with ``_lock`` held)."""
        now = time.monotonic()
        for match_id, live in list(self.matches.items()):
            if live.finished_at is not None and now - live.finished_at > self.keep_finished:
                del self.matches[match_id]

    # ------------------------------------------------------------- internals
    def _play_remote(self, live: LiveMatch, action: Any) -> str | None:
        """Play the remote agent's ``action`` on the awaited turn, then the built-in seats; why its episode failed, if it did."""
        assert live.match is not None and live.pending is not None
        player, live.pending = live.pending["player"], None
        if live.transcript and live.transcript[-1]["kind"] == "turn":
            live.transcript[-1]["action"] = action if isinstance(action, str) else str(action)
        failed = len(live.failures)
        try:
            live.match.submit(player, action)
        except Exception as error:  # noqa: BLE001 - whatever the move made the server do, only its episode fails, with the reason
            self._episode_failed(live, failure_reason(error, f"episode {live.index} failed on the server at {player}'s move"), action)
        self._advance(live)
        return live.failures[failed]["reason"] if len(live.failures) > failed else None

    def _expire(self, live: LiveMatch) -> None:
        """Play every turn whose deadline has passed as an invalid action."""
        while live.pending is not None and time.monotonic() > live.deadline:
            self._play_remote(live, TIMED_OUT)

    def _new_episode(self, live: LiveMatch, index: int) -> tuple[Match, dict[str, Any], dict[str, str], dict[str, int]]:
        """Episode ``index`` of the match, started: the game, the seats' agents (None: the remote agent), their names and seeds."""
        game_seed, seat_seeds = episode_seeds(live.seed, index, len(live.players))
        game_cls = game_class(live.env_id)
        match = Match(game_cls, {})
        match.reset(game_seed)
        # A fixed-role game keeps its seats, as evaluate requires (--no-rotate): rotating would make the remote agent judge.
        order = seat_order(default_lineup(len(live.names), len(live.players)), index, not game_cls.fixed_roles)
        seats: dict[str, Any] = {}
        agent_seeds: dict[str, int] = {}
        seat_names = {player: live.names[number] for player, number in zip(live.players, order)}
        for player, number, seat_seed in zip(live.players, order, seat_seeds):
            if number == 0:
                seats[player] = None
            else:
                agent = copy.deepcopy(live.builtin[live.names[number]])
                reset_agent(agent, seat_seed)
                seats[player] = agent
                agent_seeds[player] = seat_seed
        return match, seats, seat_names, agent_seeds

    @staticmethod
    def _record(match: Match, seat_names: dict[str, str], agent_seeds: dict[str, int], index: int) -> Record:
        """The record of episode ``index`` as played so far, with its seating and the built-in agents' seeds."""
        record = match.record(dict(seat_names))
        record["episode"] = index
        record["agent_seeds"] = dict(agent_seeds)
        return record

    @staticmethod
    def _play_turn(match: Match, seats: dict[str, Any], index: int, remote_move: Any = None) -> tuple[str, dict[str, Any]] | None:
        """Play the seats acting now: each built-in agent's move, and ``remote_move`` for the remote seat when one is
        given; returns the remote seat and its observation when it is still to act."""
        # Everyone acting decides on the same position (simultaneous games), so observe before anyone submits.
        acting = [(player, match.agent_observation(player)) for player in match.acting()]
        waiting = None
        for player, observation in acting:
            if match.over:
                break
            observation["episode"] = index
            agent = seats[player]
            if agent is not None:
                (action,) = act_batch(agent, [observation])
                match.submit(player, action)
            elif remote_move is not None:
                match.submit(player, remote_move)
            elif waiting is None:
                waiting = (player, observation)
        return None if match.over else waiting

    def _advance(self, live: LiveMatch) -> None:
        """Play the built-in seats until the remote agent is to act, or store the match once it is over.

        A failure while playing ends only its episode (see :meth:`_episode_failed`); play goes on with the next one.
        """
        while live.pending is None and not live.over:
            try:
                done = self._play_builtin(live)
            except Exception as error:  # noqa: BLE001 - a server-side failure ends its episode with the reason, never the match
                self._episode_failed(live, failure_reason(error, f"episode {live.index} failed on the server"))
                continue
            if done:
                self._store(live)

    def _play_builtin(self, live: LiveMatch) -> bool:
        """Play on until the remote agent is to act (False) or every episode is played (True)."""
        while True:
            if live.match is None:
                if live.index >= live.episodes or live.stopped is not None:
                    return True
                live.match, live.seats, live.seat_names, live.agent_seeds = self._new_episode(live, live.index)
            match = live.match
            if match.over:
                live.records.append(self._record(match, live.seat_names, live.agent_seeds, live.index))
                live.log({"kind": "episode", "episode": live.index, "returns": dict(live.records[-1]["returns"]), "seats": dict(live.seat_names)})
                live.match = None
                live.index += 1
                continue
            waiting = self._play_turn(match, live.seats, live.index)
            if waiting is not None:
                player, observation = waiting
                live.turn += 1
                live.pending = {"turn": live.turn, "episode": live.index, "player": player, "observation": observation}
                live.log(
                    {
                        "kind": "turn",
                        "turn": live.turn,
                        "episode": live.index,
                        "player": player,
                        "agent": live.remote,
                        "seen": str(observation.get("text", "")),
                        "action": None,
                    }
                )
                live.deadline = time.monotonic() + live.turn_timeout
                return False

    def _episode_failed(self, live: LiveMatch, reason: str, action: Any = None) -> None:
        """Keep the episode in progress as it was played, with ``reason`` (and the remote ``action`` that failed, if
        one did), and put the remote agent's forfeit of it in its place; if even that fails, stop the match."""
        played = None
        if live.match is not None:
            try:
                played = self._record(live.match, live.seat_names, live.agent_seeds, live.index)
            except Exception as error:  # noqa: BLE001 - a game too broken to write its record still has its failure kept
                reason += f" (its record could not be written: {type(error).__name__})"
        failure: dict[str, Any] = {"episode": live.index, "reason": reason, "record": played}
        if action is not None:
            failure["action"] = action if not isinstance(action, str) or len(action) <= ACTION_CHARS else action[:ACTION_CHARS] + "..."
        live.failures.append(failure)
        live.match, live.pending = None, None
        try:
            live.records.append(self._forfeit(live, live.index, reason))
        except Exception as error:  # noqa: BLE001 - no remote move is in a forfeit: this failure is the server's own
            failure["forfeit"] = live.stopped = failure_reason(error, "its forfeit could not be played either, so the match stopped")
            return
        live.index += 1

    def _forfeit(self, live: LiveMatch, index: int, reason: str) -> Record:
        """Play episode ``index`` again from its start, with its seeds, the remote agent forfeiting its first turn; its record."""
        match, seats, seat_names, agent_seeds = self._new_episode(live, index)
        failure = AgentFailure(f"the episode failed on the server, which counts against this agent: {reason}", forfeit=True)

        def decide(player: str) -> Any:
            agent = seats[player]
            if agent is None:
                return failure
            return act_batch(agent, [{**match.agent_observation(player), "episode": index}])[0]

        match.play_until(decide)
        return self._record(match, seat_names, agent_seeds, index)

    @staticmethod
    def _finish(live: LiveMatch) -> None:
        """Mark the match ended and free what it no longer needs (the records are stored, the game is over)."""
        live.finished_at = time.monotonic()
        live.records, live.match, live.seats, live.builtin = [], None, {}, {}

    def _replayed(self, live: LiveMatch, record: Record) -> NewEpisode:
        """Replay ``record`` (its built-in seats checked move by move) into the episode to store; raises if it does not replay."""
        from parlour.baselines import make_scripted

        env_id = live.env_id
        checked = {seat: make_scripted(name, env_id) for seat, name in record["agents"].items() if name in live.builtin}
        fresh = replay(record, agents=checked)
        return NewEpisode(
            env_id=env_id,
            env_version=game_class(env_id).version,
            seed=fresh["seed"],
            seating=dict(fresh["agents"]),
            returns={seat: float(value) for seat, value in fresh["returns"].items()},
            fingerprint=fingerprint(fresh),
            record=fresh,
            details=outcome_details(fresh),
        )

    def _store(self, live: LiveMatch) -> None:
        """Replay the match's records and store them as a live submission, failures and all; publish the result.

        An episode that does not replay fails like one that failed in play (its forfeit is stored in its place).
        If the database refuses the episodes, the match is stored without them, with the reason; only if it
        refuses that too does the match end in error.
        """
        env_id = live.env_id
        game_cls = game_class(env_id)
        episodes = []
        for record in live.records:
            try:
                episodes.append(self._replayed(live, record))
                continue
            except Exception as error:  # noqa: BLE001 - a record that does not replay is a failed episode, never a dropped match
                reason = failure_reason(error, f"episode {record['episode']} did not replay when the match was stored")
            failure: dict[str, Any] = {"episode": record["episode"], "reason": reason, "record": record}
            live.failures.append(failure)
            try:
                episodes.append(self._replayed(live, self._forfeit(live, record["episode"], reason)))
            except Exception as error:  # noqa: BLE001 - the server's own failure: the episode is kept unrated, with both reasons
                failure["forfeit"] = failure_reason(error, "its forfeit could not be played or replayed either")
        summary = {
            "env_id": env_id,
            "env_version": game_cls.version,
            "agents": list(live.names),
            "seed": live.seed,
            "episodes": live.episodes,
            "rotate_seats": not game_cls.fixed_roles,
            "live": live.id,
            "commitment": live.commitment,
            "secret": live.secret,
            "status": "failed" if live.failures else "complete",
            "failures": live.failures,
        }
        if live.stopped is not None:
            summary["stopped"] = live.stopped
        builtin = set(live.builtin)
        try:
            # Outside the quota: it was checked when the match began (see the module docstring).
            stored = self.board.store.add_submission(live.submitter, env_id, game_cls.version, summary, episodes, builtin=builtin, source="live")
        except Exception as error:  # noqa: BLE001 - a refused store keeps the match, without its episodes, and says why
            live.failures.append({"episode": None, "reason": failure_reason(error, "the database refused the match's episodes"), "record": None})
            summary["status"], episodes = "failed", []
            try:
                stored = self.board.store.add_submission(live.submitter, env_id, game_cls.version, summary, [], builtin=builtin, source="live")
            except Exception as again:  # noqa: BLE001 - nothing is left to store the match in: the client is told why
                live.error = failure_reason(again, "the match could not be stored")
                self._finish(live)
                return
        returns: dict[str, list[float]] = {}
        for episode in episodes:
            for seat, name in episode.seating.items():
                returns.setdefault(name, []).append(episode.returns[seat])
        live.result = {
            "submission": stored.submission_id,
            "episodes": len(episodes),
            "seed": live.seed,
            "secret": live.secret,
            "returns": {name: sum(values) / len(values) for name, values in returns.items()},
            "failures": [{"episode": failure["episode"], "reason": failure["reason"]} for failure in live.failures],
        }
        self._finish(live)

    def _start_sweeper(self) -> None:
        """A daemon thread that plays expired turns of matches nobody is polling, so abandoned matches end."""
        if self._sweeper is not None:
            return

        def sweep() -> None:
            while True:
                time.sleep(min(1.0, self.turn_timeout / 2))
                with self._lock:
                    self._drop_finished()
                for live in list(self.matches.values()):
                    with live.condition:
                        if not live.over:
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
    observations; the server keeps the seeds and plays ``opponent``.
    ``episodes`` may only repeat the server's fixed match size; ``progress`` shows a bar of the episodes played. Returns
    ``{"submission", "episodes", "seed", "secret", "returns", "failures"}`` (mean
    return per agent; each episode that failed on the server, with its reason) after checking the revealed secret against the commitment given at
    the start (:func:`check_reveal`).
    """
    import os

    import httpx
    from tqdm.auto import tqdm

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
        # One bar for the match (episodes done of its fixed size), not a line per episode.
        with tqdm(total=created["episodes"], unit="episode", desc=f"{env_id} live", disable=not progress) as bar:

            def started(episode: int) -> None:
                bar.update(episode - bar.n)

            result = _play(
                player,
                created["commitment"],
                secrets.SystemRandom(),
                lambda: call("GET", f"/api/live/{match_id}/turn", params={"wait": 30}),
                lambda turn, action: call("POST", f"/api/live/{match_id}/act", json={"turn": turn, "action": action}),
                started,
            )
            bar.update(created["episodes"] - bar.n)
        return result


def _play(
    player: Any,
    commitment: str,
    seeds: random.Random,
    next_turn: Callable[[], dict[str, Any]],
    send: Callable[[int, Any], Any],
    on_episode: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Play a live match's turns as a client, over HTTP (:func:`connect`) or in this process (:func:`play_local`).

    ``next_turn()`` waits for the next turn's answer; ``send(turn, action)`` plays ``player``'s action (a string,
    integer or dict as it stands, anything else as its ``str``). The agent is reset with a fresh seed from ``seeds``
    at each new episode, and ``on_episode`` (if given) is told that episode's number. At the end the revealed secret
    is checked against ``commitment`` (:func:`check_reveal`) and the result returned; a match in error raises
    ``RuntimeError`` with its detail.
    """
    current = None
    while True:
        turn = next_turn()
        if turn["status"] == "done":
            check_reveal(commitment, turn["secret"], turn["seed"])
            return {key: turn[key] for key in ("submission", "episodes", "seed", "secret", "returns", "failures")}
        if turn["status"] == "error":
            raise RuntimeError(turn["detail"])
        if turn["status"] != "act":
            continue
        if turn["episode"] != current:
            current = turn["episode"]
            reset_agent(player, seeds.randrange(2**63))
            if on_episode is not None:
                on_episode(current)
        (action,) = act_batch(player, [turn["observation"]])
        send(turn["turn"], action if isinstance(action, (str, int, dict)) else str(action))


def check_reveal(commitment: str, secret: str, seed: int) -> None:
    """Check that a finished match's revealed ``secret`` is the one committed to and gives its ``seed``; ``ValueError`` if not."""
    if commitment_of(secret) != commitment or challenge_seed(secret) != seed:
        raise ValueError("the server revealed a secret that does not match the commitment it gave when the match began; report this server")


def play_local(
    hub: LiveHub, submitter: str, agent: Any, env_id: str, opponent: str | None = "random", name: str | None = None, seed: int | None = None
) -> dict[str, Any]:
    """Play ``agent`` (an object with ``act``) through ``hub`` in this process, as :func:`connect` plays it over HTTP; returns the result.

    ``name`` defaults to the agent's own name. The agent gets exactly what a
    remote client gets: the creation answer is not shown to it, only its observations.
    ``seed`` seeds the agent's episodes (default: unpredictable, as a remote client's are).
    """
    from parlour.agents import agent_name

    created = hub.create(submitter, env_id, name or agent_name(agent), opponent)
    live = hub.get(created["match"], submitter)
    seeds = secrets.SystemRandom() if seed is None else random.Random(seed)
    return _play(agent, created["commitment"], seeds, lambda: hub.turn(live, wait=60.0), lambda turn, action: hub.act(live, turn, action))

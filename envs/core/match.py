"""One episode of a game, with the mechanics every game shares.

:class:`Match` is the single place where parlour implements

* the engine's options, accepted by every game: ``error_allowance`` (invalid
  actions a player may make before it forfeits), ``max_turns`` (moves applied
  before the episode is truncated), ``max_action_chars`` (agent text beyond it
  is cut before parsing; the record keeps the cut text and the original
  length) and, for games with tools, ``max_tool_calls`` (calls per turn) and
  ``max_tool_result_chars`` (a tool's answer beyond it is cut, with a note, before
  the player sees it or the record digests it);
* the invalid-action policy: a malformed or illegal action is reported to its
  player in the next observation and in ``infos[player]["invalid_action"]``,
  and past ``error_allowance`` the player forfeits;
* the per-player inbox of typed messages: a player's observation is everything
  new since its last action, and the first one carries the rules and its role;
* tool calls: read from the action (see :mod:`parlour.envs.core.tools`),
  validated, answered to the caller alone, budgeted per turn and recorded;
* simultaneous moves (held until every acting player has moved), eliminated
  players (never asked to act again), truncation;
* the legal-move cache, returns, the outcome, the episode record (see
  :mod:`parlour.envs.core.record`) and snapshots of the whole episode.

The faces (AEC, Parallel, Gymnasium) are thin adapters over a Match.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import pickle
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from parlour.envs.core.agent import AgentFailure
from parlour.envs.core.context import Context, Message
from parlour.envs.core.errors import InvalidMove, did_you_mean
from parlour.envs.core.game import Game, Move, Outcome, int_option
from parlour.envs.core.pcg64 import MASK32, PCG64Twin
from parlour.envs.core.rendering import render
from parlour.envs.core.tools import Tool, find_calls, validate, well_formed

if TYPE_CHECKING:
    from parlour.envs.core.record_types import Record, Step

#: The format name and version every record carries (see :mod:`parlour.envs.core.record`).
RECORD_FORMAT = "parlour.record"
RECORD_VERSION = 2

#: The longest failure reason a record keeps (a backend's error can quote a whole response).
FAILURE_CHARS = 500

#: Default of ``max_action_chars``: longer agent text is cut before parsing.
DEFAULT_MAX_ACTION_CHARS = 16384
#: Default of ``max_tool_result_chars``: a longer tool answer is cut (a program's output, a huge document).
DEFAULT_MAX_TOOL_RESULT_CHARS = 65536
#: The legal moves of a player who is not to act (tuples: shared, so they must not be mutated).
NOT_ACTING: tuple = ((), ())
#: The error an action that is neither text nor a move index gets (the same whatever its type, so records replay).
NOT_AN_ACTION = "Actions must be text (or a move index in vector mode)."


class LazyGenerator:
    """``np.random.default_rng(seed)``, created on first use and otherwise the same.

    Seeding a generator costs more than a whole move of a small game, and the
    deterministic games (TicTacToe, Nim, ...) never draw, so they should not pay for it.
    The usual draws of the card and dice games, ``shuffle`` of a list and ``integers``
    with int bounds, are made by a pure-Python twin of the generator
    (:class:`~parlour.envs.core.pcg64.PCG64Twin`) until anything else is asked for: the
    same numbers for a fraction of numpy's cost on a few items, and the real
    generator then takes the stream over from the twin's state.
    """

    __slots__ = ("_seed", "_generator", "_twin")

    def __init__(self, seed: int):
        self._seed = seed
        self._generator: np.random.Generator | None = None
        self._twin: PCG64Twin | None = None

    @property
    def used(self) -> bool:
        """Whether anything was drawn (a game that never draws does not depend on its seed)."""
        return self._generator is not None or self._twin is not None

    def _real(self) -> np.random.Generator:
        """The numpy generator, made now if need be, in the state the twin's draws left it in."""
        generator = self._generator
        if generator is None:
            generator = self._generator = np.random.default_rng(self._seed)
            if self._twin is not None:
                generator.bit_generator.state = self._twin.state()
                self._twin = None
        return generator

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """``Generator.shuffle``: a list is shuffled by the twin while there is no numpy generator yet."""
        if self._generator is None and type(x) is list and axis == 0:
            (self._twin or self._start_twin()).shuffle(x)
            return
        self._real().shuffle(x, axis)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64, endpoint: bool = False) -> Any:
        """``Generator.integers``: int bounds (a range below 2**32 - 1) and an int count or none are drawn by the twin
        while there is no numpy generator yet, as numpy draws them (an ``np.int64``, or an array of them)."""
        if (
            self._generator is None
            and dtype is np.int64
            and not endpoint
            and type(low) is int
            and (high is None or type(high) is int)
            and (size is None or (type(size) is int and size >= 0))
        ):
            low, high = (0, low) if high is None else (low, high)
            span = high - 1 - low
            # Outside these bounds numpy raises (low >= high, beyond int64) or draws 64 bits at a time: its own path.
            if 0 <= span < MASK32 and -(1 << 63) <= low and high <= 1 << 63:
                twin = self._twin or self._start_twin()
                if size is None:
                    return np.int64(twin.bounded(low, span, 1)[0])
                return np.array(twin.bounded(low, span, size), dtype=np.int64)
        return self._real().integers(low, high, size, dtype, endpoint)

    def _start_twin(self) -> PCG64Twin:
        """The twin of ``default_rng(seed)``, made at the first draw."""
        self._twin = twin = PCG64Twin(self._seed)
        return twin

    def __deepcopy__(self, memo: dict) -> LazyGenerator:
        """A copy that draws what this one would draw next; one that has not drawn yet is copied as its seed alone.

        Copying is the runner's first step with a scripted agent in every seat of every episode, and copy's general
        path (``__reduce_ex__``, then each slot) costs as much as the rest of the agent's copy.
        """
        copied = LazyGenerator(self._seed)
        if self._generator is not None:
            copied._generator = copy.deepcopy(self._generator, memo)
        elif self._twin is not None:
            copied._twin = self._twin.copy()
        return copied

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            # Own slots not yet set (copy and pickle build the object without __init__) and dunder look-ups.
            raise AttributeError(name)
        return getattr(self._real(), name)

    def as_generator(self) -> np.random.Generator:
        """This object, typed as the ``np.random.Generator`` it stands in for (every attribute is the generator's)."""
        # A Generator in all but type: attribute look-ups go to the real one, made on first use.
        return cast(np.random.Generator, self)


@dataclass(frozen=True)
class EngineOptions:
    """The engine's options, which every game accepts beside its own (see the module docstring)."""

    error_allowance: int
    max_turns: int | None
    max_action_chars: int
    max_tool_calls: int
    max_tool_result_chars: int


ENGINE_OPTIONS = tuple(EngineOptions.__dataclass_fields__)


def game_options(game_cls: type[Game]) -> list[str]:
    """The names of ``game_cls``'s own options (its keyword-only constructor arguments)."""
    parameters = inspect.signature(game_cls.__init__).parameters
    return sorted(name for name, p in parameters.items() if name != "self" and p.kind == inspect.Parameter.KEYWORD_ONLY)


def split_options(game_cls: type[Game], options: dict[str, Any], face_options: tuple[str, ...] = ()) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(game's options, engine's options)``; a ``TypeError`` listing every known option for an unknown one.

    ``face_options`` are the options the calling face took before handing on the rest (the Gymnasium face's
    ``opponent``, ``seat``, ...): a misspelt one is suggested and listed with the others.
    """
    own = game_options(game_cls)
    unknown = sorted(set(options) - set(own) - set(ENGINE_OPTIONS))
    if unknown:
        known = [*face_options, *own, *ENGINE_OPTIONS]
        hints = [f"{name!r}{did_you_mean(name, known)}" for name in unknown]
        raise TypeError(f"{game_cls.name} got unknown option(s) {', '.join(hints)}; its options are: {', '.join(known)}")
    game = {k: v for k, v in options.items() if k in own}
    engine = {k: v for k, v in options.items() if k in ENGINE_OPTIONS}
    return game, engine


def make_game(game_cls: type[Game], options: dict[str, Any]) -> Game:
    """Construct ``game_cls`` from ``options`` (engine options are checked and left out); clear errors for bad ones."""
    own, engine = split_options(game_cls, options)
    game = game_cls(**own)
    engine_options(game, engine)
    return game


def engine_options(game: Game, options: dict[str, Any]) -> EngineOptions:
    """The engine options for ``game`` from the given ones and the defaults; ``ValueError`` naming a bad one."""
    max_turns = options.get("max_turns")
    for name in ("max_tool_calls", "max_tool_result_chars"):
        if name in options and not game.tools:
            raise ValueError(f"{game.name} has no tools, so {name} does not apply")
    return EngineOptions(
        error_allowance=int_option("error_allowance", options.get("error_allowance", game.default_error_allowance), 0),
        max_turns=None if max_turns is None else int_option("max_turns", max_turns, 1),
        max_action_chars=int_option("max_action_chars", options.get("max_action_chars", DEFAULT_MAX_ACTION_CHARS), 1),
        max_tool_calls=int_option("max_tool_calls", options.get("max_tool_calls", game.default_max_tool_calls), 0),
        max_tool_result_chars=int_option("max_tool_result_chars", options.get("max_tool_result_chars", DEFAULT_MAX_TOOL_RESULT_CHARS), 1),
    )


def os_entropy() -> int:
    """The int of OS entropy that ``np.random.default_rng()`` seeds itself from (128 bits)."""
    entropy = np.random.SeedSequence().entropy
    # A SeedSequence made without entropy draws an int from the OS (the stubs also allow the kinds one can give it).
    assert isinstance(entropy, int)
    return entropy


def lazy_default_rng(seed: Any = None) -> np.random.Generator:
    """``np.random.default_rng(seed)``, the same stream, made on first use (a :class:`LazyGenerator`).

    For what reseeds every episode, such as a scripted agent: the generator costs nothing until it draws, a deep
    copy of one that has not drawn copies a seed, and the usual first draws cost less than numpy's seeding. A seed
    the twin cannot take (not a non-negative ``int``: a ``SeedSequence``, a list, a negative number) gets numpy's
    generator at once, and numpy's answer to it. No seed draws OS entropy, as ``default_rng()`` does.
    """
    if seed is None:
        seed = os_entropy()  # what default_rng() would draw, kept so the twin can start from it
    if type(seed) is int and seed >= 0:
        return LazyGenerator(seed).as_generator()
    return np.random.default_rng(seed)


def entropy_seed() -> int:
    """A seed drawn from OS entropy, below 2**63, for an episode reset without one (it is recorded, so the episode replays)."""
    return os_entropy() % (1 << 63)


def result_digest(text: str) -> str:
    """The digest of a tool result kept in records (results are re-derived on replay, not stored)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class Snapshot:
    """A copy of a whole episode's state, taken by ``snapshot()`` and put back by ``restore()``; picklable.

    ``face`` holds the state of the face that took it (agents, rewards, ...), if any.
    """

    env_id: str
    options: str
    state: bytes
    face: bytes = b""


class Match:
    """Runs one game episode at a time: ``reset``, then ``submit`` actions of the acting players.

    Args:
        game_cls: the :class:`Game` subclass to play.
        options: the game's keyword options and the engine's (they go into the record).
        face_options: the options of the face that made the match, named in the error for an unknown option.
    """

    def __init__(self, game_cls: type[Game], options: dict[str, Any] | None = None, face_options: tuple[str, ...] = ()):
        self.options = dict(options or {})
        own, engine = split_options(game_cls, self.options, face_options)
        self.game = game_cls(**own)
        self.settings = engine_options(self.game, engine)
        self.env_id = game_cls.env_id()
        self.players = list(self.game.players)
        self.tools: dict[str, Tool] = {tool.name: tool for tool in self.game.tools}
        self._no_moves = np.zeros(len(self.game.moves or ()), dtype=np.int8)
        self.seed: int | None = None
        self.started = False
        self.ctx = Context(self.players, LazyGenerator(0).as_generator())
        self.errors: dict[str, int] = {}
        self.returns: dict[str, float] = {}
        self.last_error: dict[str, str] = {}
        self.steps: list[dict[str, Any]] = []
        self.turns = 0
        self.tool_calls: dict[str, int] = {}
        #: Set by replay before each step: the step's recorded tool answers, in call order (see Tool.recorded).
        self.recorded_outputs: list[Any] = []
        self.outcome: Outcome | None = None
        self._pending: dict[str, Move] = {}
        self._acting: list[str] = []
        self._fixed_rules: dict[str, Message] | None = None
        self._legal: dict[str, tuple[list[int], list[str]]] = {}

    def _refresh(self) -> None:
        """Work out who acts now and forget the last state's legal moves; called wherever the state changes (reset, submit, restore).

        The legal moves are worked out when first asked for (:meth:`_legal_of`), then kept for the state:
        the prompt, the infos and the parsing of the action all read them, and ask the game once.
        """
        self._legal = {}
        if self.outcome is not None or not self.started:
            self._acting = []
            return
        out, pending = self.ctx.eliminated, self._pending
        to_move = self.game.to_move()
        self._acting = [p for p in to_move if p not in out and p not in pending] if out or pending else to_move

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None) -> None:
        """Start a new episode. Without a seed one is drawn from OS entropy and recorded, so every episode replays."""
        if seed is None:
            seed = entropy_seed()
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        self.seed = int(seed)
        self.ctx = ctx = Context(self.players, LazyGenerator(self.seed).as_generator())
        self.errors = dict.fromkeys(self.players, 0)
        self.returns = dict.fromkeys(self.players, 0.0)
        self.last_error = {}
        self.steps = []
        self.turns = 0
        self.tool_calls = {}
        self.outcome = None
        self._pending = {}
        self.started = False
        self._acting, self._legal = [], {}  # nobody acts while the game sets up
        self.game.start(ctx)
        # The rules come first, before anything the game said while setting up.
        rules = self._fixed_rules or self._rules_messages()
        for player in self.players:
            ctx.inboxes[player].insert(0, rules[player])
        self.started = True
        self._settle()
        self._refresh()

    def _rules_messages(self) -> dict[str, Message]:
        """Each player's rules message; kept across episodes when the game's rules are fixed (``Game.fixed_rules``)."""
        game = self.game
        rules: dict[str, Message] = {player: {"sender": None, "to": [player], "kind": "rules", "text": game.rules(player)} for player in self.players}
        if game.fixed_rules:
            self._fixed_rules = rules
        return rules

    @property
    def over(self) -> bool:
        """Whether the episode has ended (finished by the rules, a forfeit, or truncated)."""
        return self.outcome is not None

    @property
    def eliminated(self) -> dict[str, str]:
        """Players taken out of the game so far, with the reason."""
        return self.ctx.eliminated

    def acting(self) -> list[str]:
        """Players whose action is awaited now (empty once the game is over); do not mutate the list."""
        return self._acting

    def submit(self, player: str, action: Any) -> dict[str, float]:
        """Play ``player``'s action and return the rewards paid at this step.

        ``action`` is text (tool calls included), an OpenAI assistant message
        dict carrying ``tool_calls``, or, for enumerable games, a move index.
        Anything else is an invalid action. Never raises because of what the
        action says; raises ``RuntimeError`` / ``ValueError`` for API misuse
        (an episode not started or over, a player who is not to act).
        """
        if not self.started:
            raise RuntimeError("call reset() before stepping")
        if self.outcome is not None:
            raise RuntimeError("the episode is over; call reset() to start a new one")
        acting = self._acting
        if player not in acting:
            raise ValueError(f"{player!r} is not to act now; acting: {acting}")
        game, ctx = self.game, self.ctx
        ctx.inboxes[player].clear()
        if self.last_error:
            self.last_error.pop(player, None)
        if (
            type(action) is str
            and not game.simultaneous
            and game.moves is not None
            and action in (self._legal.get(player) or self._legal_of(player))[1]
            and len(action) <= self.settings.max_action_chars
        ):
            # The usual step of a turn-based game, a legal move's own name (well formed and short, as move names are), is
            # played here without the general path's checks; it is recorded and settled the same.
            if self.tool_calls:
                self.tool_calls.pop(player, None)
            self._apply({player: action})
            return self._close({"player": player, "action": action, "move": action, "error": None})
        step: dict[str, Any] = {"player": player}
        error: str | None
        if isinstance(action, AgentFailure):
            move, error = None, self._failed(action, step)
        else:
            move, error = self._interpret(player, action, step)
        if error is not None:
            self.errors[player] += 1
            left = self.settings.error_allowance - self.errors[player]
            self.last_error[player] = error
            if step.get("forfeit"):
                ctx.tell(f"Invalid action: {error} The player forfeits.", to=player, kind="feedback")
                game.forfeit(ctx, player, reason=f"{player} forfeited: its agent could not decide")
            elif left < 0:
                # The error may quote the player's own text, and the reason is told to everyone: the error goes to the player alone.
                ctx.tell(f"Invalid action: {error} No invalid actions are left.", to=player, kind="feedback")
                game.forfeit(ctx, player, reason=f"{player} exceeded the invalid-action allowance")
            else:
                ctx.tell(f"Invalid action: {error} Try again ({left} more invalid action(s) allowed).", to=player, kind="feedback")
        elif "move" in step:
            if self.tool_calls:
                self.tool_calls.pop(player, None)
            if game.simultaneous and len(acting) > 1:
                self._pending[player] = move
            else:
                moves = self._pending
                moves[player] = move
                self._pending = {}
                self._apply(moves)
        step.setdefault("move", None)
        step["error"] = error
        return self._close(step)

    def play_until(
        self, decide: Callable[[str], Any], until: Callable[[], bool] | None = None, seats: Collection[str] | None = None
    ) -> dict[str, float]:
        """Submit ``decide(player)`` for the acting seats until the episode is over or ``until()`` is true.

        ``seats``: only these seats are played (default: all), and the loop also stops when none of them is
        acting, so the caller can hand the turn to a seat it plays otherwise (a learner, a client, a person).
        The seats played at a step all decide on the same position before any of their actions is submitted
        (a simultaneous game's seats see the same state), in :meth:`acting`'s order; ``until`` is checked
        before each step. Returns the rewards paid to each player meanwhile. This is the loop that the
        Gymnasium face, the OpenEnv server, live matches and the trainers drive a match with.
        """
        paid = dict.fromkeys(self.players, 0.0)
        while self.outcome is None and (until is None or not until()):
            acting = self.acting() if seats is None else [player for player in self.acting() if player in seats]
            if not acting:
                break
            decisions = [(player, decide(player)) for player in acting]
            for player, action in decisions:
                if self.outcome is not None:
                    break
                for payee, reward in self.submit(player, action).items():
                    paid[payee] += reward
        return paid

    def _apply(self, moves: dict[str, Move]) -> None:
        """Have the game apply the step's ``moves`` (one per acting player) and count the turn against ``max_turns``."""
        self.game.apply(self.ctx, moves)
        self.turns += 1
        if self.settings.max_turns is not None and self.turns >= self.settings.max_turns:
            self.ctx.truncate(f"the turn limit ({self.settings.max_turns}) was reached")

    def _close(self, step: dict[str, Any]) -> dict[str, float]:
        """End the step: book its rewards into ``step``, work out who acts next, record it; returns the rewards."""
        step["rewards"] = rewards = self._settle()
        self._refresh()
        self.steps.append(step)
        return rewards

    @staticmethod
    def _failed(failure: AgentFailure, step: dict[str, Any]) -> str:
        """Record an agent's failure to decide as an invalid action with its reason; returns the error."""
        reason = well_formed(str(failure.reason))[:FAILURE_CHARS]
        step.update(action=None, failure=reason)
        if failure.forfeit:
            step["forfeit"] = True
        return f"the agent could not decide: {reason}"

    def _interpret(self, player: str, action: Any, step: dict[str, Any]) -> tuple[Move, str | None]:
        """Read an action into ``(move, error)``, writing the recorded action (and tool calls) into ``step``.

        A move of ``None`` without an error means the player only called tools and still has to move.
        """
        game = self.game
        if (
            type(action) is str
            and game.moves is not None
            and len(action) <= self.settings.max_action_chars
            and action in (self._legal.get(player) or self._legal_of(player))[1]
        ):
            # The usual action, a legal move's own name (well formed, as move names are), read without the checks below.
            step["action"] = step["move"] = action
            return action, None
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            index = int(action)
            step["action"] = index
            moves = game.moves
            if moves is None:
                return None, f"{game.name} takes text actions, not indices."
            if not 0 <= index < len(moves):
                return None, f"Action index {index} is out of range (0 to {len(moves) - 1})."
            if index not in (self._legal.get(player) or self._legal_of(player))[0]:
                return None, f"'{moves[index]}' is not legal now. Legal moves: {', '.join(self.legal_moves_of(player))}."
            step["move"] = moves[index]
            return moves[index], None
        if isinstance(action, dict) and self.tools:
            try:
                action = json.dumps(action, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError, RecursionError) as error:
                step["action"] = None
                return (
                    None,
                    f"The message could not be read as JSON ({str(error)[:200]}); its values must be strings, numbers, booleans, null, lists or objects.",
                )
        if not isinstance(action, str):
            step["action"] = None
            return None, NOT_AN_ACTION
        limit = self.settings.max_action_chars
        if len(action) > limit:
            step["action_chars"] = len(action)
            action = action[:limit]
        step["action"] = action = well_formed(action)
        if game.moves is not None and action in (self._legal.get(player) or self._legal_of(player))[1]:
            # A legal move string is its own move (the contract of legal_moves), so the game's parser is skipped.
            step["move"] = action
            return action, None
        try:
            if self.tools:
                tools = game.tools_for(player)
                calls = find_calls(action, tools)
                if calls:
                    return self._call_tools(player, calls, {tool.name: tool for tool in tools}, step)
            move = game.parse(player, action)
        except InvalidMove as invalid:
            return None, str(invalid)
        except (ValueError, OverflowError, RecursionError):
            # int() or float() of an absurdly long number, or JSON nested too deep: agent text must never crash a game.
            return None, "The action could not be read (a number too large or nesting too deep)."
        step["move"] = move
        return move, None

    def _cut(self, result: str) -> str:
        """A tool's answer within ``max_tool_result_chars``, saying how much was cut (the cut answer is what counts)."""
        limit = self.settings.max_tool_result_chars
        if len(result) <= limit:
            return result
        return result[:limit] + f"\n[... {len(result) - limit} more characters cut: max_tool_result_chars is {limit}]"

    def _call_tools(self, player: str, calls: list, tools: dict[str, Tool], step: dict[str, Any]) -> tuple[Move, str | None]:
        """Answer ``calls`` of the player's ``tools`` in order, up to the turn's budget; a final tool's call is the move."""
        recorded: list[dict[str, Any]] = []
        step["calls"] = recorded
        budget = self.settings.max_tool_calls
        for index, call in enumerate(calls):
            tool, arguments = validate(call, tools)
            if tool.final:
                move = {"tool": tool.name, "arguments": arguments}
                recorded.append({"name": tool.name, "arguments": arguments})
                step["move"] = move
                return move, None
            used = self.tool_calls.get(player, 0)
            if used >= budget:
                raise InvalidMove(f"The tool budget of {budget} call(s) per turn is used up; make your move now.")
            self.tool_calls[player] = used + 1
            self.ctx.tool_calls[player] += 1
            replayed = self.recorded_outputs[index] if tool.recorded and index < len(self.recorded_outputs) else None
            result = replayed if isinstance(replayed, str) else self._cut(self.game.call_tool(player, tool.name, arguments))
            entry = {"name": tool.name, "arguments": arguments, "result": result_digest(result)}
            if tool.recorded:
                entry["output"] = result
            recorded.append(entry)
            self.ctx.tell(result, to=player, kind="tool_result", sender=tool.name)
        return None, None

    def _settle(self) -> dict[str, float]:
        """Book the rewards the game paid in this step; build the outcome and announce it if the game ended."""
        ctx = self.ctx
        rewards = ctx.step_rewards
        if rewards:
            ctx.step_rewards = {}
            returns = self.returns
            for player, amount in rewards.items():
                returns[player] += amount
        else:
            rewards = {}  # a dict of its own: the step's record keeps it
        ending = ctx.ending
        if ending is not None and self.outcome is None:
            returns = self.returns
            self.outcome = outcome = Outcome(
                winners=ending.winners,
                scores=dict(returns),
                reason=ending.reason,
                details=ending.details,
                teams=ending.teams,
                winning_team=ending.winning_team,
                truncated=ending.truncated,
            )
            self._pending = {}
            if outcome.truncated:
                result = "The episode was cut off."
            elif outcome.winning_team is not None:
                result = f"Team {outcome.winning_team} wins."
            elif outcome.winners:
                result = f"Winner: {', '.join(outcome.winners)}."
            else:
                result = "No winner."
            for player in self.players:
                ctx.tell(f"Game over: {outcome.reason}. {result} Your total reward: {returns[player]:g}.", to=player, kind="outcome")
        return rewards

    # ------------------------------------------------------------------ legal moves
    def _legal_of(self, player: str) -> tuple[list[int], list[str]]:
        """``(indices, names)`` of ``player``'s legal moves (empty when it is not to act; enumerable games).

        The game is asked on the first question about a state and the answer kept in ``_legal`` until the state
        changes. The readers (the prompt, the infos, the action's check) look in ``_legal`` first and call this
        only when the answer is not there yet: a move of the text path then calls it once, not once per reader.
        """
        legal = self._legal.get(player)
        if legal is None:
            if self.game.moves is None or player not in self._acting:
                return NOT_ACTING
            legal = self._legal[player] = self.game.legal_indexed_moves(player)
        return legal

    def legal_moves_of(self, player: str) -> list[str]:
        """The move names ``player`` may send now (empty when it is not to act); do not mutate the list."""
        return (self._legal.get(player) or self._legal_of(player))[1]

    # -------------------------------------------------------------- observation
    def messages(self, player: str) -> list[Message]:
        """What ``player`` sees now: its new messages, then, if it is to act, the prompt for its move."""
        inbox = self.ctx.inboxes[player]
        if player in self._acting:
            legal = (self._legal.get(player) or self._legal_of(player))[1] if self.game.moves is not None else None
            return [*inbox, {"sender": None, "to": [player], "kind": "prompt", "text": self.game.prompt(player, legal)}]
        return list(inbox)

    def observation_text(self, player: str) -> str:
        """The text of :meth:`messages`, as an LLM is shown it (see :func:`parlour.envs.core.rendering.render`)."""
        return render(self.messages(player))

    def action_mask(self, player: str) -> np.ndarray:
        """The int8 mask of legal move indices for ``player`` (all zero when it is not to act)."""
        mask = self._no_moves.copy()
        legal = (self._legal.get(player) or self._legal_of(player))[0]
        if len(legal) <= 16:
            # Setting a few items one by one beats numpy's conversion of a short index list.
            for index in legal:
                mask[index] = 1
        else:
            mask[legal] = 1
        return mask

    def legal_moves(self, player: str) -> list[str] | None:
        """The exact strings ``player`` may send now (empty when not acting); ``None`` when moves are not enumerable."""
        if self.game.moves is None:
            return None
        return list(self.legal_moves_of(player))

    def info(self, player: str, with_legal_moves: bool = True) -> dict[str, Any]:
        """The ``infos[player]`` dict shared by all faces: whether it acts, its legal moves (text mode), why its
        last action was refused, why it was eliminated, and the outcome once the game is over."""
        if player in self._acting:
            info: dict[str, Any] = {"acting": True}
            if with_legal_moves and self.game.moves is not None:
                info["legal_moves"] = list((self._legal.get(player) or self._legal_of(player))[1])
        else:
            info = {"acting": False, "legal_moves": []} if with_legal_moves and self.game.moves is not None else {"acting": False}
        errors = self.last_error
        if errors and player in errors:
            info["invalid_action"] = errors[player]
        eliminated = self.ctx.eliminated
        if eliminated and player in eliminated:
            info["eliminated"] = eliminated[player]
        if self.outcome is not None:
            info["outcome"] = self.outcome.to_dict()
        return info

    def infos(self, players: list[str], with_legal_moves: bool = True) -> dict[str, dict[str, Any]]:
        """:meth:`info` of each of ``players``."""
        return {player: self.info(player, with_legal_moves) for player in players}

    def agent_observation(self, player: str, vector: bool = False) -> dict[str, Any]:
        """What an :class:`parlour.Agent` receives: text and typed messages, legal moves, tools, its role and a structured view.

        ``vector=True`` adds ``"vector"``, the player's vector observation (enumerable games only), for agents
        that ask for it (see :func:`parlour.envs.core.agent.wants_vector`).
        """
        messages = self.messages(player)
        observation: dict[str, Any] = {
            "text": render(messages),
            "messages": messages,
            "legal_moves": self.legal_moves(player),
            "player": player,
            "view": self.game.view(player),
            "env_id": self.env_id,
            "invalid_action": self.last_error.get(player),
        }
        if self.tools:
            observation["tools"] = [tool.spec() for tool in self.game.tools_for(player)]
            observation["tool_calls_left"] = self.settings.max_tool_calls - self.tool_calls.get(player, 0)
        if vector and self.game.enumerable:
            observation["vector"] = self.game.vector(player)
        return observation

    def render(self) -> str:
        """The game's picture of the state, then who is to act or how the game ended."""
        picture = self.game.render()
        if self.outcome is not None:
            return f"{picture}\n(game over: {self.outcome.reason})"
        return f"{picture}\n({', '.join(self.acting())} to act)"

    # ------------------------------------------------------------- snapshots
    _STATIC = ("options", "settings", "env_id", "players", "tools", "_no_moves", "_acting", "_legal", "_fixed_rules")

    def snapshot(self, face: bytes = b"") -> Snapshot:
        """A picklable copy of the whole episode (game, messages, ledger, record), independent of later play."""
        state = {key: value for key, value in self.__dict__.items() if key not in self._STATIC}
        return Snapshot(self.env_id, json.dumps(self.options, sort_keys=True), pickle.dumps(state, pickle.HIGHEST_PROTOCOL), face)

    def restore(self, snapshot: Snapshot) -> None:
        """Put the episode back as it was when ``snapshot`` was taken (of this environment, with the same options)."""
        if not isinstance(snapshot, Snapshot):
            raise TypeError(f"restore() takes what snapshot() returned, got {type(snapshot).__name__}")
        if snapshot.env_id != self.env_id or snapshot.options != json.dumps(self.options, sort_keys=True):
            raise ValueError(f"the snapshot is of {snapshot.env_id} with options {snapshot.options}, not of this {self.env_id} episode")
        self.__dict__.update(pickle.loads(snapshot.state))
        self._refresh()

    # ------------------------------------------------------------------- record
    def record(self, agents: dict[str, str] | None = None) -> Record:
        """The record of the current episode, finished or not (the format and its replay: :mod:`parlour.envs.core.record`)."""
        if self.seed is None:
            raise RuntimeError("no episode to record: call reset() first")
        record: Record = {
            "format": RECORD_FORMAT,
            "format_version": RECORD_VERSION,
            "env_id": self.env_id,
            "env_version": type(self.game).version,
            "options": dict(self.options),
            "seed": self.seed,
            "players": list(self.players),
            # Steps are built key by key as the action is read (see submit); each complete one is a Step.
            "steps": cast("list[Step]", [dict(step, rewards=dict(step["rewards"])) for step in self.steps]),
            "done": self.over,
            "returns": dict(self.returns),
            "eliminated": dict(self.eliminated),
            "outcome": self.outcome.to_dict() if self.outcome is not None else None,
        }
        if agents is not None:
            record["agents"] = dict(agents)
        return record

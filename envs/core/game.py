"""The game protocol: every parlour environment is written once as a :class:`Game`.

A game is a deterministic state machine over text. It holds its rules and its
state and nothing of the episode engine: it declares its players, who acts
now, what each player sees, how a text action is parsed and applied, and its
rules prompt. :class:`parlour.envs.core.match.Match` runs it and owns
everything shared: the invalid-action policy, the players' inboxes, the reward
ledger, the outcome, tool calls and their budgets, the record and snapshots.

A game speaks to the engine only through the :class:`~parlour.envs.core.context.Context`
handed to :meth:`Game.start` and :meth:`Game.apply`: ``ctx.tell`` (a message
to some players), ``ctx.reward``, ``ctx.finish`` (winners, teams), ``ctx.eliminate``,
``ctx.truncate`` and ``ctx.rng`` (the episode's only source of randomness).

Writing a game means subclassing :class:`Game` and filling in:

* class metadata, declared and documented together in the metadata section of
  :class:`Game`: ``name``, ``version``, ``description``, ``category``,
  ``zero_sum``, ``simultaneous``, ``reference_agents`` (and ``higher_is_better``
  when a lower score is better, ``default_error_allowance``, and ``fixed_rules``
  when the rules depend only on the options and the seat);
* ``__init__``: keyword-only options (validated, with clear errors; the engine's
  own options ``error_allowance``, ``max_turns``, ``max_action_chars`` and
  ``max_tool_calls`` never reach it), the ``players`` list, and for games with
  enumerable moves the ``moves`` list (the ``Discrete`` action of vector mode is
  an index into it) and ``vector_size``; tool games set ``tools``;
* ``start(ctx)``, ``to_move()``, ``rules(player)``, ``prompt(player, legal)``,
  ``parse(player, text)``, ``apply(ctx, moves)``, ``view(player)``, ``render()``,
  for enumerable games ``legal_actions(player)`` and ``vector(player)``, and for
  tool games ``call_tool(player, name, arguments)``.

A game's state must be picklable (plain Python values and numpy arrays): the
engine copies it for snapshots, search and branching.
"""

from __future__ import annotations

import copy
import pickle
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypedDict

import numpy as np

from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.tools import Tool

if TYPE_CHECKING:
    from parlour.envs.core.context import Context

#: Moves are what ``parse`` returns and ``apply`` consumes. They are stored in
#: episode records, so they must be JSON values (str, int, list, dict).
Move = Any


def int_option(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` if it is an int (not a bool) in [low, high]; otherwise a ``ValueError`` naming the option and its range."""
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be an int {bound}, got {value!r}")
    return value


class OutcomeDict(TypedDict):
    """An :class:`Outcome` as JSON (:meth:`Outcome.to_dict`): a record's ``outcome`` and a final ``infos[player]["outcome"]``.

    ``winner`` is the single winner or ``None``; the other keys are the :class:`Outcome` fields of the same names.
    """

    winner: str | None
    winners: list[str]
    scores: dict[str, float]
    reason: str
    details: dict[str, Any]
    teams: dict[str, list[str]] | None
    winning_team: str | None
    truncated: bool


@dataclass
class Outcome:
    """How an episode ended: reported in every player's final ``infos["outcome"]``.

    ``winners`` lists the winning players (empty for a draw, or a game nobody
    wins). ``teams`` maps team names to their players when the game has teams,
    and ``winning_team`` names the team that won. ``scores`` are the players'
    episode returns. ``reason`` says why the game ended in words;
    ``truncated`` is true when the episode was cut off (``max_turns``, or the
    game's own cut-off) rather than ended by its rules. ``details`` holds
    game-specific analysis (negotiation metrics, rounds survived, ...).
    """

    winners: list[str]
    scores: dict[str, float]
    reason: str
    details: dict[str, Any] = field(default_factory=dict)
    teams: dict[str, list[str]] | None = None
    winning_team: str | None = None
    truncated: bool = False

    @property
    def winner(self) -> str | None:
        """The single winner, or ``None`` for a draw, a shared win or a team game won by several players."""
        return self.winners[0] if len(self.winners) == 1 else None

    def to_dict(self) -> OutcomeDict:
        """The outcome as a JSON-ready dict (``winner`` is the single winner or ``None``, for readers of two-player games)."""
        return {
            "winner": self.winner,
            "winners": list(self.winners),
            "scores": dict(self.scores),
            "reason": self.reason,
            "details": dict(self.details),
            "teams": None if self.teams is None else {team: list(members) for team, members in self.teams.items()},
            "winning_team": self.winning_team,
            "truncated": self.truncated,
        }


def winners_by_score(scores: dict[str, float]) -> list[str]:
    """The players with the highest score, in the order given (all of them when everyone ties)."""
    best = max(scores.values())
    return [player for player, score in scores.items() if score == best]


def lettered_board(cells: list[int], rows: int, columns: int, symbols: dict[int, str]) -> str:
    """A row-major board as text, top row first: each row numbered from ``rows`` down, columns lettered from ``a`` below.

    ``symbols`` maps each cell value to the character shown for it.
    """
    width = len(str(rows))
    lines = [f"{str(rows - r).rjust(width)} {' '.join(symbols[cell] for cell in cells[r * columns : (r + 1) * columns])}" for r in range(rows)]
    lines.append(" " * (width + 1) + " ".join(chr(ord("a") + c) for c in range(columns)))
    return "\n".join(lines)


class Game:
    """Base class of every parlour game; see the module docstring for the contract."""

    # ----------------------------------------------------------------- metadata
    # What a game declares about itself, all in this section: class attributes a subclass overrides (never set
    # per instance) and the registry, the engine, the faces and the leaderboard read, so they hold for every
    # episode and every option value.

    #: The game's name, the ``<Name>`` of its id ``parlour/<Name>-v<version>``.
    name: ClassVar[str]
    #: The version of its rules, in its id and in its records: replay refuses a record of another version.
    version: ClassVar[int] = 0
    #: One or two sentences for listings and the leaderboard: the game and what its options change.
    description: ClassVar[str] = ""
    #: The kind of environment (``game``, ``social``, ``cooperation``, ``negotiation``, ``puzzle``, ``agentic``,
    #: ``search``, ``coding``); the leaderboard's rating method follows it (with ``zero_sum``).
    category: ClassVar[str] = "game"
    #: Whether one player's gain is the others' loss: the default :meth:`forfeit` then pays the others a share.
    zero_sum: ClassVar[bool] = True
    #: Whether all players move at once: :meth:`to_move` names them all, and ``apply`` gets every acting player's move.
    simultaneous: ClassVar[bool] = False
    #: How many invalid actions a player may make before it forfeits.
    default_error_allowance: ClassVar[int] = 2
    #: How many tool calls a player may make before each of its moves, unless the ``max_tool_calls`` option says
    #: otherwise: a game whose episode is one long turn of tool use (a database session) needs more than a quiz.
    default_max_tool_calls: ClassVar[int] = 8
    #: Whether ``rules(player)`` depends only on the options and the player, not on the episode (what
    #: ``start`` dealt or drew); the engine then writes each player's rules once, not once per episode.
    fixed_rules: ClassVar[bool] = False
    #: The scripted agents the leaderboard measures everyone against: the game's strong agent(s), best first, and
    #: ``random``, the zero of its normalised scale. Declared, never assumed to be strong: the leaderboard normalises
    #: by a strong one only where its own table measures it above ``random`` (``tests/test_reference_agents.py``
    #: plays each against ``random``). Empty: the game has no references, and its scores are not normalised.
    reference_agents: ClassVar[tuple[str, ...]] = ()
    #: Whether a higher score (the leaderboard's rating of this game) is better; normalisation follows it.
    higher_is_better: ClassVar[bool] = True
    #: The attributes a move changes (a board, a score list), for a cheap :meth:`clone`; empty: clone pickles the game.
    mutable_state: ClassVar[tuple[str, ...]] = ()
    #: Whether each seat is a role some agents cannot take (a debate's judge): a run then keeps its line-up in
    #: seat order, since rotating seats would put an agent in a role it was not built for.
    fixed_roles: ClassVar[bool] = False
    #: Whether every seat is paid one shared reward (AskOrSearch's asker and expert): agents are then seated as teams, in
    #: self-play and mixed, as in cooperative games; as a rotated pair two agents would always share one mean.
    shared_reward: ClassVar[bool] = False
    #: The agent spec that plays a seat in the Gymnasium face when no ``opponent`` is given (``random`` for seats not
    #: named): a simulated person, such as ServiceDesk's customer, is a seat its scripted simulator plays by default.
    default_opponents: ClassVar[dict[str, str]] = {}
    #: The seats of a tool game that may also move by plain text beside their tools (ServiceDesk's messages): the
    #: bridges that speak only in tool calls (TRL, MCP) give such a seat a ``move`` tool. A game without tools, or
    #: without a final tool, moves by text in every seat and needs no entry here.
    text_moves: ClassVar[tuple[str, ...]] = ()
    #: The game's rules batched over many episodes in numpy (a :class:`parlour.envs.core.vector.GameBatch`
    #: subclass in the same file), which gives it the batched vector face; ``None`` for most games.
    batch: ClassVar[type | None] = None

    # ------------------------------------------------------- set by __init__
    #: The players' names, in seat order.
    players: list[str]
    #: All move names of an enumerable game, in ``Discrete`` index order; ``None``
    #: when moves cannot be enumerated (free text, offers with prices, ...).
    moves: list[str] | None = None
    #: Length of the vector observation (enumerable games only).
    vector_size: int = 0
    #: The tools a player may call before its move (see :mod:`parlour.envs.core.tools`); empty for most games.
    tools: list[Tool] = []

    # ----------------------------------------------------------------- identity
    @classmethod
    def env_id(cls) -> str:
        """The registered id, ``parlour/<Name>-v<version>``."""
        return f"parlour/{cls.name}-v{cls.version}"

    @property
    def enumerable(self) -> bool:
        """Whether moves can be enumerated (vector mode and action masks exist)."""
        return self.moves is not None

    # ------------------------------------------------------ what games implement
    def start(self, ctx: Context) -> None:
        """Begin a new episode; every random draw must come from ``ctx.rng``."""
        raise NotImplementedError

    def to_move(self) -> list[str]:
        """Players who must act now: one for turn-based games; every player for simultaneous ones by default.

        A turn-based game that keeps the index of the seat to move in ``self.turn``
        need not implement it: that seat's player is to move. Eliminated players
        are left out by the engine, so games need not track them here.
        """
        if self.simultaneous:
            return self.players
        try:
            # turn is no attribute of Game: only the turn-based games that keep it have one, and its absence is caught below.
            return [self.players[self.turn]]  # type: ignore[attr-defined]
        except AttributeError:
            raise NotImplementedError(f"{type(self).__name__} must implement to_move() or keep the seat to move in self.turn") from None

    def rules(self, player: str) -> str:
        """The rules prompt and the player's role, shown in its first observation."""
        raise NotImplementedError

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """What an acting player sees besides its new messages: the position and its options.

        ``legal`` holds the move names ``player`` may send now (the engine's
        cached list; do not change it), or ``None`` when moves are not enumerable.
        """
        raise NotImplementedError

    def apply(self, ctx: Context, moves: dict[str, Move]) -> None:
        """Apply already validated moves: one for turn-based games, all acting players' for simultaneous ones."""
        raise NotImplementedError

    def view(self, player: str) -> dict[str, Any]:
        """A JSON-ready dict of what ``player`` knows now, for scripted agents; never another player's secrets."""
        raise NotImplementedError

    def render(self) -> str:
        """The whole state for a spectator, as text (ANSI colours allowed); the engine adds whose turn it is."""
        raise NotImplementedError

    def legal_actions(self, player: str) -> list[int]:
        """Indices into :attr:`moves` that ``player`` may play now (enumerable games)."""
        raise NotImplementedError(f"{self.name} has no enumerable moves")

    def legal_indexed_moves(self, player: str) -> tuple[list[int], list[str]]:
        """``(legal_actions(player), their move names)``: what the engine asks once per state and keeps.

        The default maps the indices to names. A game whose legal moves are runs of consecutive indices
        (bids above the standing one, counts taken from a heap) overrides it to slice :attr:`moves` instead,
        which the text path pays for at every move. Both lists must be new: the engine hands them out.
        """
        moves = self.moves
        if moves is None:
            raise NotImplementedError(f"{self.name} has no enumerable moves")
        actions = self.legal_actions(player)
        return actions, list(map(moves.__getitem__, actions))

    def vector(self, player: str) -> np.ndarray:
        """The vector-mode observation of ``player``: float32 array of :attr:`vector_size` in [0, 1]."""
        raise NotImplementedError(f"{self.name} has no vector observation")

    def tools_for(self, player: str) -> list[Tool]:
        """The tools ``player`` may call now (default: all of :attr:`tools`); a role's own tools, for instance."""
        return self.tools

    def call_tool(self, player: str, name: str, arguments: dict[str, Any]) -> str:
        """Answer a call of one of :attr:`tools` (arguments already validated against its schema) with text.

        It is answered to ``player`` alone and re-executed on replay, where its
        result must come out the same. A call does not advance the game; it may
        note what it showed (the passages a search returned, for an evidence
        reward), since replay repeats every call in order.
        """
        raise NotImplementedError(f"{self.name} has no tools")

    def parse(self, player: str, text: str) -> Move:
        """Turn a text action into a move, or raise :class:`InvalidMove` saying why.

        The default, for enumerable games, accepts a legal move name anywhere in
        the text and takes the last one mentioned, so that reasoning before the
        move is tolerated.
        """
        if self.moves is None:
            raise InvalidMove(f"{self.name} reads moves only through its tools.")
        legal = self.legal_moves(player)
        candidate = text.strip().lower()
        if candidate in legal:
            return candidate
        found = self.find_moves(text)
        if not found:
            raise InvalidMove(f"No move found. Reply with one of: {', '.join(legal)}.")
        move = found[-1]
        if move not in legal:
            raise InvalidMove(f"'{move}' is not legal now. Legal moves: {', '.join(legal)}.")
        return move

    def forfeit(self, ctx: Context, player: str, reason: str) -> None:
        """End the game because ``player`` exhausted its invalid-action allowance.

        Default: the offender gets -1; in a zero-sum game the others still in
        the game share +1, otherwise they get 0, and they win. Games whose
        payoffs differ (or that paid eliminated players) override this.
        """
        others = [p for p in self.players if p != player and p not in ctx.eliminated]
        share = 1.0 / len(others) if self.zero_sum else 0.0
        ctx.finish({player: -1.0, **{other: share for other in others}}, winners=others, reason=reason)

    # ------------------------------------------------------------ shared helpers
    def clone(self) -> Self:
        """An independent copy of the game in its current state, for lookahead and search.

        Apply moves to the copy with a scratch ``Context(game.players, rng)``:
        its ``ending`` tells whether the move ended the game, its
        ``step_rewards`` what it paid. A game that names the attributes its
        moves change in ``mutable_state`` is copied by a shallow copy of each
        of those, sharing the rest (options, move tables), which search at
        every node can afford; otherwise the whole game is pickled.
        """
        if self.mutable_state:
            twin = object.__new__(type(self))
            twin.__dict__.update(self.__dict__)
            for name in self.mutable_state:
                setattr(twin, name, copy.copy(getattr(self, name)))
            return twin
        return pickle.loads(pickle.dumps(self, pickle.HIGHEST_PROTOCOL))

    def other(self, player: str) -> str:
        """The opponent of ``player`` in a two-player game."""
        return self.players[1 - self.players.index(player)]

    def legal_moves(self, player: str) -> list[str]:
        """The move names ``player`` may send now (enumerable games)."""
        moves = self.moves
        assert moves is not None
        return [moves[i] for i in self.legal_actions(player)]

    def move_index(self, move: str) -> int:
        """The ``Discrete`` index of a move name."""
        index = self.__dict__.get("_move_index")
        if index is None:
            assert self.moves is not None
            index = self.__dict__["_move_index"] = {m: i for i, m in enumerate(self.moves)}
        return index[move]

    def find_moves(self, text: str) -> list[str]:
        """Every move name mentioned in ``text`` as a whole word, in order, lower-cased."""
        pattern = self.__dict__.get("_move_pattern")
        if pattern is None:
            assert self.moves is not None
            names = sorted(self.moves, key=len, reverse=True)
            alternatives = "|".join(re.escape(n) for n in names)
            pattern = self.__dict__["_move_pattern"] = re.compile(rf"(?<![\w])({alternatives})(?![\w])", re.IGNORECASE)
        return [m.lower() for m in pattern.findall(text)]

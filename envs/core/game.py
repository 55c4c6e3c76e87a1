"""The game protocol: every parlour environment is written once as a :class:`Game`.

A game is a deterministic state machine over text. It declares its players, who
acts now, what each player sees, how a text action is parsed and applied, and
the rewards. The faces in :mod:`parlour.envs.core` (PettingZoo AEC and Parallel,
Gymnasium) drive a game through :class:`parlour.envs.core.match.Match`, which
adds the shared mechanics: the invalid-action policy, the per-player inbox of
new text, rewards bookkeeping and the episode record. A game never deals with
any of those itself.

Writing a game means subclassing :class:`Game` and filling in:

* class metadata: ``name``, ``version``, ``description``, ``zero_sum``,
  ``category`` and ``simultaneous``;
* ``__init__``: keyword-only options (validated, with clear errors), the
  ``players`` list, and for games with enumerable moves the ``moves`` list (the
  ``Discrete`` action of vector mode is an index into it) and ``vector_size``;
* ``start(rng)``: a new episode, drawing all randomness from ``rng``;
* ``to_move()``, ``rules(player)``, ``prompt(player)``, ``parse(player, text)``,
  ``apply(moves)``, ``view(player)``, ``render()``, and for enumerable games
  ``legal_actions(player)`` and ``vector(player)``.

Inside ``start`` and ``apply`` a game speaks through :meth:`Game.tell`, pays
through :meth:`Game.reward` and ends through :meth:`Game.finish`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

#: Moves are what ``parse`` returns and ``apply`` consumes. They are stored in
#: episode records, so they must be JSON values (str, int, list, dict).
Move = Any


def int_option(name: str, value: Any, low: int, high: int | None = None) -> int:
    """``value`` if it is an int (not a bool) in [low, high]; otherwise a ``ValueError`` naming the option and its range."""
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be an int {bound}, got {value!r}")
    return value


class InvalidMove(Exception):
    """Raised by :meth:`Game.parse` when a text action is malformed or illegal.

    The message is shown to the player, so it should say what is accepted.
    """


@dataclass
class Outcome:
    """How an episode ended: reported in every player's final ``infos["outcome"]``.

    ``winner`` is the winning player, or ``None`` for a draw or a game without a
    single winner. ``scores`` are the players' episode returns. ``reason`` says
    why the game ended in words. ``details`` holds game-specific analysis
    (negotiation metrics, rounds survived, ...).
    """

    winner: str | None
    scores: dict[str, float]
    reason: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return the outcome as a JSON-ready dict."""
        return {"winner": self.winner, "scores": dict(self.scores), "reason": self.reason, "details": dict(self.details)}


class Game:
    """Base class of every parlour game; see the module docstring for the contract."""

    name: ClassVar[str]
    version: ClassVar[int] = 0
    description: ClassVar[str] = ""
    category: ClassVar[str] = "game"
    zero_sum: ClassVar[bool] = True
    simultaneous: ClassVar[bool] = False
    #: How many invalid actions a player may make before it forfeits.
    default_error_allowance: ClassVar[int] = 2

    players: list[str]
    #: All move names of an enumerable game, in ``Discrete`` index order; ``None``
    #: when moves cannot be enumerated (free text, offers with prices, ...).
    moves: list[str] | None = None
    #: Length of the vector observation (enumerable games only).
    vector_size: int = 0

    def __init__(self, *, error_allowance: int | None = None) -> None:
        if error_allowance is None:
            error_allowance = self.default_error_allowance
        self.error_allowance = int_option("error_allowance", error_allowance, 0)
        self.rng: np.random.Generator = np.random.default_rng(0)
        self.over = False
        self.outcome: Outcome | None = None
        self._inboxes: dict[str, list[str]] = {}
        self._step_rewards: dict[str, float] = {}
        self._move_index: dict[str, int] | None = None
        self._move_pattern: re.Pattern[str] | None = None
        # Legal moves are asked for several times per step (prompt, mask, infos, parse); the Match clears this
        # cache whenever the state changes, which only happens in start, apply and forfeit.
        self._legal_cache: dict[str, tuple[list[int], list[str], frozenset[str]]] = {}

    # ----------------------------------------------------------------- metadata
    @classmethod
    def env_id(cls) -> str:
        """The registered id, ``parlour/<Name>-v<version>``."""
        return f"parlour/{cls.name}-v{cls.version}"

    @property
    def enumerable(self) -> bool:
        """Whether moves can be enumerated (vector mode and action masks exist)."""
        return self.moves is not None

    # ------------------------------------------------------ what games implement
    def start(self, rng: np.random.Generator) -> None:
        """Begin a new episode; every random draw must come from ``rng``."""
        raise NotImplementedError

    def to_move(self) -> list[str]:
        """Players who must act now: one for turn-based games, several for simultaneous ones."""
        raise NotImplementedError

    def rules(self, player: str) -> str:
        """The rules prompt and the player's role, shown in its first observation."""
        raise NotImplementedError

    def prompt(self, player: str) -> str:
        """What an acting player sees besides its new messages: the position and its options."""
        raise NotImplementedError

    def apply(self, moves: dict[str, Move]) -> None:
        """Apply already validated moves: one for turn-based games, all acting players' for simultaneous ones."""
        raise NotImplementedError

    def view(self, player: str) -> dict[str, Any]:
        """A JSON-ready dict of what ``player`` knows now, for scripted agents; never another player's secrets."""
        raise NotImplementedError

    def render(self) -> str:
        """The whole state for a spectator, as text (ANSI colours allowed)."""
        raise NotImplementedError

    def legal_actions(self, player: str) -> list[int]:
        """Indices into :attr:`moves` that ``player`` may play now (enumerable games)."""
        raise NotImplementedError(f"{self.name} has no enumerable moves")

    def vector(self, player: str) -> np.ndarray:
        """The vector-mode observation of ``player``: float32 array of :attr:`vector_size` in [0, 1]."""
        raise NotImplementedError(f"{self.name} has no vector observation")

    def parse(self, player: str, text: str) -> Move:
        """Turn a text action into a move, or raise :class:`InvalidMove` saying why.

        The default, for enumerable games, accepts a legal move name anywhere in
        the text and takes the last one mentioned, so that reasoning before the
        move is tolerated.
        """
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

    def forfeit(self, player: str, reason: str) -> None:
        """End the game because ``player`` exhausted its invalid-action allowance.

        Default: the offender gets -1; in a zero-sum game the others share +1,
        otherwise they get 0. Games whose payoffs differ override this.
        """
        others = [p for p in self.players if p != player]
        rewards = {player: -1.0}
        for other in others:
            rewards[other] = 1.0 / len(others) if self.zero_sum else 0.0
        winner = others[0] if len(others) == 1 else None
        self.finish(rewards, winner=winner, reason=reason)

    # ------------------------------------------------------------ shared helpers
    def legal_moves(self, player: str) -> list[str]:
        """The exact strings ``player`` may send now (enumerable games); do not mutate the list."""
        return self._legal(player)[1]

    def legal_indices(self, player: str) -> list[int]:
        """:meth:`legal_actions`, cached until the state changes; do not mutate the list."""
        return self._legal(player)[0]

    def is_legal_move(self, player: str, text: str) -> bool:
        """Whether ``text`` is exactly one of the strings :meth:`legal_moves` lists (enumerable games)."""
        return text in self._legal(player)[2]

    def _legal(self, player: str) -> tuple[list[int], list[str], frozenset[str]]:
        cached = self._legal_cache.get(player)
        if cached is None:
            moves = self.moves
            assert moves is not None
            actions = self.legal_actions(player)
            names = [moves[i] for i in actions]
            cached = self._legal_cache[player] = (actions, names, frozenset(names))
        return cached

    def move_index(self, move: str) -> int:
        """The ``Discrete`` index of a move name."""
        if self._move_index is None:
            assert self.moves is not None
            self._move_index = {m: i for i, m in enumerate(self.moves)}
        return self._move_index[move]

    def find_moves(self, text: str) -> list[str]:
        """Every move name mentioned in ``text`` as a whole word, in order, lower-cased."""
        if self._move_pattern is None:
            assert self.moves is not None
            names = sorted(self.moves, key=len, reverse=True)
            alternatives = "|".join(re.escape(n) for n in names)
            self._move_pattern = re.compile(rf"(?<![\w])({alternatives})(?![\w])", re.IGNORECASE)
        return [m.lower() for m in self._move_pattern.findall(text)]

    def tell(self, text: str, to: str | list[str] | None = None) -> None:
        """Send ``text`` to one player, a list of players, or everyone (``None``)."""
        if to is None:
            targets: list[str] = self.players
        elif isinstance(to, str):
            targets = [to]
        else:
            targets = to
        for player in targets:
            self._inboxes[player].append(text)

    def reward(self, player: str, amount: float) -> None:
        """Pay ``amount`` to ``player`` at the current step."""
        self._step_rewards[player] = self._step_rewards.get(player, 0.0) + float(amount)

    def finish(
        self,
        rewards: dict[str, float] | None = None,
        *,
        winner: str | None,
        reason: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        """End the episode, paying the final ``rewards``; the outcome's scores are filled in by the match."""
        for player, amount in (rewards or {}).items():
            self.reward(player, amount)
        self.over = True
        self.outcome = Outcome(winner=winner, scores={}, reason=reason, details=details or {})

    # -------------------------------------------------- used by the Match only
    def _begin(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.over = False
        self.outcome = None
        self._inboxes = {p: [] for p in self.players}
        self._step_rewards = {}
        self._legal_cache.clear()
        self.start(rng)
        self._legal_cache.clear()

    def _take_rewards(self) -> dict[str, float]:
        rewards, self._step_rewards = self._step_rewards, {}
        return rewards

"""One episode of a game, with the mechanics every game shares.

:class:`Match` is the single place where parlour implements

* the invalid-action policy: a malformed or illegal action is reported to its
  player in the next observation and in ``infos[player]["invalid_action"]``,
  and past the game's ``error_allowance`` the player forfeits;
* the per-player inbox: a player's observation is everything new since its
  last action, and the first one carries the rules and its role;
* simultaneous moves: moves are held until every acting player has moved;
* returns and the episode record (see :mod:`parlour.envs.core.record`).

The faces (AEC, Parallel, Gymnasium) are thin adapters over a Match.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from parlour.envs.core.game import Game, InvalidMove, Move

#: Longest slice of an invalid action echoed back to its player.
ECHO_LIMIT = 200


class LazyGenerator:
    """``np.random.default_rng(seed)``, created on first use and otherwise the same.

    Seeding a generator costs more than a whole move of a small game, and the
    deterministic games (TicTacToe, Nim, ...) never draw, so they should not pay for it.
    """

    __slots__ = ("_seed", "_generator")

    def __init__(self, seed: int):
        self._seed = seed
        self._generator: np.random.Generator | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            # Own slots not yet set (copy and pickle build the object without __init__) and dunder look-ups.
            raise AttributeError(name)
        if self._generator is None:
            self._generator = np.random.default_rng(self._seed)
        return getattr(self._generator, name)


def make_game(game_cls: type[Game], options: dict[str, Any]) -> Game:
    """Construct ``game_cls(**options)``, turning an unknown option into an error that lists the known ones."""
    parameters = inspect.signature(game_cls.__init__).parameters
    known = sorted(name for name in parameters if name != "self" and parameters[name].kind == inspect.Parameter.KEYWORD_ONLY)
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(
            f"{game_cls.name} got unknown option(s) {', '.join(unknown)}; its options are: {', '.join(known) or 'none'}"
        )
    return game_cls(**options)


class Match:
    """Runs one game episode at a time: ``reset``, then ``submit`` actions of the acting players.

    Args:
        game_cls: the :class:`Game` subclass to play.
        options: the game's keyword options (they go into the record).
    """

    def __init__(self, game_cls: type[Game], options: dict[str, Any] | None = None):
        self.options = dict(options or {})
        self.game = make_game(game_cls, self.options)
        self.env_id = game_cls.env_id()
        self.players = list(self.game.players)
        self.seed: int | None = None
        self.started = False
        self.errors: dict[str, int] = {}
        self.returns: dict[str, float] = {}
        self.last_error: dict[str, str] = {}
        self.steps: list[dict[str, Any]] = []
        self._pending: dict[str, Move] = {}
        # acting() is asked many times per step by observations and infos; the state only changes in submit/reset.
        self._acting: list[str] | None = None

    # ------------------------------------------------------------------ episode
    def reset(self, seed: int | None = None) -> None:
        """Start a new episode. Without a seed one is drawn from OS entropy and recorded, so every episode replays."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (1 << 63))
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
        self.seed = int(seed)
        game = self.game
        game._begin(LazyGenerator(self.seed))
        # The rules come first, before anything the game said while setting up.
        for player in self.players:
            game._inboxes[player].insert(0, game.rules(player))
        self.started = True
        self.errors = {p: 0 for p in self.players}
        self.returns = {p: 0.0 for p in self.players}
        self.last_error = {}
        self.steps = []
        self._pending = {}
        self._acting = None
        self._collect_rewards()

    @property
    def over(self) -> bool:
        """Whether the episode has ended."""
        return self.game.over

    def acting(self) -> list[str]:
        """Players whose action is awaited now (empty once the game is over); do not mutate the list."""
        if self._acting is None:
            if self.game.over:
                self._acting = []
            elif self._pending:
                self._acting = [p for p in self.game.to_move() if p not in self._pending]
            else:
                self._acting = self.game.to_move()
        return self._acting

    def submit(self, player: str, action: Any) -> dict[str, float]:
        """Play ``player``'s action: text (any object; non-strings are invalid) or, for enumerable games, a move index.

        Returns the rewards paid at this step. Never raises because of what the
        action says; raises ``RuntimeError`` / ``ValueError`` for API misuse
        (an episode not started or over, a player who is not to act).
        """
        if not self.started:
            raise RuntimeError("call reset() before stepping")
        if self.game.over:
            raise RuntimeError("the episode is over; call reset() to start a new one")
        acting = self.acting()
        if player not in acting:
            raise ValueError(f"{player!r} is not to act now; acting: {acting}")
        game = self.game
        game._inboxes[player].clear()
        self.last_error.pop(player, None)
        text, move, error = self._interpret(player, action)
        step: dict[str, Any] = {"player": player, "action": text, "move": move, "error": error}
        if error is not None:
            self.errors[player] += 1
            left = game.error_allowance - self.errors[player]
            self.last_error[player] = error
            if left < 0:
                game.forfeit(player, reason=f"{player} exceeded the invalid-action allowance ({error})")
            else:
                game.tell(f"Invalid action: {error} Try again ({left} more invalid action(s) allowed).", to=player)
        elif game.simultaneous and len(acting) > 1:
            self._pending[player] = move
        else:
            moves = self._pending
            moves[player] = move
            self._pending = {}
            game.apply(moves)
        self._acting = None
        game._legal_cache.clear()
        step["rewards"] = self._collect_rewards()
        self.steps.append(step)
        if game.over:
            self._announce_end()
        return step["rewards"]

    def _announce_end(self) -> None:
        outcome = self.game.outcome
        assert outcome is not None
        result = f"Winner: {outcome.winner}." if outcome.winner else "No single winner."
        for player in self.players:
            self.game.tell(f"Game over: {outcome.reason}. {result} Your total reward: {self.returns[player]:g}.", to=player)

    def _interpret(self, player: str, action: Any) -> tuple[str, Move, str | None]:
        """Turn an action into (recorded text, move, error)."""
        game = self.game
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            moves = game.moves
            if moves is None:
                return f"<action index {int(action)}>", None, f"{game.name} takes text actions, not indices."
            if not 0 <= action < len(moves):
                return f"<action index {int(action)}>", None, f"Action index {int(action)} is out of range."
            name = moves[action]
            if int(action) not in game.legal_indices(player):
                return name, None, f"'{name}' is not legal now. Legal moves: {', '.join(game.legal_moves(player))}."
            return name, name, None
        if not isinstance(action, str):
            return repr(action)[:ECHO_LIMIT], None, f"Actions must be text, got {type(action).__name__}."
        if game.moves is not None and game.is_legal_move(player, action):
            # A legal move string is its own move (the contract of legal_moves), so the game's parser is skipped.
            return action, action, None
        try:
            return action, game.parse(player, action), None
        except InvalidMove as invalid:
            return action, None, str(invalid)
        except (ValueError, OverflowError):
            # int() or float() of an absurdly long number in the text: agent text must never crash a game.
            return action, None, "A number in the action is too large to read."

    def _collect_rewards(self) -> dict[str, float]:
        rewards = self.game._take_rewards()
        for player, amount in rewards.items():
            self.returns[player] += amount
        if self.game.over and self.game.outcome is not None:
            self.game.outcome.scores = dict(self.returns)
        return rewards

    # -------------------------------------------------------------- observation
    def observation_text(self, player: str) -> str:
        """What ``player`` sees now: its new messages, then, if it is to act, the position and its options."""
        parts = self.game._inboxes[player]
        if player in self.acting():
            return "\n\n".join([*parts, self.game.prompt(player)])
        return "\n\n".join(parts)

    def action_mask(self, player: str) -> np.ndarray:
        """The int8 mask of legal move indices for ``player`` (all zero when it is not to act)."""
        moves = self.game.moves
        assert moves is not None
        mask = np.zeros(len(moves), dtype=np.int8)
        if player in self.acting():
            mask[self.game.legal_indices(player)] = 1
        return mask

    def legal_moves(self, player: str) -> list[str] | None:
        """The exact strings ``player`` may send now; ``None`` when moves are not enumerable."""
        if self.game.moves is None:
            return None
        if player not in self.acting():
            return []
        return list(self.game.legal_moves(player))

    def info(self, player: str, with_legal_moves: bool = True) -> dict[str, Any]:
        """The ``infos[player]`` dict shared by all faces."""
        game = self.game
        acting = player in self.acting()
        info: dict[str, Any] = {"acting": acting}
        if with_legal_moves and game.moves is not None:
            info["legal_moves"] = list(game.legal_moves(player)) if acting else []
        if self.last_error and player in self.last_error:
            info["invalid_action"] = self.last_error[player]
        if game.over and game.outcome is not None:
            info["outcome"] = game.outcome.to_dict()
        return info

    def agent_observation(self, player: str) -> dict[str, Any]:
        """What an :class:`parlour.Agent` receives: the text, the legal moves, its role, and a structured view."""
        return {
            "text": self.observation_text(player),
            "legal_moves": self.legal_moves(player),
            "player": player,
            "view": self.game.view(player),
            "env_id": self.env_id,
            "invalid_action": self.last_error.get(player),
        }

    # ------------------------------------------------------------------- record
    def record(self, agents: dict[str, str] | None = None) -> dict[str, Any]:
        """The episode record (see :mod:`parlour.envs.core.record`)."""
        from parlour.envs.core.record import build_record

        return build_record(self, agents)

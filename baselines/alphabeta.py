"""Depth-limited alpha-beta search on copies of a real two-player game, shared by the board games' ``minimax`` agents.

The search holds no rules of its own: it plays ahead on ``clone()`` copies of
the game (loaded from a player's view, where nothing is hidden), each move
applied by the game's own ``apply`` through a scratch
:class:`~parlour.envs.core.context.Context`. A move ends the game when the
context's ``ending`` is set, and wins when its ``winners`` name the mover.
Only the scoring of positions at the depth limit is the agent's, handed in as
``evaluate(game, player)``. :func:`play_ahead`, the one step of that look
ahead, also serves the searches that are not alpha-beta over legal-action
order (Connect Four's, TicTacToe's).

The player to move need not alternate (in Dots and Boxes a player who closes
a box moves again): a child's value is negated only when the turn passes to
the other player.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Iterator, Mapping, Protocol, TypeVar, cast

import numpy as np

from parlour.baselines.seeded import SeededAgent
from parlour.envs.core.context import Context
from parlour.envs.core.game import Game

#: Above any evaluation, so that a forced result always dominates the heuristic.
WIN = 1e9
#: How far below the best root score a move's search window starts, so that a move equal to the best comes back exact.
TIE = 1e-6

#: The game a search runs on: the heuristics and move orders handed in read that game's own attributes.
G = TypeVar("G", bound=Game)
G_co = TypeVar("G_co", bound=Game, covariant=True)


class FromView(Protocol[G_co]):
    """A game class that rebuilds a position from a player's view (the board games' ``from_view`` class method)."""

    def from_view(self, view: dict[str, Any]) -> G_co:
        """The position ``view`` shows."""
        ...


def play_ahead(game: G, player: str, move: str, rng: np.random.Generator) -> tuple[G, int | None]:
    """A copy of ``game`` after ``player`` plays ``move`` (``game`` is not changed), and the result for ``player`` if
    the move ended the game: 1 won, 0 drawn, -1 lost; ``None`` while play goes on.

    The copy's own ``apply`` plays the move through a scratch context carrying ``rng``.
    """
    # clone() copies the instance itself, so the copy is of the game's own class (Game.clone declares only Game).
    child = cast(G, game.clone())
    ctx = Context(child.players, rng)
    child.apply(ctx, {player: move})
    if ctx.ending is None:
        return child, None
    winners = ctx.ending.winners
    return child, 0 if not winners else 1 if player in winners else -1


class AlphaBeta(Generic[G]):
    """Fail-soft alpha-beta (negamax form) over a game's legal actions; scores are from the view of the player to move.

    Args:
        evaluate: ``(game, player) -> float``, the heuristic value of a position that is not over, for ``player``.
        rng: the generator the scratch contexts carry (deterministic games never draw from it).
        order: ``(game, player, actions) -> actions``, the order to search moves in (good moves first prune more);
            legal-action order when ``None``.
    """

    def __init__(
        self,
        evaluate: Callable[[G, str], float],
        rng: np.random.Generator,
        order: Callable[[G, str, list[int]], list[int]] | None = None,
    ):
        self.evaluate = evaluate
        self.rng = rng
        self.order = order

    def children(self, game: G) -> Iterator[tuple[int, G, float | None]]:
        """``(action, position after it, result for the mover if the move ended the game, else None)`` per legal action."""
        (player,) = game.to_move()
        actions = game.legal_actions(player)
        if self.order is not None:
            actions = self.order(game, player, actions)
        moves = game.moves
        assert moves is not None
        for action in actions:
            child, outcome = play_ahead(game, player, moves[action], self.rng)
            yield action, child, None if outcome is None else outcome * WIN

    def score(self, player: str, child: G, result: float | None, depth: int, alpha: float, beta: float) -> float:
        """The value for ``player`` of the move that led to ``child``, with ``depth`` plies left after it."""
        if result is not None:
            # Sooner wins and later losses score higher, so a won position is converted, not toyed with.
            return result + (depth if result > 0 else -depth if result < 0 else 0.0)
        (next_player,) = child.to_move()
        if next_player == player:
            return self.value(child, depth, alpha, beta)
        return -self.value(child, depth, -beta, -alpha)

    def value(self, game: G, depth: int, alpha: float = -np.inf, beta: float = np.inf) -> float:
        """Fail-soft alpha-beta value for the player to move in a game not over, ``depth`` plies deep."""
        (player,) = game.to_move()
        if depth == 0:
            return self.evaluate(game, player)
        best = -np.inf
        for _, child, result in self.children(game):
            score = self.score(player, child, result, depth - 1, alpha, beta)
            if score > best:
                best = score
                alpha = max(alpha, score)
                if alpha >= beta:
                    break
        return best

    def best_actions(self, game: G, depth: int) -> list[int]:
        """Every legal action whose ``depth``-ply value is the best one (``depth`` >= 1)."""
        (player,) = game.to_move()
        best = -np.inf
        chosen: list[int] = []
        for action, child, result in self.children(game):
            score = self.score(player, child, result, depth - 1, best - TIE, np.inf)
            if score > best + TIE:
                best, chosen = score, [action]
            elif score >= best - TIE:
                chosen.append(action)
        return chosen


class DepthLimitedAgent(SeededAgent):
    """A ``minimax`` agent: searches ``depth`` plies (a positive int) and plays a best move, breaking ties at random.

    A game whose search is not :class:`AlphaBeta` (Connect Four) subclasses this directly; the others subclass
    :class:`MinimaxAgent`.
    """

    name = "minimax"

    def __init__(self, env_id: str | None = None, seed: int | None = None, depth: int = 2):
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"depth must be a positive int, got {depth!r}")
        self.depth = depth
        super().__init__(env_id, seed)


class MinimaxAgent(DepthLimitedAgent, Generic[G]):
    """The board games' ``minimax``: searches ``depth`` plies with :class:`AlphaBeta` on the game rebuilt from the
    player's view and plays a best move, breaking ties at random.

    Each game's baseline subclasses it (``MinimaxAgent[TheGame]``), setting ``game`` (the game class, which
    rebuilds a position with ``from_view``) and ``evaluate`` (its score of a position at the depth limit, a static method), and
    optionally ``order`` (:class:`AlphaBeta`'s move order, a static method).
    """

    game: FromView[G]
    evaluate: Callable[[G, str], float]
    order: Callable[[G, str, list[int]], list[int]] | None = None

    def act(self, observation: Mapping[str, Any]) -> str:
        """A best move for the player to move."""
        game = self.game.from_view(observation["view"])
        choices = AlphaBeta(self.evaluate, self.rng, self.order).best_actions(game, self.depth)
        moves = game.moves
        assert moves is not None  # the board games searched here all enumerate their moves
        return moves[choices[int(self.rng.integers(len(choices)))]]

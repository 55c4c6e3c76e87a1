"""Depth-limited alpha-beta ``minimax`` for ConnectFour, searching on copies of the real game.

The agent loads the position with :meth:`ConnectFour.from_view` and plays
ahead on ``clone()`` copies of it with
:func:`~parlour.baselines.alphabeta.play_ahead`, each move applied by the
game's own rules. Only the scoring of positions at the depth limit is the agent's
own: it reads the game's bitboards (:attr:`ConnectFour.discs`) and counts, for
every window of ``x_in_row`` cells that only one player occupies, 10^(k-1) for
``k`` discs of that player. Three discs with room for a fourth (a threat) are
worth far more than two, and central cells, which lie in the most windows,
count most; central columns are also searched first.
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Iterator, Mapping

import numpy as np

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import DepthLimitedAgent, play_ahead
from parlour.envs.games.connect_four import DIRECTIONS, ConnectFour, column_name


@functools.cache
def geometry(rows: int, columns: int, x_in_row: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
    """For a board size: the window masks on the game's bitboards, the window weights, the centre-first column order, and the win score."""
    layout = ConnectFour(rows=rows, columns=columns, x_in_row=x_in_row)
    windows = []
    for d_row, d_column, _ in DIRECTIONS:
        for row in range(rows):
            for column in range(columns):
                cells = [(row + k * d_row, column + k * d_column) for k in range(x_in_row)]
                if all(0 <= r < rows and 0 <= c < columns for r, c in cells):
                    windows.append(sum(layout.cell_bit(r, c) for r, c in cells))
    weights = tuple([0] + [10 ** (k - 1) for k in range(1, x_in_row)])
    order = tuple(sorted(range(columns), key=lambda c: abs(2 * c - (columns - 1))))
    # Above any heuristic score, so that a forced win or loss always dominates.
    win = len(windows) * 10**x_in_row + 1
    return tuple(windows), weights, order, win


class Search:
    """Alpha-beta negamax on copies of a :class:`ConnectFour` game; scores are from the view of the player to move.

    Args:
        game: the position searched from (it is copied, never changed).
        rng: the generator the scratch contexts carry (Connect Four never draws from it).
    """

    def __init__(self, game: ConnectFour, rng: np.random.Generator):
        self.game = game
        self.rng = rng
        self.windows, self.weights, self.order, self.win = geometry(game.rows, game.columns, game.x_in_row)

    def children(self, game: ConnectFour) -> Iterator[tuple[int, ConnectFour, float | None]]:
        """``(column, position after it, score for the mover if the move ended the game, else None)`` per legal column, centre first."""
        (player,) = game.to_move()
        legal = set(game.legal_actions(player))
        moves = game.moves
        assert moves is not None
        for column in self.order:
            if column in legal:
                child, outcome = play_ahead(game, player, moves[column], self.rng)
                yield column, child, None if outcome is None else float(outcome * self.win)

    def evaluate(self, game: ConnectFour) -> int:
        """Heuristic score of a position for the player to move."""
        own, other = game.discs[game.turn], game.discs[1 - game.turn]
        weights = self.weights
        score = 0
        for window in self.windows:
            mine = own & window
            theirs = other & window
            if mine:
                if not theirs:
                    score += weights[mine.bit_count()]
            elif theirs:
                score -= weights[theirs.bit_count()]
        return score

    def negamax(self, game: ConnectFour, depth: int, alpha: float, beta: float) -> float:
        """Fail-soft alpha-beta value for the player to move in a game not over; ``depth`` plies are left."""
        if depth == 0:
            return self.evaluate(game)
        children: Iterable[tuple[int, ConnectFour, float | None]] = self.children(game)
        if depth > 1:
            # Above the leaves, look for a win among all moves first: it ends the search of this node at once.
            # Next to the leaves a child costs no more than that look, so children are made only until a cut-off.
            children = list(children)
            if any(value is not None and value > 0 for _, _, value in children):
                return self.win + depth
        best = -float("inf")
        for _, child, value in children:
            if value is None:
                score = -self.negamax(child, depth - 1, -beta, -alpha)
            elif value > 0:
                return self.win + depth  # no move scores more than a win now; sooner wins score higher
            else:
                score = value
            if score > best:
                best = score
                alpha = max(alpha, score)
                if alpha >= beta:
                    break
        return best

    def best_columns(self, depth: int) -> list[int]:
        """Every legal column whose ``depth``-ply value is the best one."""
        children = list(self.children(self.game))
        winning = [column for column, _, value in children if value is not None and value > 0]
        if winning:
            return winning
        best = -float("inf")
        chosen: list[int] = []
        for column, child, value in children:
            # Just below the best so far: an equal score comes back exact, so ties are all found.
            score = value if value is not None else -self.negamax(child, depth - 1, -float("inf"), -(best - 1))
            if score > best:
                best, chosen = score, [column]
            elif score == best:
                chosen.append(column)
        return chosen


class MinimaxAgent(DepthLimitedAgent):
    """Searches ``depth`` plies (default 4) with alpha-beta and plays a best column, breaking ties at random."""

    def __init__(self, env_id: str | None = None, seed: int | None = None, depth: int = 4):
        super().__init__(env_id, seed, depth)

    def act(self, observation: Mapping[str, Any]) -> str:
        """The chosen column for the player to move."""
        search = Search(ConnectFour.from_view(observation["view"]), self.rng)
        choices = search.best_columns(self.depth)
        return column_name(choices[int(self.rng.integers(len(choices)))])


register_scripted("minimax", "parlour/ConnectFour-v0", MinimaxAgent)
# ppo is left off every ladder: it exists only with the sb3 extra, and a rung must mean the same opponent everywhere.
register_ladder("parlour/ConnectFour-v0", ["random", ("minimax", {"depth": 1}), ("minimax", {"depth": 2}), ("minimax", {"depth": 4})])

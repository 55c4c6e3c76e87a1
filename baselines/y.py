"""Depth-limited alpha-beta ``minimax`` for Y, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by connection distance: the fewest
empty cells each player still has to fill to join all three sides (its own
stones are free, the opponent's impassable). A group joining three sides
branches from one cell, so this is the least, over every cell not the
opponent's, of the cell's three distances to the sides, found by a 0-1
breadth-first search from each side, less the cell counted twice too many.
The score is the opponent's distance minus the player's own, as in Hex.

Version history: v0, first release.
"""

from __future__ import annotations

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import MinimaxAgent
from parlour.baselines.connection import fill_costs
from parlour.envs.games.y import LEFT, SLANT, TOP, Y, layout


def side_distances(board: list[int], size: int, mark: int, side: int) -> list[int]:
    """For each cell, the fewest empty cells (the cell itself included) ``mark`` must fill to join it to ``side``."""
    _, near, sides = layout(size)
    return fill_costs(board, near, mark, [cell for cell, bits in enumerate(sides) if bits & side])


def distance(board: list[int], size: int, mark: int) -> float:
    """Empty cells ``mark`` must still fill to join all three sides; inf if it cannot."""
    left, top, slant = (side_distances(board, size, mark, side) for side in (LEFT, TOP, SLANT))
    unreached = len(board) + 1
    result = min(
        (a + b + c - 2 * (board[cell] != mark) for cell, (a, b, c) in enumerate(zip(left, top, slant)) if max(a, b, c) < unreached),
        default=None,
    )
    return float("inf") if result is None else float(result)


def evaluate(game: Y, player: str) -> float:
    """The opponent's connection distance minus ``player``'s."""
    me = game.players.index(player)
    return distance(game.board, game.size, 1 - me) - distance(game.board, game.size, me)


class YMinimax(MinimaxAgent[Y]):
    """``minimax`` for Y: alpha-beta to ``depth`` plies scored by :func:`evaluate`, playing a best cell (ties at random).

    Version history: v0, first release.
    """

    game = Y
    evaluate = staticmethod(evaluate)


register_scripted("minimax", "parlour/Y-v0", YMinimax)
register_ladder("parlour/Y-v0", ["random", ("minimax", {"depth": 1}), ("minimax", {"depth": 2})])

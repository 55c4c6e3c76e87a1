"""Depth-limited alpha-beta ``minimax`` for Hex, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by connection distance: the fewest
empty cells each player still has to fill to join its two edges (its own
stones are free, the opponent's impassable), found by a 0-1 breadth-first
search. The score is the opponent's distance minus the player's own, so a
move that both shortens one's own path and lengthens the opponent's, the
essence of Hex, scores twice.
"""

from __future__ import annotations

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import MinimaxAgent
from parlour.baselines.connection import fill_costs
from parlour.envs.games.hex import Hex, neighbours


def distance(board: list[int], size: int, mark: int) -> float:
    """Empty cells ``mark`` must still fill to join its edges (X: top to bottom, O: left to right); inf if blocked."""
    starts = range(size) if mark == 0 else range(0, size * size, size)  # X from the top row, O from the left column
    best = fill_costs(board, neighbours(size), mark, starts)
    result = min(best[(size - 1) * size + i] if mark == 0 else best[i * size + size - 1] for i in range(size))
    return float("inf") if result > size * size else float(result)


def evaluate(game: Hex, player: str) -> float:
    """The opponent's connection distance minus ``player``'s."""
    me = game.players.index(player)
    return distance(game.board, game.size, 1 - me) - distance(game.board, game.size, me)


class HexMinimax(MinimaxAgent[Hex]):
    """``minimax`` for Hex: alpha-beta to ``depth`` plies scored by :func:`evaluate`, playing a best cell (ties at random)."""

    game = Hex
    evaluate = staticmethod(evaluate)


register_scripted("minimax", "parlour/Hex-v0", HexMinimax)
register_ladder("parlour/Hex-v0", ["random", ("minimax", {"depth": 1}), ("minimax", {"depth": 2})])

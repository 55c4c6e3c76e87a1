"""Depth-limited alpha-beta ``minimax`` for Othello, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by the classic square weights
(corners are never flipped back, so they are worth most; the cells next to an
empty corner hand it to the opponent, so they count against the mover) plus
mobility, the difference in the number of legal moves: a player short of moves
is forced into bad ones.
"""

from __future__ import annotations

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import MinimaxAgent
from parlour.envs.games.othello import Othello, cells_of, legal_bits

#: Square weights, row-major from a1 (the usual table of Othello programs).
WEIGHTS = (
    100, -20, 10, 5, 5, 10, -20, 100,
    -20, -50, -2, -2, -2, -2, -50, -20,
    10, -2, -1, -1, -1, -1, -2, 10,
    5, -2, -1, -1, -1, -1, -2, 5,
    5, -2, -1, -1, -1, -1, -2, 5,
    10, -2, -1, -1, -1, -1, -2, 10,
    -20, -50, -2, -2, -2, -2, -50, -20,
    100, -20, 10, 5, 5, 10, -20, 100,
)  # fmt: skip
#: Points per legal move more than the opponent has.
MOBILITY = 5


def evaluate(game: Othello, player: str) -> float:
    """Square weights and mobility of ``player`` minus its opponent's."""
    me = game.players.index(player)
    own, other = game.discs[me], game.discs[1 - me]
    squares = sum(WEIGHTS[cell] for cell in cells_of(own)) - sum(WEIGHTS[cell] for cell in cells_of(other))
    mobility = legal_bits(own, other).bit_count() - legal_bits(other, own).bit_count()
    return float(squares + MOBILITY * mobility)


class OthelloMinimax(MinimaxAgent[Othello]):
    """``minimax`` for Othello: alpha-beta to ``depth`` plies scored by :func:`evaluate`, playing a best move (ties at random)."""

    game = Othello
    evaluate = staticmethod(evaluate)


register_scripted("minimax", "parlour/Othello-v0", OthelloMinimax)
register_ladder("parlour/Othello-v0", ["random", ("minimax", {"depth": 1}), ("minimax", {"depth": 2})])

"""Depth-limited alpha-beta ``minimax`` for Breakthrough, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by material and progress: each piece
is worth :data:`PIECE` plus the square of the rows it has advanced, so a piece
near the far row (a threat the opponent must answer) counts far more than one
at home, and a capture that stops it is worth the trade.
"""

from __future__ import annotations

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import MinimaxAgent
from parlour.envs.games.breakthrough import Breakthrough

#: What a piece is worth before it advances.
PIECE = 10


def evaluate(game: Breakthrough, player: str) -> float:
    """Material and progress of ``player`` minus its opponent's."""
    me = game.players.index(player)
    columns, last = game.columns, game.rows - 1
    score = 0
    for cell, mark in enumerate(game.board):
        if mark != -1:
            row = cell // columns
            advanced = row if mark == 0 else last - row
            value = PIECE + advanced * advanced
            score += value if mark == me else -value
    return float(score)


class BreakthroughMinimax(MinimaxAgent[Breakthrough]):
    """``minimax`` for Breakthrough: alpha-beta to ``depth`` plies scored by :func:`evaluate`, playing a best move (ties at random)."""

    game = Breakthrough
    evaluate = staticmethod(evaluate)


register_scripted("minimax", "parlour/Breakthrough-v0", BreakthroughMinimax)
register_ladder("parlour/Breakthrough-v0", ["random", ("minimax", {"depth": 1}), ("minimax", {"depth": 2}), ("minimax", {"depth": 3})])

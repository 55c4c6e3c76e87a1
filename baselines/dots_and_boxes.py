"""Depth-limited alpha-beta ``minimax`` for Dots and Boxes, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

The search follows the rule that a player who closes a box moves again (the
helper negates a value only when the turn passes). Positions at the depth
limit are scored by boxes won so far plus the boxes with three sides drawn,
which the player to move can close at once; so a line that hands the
opponent a box is seen as the loss it is.
"""

from __future__ import annotations

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import MinimaxAgent
from parlour.envs.games.dots_and_boxes import DotsAndBoxes, layout


def evaluate(game: DotsAndBoxes, player: str) -> float:
    """``player``'s boxes minus its opponent's, plus the boxes it can close at once (it is to move)."""
    me = game.players.index(player)
    mine, theirs = game.scores()[me], game.scores()[1 - me]
    _, _, sides = layout(game.rows, game.columns)
    ready = sum(1 for box, lines in enumerate(sides) if game.owners[box] == -1 and sum(game.lines[line] for line in lines) == 3)
    return float(mine - theirs + ready)


class DotsAndBoxesMinimax(MinimaxAgent[DotsAndBoxes]):
    """``minimax`` for DotsAndBoxes: alpha-beta to ``depth`` plies scored by :func:`evaluate`, playing a best line (ties at random)."""

    game = DotsAndBoxes
    evaluate = staticmethod(evaluate)


register_scripted("minimax", "parlour/DotsAndBoxes-v0", DotsAndBoxesMinimax)
# Depth 2 is hardly stronger than depth 1 here (the boxes ready to close are in the evaluation); depth 4 is.
register_ladder("parlour/DotsAndBoxes-v0", ["random", ("minimax", {"depth": 1}), ("minimax", {"depth": 4})])

"""Depth-limited alpha-beta ``minimax`` for Oware, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by the difference of the seeds
captured: captured seeds never return to play, and the game is won on them.

Version history: v0, first release.
"""

from __future__ import annotations

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.alphabeta import MinimaxAgent
from parlour.envs.games.oware import Oware


def evaluate(game: Oware, player: str) -> float:
    """Seeds ``player`` captured minus the seeds its opponent captured."""
    seat = game.players.index(player)
    return float(game.scores[seat] - game.scores[1 - seat])


class OwareMinimax(MinimaxAgent[Oware]):
    """``minimax`` for Oware: alpha-beta to ``depth`` plies (default 4) scored by :func:`evaluate`, playing a best
    move (ties at random).

    Version history: v0, first release.
    """

    game = Oware
    evaluate = staticmethod(evaluate)

    def __init__(self, env_id: str | None = None, seed: int | None = None, depth: int = 4):
        super().__init__(env_id, seed, depth)


register_scripted("minimax", "parlour/Oware-v0", OwareMinimax)
register_ladder("parlour/Oware-v0", ["random", ("minimax", {"depth": 1}), ("minimax", {"depth": 2}), ("minimax", {"depth": 4})])

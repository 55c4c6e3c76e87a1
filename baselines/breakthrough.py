"""Depth-limited alpha-beta ``minimax`` for Breakthrough, on copies of the real game (see :mod:`parlour.baselines.alphabeta`).

Positions at the depth limit are scored by material and progress: each piece
is worth :data:`PIECE` plus the square of the rows it has advanced, so a piece
near the far row (a threat the opponent must answer) counts far more than one
at home, and a capture that stops it is worth the trade.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.alphabeta import AlphaBeta
from parlour.baselines.seeded import SeededAgent
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


class MinimaxAgent(SeededAgent):
    """Searches ``depth`` plies with alpha-beta and plays a best move, breaking ties at random."""

    name = "minimax"

    def __init__(self, env_id: str | None = None, seed: int | None = None, depth: int = 2):
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"depth must be a positive int, got {depth!r}")
        self.depth = depth
        super().__init__(env_id, seed)

    def act(self, observation: Mapping[str, Any]) -> str:
        """The chosen move for the player to move."""
        game = Breakthrough.from_view(observation["view"])
        choices = AlphaBeta(evaluate, self.rng).best_actions(game, self.depth)
        return game.moves[choices[int(self.rng.integers(len(choices)))]]


register_scripted("minimax", "parlour/Breakthrough-v0", MinimaxAgent)

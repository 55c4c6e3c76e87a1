"""Perfect-play ``minimax`` for TicTacToe."""

from __future__ import annotations

import functools
from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.tic_tac_toe import CELLS, winner_of


@functools.cache
def _value(board: tuple[int, ...], mark: int) -> int:
    """Game value for the player ``mark`` to move: +1 win, 0 draw, -1 loss under perfect play."""
    if winner_of(list(board)) != -1:
        return -1  # the previous mover completed a line
    empty = [i for i, m in enumerate(board) if m == -1]
    if not empty:
        return 0
    return max(-_value(board[:i] + (mark,) + board[i + 1 :], 1 - mark) for i in empty)


class MinimaxAgent(SeededAgent):
    """Plays a game-theoretically optimal move, breaking ties at random (never loses)."""

    name = "minimax"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The best cell for the player to move."""
        view = observation["view"]
        board, mark = tuple(view["board"]), view["mark"]
        empty = [i for i, m in enumerate(board) if m == -1]
        scores = [-_value(board[:i] + (mark,) + board[i + 1 :], 1 - mark) for i in empty]
        best = max(scores)
        choices = [i for i, s in zip(empty, scores) if s == best]
        return CELLS[choices[int(self.rng.integers(len(choices)))]]


register_scripted("minimax", "parlour/TicTacToe-v0", MinimaxAgent)

"""The ``heuristic`` agent for Phantom tic-tac-toe: complete a line, block a known threat, else build open lines.

It reads only what its player has seen. A cell that would complete one of its
lines comes first: if the opponent already holds it, the attempt only reveals
that mark, and in the classical game the agent simply tries again. Next comes
the third cell of a line where it has seen two opponent marks. Otherwise it
picks the cell on the most lines still open to it (no opponent mark seen),
each counted more for the marks of its own already there: the centre first,
then the corners, and cells that extend its own lines.
"""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_ladder, register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.games.tic_tac_toe import CELLS, LINES_THROUGH

#: Scores of a cell that completes the agent's line and of one that blocks a seen threat: above any sum of open lines.
WIN, BLOCK = 1000, 100


def cell_score(board: list[int], cell: int, me: int) -> int:
    """How good trying ``cell`` is for mark ``me`` on the board it has seen (-1 not seen filled)."""
    score = 0
    for line in LINES_THROUGH[cell]:
        others = [board[c] for c in line if c != cell]
        if others == [me, me]:
            score = max(score, WIN)
        elif others == [1 - me, 1 - me]:
            score = max(score, BLOCK)
        elif 1 - me not in others:
            score += 1 + 2 * others.count(me)
    return score


class HeuristicAgent(SeededAgent):
    """Plays the best-scoring untried cell (see :func:`cell_score`), breaking ties at random."""

    name = "heuristic"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The chosen cell for the player to move."""
        view = observation["view"]
        board, me = view["board"], view["mark"]
        scores = {cell: cell_score(board, cell, me) for cell, mark in enumerate(board) if mark == -1}
        best = max(scores.values())
        choices = [cell for cell, score in scores.items() if score == best]
        return CELLS[choices[int(self.rng.integers(len(choices)))]]


register_scripted("heuristic", "parlour/PhantomTicTacToe-v0", HeuristicAgent)
register_ladder("parlour/PhantomTicTacToe-v0", ["random", "heuristic"])

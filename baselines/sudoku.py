"""The ``solver`` for Sudoku: backtracking on the fewest-candidates cell (the game's own
:func:`parlour.envs.puzzles.sudoku.solutions`), then the solution one digit at a time."""

from __future__ import annotations

from typing import Any, Mapping

from parlour.baselines import register_scripted
from parlour.baselines.seeded import SeededAgent
from parlour.envs.puzzles.sudoku import cell_name, solutions


class SudokuSolver(SeededAgent):
    """Solves the grid it is shown and fills in the first empty cell from the solution."""

    name = "solver"

    def act(self, observation: Mapping[str, Any]) -> str:
        """The solution's digit for the first empty cell (a random legal move if the grid has no solution)."""
        grid = list(observation["view"]["grid"])
        found = solutions(grid, limit=1)
        if not found:
            legal = observation["legal_moves"]
            return legal[int(self.rng.integers(len(legal)))]
        cell = grid.index(0)
        return f"{cell_name(cell)}={found[0][cell]}"


register_scripted("solver", "parlour/Sudoku-v0", SudokuSolver)

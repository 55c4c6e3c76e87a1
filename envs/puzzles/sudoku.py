"""Sudoku: fill a 9x9 grid so that every row, column and 3x3 box holds the digits 1 to 9 once.

One player, ``player_0``. The puzzle is generated from the seed: a full grid
is drawn (a valid pattern with its digits, rows within bands, bands, columns
within stacks and stacks shuffled, and maybe transposed), then clues are
removed in a random order, each removal kept only if the puzzle still has
exactly one solution, until the difficulty's clue count is reached or no
clue can go (so a puzzle may keep a few more clues than its target).

Moves: ``r3c5=7`` puts 7 in row 3, column 5 (``r3c5 7``, ``r3 c5: 7`` and
words around them are accepted; the last one counts). The cell must be empty
and the digit must not already be in its row, column or box; anything else
is an invalid action that says why. Digits cannot be erased. Because the
solution is unique, a grid filled without a clash is the solution; a wrong
digit shows itself later as an empty cell that no digit fits, which ends the
episode.

``difficulty`` (1 to 5, default 2): the clues kept, 45, 38, 32, 28, 25.

Rewards: 1 when the grid is full (the player wins), 0 when an empty cell has
no digit left that fits. A player that exceeds the invalid-action allowance
gets -1. Outcome details: ``difficulty``, ``success``, ``clues``,
``placed`` (digits the player put in), ``empty`` (cells left empty) and
``stuck`` (the cell that no digit fits, if any).

Vector observation: per cell, 81 cells in row order, a one-hot of ten
entries (empty, 1 to 9).

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.puzzles.solo import SoloPuzzle

#: difficulty -> clues the generator keeps (at least; never fewer).
LEVELS = {1: 45, 2: 38, 3: 32, 4: 28, 5: 25}
MOVE_PATTERN = re.compile(r"\br\s*([1-9])\s*,?\s*c\s*([1-9])\s*(?:=|:|is|to|->)?\s*([1-9])\b", re.IGNORECASE)
ALL = 0b1111111110  # bits 1..9

RULES = """You are {player}, solving a Sudoku. Fill the 9x9 grid so that every row, every column and every 3x3 box holds each digit 1 to 9 exactly once.
Rows r1..r9 run top to bottom, columns c1..c9 left to right; "." is an empty cell. The puzzle has exactly one solution.
Place one digit per move: r3c5=7 puts 7 in row 3, column 5. The cell must be empty and the digit must not already be in that row, column or box. Digits cannot be erased.
You win when the grid is full. If a wrong digit leaves an empty cell where no digit fits, you lose."""


def box_of(cell: int) -> int:
    """The 3x3 box (0 to 8, row by row) of a cell (0 to 80)."""
    return (cell // 27) * 3 + (cell % 9) // 3


def candidates(grid: list[int], cell: int) -> int:
    """The digits (as bits 1..9) that may go in ``cell`` of ``grid`` (0 for empty) without a clash."""
    row, col, box = cell // 9, cell % 9, box_of(cell)
    used = 0
    for other in range(81):
        if grid[other] and (other // 9 == row or other % 9 == col or box_of(other) == box):
            used |= 1 << grid[other]
    return ALL & ~used


def solutions(grid: list[int], limit: int = 2) -> list[list[int]]:
    """Up to ``limit`` solutions of ``grid``, by backtracking on the empty cell with the fewest candidates."""
    rows, cols, boxes = [0] * 9, [0] * 9, [0] * 9
    for cell, digit in enumerate(grid):
        if digit:
            bit = 1 << digit
            rows[cell // 9] |= bit
            cols[cell % 9] |= bit
            boxes[box_of(cell)] |= bit
    work = list(grid)
    empty = [cell for cell in range(81) if not grid[cell]]
    found: list[list[int]] = []

    def search() -> None:
        best, best_free, best_count = -1, 0, 10
        for cell in empty:
            if not work[cell]:
                free = ALL & ~(rows[cell // 9] | cols[cell % 9] | boxes[box_of(cell)])
                count = bin(free).count("1")
                if count < best_count:
                    best, best_free, best_count = cell, free, count
                    if count <= 1:
                        break
        if best < 0:
            found.append(list(work))
            return
        row, col, box = best // 9, best % 9, box_of(best)
        for digit in range(1, 10):
            bit = 1 << digit
            if best_free & bit:
                work[best] = digit
                rows[row] |= bit
                cols[col] |= bit
                boxes[box] |= bit
                search()
                rows[row] &= ~bit
                cols[col] &= ~bit
                boxes[box] &= ~bit
                work[best] = 0
                if len(found) >= limit:
                    return

    search()
    return found


def full_grid(rng: np.random.Generator) -> list[int]:
    """A random solved grid: the standard pattern with digits, rows, bands, columns and stacks shuffled."""
    digits = [int(d) + 1 for d in rng.permutation(9)]
    rows = [3 * band + int(r) for band in rng.permutation(3) for r in rng.permutation(3)]
    cols = [3 * stack + int(c) for stack in rng.permutation(3) for c in rng.permutation(3)]
    pattern = lambda r, c: (3 * (r % 3) + r // 3 + c) % 9  # noqa: E731
    grid = [digits[pattern(rows[r], cols[c])] for r in range(9) for c in range(9)]
    if rng.random() < 0.5:
        grid = [grid[c * 9 + r] for r in range(9) for c in range(9)]
    return grid


def cell_name(cell: int) -> str:
    """``r1c1`` for the top-left cell."""
    return f"r{cell // 9 + 1}c{cell % 9 + 1}"


class Sudoku(SoloPuzzle, Game):
    """Sudoku with a unique solution; see the module docstring for the rules and rewards."""

    name = "Sudoku"
    description = (
        "Fill a generated 9x9 Sudoku with a unique solution; a clash is refused, a dead end loses. "
        "difficulty 1-5 (default 2) sets the clues: 45, 38, 32, 28, 25."
    )

    def __init__(self, *, difficulty: int = 2):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        self.target = LEVELS[self.difficulty]
        self.players = ["player_0"]
        self.moves = [f"{cell_name(cell)}={digit}" for cell in range(81) for digit in range(1, 10)]
        self.vector_size = 810
        self.grid = [0] * 81
        self.clues = 0
        self.placed = 0
        self.stuck: int | None = None

    def start(self, ctx: Context) -> None:
        """Draw a solved grid and take clues away while the solution stays unique."""
        grid = full_grid(ctx.rng)
        clues = 81
        for cell in ctx.rng.permutation(81):
            if clues == self.target:
                break
            digit, grid[int(cell)] = grid[int(cell)], 0
            if len(solutions(grid)) == 1:
                clues -= 1
            else:
                grid[int(cell)] = digit
        self.grid, self.clues = grid, clues
        self.placed = 0
        self.stuck = None

    def rules(self, player: str) -> str:
        """The rules."""
        return RULES.format(player=player)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The grid and the empty cells left."""
        return f"{self.grid_text()}\nEmpty cells: {self.grid.count(0)}. Your move, for example: r{self.first_empty() // 9 + 1}c{self.first_empty() % 9 + 1}=5"

    def first_empty(self) -> int:
        """The first empty cell in row order."""
        return self.grid.index(0)

    def legal_actions(self, player: str) -> list[int]:
        """Every digit that fits an empty cell without a clash."""
        return [
            cell * 9 + digit - 1 for cell in range(81) if not self.grid[cell] for digit in range(1, 10) if candidates(self.grid, cell) >> digit & 1
        ]

    def parse(self, player: str, text: str) -> str:
        """The last ``r<row>c<column>=<digit>`` in the text, if the cell is empty and the digit does not clash."""
        found = MOVE_PATTERN.findall(text)
        if not found:
            raise InvalidMove("No move found. Reply with a cell and a digit, for example: r3c5=7")
        row, col, digit = (int(value) for value in found[-1])
        cell = (row - 1) * 9 + col - 1
        if self.grid[cell]:
            raise InvalidMove(f"{cell_name(cell)} already holds {self.grid[cell]}; choose an empty cell.")
        if not candidates(self.grid, cell) >> digit & 1:
            raise InvalidMove(f"{digit} is already in row {row}, column {col} or their box; it cannot go in {cell_name(cell)}.")
        return f"{cell_name(cell)}={digit}"

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Place the digit; a full grid wins, an empty cell that no digit fits loses."""
        ((player, move),) = moves.items()
        index = self.move_index(move)
        cell, digit = divmod(index, 9)
        self.grid[cell] = digit + 1
        self.placed += 1
        ctx.tell(f"{player} puts {digit + 1} in {cell_name(cell)}.", kind="move", sender=player)
        if 0 not in self.grid:
            self.solved(ctx, "the grid is full")
            return
        self.stuck = next((c for c in range(81) if not self.grid[c] and not candidates(self.grid, c)), None)
        if self.stuck is not None:
            self.failed(ctx, f"no digit fits {cell_name(self.stuck)}")

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "difficulty": self.difficulty,
            "success": success,
            "clues": self.clues,
            "placed": self.placed,
            "empty": self.grid.count(0),
            "stuck": None if self.stuck is None else cell_name(self.stuck),
        }

    def view(self, player: str) -> dict[str, Any]:
        """The grid as 81 digits in row order (0 for empty) and the difficulty."""
        return {"difficulty": self.difficulty, "grid": list(self.grid), "clues": self.clues}

    def vector(self, player: str) -> np.ndarray:
        """A one-hot of ten entries per cell: empty, or its digit."""
        values = np.zeros(self.vector_size, dtype=np.float32)
        values[np.arange(81) * 10 + np.asarray(self.grid)] = 1.0
        return values

    def grid_text(self) -> str:
        """The grid with row and column labels and the boxes marked."""
        lines = ["     c1 c2 c3  c4 c5 c6  c7 c8 c9"]
        for row in range(9):
            if row and row % 3 == 0:
                lines.append("     " + "-" * 29)
            cells = [str(d) if d else "." for d in self.grid[row * 9 : row * 9 + 9]]
            lines.append(f"r{row + 1}    " + " | ".join("  ".join(cells[i : i + 3]) for i in (0, 3, 6)))
        return "\n".join(lines)

    def render(self) -> str:
        """The grid."""
        return self.grid_text()

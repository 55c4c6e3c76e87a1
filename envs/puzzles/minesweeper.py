"""Minesweeper: reveal every safe cell of a grid without revealing a mine.

One player, ``player_0``. Cells are named by column letter and row number,
``a1`` top-left (``b3`` is column 2, row 3). Hidden cells show ``?``; a
revealed cell shows how many of its eight neighbours hold mines (``.`` for
none). Revealing a cell with no neighbouring mine also reveals its
neighbours, and so on outwards, as in every Minesweeper.

The first reveal is always safe: the mines are placed only then, drawn from
the episode's seed among the cells that are neither the first one nor its
neighbours, so the first reveal always opens an area.

Moves: a cell name (``reveal c3`` and other words around it are fine, the
last cell named counts). Revealing a cell already revealed, or one off the
grid, is an invalid action. There are no flags: a player keeps its own notes.

``difficulty`` (1 to 5, default 2): columns x rows and mines 5x5 with 3,
6x6 with 5, 8x8 with 10, 9x9 with 14, 10x10 with 20.

Rewards: 1 when every safe cell is revealed (the player wins), 0 on revealing
a mine. A player that exceeds the invalid-action allowance gets -1. Outcome
details: ``difficulty``, ``success``, ``moves``, ``revealed`` (safe cells
revealed), ``safe_cells`` and ``mines``.

Vector observation: ten planes of ``rows * columns`` cells: hidden, then
revealed with 0 to 8 neighbouring mines.

Version history: v0, first release.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.errors import InvalidMove
from parlour.envs.core.game import Game, int_option
from parlour.envs.puzzles.solo import SoloPuzzle, grid_rows

#: difficulty -> (side of the square grid, mines)
LEVELS = {1: (5, 3), 2: (6, 5), 3: (8, 10), 4: (9, 14), 5: (10, 20)}
CELL_PATTERN = re.compile(r"\b([a-z])\s?(\d{1,2})\b", re.IGNORECASE)
HIDDEN = "?"

RULES = """You are {player}, playing Minesweeper on a {size}x{size} grid hiding {mines} mines.
Cells are named by column letter and row number: a1 is the top-left corner, b3 is column b, row 3.
Reveal a cell by naming it. A revealed cell shows how many of its 8 neighbours hold mines ("." for none); hidden cells show "?". Revealing a cell with no neighbouring mine also reveals its neighbours.
Your first reveal is always safe. Revealing a mine loses; revealing every cell without a mine wins.
Reply with the cell to reveal, for example: reveal c3"""


def cell_name(row: int, col: int) -> str:
    """``a1`` for the top-left cell."""
    return f"{chr(ord('a') + col)}{row + 1}"


def neighbours(size: int, cell: int) -> list[int]:
    """The flat indices of a cell's up to eight neighbours on a ``size`` x ``size`` grid."""
    row, col = divmod(cell, size)
    return [
        r * size + c for r in range(max(row - 1, 0), min(row + 2, size)) for c in range(max(col - 1, 0), min(col + 2, size)) if (r, c) != (row, col)
    ]


def flood(size: int, counts: list[int], revealed: set[int], cell: int) -> set[int]:
    """The cells a reveal of safe ``cell`` uncovers: it, and outwards through every cell with no neighbouring mine."""
    opened = {cell}
    frontier = [cell]
    while frontier:
        here = frontier.pop()
        if counts[here] == 0:
            for nxt in neighbours(size, here):
                if nxt not in opened and nxt not in revealed:
                    opened.add(nxt)
                    frontier.append(nxt)
    return opened


class Minesweeper(SoloPuzzle, Game):
    """Minesweeper with a safe first reveal; see the module docstring for the rules and rewards."""

    name = "Minesweeper"
    description = (
        "Reveal every safe cell without hitting a mine; the first reveal is safe. "
        "difficulty 1-5 (default 2) sets the grid (5x5 to 10x10) and mines (3 to 20)."
    )

    def __init__(self, *, difficulty: int = 2):
        self.difficulty = int_option("difficulty", difficulty, 1, len(LEVELS))
        self.size, self.mine_count = LEVELS[self.difficulty]
        cells = self.size * self.size
        self.players = ["player_0"]
        self.moves = [cell_name(*divmod(cell, self.size)) for cell in range(cells)]
        self.vector_size = 10 * cells
        self.mines: frozenset[int] = frozenset()
        self.counts: list[int] = [0] * cells
        self.revealed: set[int] = set()
        self.moves_made = 0
        self.exploded: int | None = None

    def start(self, ctx: Context) -> None:
        """An untouched grid; the mines are placed at the first reveal."""
        self.mines = frozenset()
        self.counts = [0] * (self.size * self.size)
        self.revealed = set()
        self.moves_made = 0
        self.exploded = None

    def rules(self, player: str) -> str:
        """The rules, the grid's size and the mines."""
        return RULES.format(player=player, size=self.size, mines=self.mine_count)

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The grid and how many safe cells are still hidden."""
        hidden = self.size * self.size - self.mine_count - len(self.revealed)
        return f"{self.board_text()}\nSafe cells still hidden: {hidden}. Reply with a hidden cell to reveal, for example: reveal {legal[0] if legal else 'a1'}"

    def legal_actions(self, player: str) -> list[int]:
        """Every hidden cell."""
        return [cell for cell in range(self.size * self.size) if cell not in self.revealed]

    def parse(self, player: str, text: str) -> str:
        """The last cell named in the text, if it is on the grid and hidden."""
        found = CELL_PATTERN.findall(text)
        if not found:
            raise InvalidMove("No cell found. Reply with a cell such as: reveal c3")
        letter, number = found[-1]
        col, row = ord(letter.lower()) - ord("a"), int(number) - 1
        if not (0 <= col < self.size and 0 <= row < self.size):
            last = cell_name(self.size - 1, self.size - 1)
            raise InvalidMove(f"{letter.lower()}{number} is off the grid; cells run from a1 to {last}.")
        if row * self.size + col in self.revealed:
            raise InvalidMove(f"{cell_name(row, col)} is already revealed; reveal a hidden cell (shown as ?).")
        return cell_name(row, col)

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Reveal the cell (placing the mines first on the first reveal); a mine loses, the last safe cell wins."""
        ((player, move),) = moves.items()
        cell = self.move_index(move)
        if not self.moves_made:
            self.place_mines(ctx.rng, cell)
        self.moves_made += 1
        if cell in self.mines:
            self.exploded = cell
            ctx.tell(f"{player} reveals {move}: a mine!", kind="move", sender=player)
            self.failed(ctx, f"revealed a mine at {move}")
            return
        opened = flood(self.size, self.counts, self.revealed, cell)
        self.revealed |= opened
        ctx.tell(f"{player} reveals {move}" + (f", opening {len(opened)} cells." if len(opened) > 1 else "."), kind="move", sender=player)
        if len(self.revealed) == self.size * self.size - self.mine_count:
            self.solved(ctx, "every safe cell is revealed")

    def place_mines(self, rng: np.random.Generator, first: int) -> None:
        """Draw the mines away from the first reveal and its neighbours, and count every cell's neighbouring mines."""
        spared = {first, *neighbours(self.size, first)}
        allowed = [cell for cell in range(self.size * self.size) if cell not in spared]
        self.mines = frozenset(allowed[int(i)] for i in rng.choice(len(allowed), self.mine_count, replace=False))
        self.counts = [sum(n in self.mines for n in neighbours(self.size, cell)) for cell in range(self.size * self.size)]

    def report(self, success: bool) -> dict[str, Any]:
        """The outcome details (see the module docstring)."""
        return {
            "difficulty": self.difficulty,
            "success": success,
            "moves": self.moves_made,
            "revealed": len(self.revealed),
            "safe_cells": self.size * self.size - self.mine_count,
            "mines": self.mine_count,
        }

    def symbol(self, row: int, col: int) -> str:
        """What the player sees of a cell."""
        cell = row * self.size + col
        if cell not in self.revealed:
            return HIDDEN
        return str(self.counts[cell]) if self.counts[cell] else "."

    def board_rows(self) -> list[str]:
        """The grid as the player sees it, one string per row."""
        return grid_rows(self.size, self.symbol)

    def board_text(self) -> str:
        """The grid with column letters above and row numbers beside it."""
        header = "   " + " ".join(chr(ord("a") + c) for c in range(self.size))
        return "\n".join([header] + [f"{r + 1:>2} " + " ".join(row) for r, row in enumerate(self.board_rows())])

    def view(self, player: str) -> dict[str, Any]:
        """The grid as the player sees it (``?`` hidden, ``.`` or a digit revealed), its size and the mine count."""
        return {"difficulty": self.difficulty, "size": self.size, "mines": self.mine_count, "board": self.board_rows(), "moves": self.moves_made}

    def vector(self, player: str) -> np.ndarray:
        """Hidden plane, then one plane per neighbouring-mine count of revealed cells."""
        cells = self.size * self.size
        values = np.zeros(self.vector_size, dtype=np.float32)
        for cell in range(cells):
            values[(1 + self.counts[cell] if cell in self.revealed else 0) * cells + cell] = 1.0
        return values

    def render(self) -> str:
        """The grid; once a mine is revealed, every mine shows as ``*`` (the one revealed as ``X``)."""
        if self.exploded is None:
            return self.board_text()
        rows = [list(row) for row in self.board_rows()]
        for mine in self.mines:
            rows[mine // self.size][mine % self.size] = "X" if mine == self.exploded else "*"
        header = "   " + " ".join(chr(ord("a") + c) for c in range(self.size))
        return "\n".join([header] + [f"{r + 1:>2} " + " ".join(row) for r, row in enumerate(rows)])

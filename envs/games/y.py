"""Y, the connection game on a triangle, with OpenSpiel's ``y`` rules.

Players ``player_0`` (X, moves first) and ``player_1`` (O) take turns placing
a stone on an empty cell of a triangle of hexagonal cells with ``board_size``
cells a side (default 7; OpenSpiel's ``y`` option of the same name, whose
default is 19). The first player whose stones join all three sides in one
unbroken group wins (a corner cell lies on two sides). A full board always
holds exactly one such group, so there are no draws. There is no swap rule,
as in OpenSpiel.

Row 1 (on top) has ``board_size`` cells, each row below one fewer, each drawn
shifted half a cell right of the one above, so the cell in column x of row y
(both from 0) touches (x-1, y), (x+1, y), (x, y-1), (x+1, y-1), (x-1, y+1)
and (x, y+1). The sides are column a (x = 0), row 1 (y = 0) and the last
cell of every row (x + y = board_size - 1). Moves are cell names ``a1`` ..
(column letter, row number), as OpenSpiel names them; the ``Discrete`` index
counts the cells row by row from a1 (OpenSpiel's action is x + y *
board_size). Vector observation: OpenSpiel's observation tensor on the
board's cells, row by row: the player's own stones, the opponent's, then the
empty cells, ``3 * board_size * (board_size + 1) / 2`` values.

Rewards (zero-sum, OpenSpiel's): +1 to the winner and -1 to the loser at the
last move. A player who exceeds the invalid-action allowance gets -1 and the
opponent +1.

Version history: v0, first release.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option
from parlour.envs.games.boards import shifted_board_text, stone_group, stone_planes

MARKS = ("X", "O")
MAX_SIZE = 26
#: Column and row steps to the six neighbours of a cell.
STEPS = ((0, -1), (1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0))
#: The side bits: column a, row 1, the slanted side.
LEFT, TOP, SLANT = 1, 2, 4

RULES = """You are playing Y as {mark} ({player}); {first}.
The board is a triangle of hexagonal cells: row 1 on top has {size} cells, each row below one cell fewer, down to a single cell in row {size}. Each row is shifted half a cell to the right of the row above, so an inner cell touches six others: two in its own row, two in the row above (same column and one to the right) and two in the row below (same column and one to the left).
The triangle has three sides: the left side (column a), the top side (row 1) and the slanted side (the last cell of every row). A corner cell lies on two sides.
Players take turns placing a stone on an empty cell. The first player to join all three sides with one group of touching stones of their own wins. Someone always wins: there are no draws.
Cells are named by column letter and row number: a1 is the top-left corner, {last}1 the top-right one and a{size} the bottom one.
Reply with the cell you choose, for example: {example}"""


class Layout(NamedTuple):
    """What a board size fixes (:func:`layout`): the cells as ``(x, y)`` row by row, each cell's neighbours
    (indices) and its side bits."""

    cells: tuple[tuple[int, int], ...]
    neighbours: tuple[tuple[int, ...], ...]
    sides: tuple[int, ...]


@functools.cache
def layout(size: int) -> Layout:
    """The cells of a board of ``size`` as ``(x, y)`` row by row, each cell's neighbours (indices) and its side bits."""
    cells = tuple((x, y) for y in range(size) for x in range(size - y))
    index = {cell: i for i, cell in enumerate(cells)}
    near = tuple(tuple(index[(x + dx, y + dy)] for dx, dy in STEPS if (x + dx, y + dy) in index) for x, y in cells)
    sides = tuple((LEFT if x == 0 else 0) | (TOP if y == 0 else 0) | (SLANT if x + y == size - 1 else 0) for x, y in cells)
    return Layout(cells, near, sides)


class Y(Game):
    """Y for two players; see the module docstring for the board, moves and rewards.

    ``board`` holds one entry per cell, row by row (-1 empty, 0 X, 1 O).

    Version history: v0, first release.
    """

    name = "Y"
    reference_agents = ("minimax", "random")
    mutable_state = ("board",)
    description = (
        "Join all three sides of a triangle of hexagons with one group of stones; no draws "
        "(difficulty: option board_size, 2-26, default 7; OpenSpiel's y)."
    )
    zero_sum = True
    fixed_rules = True

    def __init__(self, *, board_size: int = 7):
        self.size = int_option("board_size", board_size, 2, MAX_SIZE)
        cells, self._neighbours, self._sides = layout(self.size)
        self.players = ["player_0", "player_1"]
        self.moves: list[str] = [f"{chr(ord('a') + x)}{y + 1}" for x, y in cells]
        self.vector_size = 3 * len(cells)
        self.board = [-1] * len(cells)
        self.turn = 0

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Y:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls(board_size=view["board_size"])
        board = [mark for row in view["board"] for mark in row]
        if len(board) != len(game.board):
            raise ValueError(f"the view's board is not the {len(game.board)} cells of a side of {game.size}")
        game.board = board
        game.turn = view["to_move"]
        return game

    def start(self, ctx: Context) -> None:
        """An empty board, X to move."""
        self.board = [-1] * len(self.moves)
        self.turn = 0

    def rules(self, player: str) -> str:
        """Rules, the board size and the player's mark."""
        index = self.players.index(player)
        first = "you move first" if index == 0 else "your opponent moves first"
        middle = self.size // 3
        return RULES.format(
            mark=MARKS[index],
            player=player,
            first=first,
            size=self.size,
            last=chr(ord("a") + self.size - 1),
            example=f"{chr(ord('a') + middle)}{middle + 1}",
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board and the empty cells."""
        me = self.players.index(player)
        return f"Board:\n{self.board_text()}\nYou are {MARKS[me]}. Empty cells: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """Empty cells."""
        return [cell for cell, mark in enumerate(self.board) if mark == -1]

    def sides_reached(self, cell: int) -> int:
        """The side bits the group of the stone on ``cell`` touches."""
        reached = 0
        for here in stone_group(self.board, self._neighbours, cell):
            reached |= self._sides[here]
        return reached

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Place the stone; end the game when its group joins all three sides."""
        ((player, move),) = moves.items()
        cell = self.move_index(move)
        mark = self.turn
        self.board[cell] = mark
        ctx.tell(f"{player} ({MARKS[mark]}) plays {move}.", kind="move", sender=player)
        # Only the group of the new stone can be new.
        if self.sides_reached(cell) == LEFT | TOP | SLANT:
            ctx.finish({player: 1.0, self.other(player): -1.0}, winners=[player], reason=f"{player} joined all three sides")
        else:
            self.turn = 1 - mark

    def rows(self) -> list[list[int]]:
        """The board as rows from the top, ``board_size`` cells down to one."""
        rows, start = [], 0
        for width in range(self.size, 0, -1):
            rows.append(self.board[start : start + width])
            start += width
        return rows

    def view(self, player: str) -> dict:
        """The board (rows from the top; -1 empty, 0 X, 1 O), the player's mark, whose turn it is and the size."""
        return {"board": self.rows(), "mark": self.players.index(player), "to_move": self.turn, "board_size": self.size}

    def vector(self, player: str) -> np.ndarray:
        """Own stones, opponent stones, then empty cells, row by row."""
        return stone_planes(self.board, self.players.index(player), empty=True)

    def board_text(self) -> str:
        """The triangle, each row shifted right, with row numbers and column letters."""
        return shifted_board_text(self.rows(), {-1: ".", 0: "X", 1: "O"})

    def render(self) -> str:
        """The board."""
        return self.board_text()

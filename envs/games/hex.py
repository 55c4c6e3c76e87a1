"""Hex.

Players ``player_0`` (X, moves first) and ``player_1`` (O) take turns placing
a stone on an empty cell of a rhombus of ``board_size`` x ``board_size``
hexagonal cells (default 5; OpenSpiel's ``hex`` option of the same name,
whose default is 11). X connects the top and bottom edges, O the left and
right edges: the first player whose stones join their two edges in an
unbroken chain wins. A full board always holds exactly one such chain, so
there are no draws. There is no swap rule (OpenSpiel's ``swap=False``).

Each row is drawn shifted half a cell right of the one above, so the cell in
row r, column c touches (r, c-1), (r, c+1), (r-1, c), (r-1, c+1), (r+1, c-1)
and (r+1, c). Moves are cell names ``a1`` .. (column letter, row number, row 1
on top); the ``Discrete`` index of (r, c) is ``board_size * r + c``, as in
OpenSpiel. Vector observation: ``2 * board_size ** 2`` values, the player's
own stones then the opponent's, row-major.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the last move. A
player who exceeds the invalid-action allowance gets -1 and the opponent +1.

Batched: :class:`HexBatch` plays N boards at once for the batched vector face
(``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`).

Version history: v0, first release.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.vector import GameBatch, Streams
from parlour.envs.games.boards import board_from_rows, board_rows, cell_planes, shifted_board_text, stone_group, stone_planes

MARKS = ("X", "O")
MAX_SIZE = 26
#: Row and column steps to the six neighbours of a cell.
STEPS = ((0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0))

RULES = """You are playing Hex as {mark} ({player}); {first}.
The board is a {size}x{size} rhombus of hexagonal cells; each row is shifted half a cell to the right of the row above, so a cell touches six others: two in its own row, two in the row above (same column and one to the right) and two in the row below (same column and one to the left).
Players take turns placing a stone on an empty cell. X wins by joining the top edge (row 1) to the bottom edge (row {size}) with a chain of touching X stones; O wins by joining the left edge (column a) to the right edge (column {last}) with a chain of O stones. Someone always wins: there are no draws.
You are {mark}: connect {goal}. Cells are named by column letter and row number: a1 is the top-left cell.
Reply with the cell you choose, for example: {example}"""


@functools.cache
def neighbours(size: int) -> tuple[tuple[int, ...], ...]:
    """The cells touching each cell of a board of ``size``, worked out once per size."""
    table = []
    for cell in range(size * size):
        row, column = divmod(cell, size)
        table.append(tuple((row + dr) * size + column + dc for dr, dc in STEPS if 0 <= row + dr < size and 0 <= column + dc < size))
    return tuple(table)


class HexBatch(GameBatch):
    """Hex's rules on N boards at once (see :class:`parlour.envs.core.vector.GameBatch`).

    ``board`` is ``(N, cells + 1)`` int8 as :class:`Hex` keeps it, with one
    more cell, always empty, that stands for "off the board" in the neighbour
    table. Instead of the game's search of the new stone's group, each board
    keeps its groups: ``labels`` names each stone's group by one of its cells
    (``cells`` for an empty cell), and ``reach`` ``(N, 2, cells + 2)`` says
    whether the group of that name touches its owner's first and last edge
    (entry ``cells + 1`` is "no group", never touching). A stone joins the
    groups of its like neighbours under its own cell's name and wins when
    their edges together are both, a fixed number of array operations per
    move whatever the groups' shapes.
    """

    def __init__(self, game: Hex, n: int):
        super().__init__(game, n)
        size = game.size
        self.cells = cells = size * size
        self.width = cells + 1
        #: Each cell's six neighbours, ``cells`` (the off-board cell) where one is off the board.
        self.neighbours = np.full((cells, len(STEPS)), cells, dtype=np.int64)
        for cell, near in enumerate(game._neighbours):
            self.neighbours[cell, : len(near)] = near
        #: Per mark, whether each cell is on that mark's first edge and on its last: rows for X, columns for O.
        row, column = np.divmod(np.arange(cells), size)
        self.first_edge = np.stack([row == 0, column == 0])
        self.last_edge = np.stack([row == size - 1, column == size - 1])
        self.board = np.full((n, self.width), -1, dtype=np.int8)
        self.labels = np.full((n, self.width), cells, dtype=np.int64)
        self.reach = np.zeros((n, 2, cells + 2), dtype=bool)
        self._board = self.board.reshape(-1)
        self._labels = self.labels.reshape(-1)
        self._reach = self.reach.reshape(-1)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Empty boards, X to move."""
        self.board[rows] = -1
        self.labels[rows] = self.cells
        self.reach[rows] = False
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """Empty cells."""
        return np.take(self.board, rows, axis=0)[:, : self.cells] == -1

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Place the stones, join their groups; a group that touches both its owner's edges wins."""
        marks = self.turn[rows]
        width, none = self.width, self.cells + 1
        base = rows * width
        self._board[base + actions] = marks
        near = base[:, None] + self.neighbours[actions]
        same = self._board[near] == marks[:, None]
        joined = np.where(same, self._labels[near], none)
        # The joined groups' edges, and the new stone's own, make the new group's.
        groups = (rows * 2)[:, None] * (none + 1) + joined
        first = self._reach[groups].any(axis=1) | self.first_edge[marks, actions]
        last = self._reach[groups + none + 1].any(axis=1) | self.last_edge[marks, actions]
        won = first & last
        # Every stone of a joined group takes the new stone's cell as its group's name.
        labels = np.take(self.labels, rows, axis=0)
        member = (labels[:, :, None] == joined[:, None, :]).any(axis=2)
        member[np.arange(len(rows)), actions] = True
        self.labels[rows] = np.where(member, actions[:, None], labels)
        named = (rows * 2) * (none + 1) + actions
        self._reach[named] = first
        self._reach[named + none + 1] = last
        self.turn[rows] = 1 - marks
        return self.wins(marks, won), won

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Own stones then opponent stones, row-major, as :meth:`Hex.vector`."""
        return cell_planes(np.take(self.board, rows, axis=0)[:, : self.cells], seats)


class Hex(Game):
    """Hex for two players; see the module docstring for moves and rewards.

    ``board`` holds one entry per cell, row-major (-1 empty, 0 X, 1 O).
    """

    name = "Hex"
    reference_agents = ("minimax", "random")
    mutable_state = ("board",)
    description = (
        "Join your two edges of a rhombus of hexagons with a chain of stones; no draws "
        "(difficulty: option board_size, 2-26, default 5, as OpenSpiel's hex)."
    )
    zero_sum = True
    fixed_rules = True
    batch = HexBatch

    def __init__(self, *, board_size: int = 5):
        self.size = int_option("board_size", board_size, 2, MAX_SIZE)
        self.players = ["player_0", "player_1"]
        self.moves: list[str] = [f"{chr(ord('a') + c % board_size)}{c // board_size + 1}" for c in range(board_size * board_size)]
        self.vector_size = 2 * board_size * board_size
        self._neighbours = neighbours(board_size)
        self.board = [-1] * (board_size * board_size)
        self.turn = 0

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> Hex:
        """A game in the position a player's :meth:`view` shows (nothing is hidden), for lookahead on ``clone()`` copies."""
        game = cls(board_size=view["board_size"])
        game.board = board_from_rows(view["board"], game.size, game.size)
        game.turn = view["to_move"]
        return game

    def start(self, ctx: Context) -> None:
        """An empty board, X to move."""
        self.board = [-1] * (self.size * self.size)
        self.turn = 0

    def rules(self, player: str) -> str:
        """Rules, the board size and the player's edges."""
        index = self.players.index(player)
        first = "you move first" if index == 0 else "your opponent moves first"
        last = chr(ord("a") + self.size - 1)
        goal = (
            f"the top edge (row 1) to the bottom edge (row {self.size})"
            if index == 0
            else f"the left edge (column a) to the right edge (column {last})"
        )
        return RULES.format(
            mark=MARKS[index],
            player=player,
            first=first,
            size=self.size,
            last=last,
            goal=goal,
            example=self.moves[(self.size // 2) * (self.size + 1)],
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board and the empty cells."""
        me = self.players.index(player)
        goal = "top to bottom" if me == 0 else "left to right"
        return f"Board:\n{self.board_text()}\nYou are {MARKS[me]} (connect {goal}). Empty cells: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """Empty cells."""
        return [cell for cell, mark in enumerate(self.board) if mark == -1]

    def connects(self, cell: int) -> bool:
        """Whether the chain through the stone on ``cell`` joins its owner's two edges."""
        size = self.size
        # X's edges are the first and last rows, O's the first and last columns.
        side = (lambda c: c // size) if self.board[cell] == 0 else (lambda c: c % size)
        low = high = False
        for here in stone_group(self.board, self._neighbours, cell):
            position = side(here)
            low |= position == 0
            high |= position == size - 1
        return low and high

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Place the stone; end the game when it completes a chain between its owner's edges."""
        ((player, move),) = moves.items()
        cell = self.move_index(move)
        mark = self.turn
        self.board[cell] = mark
        ctx.tell(f"{player} ({MARKS[mark]}) plays {move}.", kind="move", sender=player)
        # Only a chain through the new stone can be new.
        if self.connects(cell):
            edges = "top and bottom" if mark == 0 else "left and right"
            ctx.finish({player: 1.0, self.other(player): -1.0}, winners=[player], reason=f"{player} joined the {edges} edges")
        else:
            self.turn = 1 - mark

    def view(self, player: str) -> dict:
        """The board (rows from the top; -1 empty, 0 X, 1 O), the player's mark, whose turn it is and the size."""
        board = board_rows(self.board, self.size, self.size)
        return {"board": board, "mark": self.players.index(player), "to_move": self.turn, "board_size": self.size}

    def vector(self, player: str) -> np.ndarray:
        """Own stones then opponent stones, row-major."""
        return stone_planes(self.board, self.players.index(player))

    def board_text(self) -> str:
        """The rhombus, each row shifted right, with row numbers and column letters."""
        return shifted_board_text(board_rows(self.board, self.size, self.size), {-1: ".", 0: "X", 1: "O"})

    def render(self) -> str:
        """The board."""
        return self.board_text()

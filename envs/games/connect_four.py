"""Connect Four.

Players ``player_0`` (X, moves first) and ``player_1`` (O) take turns dropping
a disc into a column of an upright grid (default 6 rows x 7 columns); it falls
to the lowest empty cell. The first to line up ``x_in_row`` discs (default 4)
horizontally, vertically or diagonally wins; a full grid without a line is a
draw. Options ``rows``, ``columns`` and ``x_in_row`` are named as in
OpenSpiel's ``connect_four``.

Moves are ``column 1`` .. ``column 7`` (numbered left to right, as on the
board shown to the players). A move names its column with the word "column",
so that numbers in an agent's reasoning are never read as moves; the last move
mentioned in the reply counts. The ``Discrete`` index of ``column k`` is
``k - 1``, which is OpenSpiel's ``connect_four`` action for that column.
Vector observation: ``2 * rows * columns`` values, the player's own discs then
the opponent's, row-major with the bottom row first.

Rewards (zero-sum): +1 to the winner and -1 to the loser at the winning move, 0
each for a draw. A player who exceeds the invalid-action allowance gets -1 and
the opponent +1.

Batched: :class:`ConnectFourBatch` plays N boards at once for the batched
vector face (``gymnasium.make_vec(..., obs_mode="vector")``, see
:mod:`parlour.envs.core.vector`), for boards whose bitboard fits 64 bits
(``columns * (rows + 1) <= 64``, the default 6x7 included).

Search: :meth:`ConnectFour.from_view` loads the position of a player's view
into a new game (nothing in Connect Four is hidden, so it is exact), which a
scripted agent then plays ahead on ``clone()`` copies.

Version history: v0, first release.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Self

import numpy as np

from parlour.envs.core.context import Context
from parlour.envs.core.game import Game, int_option
from parlour.envs.core.vector import GameBatch, Streams

MARKS = ("X", "O")
#: (row step, column step, name) of the four line directions; row 0 is the bottom row.
DIRECTIONS = ((0, 1, "horizontal"), (1, 0, "vertical"), (1, 1, "rising diagonal"), (1, -1, "falling diagonal"))

RULES = """You are playing Connect Four as {mark} ({player}); {first}.
The board has {rows} rows and {columns} columns. Players take turns dropping one disc into a column that is not full; the disc falls to the lowest empty cell of that column.
The first player to line up {x_in_row} of their discs in a row, horizontally, vertically or diagonally, wins. A full board without such a line is a draw.
Columns are numbered 1 to {columns} from left to right. Reply with the column you choose, for example: column {example}"""


def column_name(column: int) -> str:
    """The move name of the 0-based ``column``."""
    return f"column {column + 1}"


def line_shifts(step: int, x_in_row: int) -> tuple[int, ...]:
    """The right shifts that turn a bitboard into the start bits of its runs of ``x_in_row`` discs ``step`` bits apart.

    ``runs &= runs >> shift`` for each shift in turn: a run of ``n`` and one
    starting ``m <= n`` steps further make a run of ``n + m``, so the length
    doubles while it can and then closes the gap, a few shifts for any length.
    """
    shifts = []
    length = 1
    while length < x_in_row:
        grow = min(length, x_in_row - length)
        shifts.append(grow * step)
        length += grow
    return tuple(shifts)


@dataclass(frozen=True)
class Layout:
    """What a board size fixes about its bitboards, worked out once per size and shared by its games (see :class:`ConnectFour`)."""

    #: Per direction of :data:`DIRECTIONS`: the :func:`line_shifts` of one step along it, and its name.
    lines: tuple[tuple[tuple[int, ...], str], ...]
    #: The bitboard of a full board.
    full: int
    #: Bytes of one bitboard.
    size: int
    #: Each cell's bit, in vector order (row-major, bottom row first), within the bits of the two bitboards' bytes side by side.
    vector_bits: np.ndarray
    #: The empty board as ``board_text`` draws it, ASCII: the column numbers, then the rows, top row first, each
    #: cell as wide as the widest number.
    empty: bytes
    #: Where each cell's mark goes in that drawing, indexed by ``column * rows + row`` (row 0 at the bottom).
    places: tuple[int, ...]


@functools.cache
def layout(rows: int, columns: int, x_in_row: int) -> Layout:
    """The :class:`Layout` of a board size."""
    height = rows + 1
    # One step along a direction moves abs(d_row + d_column * height) bits (a line read either way is the same line).
    lines = tuple((line_shifts(abs(d_row + d_column * height), x_in_row), direction) for d_row, d_column, direction in DIRECTIONS)
    positions = [c * height + r for r in range(rows) for c in range(columns)]
    size = (columns * height + 7) // 8
    cells = np.array(positions)
    vector_bits = np.concatenate([cells, cells + 8 * size])
    vector_bits.flags.writeable = False  # shared by every game of this size
    width = len(str(columns))
    header = " ".join(str(c + 1).rjust(width) for c in range(columns))
    line = len(header) + 1
    # A mark is the last character of its cell; the drawing's line 1 is the top row.
    places = tuple((rows - r) * line + c * (width + 1) + width - 1 for c in range(columns) for r in range(rows))
    empty = "\n".join([header] + [" ".join(".".rjust(width) for _ in range(columns))] * rows)
    return Layout(
        lines=lines,
        full=sum(1 << position for position in positions),
        size=size,
        vector_bits=vector_bits,
        empty=empty.encode("ascii"),
        places=places,
    )


class ConnectFourBatch(GameBatch):
    """Connect Four's rules on N boards at once (see :class:`parlour.envs.core.vector.GameBatch`).

    The same bitboards as :class:`ConnectFour`, one ``uint64`` per mark and
    board in ``discs`` ``(N, 2)``, with the column ``heights`` ``(N,
    columns)``; a line is found by the same shifts, the four directions as
    the rows of one ``(4, k)`` array. Both seats' vector observations are
    kept too, ``views`` ``(2 N, vector_size)`` float32 (row ``2 i + s``: seat
    ``s``'s of board ``i``), two cells set per move, so that building
    observations is one gather of rows rather than bits unpacked. The arrays
    are addressed through flat views, so that one board's entry is one
    computed index, and rows are gathered with ``np.take``, several times
    cheaper than fancy indexing of 2-D arrays.
    """

    def __init__(self, game: ConnectFour, n: int):
        super().__init__(game, n)
        self.rows, self.columns, height = game.rows, game.columns, game.rows + 1
        if self.columns * height > 64:
            raise ValueError(
                f"the batched Connect Four keeps a board in 64 bits, columns * (rows + 1) of them, and {game.columns}x{game.rows} "
                "needs more; use vectorization_mode='sync' for this size"
            )
        self.size = self.rows * self.columns
        #: Entry ``i``: the ``i``-th shift of each direction's :func:`line_shifts` (as many for every direction), a ``(4, 1)`` column.
        self.shifts = list(
            np.array([shifts for shifts, _ in game._layout.lines], dtype=np.uint64).reshape(len(DIRECTIONS), -1, 1).transpose(1, 0, 2).copy()
        )
        self.full = np.uint64(game._layout.full)
        #: The bit of the disc dropped into column ``c`` at height ``h``, at ``c * rows + h``.
        self.bits = np.array([1 << (c * height + h) for c in range(self.columns) for h in range(self.rows)], dtype=np.uint64)
        self.discs = np.zeros((n, 2), dtype=np.uint64)
        self.heights = np.zeros((n, self.columns), dtype=np.int64)
        self.views = np.zeros((2 * n, 2 * self.size), dtype=np.float32)
        self._discs = self.discs.reshape(-1)
        self._heights = self.heights.reshape(-1)
        self._views = self.views.reshape(-1)

    def reset(self, rows: np.ndarray, rng: Streams) -> None:
        """Empty boards, X to move."""
        self.discs[rows] = 0
        self.heights[rows] = 0
        self.views.reshape(self.n, -1)[rows] = 0.0
        self.turn[rows] = 0

    def legal(self, rows: np.ndarray) -> np.ndarray:
        """Columns that are not full."""
        return np.take(self.heights, rows, axis=0) < self.rows

    def step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Drop the discs; a line of ``x_in_row`` wins, a full board draws."""
        marks = self.turn[rows]
        column = rows * self.columns + actions
        heights = self._heights[column]
        self._heights[column] = heights + 1
        # Board i's discs of mark m are entry 2 * i + m of the flat view; the other mark's, that index ^ 1.
        mine = 2 * rows + marks
        discs = self._discs[mine] | self.bits[actions * self.rows + heights]
        self._discs[mine] = discs
        # The cell is in the first half of the mover's view and the second half of the other seat's.
        cell = heights * self.columns + actions
        self._views[mine * (2 * self.size) + cell] = 1.0
        self._views[(mine ^ 1) * (2 * self.size) + self.size + cell] = 1.0
        # The game ends at the first line, so only the mover can have one.
        # A direction per row, a board per column: reductions over the few rows are much cheaper than along them.
        runs = discs
        for shifts in self.shifts:
            runs = runs & (runs >> shifts)
        won = runs.any(axis=0) if self.shifts else runs != 0
        self.turn[rows] = 1 - marks
        return self.wins(marks, won), won | ((discs | self._discs[mine ^ 1]) == self.full)

    def vector(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Own discs then opponent discs, bottom row first, as :meth:`ConnectFour.vector`."""
        return np.take(self.views, 2 * rows + seats, axis=0)


class ConnectFour(Game):
    """Connect Four for two players; see the module docstring for moves and rewards.

    The state is ``discs``, one bitboard per mark (X's, then O's), the
    ``heights`` of the columns and the mark to move, ``turn``, with the board's
    text kept beside them, ``drawing`` (ASCII bytes, a mark set per move, since
    a text episode shows the board every move): a copy for search costs two
    ints, a short list and a short bytearray. The cell in ``row`` (0 at the bottom) and
    ``column`` is the bit ``1 << (column * (rows + 1) + row)``, see
    :meth:`cell_bit`. Each column has one always-empty bit on top, so that
    shifting a bitboard by one step of a line never carries a line from one
    column into the next.
    """

    name = "ConnectFour"
    reference_agents = ("minimax", "random")
    description = "Drop discs into a 6x7 grid; four in a line wins."
    zero_sum = True
    fixed_rules = True
    batch = ConnectFourBatch

    def __init__(self, *, rows: int = 6, columns: int = 7, x_in_row: int = 4):
        for option, value in (("rows", rows), ("columns", columns), ("x_in_row", x_in_row)):
            int_option(option, value, 1)
        if x_in_row > max(rows, columns):
            raise ValueError(f"x_in_row ({x_in_row}) must not exceed the larger of rows ({rows}) and columns ({columns})")
        self.rows, self.columns, self.x_in_row = rows, columns, x_in_row
        self.players = ["player_0", "player_1"]
        self.moves: list[str] = [column_name(c) for c in range(columns)]
        self.vector_size = 2 * rows * columns
        self._layout = layout(rows, columns, x_in_row)
        self.discs = [0, 0]
        self.heights = [0] * columns
        self.turn = 0
        self.drawing = bytearray(self._layout.empty)

    @classmethod
    def from_view(cls, view: dict[str, Any]) -> ConnectFour:
        """A game in the position a player's :meth:`view` shows, for lookahead on its ``clone()`` copies.

        The view holds the whole state (board, options, whose turn), so the
        position is the real one; ``ValueError`` if the board has another size.
        """
        game = cls(rows=view["rows"], columns=view["columns"], x_in_row=view["x_in_row"])
        board = view["board"]
        if len(board) != game.rows or any(len(row) != game.columns for row in board):
            raise ValueError(f"the view's board is not {game.rows} rows of {game.columns} cells")
        for row, cells in enumerate(board):
            for column, mark in enumerate(cells):
                if mark != -1:
                    game.place(mark, row, column)
        game.turn = view["to_move"]
        return game

    def cell_bit(self, row: int, column: int) -> int:
        """The bitboard bit of the cell in ``row`` (0 at the bottom) and ``column``."""
        return 1 << (column * (self.rows + 1) + row)

    def place(self, mark: int, row: int, column: int) -> None:
        """Put a disc of ``mark`` (0 X, 1 O) in the cell, its column's height just above it, and draw it."""
        self.discs[mark] |= self.cell_bit(row, column)
        self.heights[column] = row + 1
        self.drawing[self._layout.places[column * self.rows + row]] = ord(MARKS[mark])

    def clone(self) -> Self:
        """An independent copy: the position is copied; the options and move names, never changed after ``__init__``, are shared.

        Search copies a game at every node, and this is many times cheaper than the default pickling copy.
        """
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.discs = list(self.discs)
        copy.heights = list(self.heights)
        copy.drawing = bytearray(self.drawing)
        return copy

    @property
    def board(self) -> list[list[int]]:
        """The board as rows of marks (``board[r][c]``: -1 empty, 0 X, 1 O; row 0 is the bottom), built afresh."""
        first, second = self.discs
        height = self.rows + 1
        end = self.columns * height
        return [[0 if first >> bit & 1 else 1 if second >> bit & 1 else -1 for bit in range(row, end, height)] for row in range(self.rows)]

    def start(self, ctx: Context) -> None:
        """Empty board, X to move."""
        self.discs = [0, 0]
        self.heights = [0] * self.columns
        self.turn = 0
        self.drawing = bytearray(self._layout.empty)

    def rules(self, player: str) -> str:
        """Rules and the player's mark."""
        index = self.players.index(player)
        first = "you move first" if index == 0 else "your opponent moves first"
        return RULES.format(
            mark=MARKS[index],
            player=player,
            first=first,
            rows=self.rows,
            columns=self.columns,
            x_in_row=self.x_in_row,
            example=(self.columns + 1) // 2,
        )

    def prompt(self, player: str, legal: list[str] | None) -> str:
        """The board and the columns that are not full."""
        mark = MARKS[self.players.index(player)]
        return f"Board:\n{self.board_text()}\nYou are {mark}. Legal moves: {', '.join(legal or [])}."

    def legal_actions(self, player: str) -> list[int]:
        """Columns that are not full."""
        return [c for c in range(self.columns) if self.heights[c] < self.rows]

    def line(self, mark: int) -> str | None:
        """The direction of a line of ``x_in_row`` discs of ``mark``, the first in :data:`DIRECTIONS` order, or ``None``."""
        discs = self.discs[mark]
        for shifts, direction in self._layout.lines:
            runs = discs
            for shift in shifts:
                runs &= runs >> shift
            if runs:
                return direction
        return None

    def apply(self, ctx: Context, moves: dict[str, str]) -> None:
        """Drop the disc; end the game on a line or a full board."""
        ((player, move),) = moves.items()
        column = self.move_index(move)
        mark = self.turn
        self.place(mark, self.heights[column], column)
        ctx.tell(f"{player} ({MARKS[mark]}) plays {move}.", kind="move", sender=player)
        # The game ends at the first line, so any line of the mover's runs through the disc just dropped.
        direction = self.line(mark)
        if direction is not None:
            reason = f"{player} lined up {self.x_in_row} ({direction})"
            ctx.finish({player: 1.0, self.other(player): -1.0}, winners=[player], reason=reason, details={"line": direction})
        elif self.discs[0] | self.discs[1] == self._layout.full:
            ctx.finish(reason="the board is full: a draw")
        else:
            self.turn = 1 - mark

    def view(self, player: str) -> dict:
        """The board (``board[r][c]``: -1 empty, 0 X, 1 O; row 0 is the bottom), the player's mark and the options."""
        return {
            "board": self.board,
            "mark": self.players.index(player),
            "to_move": self.turn,
            "rows": self.rows,
            "columns": self.columns,
            "x_in_row": self.x_in_row,
        }

    def vector(self, player: str) -> np.ndarray:
        """Own discs then opponent discs, bottom row first."""
        me = self.players.index(player)
        size = self._layout.size
        raw = self.discs[me].to_bytes(size, "little") + self.discs[1 - me].to_bytes(size, "little")
        bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
        return bits[self._layout.vector_bits].astype(np.float32)

    def board_text(self) -> str:
        """The board, top row first, under its column numbers."""
        return self.drawing.decode("ascii")

    def render(self) -> str:
        """The board."""
        return self.board_text()
